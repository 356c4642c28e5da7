"""Write a vf-eval results.jsonl with verifiers 0.1.14's own output code (no model, no server).

    python make_results.py .

Rollout states as a verifiers environment leaves them (the prompt, a completion whose assistant
turn calls a tool through the OpenAI client's ``ChatCompletionMessageToolCall``, the reward, the
rubric's metrics, ``info`` holding the ``task_key`` a whileai export writes, as JSON text the
way its Dataset stores it) are turned into rows by ``verifiers.utils.save_utils.state_to_output``
and written by ``save_outputs``, which is what vf-eval calls.
"""

import json
import sys
from pathlib import Path

from openai.types.chat.chat_completion_message_tool_call import (
    ChatCompletionMessageToolCall,
    Function,
)
from verifiers.utils.save_utils import save_outputs, state_to_output

TASKS = [("s-refund-17", "Refund order A-17."), ("s-status-4", "Where is order B-4?")]


def state(example_id: int, rollout: int) -> dict:
    task_key, question = TASKS[example_id]
    call = ChatCompletionMessageToolCall(id=f"call_{example_id}{rollout}", type="function",
                                         function=Function(name="get_order", arguments=json.dumps({"order_id": "A-17"})))
    ok = rollout == 0
    completion = [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call.id, "content": json.dumps({"status": "delivered"})},
        {"role": "assistant", "content": "Done, refunded." if ok else "I could not do it."},
    ]
    return {
        "example_id": example_id,
        "prompt": [{"role": "system", "content": "You help with orders."}, {"role": "user", "content": question}],
        "completion": completion,
        "answer": "",
        "info": json.dumps({"task_key": task_key, "pass_rate": 0.5, "k": 2}),
        "reward": 1.0 if ok else 0.0,
        "timing": {"generation_ms": 10.0, "scoring_ms": 1.0, "total_ms": 11.0},
        "is_completed": True,
        "is_truncated": False,
        "metrics": {"score": 1.0 if ok else 0.0, "num_turns": 2.0},
        "tool_defs": [{"name": "get_order", "description": "Look up an order.",
                       "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}}}],
    }


if __name__ == "__main__":
    outputs = [state_to_output(state(e, r)) for e in range(len(TASKS)) for r in range(2)]
    save_outputs(outputs, Path(sys.argv[1]))
