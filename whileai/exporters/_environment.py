"""``export_environment``: a ``verifiers`` environment package (module plus dataset) for GRPO."""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from whileai import table
from whileai.defaults import (
    DIFFICULTY_BAND,
    ENV_VERIFIERS_RANGE,
    HOLDOUT_BUCKET_HEX_CHARS,
    HOLDOUT_SHARE,
    PASS_THRESHOLD,
)
from whileai.errors import ArgumentError, InputFileError, TrainingSelectionError
from whileai.exporters._env_template import INIT_TEMPLATE, V1_TEMPLATE
from whileai.exporters._report import EnvironmentReport
from whileai.exporters._tools import resolve_tools
from whileai.table import IntoRows
from whileai.table import normalize as nz

__all__ = ["export_environment", "holdout_bucket", "load_environment"]

_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")


def holdout_bucket(task_keys: list[str], *, salt: str = "") -> list[float]:
    """Each task's split bucket in [0, 1): the first hex characters of sha256(salt + task_key).

    The same rule as ``whileai.store.split`` (``HOLDOUT_BUCKET_HEX_CHARS``), so a task lands on the
    same side in a pushed dataset and in an exported environment, every run.
    """
    scale = float(16**HOLDOUT_BUCKET_HEX_CHARS)
    return [int(hashlib.sha256((salt + k).encode("utf-8")).hexdigest()[:HOLDOUT_BUCKET_HEX_CHARS], 16) / scale
            for k in task_keys]


def _fill(template: str, name: str, version: str) -> str:
    prefix = "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)
    return template.replace("__CLASS__", prefix).replace("__NAME__", name).replace("__VERSION__", version)


def _tool_refs(tools: Any) -> tuple[dict[str, str], list[str]]:
    """The live tools: ``{name: "module:function"}`` for callables the trainer can import.

    Also returns the names of the callables it cannot import (they replay their recorded results).
    """
    items = [tools] if callable(tools) else list(tools) if isinstance(tools, (list, tuple)) else []
    refs: dict[str, str] = {}
    missing: list[str] = []
    for item in items:
        if not callable(item) or isinstance(item, Mapping):
            continue
        fn = getattr(item, "fn", item)  # a @wai.tool wraps the function
        name = str(getattr(item, "name", None) or getattr(fn, "__name__", "?"))
        module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
        if module and module != "__main__" and qualname and "<" not in qualname:
            refs[name] = f"{module}:{qualname}"
        else:
            missing.append(name)
    return refs, missing


def _reward_ref(reward: Any) -> str | None:
    if reward is None:
        return None
    if isinstance(reward, str):
        mod_part, sep, attr = reward.partition(":")
        if not sep or not mod_part or not attr:
            raise ArgumentError(f"reward must be 'module:function' or an importable function, got {reward!r}. "
                                "Pass e.g. reward='my_judges:refund_judge'.", argument="reward")
        return reward
    module = getattr(reward, "__module__", None)
    qualname = getattr(reward, "__qualname__", None) or getattr(type(reward), "__qualname__", None)
    if not module or not qualname or module == "__main__" or "<" in qualname:
        raise ArgumentError(
            f"reward must be importable by the trainer as module:function, got {qualname or reward!r} from module "
            f"{module!r}. Define the judge as a top-level function in an importable module, or pass 'module:function'.",
            argument="reward",
        )
    if not callable(reward) or getattr(reward, "__qualname__", None) is None:  # an instance: refer to it by name
        raise ArgumentError(f"reward must be a function or 'module:function', got {type(reward).__name__}. "
                            "Pass a function, or 'module:attr' naming a callable object.", argument="reward")
    return f"{module}:{qualname}"


