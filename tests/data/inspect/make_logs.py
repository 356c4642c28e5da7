"""Write the real inspect_ai logs under tests/data/inspect/ (offline, mockllm model).

Run with inspect-ai 0.3.285 installed (see README.md here):

    python tests/data/inspect/make_logs.py tests/data/inspect

Two tasks whose samples are both numbered 1, 2, 3 (so a reader keyed on the sample id alone
merges them), two epochs, a dict-valued scorer with an explanation beside a plain one, a tool
that raises, and a sample whose solver raises (kept with ``fail_on_error=False``).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import write_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import Score, Target, accuracy, includes, mean, scorer
from inspect_ai.solver import Generate, TaskState, generate, solver, use_tools
from inspect_ai.tool import ToolError, tool


@tool
def get_order():
    async def execute(order_id: str):
        """Look up an order by id.

        Args:
            order_id: The order id.
        """
        if order_id == "B-0":
            raise ToolError(f"order {order_id} is not in the system")
        return {"order_id": order_id, "status": "shipped"}

    return execute


@scorer(metrics={"correct": [accuracy()], "polite": [mean()]})
def rubric():
    async def score(state: TaskState, target: Target) -> Score:
        text = state.output.completion
        correct = any(t.lower() in text.lower() for t in target)
        polite = 1.0 if "please" in text.lower() or "thank" in text.lower() else 0.0
        return Score(value={"correct": "C" if correct else "I", "polite": polite},
                     explanation=f"looked for {list(target)!r} in {text!r}")

    return score


@solver
def flaky():
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if state.sample_id == 3:
            raise RuntimeError("the harness lost the sandbox")
        return state

    return solve


def usage(output: ModelOutput) -> ModelOutput:
    # token usage given up front, so mockllm does not fetch a tokenizer (offline)
    output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return output


def main(out: Path) -> None:
    tmp = out / "_logs"
    shutil.rmtree(tmp, ignore_errors=True)
    orders = Task(
        name="orders",
        dataset=[Sample(id=1, input="Where is order A-17?", target="shipped"),
                 Sample(id=2, input="Where is order B-0?", target="not in the system"),
                 Sample(id=3, input="Say thanks", target="thank")],
        solver=[use_tools(get_order()), generate()],
        scorer=[rubric(), includes()],
        epochs=2,
    )
    greetings = Task(
        name="greetings",
        dataset=[Sample(id=1, input="Say hello", target="hello"),
                 Sample(id=2, input="Say goodbye", target="goodbye"),
                 Sample(id=3, input="Say please", target="please")],
        solver=[flaky(), generate()],
        scorer=includes(),
        epochs=2,
    )
    script = []
    for _ in range(2):  # epochs; max_samples=1 keeps the order fixed
        script += [
            ModelOutput.for_tool_call(model="mockllm/model", tool_name="get_order", tool_arguments={"order_id": "A-17"}),
            ModelOutput.from_content(model="mockllm/model", content="Order A-17 has shipped, thank you."),
            ModelOutput.for_tool_call(model="mockllm/model", tool_name="get_order", tool_arguments={"order_id": "B-0"}),
            ModelOutput.from_content(model="mockllm/model", content="Order B-0 is not in the system."),
            ModelOutput.from_content(model="mockllm/model", content="Thanks!"),
        ]
    [log_a] = inspect_eval(orders, model=get_model("mockllm/model", custom_outputs=[usage(o) for o in script]),
                           log_dir=str(tmp), log_format="eval", display="none", max_samples=1)
    replies = [ModelOutput.from_content(model="mockllm/model", content=t)
               for t in ("hello!", "see you", "hello again", "bye")]
    [log_b] = inspect_eval(greetings, model=get_model("mockllm/model", custom_outputs=[usage(o) for o in replies]),
                           log_dir=str(tmp), log_format="eval", display="none", max_samples=1, fail_on_error=False)
    shutil.copy(log_a.location, out / "orders.eval")
    write_eval_log(log_b, str(out / "greetings.json"))
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
