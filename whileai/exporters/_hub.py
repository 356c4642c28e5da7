"""``push_to_hub``: training rows to a Hugging Face Hub dataset repo, with a dataset card, pinned."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import polars as pl

from whileai import table
from whileai._version import __version__
from whileai.defaults import EXPORT_FORMAT, HUB_PRIVATE, HUB_REVISION_PREFIX, HUB_SPLIT
from whileai.errors import ArgumentError, EndpointError, missing_extra
from whileai.table import IntoRows

__all__ = ["HubPush", "push_to_hub"]

#: The run context a fluent object's ``meta`` gives the card's lineage, when present.
_META_LINEAGE = ("name", "version", "parent_id", "run_id", "mode", "seed", "repeats", "writer", "policy", "judge",
                 "harness")
#: Distinct values of a lineage column listed on the card before "(+N more)".
_LINEAGE_SHOWN = 5


@dataclass
class HubPush:
    """What ``push_to_hub`` pushed: the repo, the pinned revision, the commit, and each split."""

    repo_id: str
    revision: str
    commit: str
    url: str
    splits: dict[str, dict[str, Any]] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"pushed to {self.repo_id} at revision {self.revision} (commit {self.commit[:12]})"]
        for name, s in self.splits.items():
            lines.append(f"  {name}: {s['n_rows']:,} rows, {s['n_tasks']:,} tasks, {s['dataset_id']}")
        lines.append(f'  load_dataset("{self.repo_id}", split="{next(iter(self.splits))}", '
                     f'revision="{self.revision}")')
        return "\n".join(lines)


def _check_split(name: Any) -> str:
    if not isinstance(name, str) or not name or not all(c.isalnum() or c in "_-" for c in name):
        raise ArgumentError(f"split must be a name of letters, digits, _ or -, got {name!r}. Pass e.g. 'train'.",
                            argument="split")
    return name


def _card(repo_id: str, revision: str, splits: Mapping[str, dict[str, Any]], fmt: str,
          lineage: Mapping[str, Any]) -> str:
    """The README.md dataset card: a YAML header naming each split's file, then what the rows are."""
    header = ["---", "configs:", "- config_name: default", "  data_files:"]
    for name in splits:
        header += [f"  - split: {name}", f"    path: data/{name}.parquet"]
    header += ["tags:", "- whileai", "- tool-calling", "- agents", "---", ""]
    shape = ("OpenAI chat rows: `messages` (system prompt first, tool calls with JSON-string arguments), "
             "a `loss_mask` per message, `tools`, `reward` and each task's group stats" if fmt == "openai" else
             "TRL conversational rows: `messages` with tool-call arguments as objects, `tools`, `reward` and "
             "each task's group stats, as `trl.data_utils.maybe_apply_chat_template` takes them")
    body = [f"# {repo_id}", "",
            f"Training rows for a tool-calling agent, exported by whileai {__version__} (format `{fmt}`): {shape}.",
            "", "| split | rows | tasks | dataset id | content hash |", "|---|---|---|---|---|"]
    body += [f"| {n} | {s['n_rows']:,} | {s['n_tasks']:,} | `{s['dataset_id']}` | `{s['content_hash']}` |"
             for n, s in splits.items()]
    body += ["", "## Load this exact push", "", "```python", "from datasets import load_dataset", "",
             f'rows = load_dataset("{repo_id}", split="{next(iter(splits))}", revision="{revision}")', "```", "",
             f"The revision `{revision}` pins this push; `whileai.json` maps each split to its dataset id and "
             "content hash.", "", "## Lineage", ""]
    body += [f"- {key}: `{value}`" for key, value in lineage.items()] or ["- rows passed in directly"]
    return "\n".join(header + body) + "\n"


def _lineage(source: Any, frame: pl.DataFrame, meta: Mapping[str, Any]) -> dict[str, str]:
    """Where a split's rows came from: the run context it carries and the distinct values of its lineage columns."""
    out = {key: str(meta[key]) for key in _META_LINEAGE if meta.get(key) is not None}
    if isinstance(source, (str, os.PathLike)):
        out["source"] = Path(source).name
    columns = {"judge": pl.col("judge_name") if "judge_name" in frame.columns else None,
               "policy_version": pl.col("policy_version") if "policy_version" in frame.columns else None}
    if "lineage" in frame.columns and isinstance(frame.schema["lineage"], pl.Struct):
        fields = {f.name for f in frame.schema["lineage"].fields}
        for key in ("run_id", "scoring_run_id", "system_prompt_sha"):
            if key in fields:
                columns[key] = pl.col("lineage").struct.field(key)
    for key, expr in columns.items():
        if expr is None:
            continue
        values = frame.select(expr.drop_nulls().unique().sort().cast(pl.String)).to_series().to_list()
        if values:
            out[key] = ", ".join(values[:_LINEAGE_SHOWN]) + (f" (+{len(values) - _LINEAGE_SHOWN} more)"
                                                            if len(values) > _LINEAGE_SHOWN else "")
    return out


def _hub_error(exc: Exception, repo_id: str) -> EndpointError:
    status = getattr(getattr(exc, "response", None), "status_code", None)
    fix = {401: "The token was refused: set HF_TOKEN to a token with write access, pass token=, or run "
                "`hf auth login`",
           403: f"The token cannot write to {repo_id.split('/')[0]!r}: use a token with write access to that "
                "namespace, or push to a repo under your own user",
           404: f"Check the repo id {repo_id!r} and the endpoint"}.get(
        status or 0, "Check the repo id, your token and the network, then push again")
    return EndpointError(f"pushing to the Hugging Face Hub repo {repo_id!r} failed "
                         f"({status or type(exc).__name__}: {str(exc).splitlines()[0][:300]}). {fix}.")