def _tool_results(df: pl.DataFrame) -> pl.DataFrame:
    """Per task, the recorded (tool, arguments) -> result pairs, first seen wins."""
    msgs = df.select("task_key", pl.int_range(pl.len(), dtype=pl.Int64).alias("_r"), "messages").explode("messages")
    msgs = msgs.filter(pl.col("messages").is_not_null()).unnest("messages")
    calls = (msgs.filter(pl.col("role") == "assistant").select("task_key", "_r", "tool_calls").explode("tool_calls")
             .filter(pl.col("tool_calls").is_not_null()).unnest("tool_calls")
             .select("task_key", "_r", pl.col("id").alias("_id"), "name", "arguments"))
    results = msgs.filter(pl.col("role") == "tool").select("_r", pl.col("tool_call_id").alias("_id"),
                                                           pl.col("content").alias("result"))
    joined = calls.join(results, on=["_r", "_id"], how="inner").unique(["task_key", "name", "arguments"],
                                                                        keep="first", maintain_order=True)
    return joined.group_by("task_key", maintain_order=True).agg(
        pl.struct("name", "arguments", "result").alias("tool_results"))


def _tasks(df: pl.DataFrame, band: tuple[float, float]) -> tuple[pl.DataFrame, int, int]:
    """One row per task inside the band: key, ask, pass rate, graded count, recorded tool results."""
    from whileai.measure import task_stats

    reward_df = df.select("task_key", "reward") if "reward" in df.columns else \
        df.select("task_key").with_columns(pl.lit(None, pl.Float64).alias("reward"))
    stats = task_stats(reward_df, threshold=PASS_THRESHOLD).with_columns(
        pl.when(pl.col("n_graded") > 0).then(pl.col("c") / pl.col("n_graded")).alias("pass_rate"))
    order = [pl.col("rollout_index")] if "rollout_index" in df.columns else []
    firsts = (df.with_row_index("_i").sort([*order, "_i"]) if order else df).group_by("task_key", maintain_order=True).agg(
        pl.col("prompt").first().alias("prompt_text"))
    tasks = stats.join(firsts, on="task_key", how="left", maintain_order="left")
    graded = int(tasks.select((pl.col("n_graded") > 0).sum()).item())
    lo, hi = band
    outside = (pl.col("n_graded") > 0) & ((pl.col("pass_rate") < lo) | (pl.col("pass_rate") > hi))
    dropped = int(tasks.select(outside.sum()).item())
    tasks = tasks.filter(~outside)
    tool_results = _tool_results(df) if "messages" in df.columns else None
    if tool_results is not None and tool_results.height:
        tasks = tasks.join(tool_results, on="task_key", how="left", maintain_order="left")
    else:
        tasks = tasks.with_columns(pl.lit(None).alias("tool_results"))
    return tasks, graded, dropped


def _task_row(task: dict[str, Any], index: int, name: str, sys_prompt: str | None) -> dict[str, Any]:
    prompt = ([{"role": "system", "content": sys_prompt}] if sys_prompt else []) + [
        {"role": "user", "content": task["prompt_text"] or ""}]
    info = {
        "task_key": task["task_key"],
        "prompt_text": task["prompt_text"],
        "pass_rate": task["pass_rate"],
        "k": task["n_graded"],
        "tool_results": [{"name": t["name"], "arguments": nz.loads_or_raw(t["arguments"]), "result": t["result"]}
                         for t in (task.get("tool_results") or [])],
    }
    return {"prompt": prompt, "info": info, "example_id": index, "task": name}


