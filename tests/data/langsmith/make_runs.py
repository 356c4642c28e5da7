"""Write a LangSmith run export with the langsmith SDK's own objects and serialiser (offline).

    python make_runs.py runs.jsonl

Root runs are traced with ``langsmith.run_trees.RunTree`` (what ``@traceable`` builds), with an
LLM child run; each run is then turned into the ``langsmith.schemas.Run`` that
``Client.list_runs`` returns (adding ``reference_example_id`` and the ``feedback_stats`` an
experiment's evaluators leave), and written one per line with the SDK's JSON serialiser. No
LangSmith server is reached: nothing is posted.
"""

import sys
import uuid
from datetime import datetime, timedelta, timezone

from langsmith import schemas
from langsmith._internal._serde import dumps_json
from langsmith.run_trees import RunTree

EXAMPLES = [("where is order A-17?", "shipped", uuid.UUID(int=1)), ("refund order B-2", "refunded", uuid.UUID(int=2))]
REPLIES = {0: ["Order A-17 has shipped.", "I don't know."], 1: ["Refunded B-2.", "Refunded B-2, sorry!"]}


def main(out: str) -> None:
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    lines = []
    n = 0
    for i, (question, want, example_id) in enumerate(EXAMPLES):
        for rep, reply in enumerate(REPLIES[i]):
            n += 1
            t0 = start + timedelta(seconds=10 * n)
            root = RunTree(name="support_agent", run_type="chain", inputs={"question": question},
                           start_time=t0, id=uuid.UUID(int=100 + n), session_name="whileai-fixture",
                           extra={"metadata": {"ls_model_name": "gpt-4o-mini", "repetition": rep}})
            llm = root.create_child(name="ChatOpenAI", run_type="llm",
                                    inputs={"messages": [{"role": "user", "content": question}]},
                                    start_time=t0 + timedelta(seconds=1))
            llm.end(outputs={"choices": [{"message": {"role": "assistant", "content": reply}}]},
                    end_time=t0 + timedelta(seconds=2))
            error = "TimeoutError: upstream tool did not answer" if (i, rep) == (1, 1) else None
            root.end(outputs=None if error else {"output": reply}, error=error, end_time=t0 + timedelta(seconds=3))
            correct = 1.0 if want in reply.lower() else 0.0
            for tree, stats in ((root, None if error else {"correctness": {"n": 1, "avg": correct, "values": {}},
                                                           "polite": {"n": 1, "avg": 1.0 if "sorry" in reply else 0.0,
                                                                      "values": {}}}),
                                (llm, None)):
                data = tree.dict(exclude={"child_runs", "parent_run", "client", "ls_client"})
                fields = {k: v for k, v in data.items() if k in schemas.Run.model_fields}
                fields.update(reference_example_id=example_id if tree is root else None, feedback_stats=stats,
                              trace_id=root.trace_id, dotted_order=tree.dotted_order)
                run = schemas.Run(**fields)
                lines.append(dumps_json(run.model_dump()).decode())
    with open(out, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
