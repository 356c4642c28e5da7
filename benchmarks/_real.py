"""The pieces of ``bench_real.py``: inputs, the child process runner, the floor queries, the cells.

Kept apart from the command so ``tests/test_bench_harness.py`` can check them on a tiny file
(the floor queries give whileai's per-task numbers; the runner reports a child's own CPU and peak,
and kills one that passes its memory limit) without timing anything.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

#: The row generator (0.131 shape): ``../shared/bench/make_rollouts.py`` beside the repository,
#: as in CI and for users; ``WAI_BENCH_GENERATOR`` or ``--generator`` points elsewhere.
GENERATOR = Path(os.environ.get("WAI_BENCH_GENERATOR") or REPO.parent / "shared" / "bench" / "make_rollouts.py")
#: Where the generator's rows live (read, and written there when missing): ``WAI_BENCH_DATA`` or
#: ``--data`` reuses a folder generated before (``benchmarks/data`` is git-ignored).
DATA = Path(os.environ.get("WAI_BENCH_DATA") or HERE / "data")
#: Where the files whileai's own writer writes from those rows go (always this checkout's own).
OWN_DATA = HERE / "data"
K = 8
SHIFT_AFTER = 0.4
SIZES = {"100k": 100_000, "1m": 1_000_000}
#: Rows converted through whileai's reader and writer at a time (one 100k chunk holds about 2 GB).
OWN_CHUNK_ROWS = 100_000


class BenchSetupError(RuntimeError):
    """An input the benchmark needs is missing and cannot be made; the message says what to do."""


# ---- inputs ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Inputs:
    """The files of one size: before/after runs in three kinds and the eval set."""

    tag: str
    rows: int
    files: dict[str, tuple[Path, Path]] = field(default_factory=dict)  # kind -> (before, after)
    eval: Path | None = None


def generator_path(path: str | os.PathLike[str] | None = None) -> Path:
    """The generator script, or :class:`BenchSetupError` saying where it was looked for and what to pass."""
    gen = Path(path) if path else GENERATOR
    if not gen.is_file():
        raise BenchSetupError(
            f"the row generator must exist to make missing inputs, got no file at {str(gen)!r}. Pass "
            "--generator PATH/make_rollouts.py (or set WAI_BENCH_GENERATOR), or --data a folder that already "
            "holds before-<size>.jsonl, after-<size>.jsonl and eval-<size>.jsonl.")
    return gen


def generate(out: Path, rows: int, shift: float, *, generator: str | os.PathLike[str] | None = None,
             eval_out: Path | None = None) -> Path:
    """Write ``rows`` 0.131-shaped rows (``rows // K`` tasks, seed 0) with the generator, atomically."""
    gen = generator_path(generator)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    cmd = [sys.executable, str(gen), "--n-tasks", str(rows // K), "--k", str(K), "--seed", "0", "--shift", str(shift),
           "--out", str(tmp)]
    if eval_out is not None:
        cmd += ["--eval-out", str(eval_out)]
    subprocess.run(cmd, check=True)
    tmp.rename(out)
    return out


def own_files(source: Path, *, python: str = sys.executable, env: dict[str, str] | None = None) -> tuple[Path, Path]:
    """The generator's rows written by whileai's own writer: OpenAI-chat JSONL and Parquet.

    Each chunk of ``OWN_CHUNK_ROWS`` lines is read with ``whileai.table.frame`` and written with
    ``whileai.table.write_jsonl`` / ``write_parquet`` (in a child process of ``python``, so the
    whileai under test writes them); the JSONL chunks are laid end to end and the Parquet chunks
    copied row group by row group into one file under one unified schema. Built once, reused.
    """
    stem = source.name.removesuffix(".jsonl")
    jsonl, parquet = OWN_DATA / f"{stem}.own.jsonl", OWN_DATA / f"{stem}.own.parquet"
    if jsonl.exists() and parquet.exists():
        return jsonl, parquet
    OWN_DATA.mkdir(parents=True, exist_ok=True)
    code = f"""
import itertools, os, sys
import pyarrow as pa, pyarrow.parquet as pq
from whileai import table
src, jsonl, parquet, chunk = {str(source)!r}, {str(jsonl)!r}, {str(parquet)!r}, {OWN_CHUNK_ROWS}
work = parquet + ".parts"
os.makedirs(work, exist_ok=True)
parts = []
with open(src, "rb") as fh, open(jsonl + ".tmp", "wb") as out:
    for i in itertools.count():
        lines = list(itertools.islice(fh, chunk))
        if not lines:
            break
        piece = os.path.join(work, f"{{i}}.jsonl")
        with open(piece, "wb") as p:
            p.writelines(lines)
        df = table.frame(piece)
        table.write_jsonl(df, piece + ".out.jsonl")
        table.write_parquet(df, os.path.join(work, f"{{i}}.parquet"))
        parts.append(os.path.join(work, f"{{i}}.parquet"))
        del df
        with open(piece + ".out.jsonl", "rb") as p:
            while block := p.read(1 << 24):
                out.write(block)
        os.remove(piece); os.remove(piece + ".out.jsonl")
        print(f"  own writer: chunk {{i}} done", file=sys.stderr, flush=True)
schemas = [pq.read_schema(p) for p in parts]
schema = pa.unify_schemas(schemas, promote_options="permissive").with_metadata(schemas[0].metadata)
with pq.ParquetWriter(parquet + ".tmp", schema, compression="zstd") as writer:
    for p in parts:
        f = pq.ParquetFile(p)
        for g in range(f.num_row_groups):
            t = f.read_row_group(g)
            cols = [t.column(n).cast(schema.field(n).type) if n in t.column_names else pa.nulls(t.num_rows, schema.field(n).type)
                    for n in schema.names]
            writer.write_table(pa.Table.from_arrays(cols, schema=schema))
        os.remove(p)
os.rmdir(work)
os.replace(jsonl + ".tmp", jsonl)
os.replace(parquet + ".tmp", parquet)
"""
    subprocess.run([python, "-c", code], check=True, cwd=tempfile.gettempdir(), env=env)
    return jsonl, parquet


def generator_parquet(source: Path) -> Path:
    """The generator's rows as the generator writes Parquet (``--parquet``: pyarrow's JSON reader, then its writer); built once."""
    target = source.with_suffix(".parquet")
    if not target.exists():
        import pyarrow.json as pj
        import pyarrow.parquet as pq

        tmp = target.with_name(target.name + ".tmp")
        pq.write_table(pj.read_json(source), tmp)
        tmp.rename(target)
    return target


def inputs(tag: str, *, data: Path = DATA, generator: str | os.PathLike[str] | None = None, kinds: tuple[str, ...] = ("gen", "own", "parquet"),
           python: str = sys.executable, env: dict[str, str] | None = None) -> Inputs:
    """The files of size ``tag`` (``100k``, ``1m``): generated or converted where missing, reused otherwise."""
    rows = SIZES[tag]
    before, after, ev = data / f"before-{tag}.jsonl", data / f"after-{tag}.jsonl", data / f"eval-{tag}.jsonl"
    if not before.exists() or not ev.exists():
        generate(before, rows, 0.0, generator=generator, eval_out=ev)
    if not after.exists():
        generate(after, rows, SHIFT_AFTER, generator=generator)
    files: dict[str, tuple[Path, Path]] = {"gen": (before, after)}
    if "genpq" in kinds:  # the generator's own Parquet of the same rows (make_rollouts.py --parquet)
        files["genpq"] = (generator_parquet(before), generator_parquet(after))
    if "own" in kinds or "parquet" in kinds:
        own_b, own_a = own_files(before, python=python, env=env), own_files(after, python=python, env=env)
        files["own"] = (own_b[0], own_a[0])
        files["parquet"] = (own_b[1], own_a[1])
    return Inputs(tag=tag, rows=rows, files={k: v for k, v in files.items() if k in kinds}, eval=ev)


# ---- one process, measured from outside --------------------------------------------------------

#: Written first in every Python child: its own peak resident memory (``VmHWM``) into the file the
#: parent names, at exit, so the peak is the child's whole run (interpreter, imports, input).
_PRELUDE = """
import atexit as _bench_atexit, os as _bench_os
def _bench_peak():
    try:
        with open("/proc/self/status") as _s, open(_bench_os.environ["BENCH_PEAK_FILE"], "w") as _o:
            _o.write(next(l.split()[1] for l in _s if l.startswith("VmHWM:")))
    except Exception:
        pass
_bench_atexit.register(_bench_peak)
"""


@dataclass
class Measured:
    """One child's run: CPU seconds (user + system, its threads included), wall seconds, peak MiB."""

    cpu: float
    wall: float
    peak_mib: float
    status: str  # "ok", "failed: ...", "killed above N GB", "timed out after N s"
    out: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _status_kib(pid: int, field_name: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def run_python(code: str, *, python: str = sys.executable, args: list[str] | None = None, env: dict[str, str] | None = None,
               memory_mib: int = 4096, timeout: float = 600.0, interval: float = 0.02) -> Measured:
    """Run ``code`` in a fresh ``python`` and measure it from outside.

    CPU seconds are the child's own ``ru_utime + ru_stime`` from ``wait4`` (interpreter start,
    imports and every thread included); peak MiB is its ``VmHWM`` (written by the child at exit,
    else the last the parent saw). The parent polls the child's resident memory every ``interval``
    seconds and kills it above ``memory_mib`` ("killed above N GB"), and after ``timeout`` seconds.
    The child starts in the temp folder, so no checkout is imported from the current directory.
    """
    peak_file = tempfile.NamedTemporaryFile(prefix="bench-peak-", delete=False)
    peak_file.close()
    child_env = dict(os.environ if env is None else env)
    child_env["BENCH_PEAK_FILE"] = peak_file.name
    child_env.pop("PYTHONDONTWRITEBYTECODE", None)
    out_file = tempfile.TemporaryFile()
    t0 = time.perf_counter()
    proc = subprocess.Popen([python, "-c", _PRELUDE + code, *(args or [])], stdout=out_file, stderr=subprocess.STDOUT,
                            env=child_env, cwd=tempfile.gettempdir())
    status, seen_hwm, rusage, code_rc = "ok", 0, None, 0
    try:
        while True:
            pid, raw, rusage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                code_rc = os.waitstatus_to_exitcode(raw)
                break
            hwm = _status_kib(proc.pid, "VmHWM")
            rss = _status_kib(proc.pid, "VmRSS")
            seen_hwm = max(seen_hwm, hwm or 0, rss or 0)  # the RSS read after the HWM can be the higher
            if rss is not None and rss > memory_mib * 1024:
                status = f"killed above {memory_mib / 1024:.1f} GB"
                os.kill(proc.pid, signal.SIGKILL)
            elif time.perf_counter() - t0 > timeout:
                status = f"timed out after {timeout:.0f} s"
                os.kill(proc.pid, signal.SIGKILL)
            time.sleep(interval)
    finally:
        proc.returncode = 0  # reaped by wait4 above; Popen must not wait again
    wall = time.perf_counter() - t0
    out_file.seek(0)
    text = out_file.read().decode("utf-8", "replace")
    out_file.close()
    try:
        own = int(Path(peak_file.name).read_text() or 0)
    except (OSError, ValueError):
        own = 0
    Path(peak_file.name).unlink(missing_ok=True)
    cpu = rusage.ru_utime + rusage.ru_stime if rusage is not None else float("nan")
    if status == "ok" and code_rc != 0:
        last = [line for line in text.strip().splitlines() if line.strip()][-1:] or [f"exit {code_rc}"]
        status = f"failed (exit {code_rc}): {last[0][:160]}"
    return Measured(cpu=cpu, wall=wall, peak_mib=max(own, seen_hwm) / 1024.0, status=status, out=text)


# ---- the floor: the DuckDB query a user would write ---------------------------------------------


def _quote(path: Path | str) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def source(path: Path | str, columns: dict[str, str] | None = None) -> str:
    """The DuckDB table function over a file: ``read_parquet``, or ``read_json`` with the declared
    columns (newline-delimited; all columns by DuckDB's own detection when ``columns`` is None)."""
    p = str(path)
    if p.endswith(".parquet"):
        return f"read_parquet({_quote(p)})"
    if columns is None:
        return f"read_json({_quote(p)}, format='newline_delimited')"
    cols = ", ".join(f"{name}: '{kind}'" for name, kind in columns.items())
    return f"read_json({_quote(p)}, format='newline_delimited', columns={{{cols}}})"


#: The columns the hack-scan floor reads: the final reply, which the generator writes as
#: ``final_text`` and whileai's writer keeps.
_REPLY = {"scenario_id": "VARCHAR", "reward": "DOUBLE", "final_text": "VARCHAR"}


def per_task_sql(path: Path | str) -> str:
    """Each task's pass rate (mean reward) from the file: the floor's per-task means."""
    return (f"SELECT scenario_id, avg(reward) AS rate FROM {source(path, {'scenario_id': 'VARCHAR', 'reward': 'DOUBLE'})} "
            "GROUP BY scenario_id")


def floor_sql(step: str, a: Path | str, b: Path | str | None = None, *, eval_path: Path | str | None = None,
              out: Path | str | None = None) -> list[str]:
    """The DuckDB statements computing ``step``'s statistic on the same file (the last one's result is fetched).

    - pass_at: the per-task pass rates and their mean (pass@1) and count;
    - compare: the paired per-task difference of two runs (mean, its standard error, tasks);
    - select_rl: the tasks whose pass rate lies in the band, the first ``target / k`` of them in a
      seeded hash order, and their whole rows fetched;
    - select_sft: one row at the minimum reward a task (``top_per_prompt``), the first ``target``
      in a seeded hash order, whole rows fetched;
    - hack_scan: every word of the final reply against the reward centred within its task (mean
      lift and count per word, the top words by |lift|): the scan's first tier, no permutation floor;
    - decontaminate: the rows whose task or prompt (trimmed, lower case) is in the eval set
      removed, the clean rows fetched (exact and same-task matches; no n-gram near copies);
    - export: the conversations written as JSON lines.
    """
    from whileai.defaults import DIFFICULTY_BAND, SELECT_TARGET, SFT_MIN_REWARD

    key = {"scenario_id": "VARCHAR", "reward": "DOUBLE"}
    lo, hi = DIFFICULTY_BAND
    if step == "pass_at":
        return [f"SELECT count(*) AS n_tasks, avg(rate) AS pass_at_1 FROM ({per_task_sql(a)})"]
    if step == "compare":
        assert b is not None
        return [f"WITH x AS (SELECT scenario_id, avg(reward) AS r FROM {source(a, key)} GROUP BY 1), "
                f"y AS (SELECT scenario_id, avg(reward) AS r FROM {source(b, key)} GROUP BY 1) "
                "SELECT count(*) AS n_paired, avg(y.r - x.r) AS delta, stddev_samp(y.r - x.r) / sqrt(count(*)) AS se "
                "FROM x JOIN y USING (scenario_id)"]
    if step == "select_rl":
        n_tasks = -(-SELECT_TARGET // K)
        return [f"SELECT * FROM {source(a)} WHERE scenario_id IN (SELECT scenario_id FROM {source(a, key)} GROUP BY 1 "
                f"HAVING avg(reward) BETWEEN {lo} AND {hi} ORDER BY hash(scenario_id) LIMIT {n_tasks})"]
    if step == "select_sft":
        return [f"SELECT * FROM {source(a)} WHERE reward >= {SFT_MIN_REWARD} "
                f"QUALIFY row_number() OVER (PARTITION BY scenario_id ORDER BY hash(rollout_index)) = 1 "
                f"ORDER BY hash(scenario_id, rollout_index) LIMIT {SELECT_TARGET}"]
    if step == "hack_scan":
        return [f"WITH d AS (SELECT row_number() OVER () AS rid, reward - avg(reward) OVER (PARTITION BY scenario_id) AS dr, "
                f"final_text AS text FROM {source(a, _REPLY)}), "
                "w AS (SELECT DISTINCT rid, dr, unnest(string_split(lower(text), ' ')) AS word FROM d) "
                "SELECT word, count(*) AS n, avg(dr) AS lift FROM w GROUP BY word HAVING count(*) >= 20 "
                "ORDER BY abs(avg(dr)) DESC LIMIT 20"]
    if step == "decontaminate":
        assert eval_path is not None
        ev = f"read_json({_quote(eval_path)}, format='newline_delimited', columns={{scenario_id: 'VARCHAR', prompt: 'VARCHAR'}})"
        return [f"SELECT * FROM {source(a)} WHERE scenario_id NOT IN (SELECT scenario_id FROM {ev} WHERE scenario_id IS NOT NULL) "
                f"AND lower(trim(prompt)) NOT IN (SELECT lower(trim(prompt)) FROM {ev} WHERE prompt IS NOT NULL)"]
    if step == "export":
        assert out is not None
        msgs = {"messages": "JSON"} if not str(a).endswith(".parquet") else None
        src = source(a, msgs) if msgs else source(a)
        return [f"COPY (SELECT messages FROM {src}) TO {_quote(out)} (FORMAT json)", f"SELECT count(*) FROM read_json_objects({_quote(out)})"]
    raise ValueError(f"no floor query for step {step!r}")


def floor_code(statements: list[str]) -> str:
    """The child's code for a floor cell: run the statements, fetch the last one's result as Arrow."""
    return ("import duckdb, json\ncon = duckdb.connect()\n"
            f"stmts = {statements!r}\n"
            "for s in stmts[:-1]:\n    con.execute(s)\n"
            "r = con.execute(stmts[-1])\n"
            "t = r.to_arrow_table() if hasattr(r, 'to_arrow_table') else r.fetch_arrow_table()\n"
            "print('RESULT', t.num_rows, 'rows;', json.dumps(t.slice(0, 1).to_pylist(), default=str)[:200])\n")


# ---- whileai's cells ------------------------------------------------------------------------------


def whileai_code(step: str, a: str, b: str | None = None, *, eval_path: str | None = None, out: str | None = None) -> str:
    """The child's code for whileai's cell: the ``wai`` command for pass_at and compare, the call otherwise."""
    if step in ("pass_at", "compare"):
        argv = ["pass-at", a] if step == "pass_at" else ["compare", a, str(b)]
        return f"import sys\nfrom whileai.cli.main import main\nrc = main({argv!r})\nsys.stdout.flush()\nsys.exit(0 if rc in (0, 1) else rc)\n"
    head = "import whileai as wai\n"
    if step in ("select_rl", "select_sft"):
        mode = step.removeprefix("select_")
        return head + f"s = wai.select({a!r}, mode={mode!r})\nprint('RESULT', len(s), 'rows kept')\n"
    if step == "hack_scan":
        return head + f"r = wai.hack_scan({a!r})\nprint('RESULT top', r.top_feature)\n"
    if step == "decontaminate":
        return head + f"clean, r = wai.decontaminate({a!r}, eval={eval_path!r})\nprint('RESULT', len(clean), 'clean rows')\n"
    if step == "export":
        return head + f"r = wai.export({a!r}, {out!r}, format='openai')\nprint('RESULT', r['n_written'], 'written')\n"
    raise ValueError(f"no whileai cell for step {step!r}")


def wai131_code(step: str, a: str, b: str | None = None, *, eval_path: str | None = None, out: str | None = None) -> str:
    """The child's code for whileai 0.131's equivalent call (its public API, the rows read as its users read them)."""
    load = "import json\ndef rows(p):\n    with open(p) as fh:\n        return [json.loads(line) for line in fh if line.strip()]\n"
    head = "import whileai as wai\n" + load
    if step == "pass_at":
        return head + f"r = wai.pass_at(rows({a!r}))\nprint('RESULT', str(r)[:160])\n"
    if step == "compare":
        return head + f"r = wai.compare(rows({a!r}), rows({b!r}))\nprint('RESULT', str(r)[:160])\n"
    if step in ("select_rl", "select_sft"):
        mode = step.removeprefix("select_")
        return head + f"s = wai.select({a!r}, mode={mode!r})\nprint('RESULT', len(s), 'rows kept')\n"
    if step == "hack_scan":
        return head + f"r = wai.hack_scan(rows({a!r}))\nprint('RESULT', str(r)[:160])\n"
    if step == "decontaminate":
        return head + f"clean, r = wai.decontaminate(rows({a!r}), rows({eval_path!r}))\nprint('RESULT', len(clean), 'clean rows')\n"
    if step == "export":
        return head + f"r = wai.export(rows({a!r}), {out!r}, format='openai')\nprint('RESULT', str(r)[:160])\n"
    raise ValueError(f"no 0.131 cell for step {step!r}")