def export_environment(
    source: IntoRows,
    out: str | os.PathLike[str],
    /,
    *,
    name: str | None = None,
    reward: Any = None,
    system_prompt: str | None = None,
    tools: Any = None,
    holdout: float = HOLDOUT_SHARE,
    band: tuple[float, float] = DIFFICULTY_BAND,
    max_turns: int | None = None,
    description: str = "",
    salt: str = "",
) -> EnvironmentReport:
    """Write a ``verifiers`` environment package a GRPO trainer can load: a module plus its data.

    The package (docs/export.md, "A verifiers environment for GRPO": "A verifiers environment for GRPO") holds ``README.md``,
    ``pyproject.toml``, ``<name>/__init__.py`` with ``load_environment()``, ``<name>/spec.json``
    (system prompt, tools, max turns, reward) and ``<name>/data/train.jsonl`` and
    ``holdout.jsonl``: one row per task (``prompt`` messages, ``info`` with the task's pass rate
    and its recorded tool results, ``example_id``). The split is by a stable hash of the task
    (sha256 of salt + task key, the rule ``whileai.store`` uses), so a task is wholly on one side
    and lands on the same side every run. Graded tasks outside ``band`` are left out: a task the
    policy always or never solves gives a grouped update no contrast (DAPO dynamic sampling, Yu et
    al. 2025, arXiv:2503.14476). The environment's tools replay the results the rollouts
    recorded; its reward is ``reward`` (a judge: row dict in, number or ``{"reward": ...}`` out).

    Args:
        source: Rollouts (a fluent object's ``meta`` gives the system prompt and tools).
        out: The package folder to create (its parent must exist; it must not hold files).
        name: The module name (a Python identifier); default the folder's name.
        reward: The judge as an importable function or ``"module:function"``; None writes an
            environment that says so when it scores.
        system_prompt: The policy; default the source's meta or ``system_prompt`` column.
        tools: Tool schemas; default the source's meta or ``tools`` column.
        holdout: Share of tasks in ``holdout.jsonl``.
        band: Keep graded tasks whose pass rate is inside this band.
        max_turns: Turns per rollout the environment allows (None: the trainer's default).
        description: One line for the README and pyproject.
        salt: Changes the split (the same salt gives the same split).

    Returns:
        An :class:`EnvironmentReport` (name, path, train, holdout, band_dropped, reward, files...).

    Raises:
        ArgumentError: A bad name, share, band or reward.
        TrainingSelectionError: No task left after the band.
        InputFileError: The folder cannot be written, or already holds files.
    """
    target = Path(out)
    mod_name = name if name is not None else re.sub(r"[^a-z0-9_]", "_", target.name.lower()).strip("_") or "environment"
    if mod_name[:1].isdigit():
        mod_name = f"env_{mod_name}"
    if not _NAME.match(mod_name):
        raise ArgumentError(f"name must be a lowercase Python identifier, got {mod_name!r}. Pass e.g. name='refund_env'.",
                            argument="name")
    if not 0.0 <= holdout < 1.0:
        raise ArgumentError(f"holdout must be a share in [0, 1), got {holdout!r}. Pass e.g. 0.2.", argument="holdout")
    if len(band) != 2 or not 0.0 <= band[0] <= band[1] <= 1.0:
        raise ArgumentError(f"band must be (low, high) with 0 <= low <= high <= 1, got {band!r}. Pass e.g. (0.2, 0.8).",
                            argument="band")
    if max_turns is not None and (not isinstance(max_turns, int) or max_turns < 1):
        raise ArgumentError(f"max_turns must be a positive whole number or None, got {max_turns!r}.", argument="max_turns")
    reward_ref = _reward_ref(reward)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise InputFileError(f"out {str(target)!r} already exists and is not an empty folder. Pass a new folder.",
                             path=str(target))
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise InputFileError(f"folder {str(parent)!r} does not exist, so {str(target)!r} cannot be written. "
                             "Create the folder first.", path=str(target))
    meta = table.meta_of(source)
    df = table.frame(source)
    sys_prompt = system_prompt if system_prompt is not None else meta.get("system_prompt")
    if sys_prompt is None and "system_prompt" in df.columns:
        sys_prompt = df["system_prompt"].drop_nulls().head(1).to_list()[0] if df["system_prompt"].null_count() < df.height else None
    tool_refs, unimportable = _tool_refs(tools)
    tools_json = resolve_tools(tools if tools is not None else meta.get("tools"))
    if tools_json is None and "tools" in df.columns and df["tools"].null_count() < df.height:
        tools_json = df["tools"].drop_nulls()[0]
    tasks, graded, dropped = _tasks(df, band)
    if tasks.height == 0:
        raise TrainingSelectionError(
            f"band must leave at least one task, got none of {graded} graded tasks inside {tuple(band)}. "
            "Widen band=, or export rollouts of tasks the policy solves some of the time.", reason="empty_band")
    buckets = holdout_bucket(tasks["task_key"].to_list(), salt=salt)
    rows = tasks.to_dicts()  # one dict per task, to write the dataset files (not a hot path)
    train = [_task_row(t, i, mod_name, sys_prompt) for i, (t, b) in enumerate(zip(rows, buckets)) if b >= holdout]
    hold = [_task_row(t, i, mod_name, sys_prompt) for i, (t, b) in enumerate(zip(rows, buckets)) if b < holdout]
    spec = {
        "name": mod_name,
        "description": description,
        "system_prompt": sys_prompt,
        "tools": json.loads(tools_json) if tools_json else [],
        "tool_refs": tool_refs,
        "max_turns": max_turns,
        "reward": reward_ref,
        "band": list(band),
        "holdout": holdout,
        "salt": salt,
        "sdk_version": _version(),
    }
    files = _write_package(target, mod_name, spec, train, hold, description)
    report = EnvironmentReport(
        name=mod_name, path=str(target), prompts=tasks.height + dropped, train=len(train), holdout=len(hold),
        band=(float(band[0]), float(band[1])), band_dropped=dropped, graded_prompts=graded, reward=reward_ref,
        files=files,
    )
    if reward_ref is None:
        report.warnings.append("no reward given: the environment raises when it scores. Pass reward= (a judge "
                               "function or 'module:function') so GRPO has something to optimise.")
    if graded == 0:
        report.warnings.append("no task is graded, so the band was not applied and pass rates are unknown; grade "
                               "first to keep only tasks that give a grouped update contrast.")
    if not spec["tools"]:
        report.warnings.append("no tool schemas: pass tools= so the policy sees the tools its rollouts called.")
    if unimportable:
        report.warnings.append(f"tools {', '.join(unimportable)} are not importable as module:function (defined in "
                               "__main__ or a notebook), so the environment replays their recorded results; define "
                               "them in a module the trainer can import to run them live.")
    if holdout > 0 and not hold:
        report.warnings.append(f"no task fell in the holdout ({tasks.height} tasks, share {holdout}); "
                               "export more tasks or change salt=.")
    return report


