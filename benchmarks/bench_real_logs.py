"""Other tools' logs at scale: a folder of inspect-ai ``.eval`` logs, read by whileai and by inspect-ai.

    python benchmarks/bench_real_logs.py [--samples 100000] [--per-log 400] [--folder DIR]
        [--data DIR] [--generator PATH] [--whileai CHECKOUT] [--memory-gb 4] [--results FILE.jsonl]

The folder is written once with inspect-ai's own log writer (``inspect_ai.log.write_eval_log``,
offline, no model called) from the generator's 0.131-shaped rows: each log is one inspect task of
``per_log / 8`` samples run for 8 epochs, a sample's messages the row's conversation (user ask,
assistant tool calls, tool results, final reply), its ``match`` score C or I from the row's reward.
``pip install inspect-ai pandas`` first (``.venv/bin/pip install inspect-ai pandas``; inspect's
``samples_df`` needs pandas).

Logs are ``PER_LOG`` = 400 samples each (250 logs at 100k). inspect-ai's writer costs time
quadratic in a log's samples (see ``PER_LOG``): profiled, the recorder's scan of its buffer on each
sample was over half of the writer's CPU at 3,000-4,000 samples a log (6.5 ms a sample at 4,000,
about 4 ms at 400; the rest is inspect's own per-sample work: ``condense_sample`` moving long
texts to attachments, pydantic validation, one zstd-compressed zip member a sample). One process
writes the 100k folder in about 7 CPU minutes (4 ms a sample, measured on 1,600; 11 min 54 s of
wall time on the shared 2-core host). ``inspect_ai.log.read_eval_log`` reads the logs back (status
success, 400 samples of 50 ids x 8 epochs) and ``samples_df`` reads the folder.

Cells, each a fresh process measured as in ``bench_real.py`` (CPU seconds of the child, its peak
resident memory, killed above ``--memory-gb``): ``wai pass-at FOLDER``, ``whileai.table.frame(FOLDER)``,
and inspect-ai's ``inspect_ai.analysis.samples_df(FOLDER)`` (its default sample columns, one row
a sample, built from each log's sample summaries, so no conversation is parsed; whileai parses
every sample's whole conversation). Target for whileai: under 60 CPU s and 2 GB at 100k samples.

Measured (inspect-ai 0.3.285, pandas 3.1.2, whileai i34inspect at b5ee1cd, 2-core shared host,
two runs)::

    python benchmarks/bench_real_logs.py --samples 100000 --folder /tmp/evals100k --data /work/benchdata

    | 100,000 samples in 250 .eval logs (100 MB) | CPU s (run 1, run 2) | peak MiB (run 1, run 2) |
    |--------------------------------------------|----------------------|-------------------------|
    | whileai: wai pass-at FOLDER                | 37.6, 41.5           | 591, 606                |
    | whileai: table.frame(FOLDER)               | 37.6, 38.8           | 563, 559                |
    | inspect-ai: samples_df(FOLDER)             | 50.1, 57.6           | 876, 864                |

Target met: whileai reads the 100k folder in 38-42 CPU s and about 600 MiB, imports included.
Of that, ``table/_inspect.py`` (unzip, ``json.loads`` of each sample, rows) is about two thirds and
the row normaliser (``table/_read.py`` ``_from_reader_rows``) one third (29.6 and 14.3 CPU s
timed apart in one process, on the loaded host).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import zipfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _real  # noqa: E402

K = 8
#: Samples per ``.eval`` log (50 tasks x 8 epochs, 250 logs at 100k). inspect-ai's recorder scans
#: the samples it buffered on each ``log_sample`` (``_recorders/eval.py`` ``buffer_sample``, to drop
#: an earlier record of the same id and epoch), and ``write_eval_log`` buffers a whole log, so
#: writing one log costs time quadratic in its samples: 6.5 ms a sample at 4,000 a log against
#: about 4 ms at 400 (0.3.285, this machine).
PER_LOG = 400


def _sample(row: dict[str, Any], sample_id: int) -> Any:
    """One inspect ``EvalSample`` from a generated row (its conversation, reply and reward)."""
    from inspect_ai.log import EvalSample
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser, ModelOutput
    from inspect_ai.scorer import Score
    from inspect_ai.tool import ToolCall

    messages: list[Any] = []
    calls: list[str] = []
    for i, m in enumerate(row.get("messages") or []):
        role, content = m.get("role"), m.get("content") or ""
        if role == "user":
            messages.append(ChatMessageUser(content=content))
        elif role == "assistant":
            tool_calls = []
            for j, call in enumerate(m.get("tool_calls") or []):
                args = call.get("arguments")
                args = json.loads(args) if isinstance(args, str) else (args or {})
                calls.append(f"call_{i}_{j}")
                tool_calls.append(ToolCall(id=calls[-1], function=call.get("name") or "tool", arguments=args))
            messages.append(ChatMessageAssistant(content=content, tool_calls=tool_calls or None, model="policy-v1"))
        elif role == "tool":
            messages.append(ChatMessageTool(content=content, tool_call_id=calls.pop(0) if calls else None, function=m.get("name")))
    final = row.get("final_text") or ""
    return EvalSample(id=sample_id, epoch=int(row.get("rollout_index", 0)) + 1, input=row.get("prompt") or "",
                      target=(row.get("privileged") or {}).get("reference", ""), messages=messages,
                      output=ModelOutput.from_content(model="policy-v1", content=final),
                      scores={"match": Score(value="C" if row.get("reward") else "I", answer=final[:80])},
                      metadata={"category": row.get("category"), "tier": row.get("tier")})


def write_logs(folder: Path, source: Path, samples: int, per_log: int) -> Path:
    """Write ``samples`` samples from ``source`` (rows of ``K`` rollouts a task, in task order) as ``.eval`` logs of ``per_log`` each."""
    from datetime import datetime, timezone

    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalResults,
        EvalScore,
        EvalSpec,
        write_eval_log,
    )
    from tqdm.auto import tqdm

    done = folder / ".complete"
    if done.exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    created = datetime(2026, 12, 1, tzinfo=timezone.utc).isoformat()
    with open(source, encoding="utf-8") as fh, tqdm(total=samples, desc="inspect logs", unit="sample") as bar:
        for n in range(-(-samples // per_log)):
            target = folder / f"2026-12-01T00-00-00+00-00_orders-{n:03d}_eval{n:03d}.eval"
            lines = list(itertools.islice(fh, min(per_log, samples - n * per_log)))
            if target.exists() and zipfile.is_zipfile(target):  # written by an earlier run: resume after it
                bar.update(len(lines))
                continue
            rows = [json.loads(line) for line in lines]
            task_ids: dict[str, int] = {}
            batch = [_sample(r, task_ids.setdefault(r["scenario_id"], len(task_ids) + 1)) for r in rows]
            spec = EvalSpec(created=created, task=f"orders_{n:03d}", task_id=f"task{n:03d}", eval_id=f"eval{n:03d}",
                            run_id="run0", dataset=EvalDataset(name="orders", samples=len(task_ids)),
                            model="openai/policy-v1", config=EvalConfig(epochs=K))
            log = EvalLog(eval=spec, status="success", samples=batch,
                          results=EvalResults(total_samples=len(batch), completed_samples=len(batch),
                                              scores=[EvalScore(name="match", scorer="match", metrics={})]))
            write_eval_log(log, str(target))
            bar.update(len(batch))
    done.write_text(f"{samples} samples\n")
    return folder


def cells(folder: Path) -> list[tuple[str, str]]:
    """(who, code) of each cell on the folder."""
    f = str(folder)
    return [
        ("whileai: wai pass-at FOLDER", "import sys\nfrom whileai.cli.main import main\n"
         f"sys.exit(main(['pass-at', {f!r}]))\n"),
        ("whileai: table.frame(FOLDER)", f"from whileai import table\ndf = table.frame({f!r})\nprint('RESULT', df.height, 'rows')\n"),
        ("inspect-ai: samples_df(FOLDER)", "from inspect_ai.analysis import samples_df\n"
         f"df = samples_df({f!r}, quiet=True)\nprint('RESULT', len(df), 'rows')\n"),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--per-log", type=int, default=PER_LOG, help="samples per .eval log (a multiple of 8)")
    parser.add_argument("--folder", default=None, help="the logs' folder (default benchmarks/data/inspect-<samples>)")
    parser.add_argument("--data", default=str(_real.DATA), help="folder of the generator's rows (before-100k.jsonl)")
    parser.add_argument("--generator", default=None)
    parser.add_argument("--whileai", default=None, help="time the whileai of this checkout (put on PYTHONPATH)")
    parser.add_argument("--memory-gb", type=float, default=4.0)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--results", default=None, help="append each cell's record to this JSON-lines file")
    parser.add_argument("--write-only", action="store_true", help="write the logs' folder and stop")
    parser.add_argument("--no-write", action="store_true", help="measure the folder as it is (the logs written so far)")
    args = parser.parse_args(argv)
    tag = "1m" if args.samples > 100_000 else "100k"
    try:
        ins = _real.inputs(tag, data=Path(args.data), generator=args.generator, kinds=("gen",))
    except _real.BenchSetupError as exc:
        print(f"bench_real_logs: {exc}", file=sys.stderr)
        return 2
    folder = Path(args.folder) if args.folder else _real.OWN_DATA / f"inspect-{args.samples}"
    if not args.no_write:
        write_logs(folder, ins.files["gen"][0], args.samples, args.per_log)
    for log in folder.glob("*.eval"):
        if not zipfile.is_zipfile(log):  # cut short by a stopped writer
            log.unlink()
    if args.write_only:
        return 0
    env = dict(os.environ)
    if args.whileai:
        env["PYTHONPATH"] = os.pathsep.join([str(Path(args.whileai).resolve()), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    from bench_real import checkout_label

    label = checkout_label(sys.executable, env)
    print(f"whileai under test: {label}\n")
    print(f"| inspect-ai samples in {len(list(folder.glob('*.eval')))} .eval logs | CPU s | peak MiB | result |")
    print("|---|---|---|---|")
    for who, code in cells(folder):
        m = _real.run_python(code, env=env, memory_mib=int(args.memory_gb * 1024), timeout=args.timeout)
        result = next((x.removeprefix("RESULT").strip() for x in m.out.splitlines() if x.startswith("RESULT")),
                      m.out.strip().splitlines()[0][:80] if m.ok and m.out.strip() else m.status)
        print(f"| {who} | {m.cpu:.2f} | {m.peak_mib:,.0f} | {result} |", flush=True)
        if args.results:
            with open(args.results, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"cell": who, "samples": args.samples, "label": label if who.startswith("whileai") else "inspect-ai",
                                     "cpu": m.cpu, "wall": m.wall, "peak_mib": m.peak_mib, "status": m.status,
                                     "result": result}) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
