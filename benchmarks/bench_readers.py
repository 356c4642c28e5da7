"""Reading other tools' files: an inspect_ai log, lm-eval samples, promptfoo output, by size.

Each file is the real one under tests/data/<tool>/ with its samples repeated (fresh ids) to the
row count; the reference is plain ``json`` parsing of the same file.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import DATA, row  # noqa: E402

TESTS = Path(__file__).resolve().parent.parent / "tests" / "data"


def _inspect_log(n: int) -> Path:
    path = DATA / f"inspect_{n}.json"
    if not path.exists():
        log = json.loads((TESTS / "inspect" / "greetings.json").read_text())
        base = [s for s in log["samples"] if not s.get("error")]
        samples = []
        for i in range(n):
            sample = copy.deepcopy(base[i % len(base)])
            sample["id"], sample["epoch"], sample["uuid"] = i // 4, i % 4 + 1, f"u{i}"
            samples.append(sample)
        log["samples"] = samples
        log["eval"]["dataset"]["sample_ids"] = sorted({s["id"] for s in samples})
        path.write_text(json.dumps(log))
    return path


def _lm_eval_samples(n: int) -> Path:
    folder = DATA / f"lm_eval_{n}"
    path = folder / "samples_wai_gen_2026-01-01T00-00-00.000000.jsonl"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        lines = [json.loads(x) for x in next((TESTS / "lm_eval" / "run").glob("samples_wai_gen_*")).read_text().splitlines()]
        with open(path, "w") as handle:
            for i in range(n // 3):  # three responses (repeats) per document
                doc = dict(lines[i % len(lines)], doc_id=i)
                handle.write(json.dumps(doc) + "\n")
    return path


def _promptfoo(n: int) -> Path:
    path = DATA / f"promptfoo_{n}.json"
    if not path.exists():
        data = json.loads((TESTS / "promptfoo" / "results.json").read_text())
        base = data["results"]["results"]
        data["results"]["results"] = [dict(base[i % len(base)], id=f"r{i}", testCase=dict(
            base[i % len(base)]["testCase"], description=f"case {i // 4}")) for i in range(n)]
        path.write_text(json.dumps(data))
    return path


def run(sizes: list[int]) -> list[dict[str, Any]]:
    from whileai import table

    DATA.mkdir(exist_ok=True)
    out = []
    for n in sizes:
        if n > 100_000:
            continue  # these files are held whole in memory by their own tools too
        for call, path in (("frame(inspect .json log)", _inspect_log(n)),
                           ("frame(lm-eval samples_*.jsonl)", _lm_eval_samples(n)),
                           ("frame(promptfoo results.json)", _promptfoo(n))):
            if path.suffix == ".jsonl":
                def plain(p: Path = path) -> None:
                    with open(p) as handle:
                        [json.loads(line) for line in handle]
            else:
                def plain(p: Path = path) -> None:
                    json.loads(p.read_text())
            out.append(row(call, n, lambda p=path: table.frame(p), reference="json parse", reference_fn=plain,
                           note=f"{path.stat().st_size / 2**20:.0f} MiB"))
    return out


if __name__ == "__main__":
    for r in run([10_000]):
        print(r)