def _version() -> str:
    from whileai._version import __version__

    return __version__


def _write_package(target: Path, name: str, spec: dict[str, Any], train: list[dict[str, Any]],
                   hold: list[dict[str, Any]], description: str) -> list[str]:
    """Write the package into a temporary folder beside ``target`` and rename it into place."""
    files = {
        "README.md": _readme(name, spec, len(train), len(hold), description),
        "pyproject.toml": _pyproject(name, spec, description),
        f"{name}/__init__.py": _fill(INIT_TEMPLATE, name, spec["sdk_version"]),
        f"{name}/_v1.py": _fill(V1_TEMPLATE, name, spec["sdk_version"]),
        f"{name}/spec.json": json.dumps(spec, indent=2, ensure_ascii=False) + "\n",
        f"{name}/data/train.jsonl": "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in train),
        f"{name}/data/holdout.jsonl": "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in hold),
    }
    try:
        with table.atomic_path(target, folder=True) as tmp:
            pkg = tmp / name
            (pkg / "data").mkdir(parents=True)
            for rel, text in files.items():
                (tmp / rel).write_text(text, encoding="utf-8")
            for path in [pkg, pkg / "data"]:
                path.chmod(0o755)
    except InputFileError as exc:
        raise InputFileError(f"out {str(target)!r} cannot be written ({exc}); nothing was left behind. "
                             "Choose a folder you can write to.", path=str(target)) from exc
    return sorted(files)