def push_to_hub(
    rows: IntoRows | Mapping[str, IntoRows],
    repo_id: str,
    *,
    split: str = HUB_SPLIT,
    private: bool = HUB_PRIVATE,
    token: str | None = None,
    endpoint: str | None = None,
    format: Literal["openai", "trl"] = EXPORT_FORMAT,
) -> HubPush:
    """Push training rows to a Hugging Face Hub dataset repo with a dataset card, pinned by a tag.

    Each split is written as ``export_dataset`` writes Parquet (``data/<split>.parquet``), with a
    ``README.md`` dataset card (a YAML header whose ``configs`` name each split's file, as the
    Hub's dataset viewer and ``datasets.load_dataset`` read it; what the rows are; row and task
    counts; lineage) and a ``whileai.json`` mapping each split to its dataset id and content hash
    (``whileai.store`` canonical hash). All files go up in one commit; a tag ``zp-<id>`` then pins
    that commit, so ``load_dataset(repo_id, split=..., revision="zp-<id>")`` reads exactly this
    push (Hugging Face Hub docs, "Dataset cards" and "Git vs HTTP paradigm": create_commit,
    create_tag).

    Args:
        rows: Rollouts (anything ``export_dataset`` takes), or a mapping of split name to rollouts.
        repo_id: ``"user/name"`` or ``"org/name"``; created (private unless ``private=False``) if absent.
        split: The split name when ``rows`` is one table.
        private: Whether a repo this call creates is private.
        token: A Hub token with write access; None reads ``HF_TOKEN``, then the saved ``hf auth login``.
        endpoint: The Hub's URL; None uses ``HF_ENDPOINT`` or huggingface.co.
        format: ``"openai"`` or ``"trl"`` rows (docs/export.md, "What a row holds").

    Returns:
        A ``HubPush``: repo, revision ``zp-<id>``, commit id, and per split its rows, tasks, dataset id.

    Raises:
        MissingExtraError: ``huggingface_hub`` is not installed (``pip install 'whileai[hf]'``).
        ArgumentError: A bad repo id or split name, or no token found.
        EndpointError: The Hub refused or failed the push (the message names the repo and the fix).
    """
    try:
        import huggingface_hub as hf
        from huggingface_hub.utils import HfHubHTTPError
    except ImportError as exc:
        raise missing_extra("huggingface_hub", "hf", "push_to_hub") from exc
    from whileai.exporters._export import export_dataset
    from whileai.table import content_hash
    from whileai.table import short_hash as short

    if not isinstance(repo_id, str) or repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise ArgumentError(f"repo_id must be 'namespace/name', got {repo_id!r}. Pass e.g. 'my-org/orders-sft'.",
                            argument="repo_id")
    tables = dict(rows) if isinstance(rows, Mapping) else {split: rows}
    if not tables:
        raise ArgumentError("rows must hold at least one split, got an empty mapping. Pass {'train': rows}.",
                            argument="rows")
    for name in tables:
        _check_split(name)
    token = token or hf.get_token()  # HF_TOKEN, then the token `hf auth login` saved
    if not token:
        raise ArgumentError(f"push_to_hub needs a Hub token to write to {repo_id!r}, got none (no token=, no HF_TOKEN, "
                            "no saved login). Set HF_TOKEN, pass token=, or run `hf auth login`.", argument="token")
    splits: dict[str, dict[str, Any]] = {}
    lineage: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="wai-hub-") as tmp:
        folder = Path(tmp)
        (folder / "data").mkdir()
        for name, source in tables.items():
            frame = table.frame(source)
            digest = content_hash(frame)
            report = export_dataset(source, folder / "data" / f"{name}.parquet", format=format, progress=False)
            splits[name] = {"dataset_id": f"ds_{short(digest)}", "content_hash": digest, "n_rows": report.n_written,
                            "n_tasks": report.groups, "path": f"data/{name}.parquet"}
            lineage.update({f"{name}.{k}": v for k, v in _lineage(source, frame, table.meta_of(source)).items()})
        push_id = "ds_" + hashlib.sha256("".join(s["content_hash"] for s in splits.values()).encode()).hexdigest()[:12]
        revision = f"{HUB_REVISION_PREFIX}{push_id}"
        (folder / "README.md").write_text(_card(repo_id, revision, splits, format, lineage), encoding="utf-8")
        manifest = {"whileai": __version__, "revision": revision, "format": format,
                    "splits": {n: {k: s[k] for k in ("dataset_id", "content_hash", "n_rows", "n_tasks", "path")}
                               for n, s in splits.items()}}
        (folder / "whileai.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        api = hf.HfApi(endpoint=endpoint, token=token)
        try:
            api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
            commit = api.upload_folder(repo_id=repo_id, repo_type="dataset", folder_path=folder,
                                       commit_message=f"whileai push {push_id}")
            try:
                api.create_tag(repo_id, tag=revision, revision=commit.oid, repo_type="dataset",
                               tag_message=f"whileai push {push_id}")
            except HfHubHTTPError as exc:  # the same rows pushed again: the tag already pins them
                if getattr(exc.response, "status_code", None) != 409:
                    raise
        except HfHubHTTPError as exc:
            raise _hub_error(exc, repo_id) from exc
        files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    return HubPush(repo_id=repo_id, revision=revision, commit=commit.oid, url=str(commit.commit_url), splits=splits,
                   files=files)
