"""Write the Hugging Face ``save_to_disk`` folders the reader tests read, with ``datasets`` itself.

    python tests/data/hf/make_saved.py tests/data/hf    # any venv with datasets (5.2.0 made these)

``saved/`` is one ``Dataset`` (six rollouts of three tasks: scenario_id, rollout_index, messages,
reward), ``dict/`` a ``DatasetDict`` of it split into ``train`` (four rows) and ``test`` (two),
and ``counts.json`` what ``datasets`` reports on them (``num_rows`` per split, the mean reward),
the numbers the tests compare with.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import datasets


def rows() -> list[dict]:
    out = []
    for t in range(3):
        for k in range(2):
            out.append({"scenario_id": f"order-{t}", "rollout_index": k, "reward": float((t + k) % 2),
                        "messages": [{"role": "user", "content": f"Where is order A-{t}?"},
                                     {"role": "assistant", "content": "It shipped." if (t + k) % 2 else "No idea."}]})
    return out


def main(out: Path) -> None:
    data = datasets.Dataset.from_list(rows())
    for name in ("saved", "dict"):
        shutil.rmtree(out / name, ignore_errors=True)
    data.save_to_disk(str(out / "saved"))
    splits = datasets.DatasetDict({"train": data.select(range(4)), "test": data.select(range(4, 6))})
    splits.save_to_disk(str(out / "dict"))
    back = datasets.load_from_disk(str(out / "dict"))
    counts = {"datasets": datasets.__version__, "num_rows": {k: v.num_rows for k, v in back.items()},
              "mean_reward": sum(datasets.load_from_disk(str(out / "saved"))["reward"]) / data.num_rows}
    (out / "counts.json").write_text(json.dumps(counts, indent=1) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