def _readme(name: str, spec: dict[str, Any], n_train: int, n_holdout: int, description: str) -> str:
    tools = ", ".join(t.get("function", {}).get("name", "?") for t in spec["tools"]) or "none"
    live = ", ".join(spec.get("tool_refs") or {}) or "none"
    prefix = _fill("__CLASS__", name, "")
    reward_module = (spec["reward"] or "").partition(":")[0] or "none given"
    modules = sorted({ref.partition(":")[0] for ref in (spec.get("tool_refs") or {}).values()})
    live_modules = f" and the live tools' ({', '.join(f'`{m}`' for m in modules)})" if modules else ""
    return f"""# {name}

{description or "A tool-calling environment exported by whileai for GRPO."}

- tasks: {n_train} train, {n_holdout} holdout (split by a stable hash of the task, so a task is wholly on one side)
- tools: {tools}; run live: {live}; the others replay the results the recorded rollouts got (an
  unrecorded call gets an error)
- reward: {spec["reward"] or "none given (scoring raises until you re-export with reward=)"}
- difficulty band kept: {spec["band"][0]} to {spec["band"][1]} pass rate (graded tasks)
- verifiers: {ENV_VERIFIERS_RANGE} (tested with 0.3.1 and 0.4.0)

```bash
pip install -e . uv
vf-eval {name} -n 5 -r 3 --model MODEL --client.base-url URL --client.api-key-var OPENAI_API_KEY --env.agent.runtime.type subprocess --push false   # verifiers 0.4.x
vf-eval {name} -n 5 -r 3 -m MODEL -b URL -k OPENAI_API_KEY -s   # verifiers 0.3.x
```

Where vf-eval runs, the reward's module (`{reward_module}`){live_modules} must be importable
(installed, or its folder on `PYTHONPATH`): the environment imports it to score each rollout.
With verifiers 0.4.x, `--env.agent.runtime.type subprocess` runs the agent on this machine (the
default runtime is a Prime Intellect hosted sandbox), and that runtime starts the chat harness with `uv`, so
`uv` must be on `PATH`; `--push false` keeps the results local instead of uploading them (under `outputs/`, or
`--output-dir`), as `traces.jsonl`, which `wai pass-at` reads. The loader takes
`{prefix}Taskset` (and `{prefix}Harness`, a chat loop with the tools and no shell) from the
package's `__all__`; `--env.taskset.split holdout` loads the holdout. With the 0.3 line
`load_environment()` returns a `vf.MultiTurnEnv` whose tools are declared as `tool_defs`; `-s`
saves `results.jsonl`, which `wai pass-at` reads too.

`data/train.jsonl` and `data/holdout.jsonl` hold one task per line: `prompt` (messages), `info`
(task key, pass rate, recorded tool results) and `example_id`. `spec.json` holds the system
prompt, the tool schemas, the live tools, `max_turns` and the reward as `module:function`.
"""


def _pyproject(name: str, spec: dict[str, Any], description: str) -> str:
    deps = [f'"verifiers{ENV_VERIFIERS_RANGE}"', '"datasets>=2.18"']
    refs = [spec.get("reward") or "", *(spec.get("tool_refs") or {}).values()]
    if any(ref.startswith("whileai") for ref in refs):
        deps.append('"whileai"')
    text = description.replace('"', "'") or f"{name}: a whileai-exported tool-calling environment"
    return f"""[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "{name.replace("_", "-")}"
version = "0.1.0"
description = "{text}"
requires-python = ">=3.11"
dependencies = [{", ".join(deps)}]

[tool.hatch.build.targets.wheel]
packages = ["{name}"]
"""


def load_environment(path: str | os.PathLike[str], /, **kwargs: Any) -> Any:
    """Import an exported environment package from its folder and call its ``load_environment``.

    A convenience for checking an export without installing it: the package folder is put on
    ``sys.path`` for the import (and taken off again).

    Args:
        path: The folder ``export_environment`` wrote.
        **kwargs: Passed to the package's ``load_environment``.

    Returns:
        What the package's ``load_environment`` returns (a ``verifiers`` environment when the
        classic verifiers API is installed, else its plain ``Environment``).
    """
    folder = Path(path)
    spec_files = sorted(folder.glob("*/spec.json"))
    if not spec_files:
        raise InputFileError(f"path {str(folder)!r} holds no exported environment (no <name>/spec.json). "
                             "Pass the folder export_environment wrote.", path=str(folder))
    name = spec_files[0].parent.name
    sys.path.insert(0, str(folder.resolve()))
    try:
        if name in sys.modules:
            del sys.modules[name]
        module = importlib.import_module(name)
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(str(folder.resolve()))
    return module.load_environment(**kwargs)
