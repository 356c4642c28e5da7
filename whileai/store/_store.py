"""The local store: datasets with lineage and content hashes, runs with scores, eval sets.

One DuckDB file (``.wai/store.duckdb`` in the working folder; ``WAI_STORE`` overrides) holds the
records; each dataset's rows are a Parquet file beside it (``<store>.datasets/<hash>.parquet``,
content addressed), read back lazily with Polars or directly from SQL with DuckDB.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, get_args

import polars as pl

from whileai import table
from whileai._progress import ProgressArg, check_progress
from whileai.defaults import HOLDOUT_EFFECT, HOLDOUT_SHARE, STORE_BUSY_TIMEOUT_S
from whileai.errors import ArgumentError, InputFileError, StoreError
from whileai.store._db import (
    connect,
    errors_as_store_errors,
    resolve_path,
    store_error,
    transaction,
)
from whileai.store._migrations import utcnow
from whileai.store._reports import (
    DatasetDiff,
    DatasetInfo,
    EvalSetInfo,
    Listing,
    MarkerMean,
    MetricPair,
    RunDiff,
    RunInfo,
    SplitInfo,
)
from whileai.store._split import split
from whileai.table import content_hash, tasks_hash
from whileai.table import short_hash as short

__all__ = ["Purpose", "Store", "harness_fingerprint", "open", "check_name", "fingerprint"]

Purpose = Literal["train", "holdout", "eval"]
_PURPOSES: tuple[str, ...] = get_args(Purpose)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_REF = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]{0,99})(?:@(?P<version>\d+|latest))?$")

_DATASET_COLS = ("id, name, version, purpose, content_hash, n_rows, n_tasks, k, n_graded, parent_id, "
                 "created_at, file, columns, meta")
_RUN_COLS = ("id, name, created_at, policy, judge, harness, seed, dataset_id, eval_set_id, n_rows, n_tasks, k, "
             "n_graded, pass_at_1, pass_at_1_low, pass_at_1_high, metrics, markers, baseline_id, verdict, delta, "
             "meta, warnings")


def open(path: str | os.PathLike[str] | None = None, *, timeout: float = STORE_BUSY_TIMEOUT_S) -> Store:  # noqa: A001
    """Open the local store (created and migrated on its first write).

    Args:
        path: The store file. Default: ``$WAI_STORE``, else ``.wai/store.duckdb`` in the working
            folder (``STORE_PATH``).
        timeout: Seconds a call waits for another process's write to finish before raising
            :class:`~whileai.errors.StoreBusyError` (``STORE_BUSY_TIMEOUT_S``).

    Returns:
        A :class:`Store`. Opening touches no file; each call opens the database for its own
        length and closes it, so several processes can share one store.

    Examples:
        >>> import tempfile, os
        >>> store = open(os.path.join(tempfile.mkdtemp(), "store.duckdb"))
        >>> info = store.save_dataset([{"scenario_id": "t1", "reward": 1.0}], "demo")
        >>> info.id, info.n_rows, len(store.datasets())
        ('demo@1', 1, 1)
    """
    return Store(path, timeout=timeout)


def _iso(value: datetime) -> str:
    return value.replace(microsecond=(value.microsecond // 1000) * 1000).isoformat(timespec="milliseconds") + "Z"


def check_name(name: Any, what: str = "dataset name") -> str:
    """``name`` as a store name (1-100 letters, digits, '.', '_' or '-'), else an ArgumentError naming ``what``."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise ArgumentError(
            f"{what} must be 1-100 letters, digits, '.', '_' or '-' (starting with a letter or digit), got {name!r}. "
            "Pick a name like 'refunds-train'."
        )
    return name


def _check_purpose(purpose: Any) -> str:
    if purpose not in _PURPOSES:
        raise ArgumentError(f"purpose must be one of {', '.join(_PURPOSES)}, got {purpose!r}. Pass purpose='train' for example.")
    return str(purpose)


def _check_meta(meta: Any) -> dict[str, Any]:
    if meta is None:
        return {}
    if not isinstance(meta, Mapping):
        raise ArgumentError(f"meta must be a dict, got {type(meta).__name__}. Pass meta={{'note': '...'}}.")
    try:  # no default=: an object stored as its repr() would read back as a different value
        return json.loads(json.dumps(dict(meta), allow_nan=False))
    except (TypeError, ValueError, RecursionError) as exc:
        raise ArgumentError(f"meta must hold JSON values (text, finite numbers, booleans, None, lists, dicts), got "
                            f"{_shown(meta)} ({exc}). Pass plain values, e.g. str() of a date.",
                            argument="meta") from exc


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "..."


def _parse_ref(ref: Any, what: str) -> tuple[str, int | None]:
    if isinstance(ref, DatasetInfo | EvalSetInfo):
        return ref.name, ref.version
    match = _REF.match(ref) if isinstance(ref, str) else None
    if match is None:
        raise ArgumentError(f"{what} must be 'name' or 'name@version', got {ref!r}. List them with `wai datasets list`.")
    version = match.group("version")
    return match.group("name"), None if version in (None, "latest") else int(version)


def _table_stats(df: pl.DataFrame) -> dict[str, int]:
    counts = df.group_by("task_key").len()
    return {
        "n_rows": df.height,
        "n_tasks": counts.height,
        "k": int(counts["len"].max() or 0) if counts.height else 0,  # type: ignore[arg-type]
        # NaN is a float that is not null: a NaN reward is not a grade (Polars counts it as a value)
        "n_graded": int(df.select(pl.col("reward").cast(pl.Float64).is_not_nan().sum()).item() or 0)
        if "reward" in df.columns else 0,
    }


class Store:
    """The local store; see :func:`open`.

    Attributes:
        path: The DuckDB file.
        data_dir: The folder of Parquet files beside it.
        timeout: Seconds to wait for another process's lock.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, timeout: float = STORE_BUSY_TIMEOUT_S) -> None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0:
            raise ArgumentError(f"timeout must be a number of seconds >= 0, got {timeout!r}. Pass timeout=10.")
        self.path: Path = resolve_path(path)
        self.data_dir: Path = self.path.parent / f"{self.path.stem}.datasets"
        self.timeout = float(timeout)

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r})"

    # --- plumbing ----------------------------------------------------------------------------

    def _connect(self, *, write: bool = True) -> Any:
        """The store for one call: read-only for a read (beside other readers), else for writing."""
        return connect(self.path, timeout=self.timeout, read_only=not write and self.path.exists())

    @property
    def exists(self) -> bool:
        """Whether the store file has been created yet."""
        return self.path.exists()

    def _file(self, relative: str) -> Path:
        return self.path.parent / relative

    # --- datasets ----------------------------------------------------------------------------

    def save_dataset(
        self,
        rows: table.IntoRows,
        /,
        name: str,
        *,
        purpose: Purpose = "train",
        parent: str | None = None,
        meta: Mapping[str, Any] | None = None,
        progress: ProgressArg = None,
    ) -> DatasetInfo:
        """Save rows as a new version of dataset ``name``: Parquet beside the store, a record inside.

        The rows are hashed over a canonical form (``rows-v1-sha256``, independent of row and column
        order) and written once per content (the file name is the hash), atomically, before the
        record is inserted in one transaction; a crash at any point leaves the store as it was.
        Saving content equal to the latest version of ``name`` writes nothing and returns that
        version with ``reused=True``. A ``holdout`` dataset too small to show a 5-point gain at 80%
        power (``whileai.measure.holdout_size``) carries a warning (docs/store.md, "Train and holdout");
        an ``eval`` dataset also pins its tasks as eval set ``name``.

        Args:
            rows: Any rows ``table.frame`` accepts.
            name: The dataset's name (letters, digits, ``.``, ``_``, ``-``).
            purpose: ``train``, ``holdout`` or ``eval``.
            parent: The dataset this one was made from (``name`` or ``name@version``). Default:
                the previous version of ``name``, so iterations show as one family.
            meta: Anything JSON-serialisable to keep with the record.
            progress: A tqdm.auto bar while a large table is hashed (from ``PROGRESS_MIN_ROWS``
                rows, terminal or notebook only; False never); a callable gets ``(done, total, info)``.

        Returns:
            The saved version's :class:`DatasetInfo` (``id`` is ``name@version``).

        Raises:
            ArgumentError: A bad name, purpose, parent or meta (checked before any row is read).
            EmptyInputError: No rows.
            StoreBusyError: Another process held the store past the timeout.
        """
        name = check_name(name)
        purpose = _check_purpose(purpose)  # type: ignore[assignment]
        meta_dict = _check_meta(meta)
        parent_ref = None if parent is None else _parse_ref(parent, "parent")
        check_progress(progress)
        df = table.frame(rows)
        return self._save_frame(df, name, purpose, parent_ref, meta_dict, progress=progress)

    def _save_frame(self, df: pl.DataFrame, name: str, purpose: str, parent_ref: tuple[str, int | None] | None,
                    meta: dict[str, Any], *, progress: ProgressArg = None) -> DatasetInfo:
        if parent_ref is not None and self.exists:
            with self._connect(write=False) as con:  # fail on an unknown parent before writing anything
                self._dataset_row(con, *parent_ref, what="parent")
        elif parent_ref is not None:
            self._raise_unknown("parent", parent_ref, [])
        digest = content_hash(df, progress=progress)
        stats = _table_stats(df)
        relative = f"{self.data_dir.name}/{digest.split(':', 1)[1][:32]}.parquet"
        target = self._file(relative)
        if not target.exists():
            with errors_as_store_errors(self.path):
                try:
                    self.data_dir.mkdir(parents=True, exist_ok=True)
                    table.write_parquet(df, target)  # atomic: temp file, then rename
                except InputFileError as exc:  # a filesystem error, said by the writer: say it as the store's
                    cause = exc.__cause__ if isinstance(exc.__cause__, OSError) else exc
                    raise store_error(self.path, cause) from exc
        warnings = self._holdout_warnings(df, stats) if purpose == "holdout" else []
        columns = [c for c in df.columns if c != "task_key"]
        with self._connect() as con, transaction(con):
            latest = con.execute(
                f"SELECT {_DATASET_COLS} FROM datasets WHERE name = ? ORDER BY version DESC LIMIT 1", [name]
            ).fetchone()
            if latest is not None and latest[4] == digest and latest[3] == purpose:
                info = self._dataset_info(latest)
                info.reused = True
                info.warnings.extend(warnings)
                return info
            if parent_ref is not None:
                parent_id = self._dataset_row(con, *parent_ref, what="parent")[0]
            else:
                parent_id = None if latest is None else latest[0]
            version = 1 if latest is None else int(latest[2]) + 1
            dataset_id = f"{name}@{version}"
            now = utcnow()
            con.execute(
                f"INSERT INTO datasets ({_DATASET_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [dataset_id, name, version, purpose, digest, stats["n_rows"], stats["n_tasks"], stats["k"],
                 stats["n_graded"], parent_id, now, relative, json.dumps(columns), json.dumps(meta)],
            )
            if purpose == "eval":
                self._pin(con, name, df["task_key"].unique().sort().to_list(), dataset_id, now)
            row = con.execute(f"SELECT {_DATASET_COLS} FROM datasets WHERE id = ?", [dataset_id]).fetchone()
        info = self._dataset_info(row)
        info.warnings.extend(warnings)
        return info

    def _holdout_warnings(self, df: pl.DataFrame, stats: Mapping[str, int]) -> list[str]:
        """Say when a holdout is too small to prove a 5-point gain at 80% power (measure.holdout_size)."""
        from whileai.measure import holdout_size

        report = holdout_size(HOLDOUT_EFFECT, k=max(stats["k"], 1))
        needed = report["n_tasks"]
        if needed is None or stats["n_tasks"] >= needed:
            return []
        return [
            f"holdout has {stats['n_tasks']:,} tasks; proving a {HOLDOUT_EFFECT * 100:g}-point gain at 80% power "
            f"needs about {needed:,} at k={max(stats['k'], 1)} (holdout_size). Add tasks to the holdout, "
            "or read a smaller set's verdicts as coarse."
        ]

    def save_split(
        self,
        rows: table.IntoRows,
        /,
        name: str,
        *,
        holdout: float = HOLDOUT_SHARE,
        salt: str = "",
        parent: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> SplitInfo:
        """Split rows by a stable hash of each task and save both sides.

        The train side is saved as ``name`` (purpose ``train``), the holdout side as
        ``name-holdout`` (purpose ``holdout``); see :func:`whileai.store.split` for how tasks are
        assigned (a task is wholly on one side, and on the same side every run).

        Args:
            rows: Any rows ``table.frame`` accepts.
            name: The train dataset's name; the holdout is ``<name>-holdout``.
            holdout: Share of tasks for the holdout (``HOLDOUT_SHARE``).
            salt: Changes which tasks are drawn.
            parent: The dataset both sides were made from (default: previous versions of each).
            meta: Kept with both records.

        Returns:
            :class:`SplitInfo` with both datasets; the holdout-size warning, when it applies.
        """
        name = check_name(name)
        check_name(f"{name}-holdout")
        meta_dict = _check_meta(meta)
        parent_ref = None if parent is None else _parse_ref(parent, "parent")
        sides = split(rows, holdout=holdout, salt=salt)
        if sides.train.height == 0 or sides.holdout.height == 0:
            empty = "train" if sides.train.height == 0 else "holdout"
            raise ArgumentError(
                f"the {empty} side of the split holds no task ({sides.train.height + sides.holdout.height} rows, "
                f"holdout={holdout!r}). Pass more tasks or another holdout share."
            )
        train = self._save_frame(sides.train, name, "train", parent_ref, meta_dict)
        held = self._save_frame(sides.holdout, f"{name}-holdout", "holdout", parent_ref, meta_dict)
        return SplitInfo(train=train, holdout=held, share=float(holdout), warnings=list(held.warnings))

    def load_dataset(self, ref: str, /, *, columns: Sequence[str] | None = None) -> pl.DataFrame:
        """A saved dataset's rows back as a rollout table (read lazily from its Parquet file).

        Args:
            ref: ``name`` (latest version) or ``name@version``.
            columns: Read only these columns (plus what ``task_key`` needs).

        Returns:
            The rollout table, as ``table.frame`` gives it.
        """
        return table.frame(self._existing_file(self.dataset(ref)), columns=columns)

    def scan_dataset(self, ref: str, /) -> pl.LazyFrame:
        """A lazy scan of a saved dataset's Parquet file (no row is read until collected)."""
        return pl.scan_parquet(self._existing_file(self.dataset(ref)))

    def _existing_file(self, info: DatasetInfo) -> Path:
        path = Path(info.path)
        if not path.exists():
            raise StoreError(
                f"dataset {info.id}'s rows file {info.path!r} is missing. Restore the store folder, "
                f"or save the dataset again.",
                path=info.path,
            )
        return path

    def dataset(self, ref: str, /) -> DatasetInfo:
        """The record of one dataset version (``name`` for the latest, or ``name@version``)."""
        name, version = _parse_ref(ref, "dataset")
        if not self.exists:
            self._raise_unknown("dataset", (name, version), [])
        with self._connect(write=False) as con:
            return self._dataset_info(self._dataset_row(con, name, version, what="dataset"))

    def datasets(self, *, name: str | None = None, purpose: Purpose | None = None) -> Listing[DatasetInfo]:
        """Every saved dataset version, newest first (optionally one name's family, or one purpose)."""
        if purpose is not None:
            _check_purpose(purpose)
        where, params = [], []
        if name is not None:
            where.append("name = ?")
            params.append(check_name(name))
        if purpose is not None:
            where.append("purpose = ?")
            params.append(purpose)
        items: list[DatasetInfo] = []
        if self.exists:
            clause = f"WHERE {' AND '.join(where)}" if where else ""
            with self._connect(write=False) as con:
                rows = con.execute(f"SELECT {_DATASET_COLS} FROM datasets {clause} ORDER BY created_at DESC, "
                                   "name, version DESC", params).fetchall()
            items = [self._dataset_info(r) for r in rows]
        return Listing(
            items,
            title=f"datasets in {self.path}",
            columns=[("id", lambda d: d.id), ("purpose", lambda d: d.purpose), ("rows", lambda d: f"{d.n_rows:,}"),
                     ("tasks", lambda d: f"{d.n_tasks:,}"), ("k", lambda d: d.k),
                     ("graded", lambda d: _pct_text(d.n_graded, d.n_rows)), ("hash", lambda d: short(d.content_hash)),
                     ("parent", lambda d: d.parent), ("saved", lambda d: d.created_at[:19])],
            empty=f"no datasets in {self.path} yet. Save one with `wai datasets save FILE NAME` or store.save_dataset(rows, name).",
        )

    def diff_datasets(self, a: str, b: str, /) -> DatasetDiff:
        """Compare two dataset versions: same content or not, rows, tasks on each side, columns, lineage."""
        info_a, info_b = self.dataset(a), self.dataset(b)
        keys_a = pl.scan_parquet(self._existing_file(info_a))
        keys_b = pl.scan_parquet(self._existing_file(info_b))
        ta = table.frame(keys_a, columns=["task_key"])["task_key"].unique()
        tb = table.frame(keys_b, columns=["task_key"])["task_key"].unique()
        shared = int(ta.is_in(tb.implode()).sum())
        return DatasetDiff(
            a=info_a.id, b=info_b.id, same_content=info_a.content_hash == info_b.content_hash,
            n_rows=(info_a.n_rows, info_b.n_rows), n_tasks=(info_a.n_tasks, info_b.n_tasks), shared_tasks=shared,
            only_a=ta.len() - shared, only_b=tb.len() - shared,
            columns_added=[c for c in info_b.columns if c not in info_a.columns],
            columns_removed=[c for c in info_a.columns if c not in info_b.columns],
            related=self._relation(info_a.id, info_b.id),
        )

    def _relation(self, a: str, b: str) -> str | None:
        with self._connect(write=False) as con:
            parents = dict(con.execute("SELECT id, parent_id FROM datasets").fetchall())
        for child, ancestor, word in ((b, a, "descends from"), (a, b, "descends from")):
            node, hops = parents.get(child), 1
            while node is not None and hops <= len(parents):
                if node == ancestor:
                    return f"{child} {word} {ancestor} ({hops} step{'s' if hops > 1 else ''})"
                node, hops = parents.get(node), hops + 1
        return None

    def _dataset_row(self, con: Any, name: str, version: int | None, *, what: str) -> tuple[Any, ...]:
        if version is None:
            row = con.execute(f"SELECT {_DATASET_COLS} FROM datasets WHERE name = ? ORDER BY version DESC LIMIT 1",
                              [name]).fetchone()
        else:
            row = con.execute(f"SELECT {_DATASET_COLS} FROM datasets WHERE name = ? AND version = ?",
                              [name, version]).fetchone()
        if row is None:
            names = [r[0] for r in con.execute("SELECT DISTINCT name FROM datasets ORDER BY name").fetchall()]
            self._raise_unknown(what, (name, version), names)
        return row

    def _raise_unknown(self, what: str, ref: tuple[str, int | None], names: list[str]) -> None:
        label = ref[0] if ref[1] is None else f"{ref[0]}@{ref[1]}"
        known = ", ".join(names[:10]) if names else "none yet"
        raise ArgumentError(
            f"{what} must name a dataset in the store, got {label!r} (datasets: {known}). "
            "List them with `wai datasets list`.",
        )

    def _dataset_info(self, row: Sequence[Any]) -> DatasetInfo:
        (id_, name, version, purpose, digest, n_rows, n_tasks, k, n_graded, parent_id, created_at, file, columns,
         meta) = row
        return DatasetInfo(
            id=id_, name=name, version=int(version), purpose=purpose, content_hash=digest, n_rows=int(n_rows),
            n_tasks=int(n_tasks), k=int(k), n_graded=int(n_graded), parent=parent_id, created_at=_iso(created_at),
            path=str(self._file(file)), columns=json.loads(columns), meta=json.loads(meta),
        )

    # --- eval sets -----------------------------------------------------------------------------

    def pin_eval_set(self, rows: table.IntoRows | Iterable[str], /, name: str, *, dataset: str | None = None) -> EvalSetInfo:
        """Pin an eval set by task ids, so later runs can be checked against exactly these tasks.

        Args:
            rows: Rows (their ``task_key`` values are pinned) or an iterable of task ids.
            name: The eval set's name; pinning a different task set under it adds a version.
            dataset: The saved dataset the tasks came from, to keep with the record.

        Returns:
            The :class:`EvalSetInfo`, with ``task_keys``.
        """
        name = check_name(name, "eval set name")
        keys = _task_keys(rows)
        if not keys:
            raise ArgumentError("an eval set must pin at least one task, got none. Pass rows or task ids.")
        with self._connect() as con, transaction(con):
            dataset_id = None if dataset is None else self._dataset_row(con, *_parse_ref(dataset, "dataset"),
                                                                        what="dataset")[0]
            info = self._pin(con, name, keys, dataset_id, utcnow())
        info.task_keys = keys
        return info

    def _pin(self, con: Any, name: str, keys: list[str], dataset_id: str | None, now: datetime) -> EvalSetInfo:
        digest = tasks_hash(keys)
        latest = con.execute("SELECT id, version, content_hash FROM eval_sets WHERE name = ? ORDER BY version DESC "
                             "LIMIT 1", [name]).fetchone()
        if latest is not None and latest[2] == digest:
            info = self._eval_set_info(con.execute(f"SELECT {_EVAL_COLS} FROM eval_sets WHERE id = ?",
                                                   [latest[0]]).fetchone())
            info.reused = True
            return info
        version = 1 if latest is None else int(latest[1]) + 1
        eval_id = f"{name}@{version}"
        con.execute(f"INSERT INTO eval_sets ({_EVAL_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [eval_id, name, version, digest, len(keys), dataset_id, now])
        con.execute("INSERT INTO eval_set_tasks SELECT ?, unnest(?::VARCHAR[])", [eval_id, keys])
        return self._eval_set_info(con.execute(f"SELECT {_EVAL_COLS} FROM eval_sets WHERE id = ?", [eval_id]).fetchone())

    def eval_set(self, ref: str, /) -> EvalSetInfo:
        """One pinned eval set with its task ids (``name`` for the latest version, or ``name@version``)."""
        name, version = _parse_ref(ref, "eval set")
        if not self.exists:
            raise ArgumentError(f"eval set must name a pinned eval set, got {ref!r} (none pinned yet). "
                                "Pin one with store.pin_eval_set(rows, name).")
        with self._connect(write=False) as con:
            if version is None:
                row = con.execute(f"SELECT {_EVAL_COLS} FROM eval_sets WHERE name = ? ORDER BY version DESC LIMIT 1",
                                  [name]).fetchone()
            else:
                row = con.execute(f"SELECT {_EVAL_COLS} FROM eval_sets WHERE name = ? AND version = ?",
                                  [name, version]).fetchone()
            if row is None:
                names = [r[0] for r in con.execute("SELECT DISTINCT name FROM eval_sets ORDER BY name").fetchall()]
                raise ArgumentError(f"eval set must name a pinned eval set, got {ref!r} (eval sets: "
                                    f"{', '.join(names) or 'none yet'}). Pin one with store.pin_eval_set(rows, name).")
            info = self._eval_set_info(row)
            info.task_keys = [r[0] for r in con.execute(
                "SELECT task_key FROM eval_set_tasks WHERE eval_set_id = ? ORDER BY task_key", [info.id]).fetchall()]
        return info

    def eval_sets(self) -> Listing[EvalSetInfo]:
        """Every pinned eval set version, newest first."""
        items: list[EvalSetInfo] = []
        if self.exists:
            with self._connect(write=False) as con:
                rows = con.execute(f"SELECT {_EVAL_COLS} FROM eval_sets ORDER BY created_at DESC, name").fetchall()
            items = [self._eval_set_info(r) for r in rows]
        return Listing(items, title=f"eval sets in {self.path}",
                       columns=[("id", lambda e: e.id), ("tasks", lambda e: f"{e.n_tasks:,}"),
                                ("hash", lambda e: short(e.content_hash)), ("dataset", lambda e: e.dataset),
                                ("pinned", lambda e: e.created_at[:19])],
                       empty=f"no eval sets in {self.path} yet.")

    def _eval_set_info(self, row: Sequence[Any]) -> EvalSetInfo:
        id_, name, version, digest, n_tasks, dataset_id, created_at = row
        return EvalSetInfo(id=id_, name=name, version=int(version), content_hash=digest, n_tasks=int(n_tasks),
                           dataset=dataset_id, created_at=_iso(created_at))

    # --- runs --------------------------------------------------------------------------------

    def record_run(
        self,
        rows: table.IntoRows | None = None,
        /,
        *,
        name: str | None = None,
        dataset: str | None = None,
        report: Any = None,
        save_as: str | None = None,
        policy: str | None = None,
        judge: str | None = None,
        harness: str | None = None,
        seed: int | None = None,
        eval_set: str | None = None,
        baseline: str | None = None,
        delta: Any = None,
        meta: Mapping[str, Any] | None = None,
    ) -> RunInfo:
        """Record an evaluated run: what produced it, pass rates with intervals, markers, verdict.

        The numbers come from :func:`whileai.measure.pass_at` (pass@1 with its interval over
        tasks, pass^k, pass@k, headroom) and, per marker, ``whileai.measure.marker_summary``
        (each marker's mean over tasks with its interval). Setup fields not given are read off
        the rows: ``policy`` (the most common ``policy_version``, else ``model_version``),
        ``judge`` (the most common ``judge_name``) and ``harness``, the fingerprint of the
        instructions, tools and model the rows ran under: its fingerprint is its version (docs/store.md, "Runs").

        Args:
            rows: The run's graded rows; or None with ``dataset=`` or ``report=``.
            name: A label to find the run by.
            dataset: A saved dataset holding the run's rows (``name`` or ``name@version``).
            report: A ``pass_at`` report of a run whose rows are not at hand: its numbers are
                recorded as they are, policy and judge read off its ``config`` (no markers, no
                harness fingerprint unless given).
            save_as: Save ``rows`` as a dataset of this name (purpose ``eval``) and link it, so
                ``diff_runs`` can pair this run with another by task.
            policy: The policy version (default: read off the rows).
            judge: The judge (default: read off the rows).
            harness: The harness fingerprint (default: computed from the rows).
            seed: The seed the run was drawn with.
            eval_set: A pinned eval set the run was scored on; a warning names tasks it missed.
            baseline: A recorded run to compare against: with both runs' rows saved,
                ``whileai.measure.delta_report(baseline, this)`` gives ``verdict`` and ``delta``.
            delta: A delta report you already computed (its ``headline_verdict`` is kept).
            meta: Anything JSON-serialisable to keep with the record.

        Returns:
            The recorded :class:`RunInfo`.
        """
        from whileai.measure import pass_at

        if name is not None:
            check_name(name, "run name")
        if save_as is not None:
            check_name(save_as)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ArgumentError(f"seed must be an int or None, got {seed!r}. Pass the seed the run was drawn with.")
        meta_dict = _check_meta(meta)
        given = [n for n, v in (("rows", rows), ("dataset=", dataset), ("report=", report)) if v is not None]
        if len(given) != 1:
            raise ArgumentError(f"record_run needs exactly one of rows, dataset= or report=, got "
                                f"{' and '.join(given) or 'none'}. Pass the run's rows, a saved dataset, or its pass_at report.")
        if save_as is not None and rows is None:
            raise ArgumentError("save_as= saves the rows given to record_run, and none were given. "
                                "Pass the rows, or drop save_as=.")
        if report is not None and not all(hasattr(report, a) for a in ("pass_at_1", "ci95", "n_rows", "to_dict")):
            raise ArgumentError(f"report must be a pass_at report, got {type(report).__name__}. "
                                "Pass whileai.measure.pass_at(rows).")
        base = None if baseline is None else self.run(baseline)
        pinned = None if eval_set is None else self.eval_set(eval_set)
        dataset_id: str | None = None
        df: pl.DataFrame | None = None
        if dataset is not None:
            info = self.dataset(dataset)
            df = self.load_dataset(info.id)
            dataset_id = info.id
        elif rows is not None:
            df = table.frame(rows)
            dataset_id = self._save_frame(df, save_as, "eval", None, {}).id if save_as is not None else None
        if df is not None:
            report = pass_at(df, seed=0 if seed is None else seed)
        metrics = {k: v for k, v in report.to_dict().items() if k not in ("per_task", "warnings")}
        warnings = list(report.warnings)
        if pinned is not None and df is not None:
            warnings.extend(_coverage_warnings(df, pinned))
        verdict, delta_dict, baseline_id = None, None, None
        if delta is not None:
            verdict, delta_dict = delta["headline_verdict"], delta.to_dict() if hasattr(delta, "to_dict") else dict(delta)
            baseline_id = None if base is None else base.id
        elif base is not None:
            baseline_id = base.id
            if base.dataset and dataset_id:
                verdict, delta_dict = self._paired_delta(base.dataset, dataset_id)
            else:
                warnings.append(f"no verdict against {base.id}: both runs need saved rows (dataset= or save_as=).")
        if df is not None:
            stats = _table_stats(df)
            policy = policy or _most_common(df, "policy_version", "model_version")
            judge = judge or _most_common(df, "judge_name")
            harness = harness or harness_fingerprint(df)
        else:  # a report alone: its config says what the rows were produced with
            config = getattr(report, "config", None) or {}
            policy = policy or _scalar(config.get("policy_version")) or _scalar(config.get("model_version"))
            judge = judge or _scalar(config.get("judge_name")) or _scalar(config.get("judge_version"))
            stats = {"n_rows": int(report.n_rows), "n_tasks": int(getattr(report, "n_tasks", 0) or 0),
                     "k": int(getattr(report, "k", 0) or 0), "n_graded": int(getattr(report, "n_graded", 0) or 0)}
        now = utcnow()
        run_id = _new_run_id()
        values = [
            run_id, name, now, policy, judge, harness, seed, dataset_id,
            None if pinned is None else pinned.id, stats["n_rows"], stats["n_tasks"], stats["k"], stats["n_graded"],
            _num(report.pass_at_1), *(_num(v) for v in (report.ci95 or (None, None))), json.dumps(metrics),
            json.dumps({} if df is None else _marker_summaries(df, seed)), baseline_id, verdict,
            None if delta_dict is None else json.dumps(delta_dict, default=str), json.dumps(meta_dict),
            json.dumps(warnings),
        ]
        with self._connect() as con, transaction(con):
            con.execute(f"INSERT INTO runs ({_RUN_COLS}) VALUES ({', '.join('?' * len(values))})", values)
            row = con.execute(f"SELECT {_RUN_COLS} FROM runs WHERE id = ?", [run_id]).fetchone()
        return self._run_info(row)

    def run(self, ref: str, /) -> RunInfo:
        """One recorded run, by id (a unique prefix is enough) or by name (the newest with it)."""
        if not isinstance(ref, str) or not ref:
            raise ArgumentError(f"run must be a run id or name, got {ref!r}. List them with `wai records list`.")
        if self.exists:
            with self._connect(write=False) as con:
                rows = con.execute(f"SELECT {_RUN_COLS} FROM runs WHERE id = ? OR starts_with(id, ?) OR name = ? "
                                   "ORDER BY (id = ?) DESC, created_at DESC", [ref, ref, ref, ref]).fetchall()
            if rows:
                exact = [r for r in rows if r[0] == ref or r[1] == ref]
                if len(exact) == 0 and len({r[0] for r in rows}) > 1:
                    raise ArgumentError(f"run must name one run, got {ref!r}, which starts {len(rows)} run ids. "
                                        "Give more of the id.")
                return self._run_info((exact or rows)[0])
        raise ArgumentError(f"run must name a recorded run, got {ref!r}. List them with `wai records list`.")

    def runs(self, *, limit: int | None = None) -> Listing[RunInfo]:
        """Recorded runs, newest first."""
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise ArgumentError(f"limit must be a positive int, got {limit!r}. Pass limit=20 for example.")
        items: list[RunInfo] = []
        if self.exists:
            with self._connect(write=False) as con:
                rows = con.execute(f"SELECT {_RUN_COLS} FROM runs ORDER BY created_at DESC, id"
                                   + ("" if limit is None else f" LIMIT {int(limit)}")).fetchall()
            items = [self._run_info(r) for r in rows]
        return Listing(items, title=f"runs in {self.path}",
                       columns=[("id", lambda r: r.id), ("name", lambda r: r.name),
                                ("pass@1", lambda r: _pass_text(r)), ("tasks", lambda r: f"{r.n_tasks:,}"),
                                ("k", lambda r: r.k), ("policy", lambda r: r.policy), ("judge", lambda r: r.judge),
                                ("dataset", lambda r: r.dataset), ("verdict", lambda r: r.verdict),
                                ("recorded", lambda r: r.created_at[:19])],
                       empty=f"no runs in {self.path} yet. Record one with store.record_run(rows) or `wai quickstart`.")

    def diff_runs(self, a: str, b: str, /) -> RunDiff:
        """Two recorded runs side by side: setup changes, and pass@1 and each marker, a to b.

        The numbers are the recorded ones, each with its own interval; the difference of two
        independent intervals is not a paired test. When both runs have their rows saved as
        datasets, ``verdict`` and ``delta`` come from ``whileai.measure.delta_report`` over those
        rows (paired by task), which is the comparison to act on.
        """
        run_a, run_b = self.run(a), self.run(b)
        setup = {key: (getattr(run_a, key), getattr(run_b, key))
                 for key in ("policy", "judge", "harness", "seed", "dataset", "eval_set")
                 if getattr(run_a, key) != getattr(run_b, key)}
        metrics: dict[str, MetricPair] = {"pass_at_1": _metric_pair(run_a.pass_at_1, run_a.ci95,
                                                                          run_b.pass_at_1, run_b.ci95)}
        for name in sorted(set(run_a.markers) | set(run_b.markers)):
            ma, mb = run_a.markers.get(name) or MarkerMean(), run_b.markers.get(name) or MarkerMean()
            metrics[f"marker:{name}"] = _metric_pair(ma.get("mean"), ma.get("ci95"), mb.get("mean"), mb.get("ci95"))
        warnings = []
        if run_a.id == run_b.id:
            warnings.append(f"{a!r} and {b!r} are the same run ({run_a.id}): nothing changed by construction. Name "
                            "two runs (`wai records list` shows them; a name picks its newest run).")
        if run_a.eval_set and run_b.eval_set and run_a.eval_set != run_b.eval_set:
            warnings.append(f"the runs were scored on different eval sets ({run_a.eval_set}, {run_b.eval_set}); "
                            "their numbers are not comparable task for task.")
        verdict, delta = None, None
        if run_a.dataset and run_b.dataset:
            verdict, delta = self._paired_delta(run_a.dataset, run_b.dataset)
        else:
            warnings.append("no paired verdict: a run without saved rows (record_run(dataset=...)) can only be read "
                            "side by side. Compare the row files with `wai compare BEFORE AFTER`.")
        return RunDiff(a=run_a.id, b=run_b.id, setup=setup, metrics=metrics, verdict=verdict, delta=delta,
                       warnings=warnings)

    def _paired_delta(self, a: str, b: str) -> tuple[str | None, dict[str, Any] | None]:
        from whileai.measure import delta_report

        report = delta_report(self.load_dataset(a), self.load_dataset(b))
        return report["headline_verdict"], report.to_dict()

    def _run_info(self, row: Sequence[Any]) -> RunInfo:
        (id_, name, created_at, policy, judge, harness, seed, dataset_id, eval_set_id, n_rows, n_tasks, k, n_graded,
         p1, lo, hi, metrics, markers, baseline_id, verdict, delta, meta, warnings) = row
        return RunInfo(
            id=id_, name=name, created_at=_iso(created_at), policy=policy, judge=judge, harness=harness, seed=seed,
            dataset=dataset_id, eval_set=eval_set_id, n_rows=int(n_rows), n_tasks=int(n_tasks), k=int(k),
            n_graded=int(n_graded), pass_at_1=p1, ci95=None if lo is None and hi is None else (lo, hi),
            metrics=json.loads(metrics), markers=json.loads(markers), baseline=baseline_id, verdict=verdict,
            delta=None if delta is None else json.loads(delta), meta=json.loads(meta), warnings=json.loads(warnings),
        )

    # --- SQL ---------------------------------------------------------------------------------

    def sql(self, query: str, params: Sequence[Any] | None = None) -> pl.DataFrame:
        """Run SQL against the store and return a Polars DataFrame.

        Tables: ``datasets``, ``runs``, ``eval_sets``, ``eval_set_tasks``. A dataset's rows are the
        table macro ``dataset_rows('name')`` (or ``'name@version'``), which DuckDB reads straight
        from the Parquet file, e.g.
        ``SELECT task_key, avg(reward) FROM dataset_rows('train') GROUP BY 1`` (``task_key`` is not
        stored; group by ``scenario_id``). ``dataset_files`` (id, name, version, path) names each
        version's Parquet file as an absolute path, for a reader outside the store's folder. The
        store is opened read-only for the query, so it runs
        beside other readers and cannot change the records (docs/reliability.md, "Store").

        Raises:
            StoreError: The query failed (DuckDB's message is quoted).
        """
        if not isinstance(query, str) or not query.strip():
            raise ArgumentError(f"query must be SQL text, got {query!r}. Try 'SELECT * FROM datasets'.")
        if not self.path.exists():
            raise StoreError(f"store must exist to be queried, got no file at {str(self.path)!r}. Save a dataset or "
                             "record a run first (wai datasets save, wai record), or pass --store PATH.")
        import duckdb

        _check_reads_only(query)
        with self._connect(write=False) as con:
            files = con.execute(
                "SELECT id, name, version, file, max(version) OVER (PARTITION BY name) AS latest FROM datasets"
            ).fetchall()
            cases: list[str] = []
            for id_, name, version, file, latest in files:
                path = str(self._file(file)).replace("'", "''")
                refs = [id_] + ([name, f"{name}@latest"] if version == latest else [])
                cases.extend(f"WHEN '{r}' THEN '{path}'" for r in refs)
            names = ", ".join(sorted({str(name) for _, name, *_ in files})).replace("'", "''") or "none saved yet"
            unknown = (f"error('dataset_rows(' || coalesce(ref, 'NULL') || ') must name a dataset in the store "
                       f"(datasets: {names}). List them with wai datasets list, or name one as name@version')")
            con.execute("CREATE OR REPLACE TEMP MACRO dataset_rows(ref) AS TABLE "
                        f"SELECT * FROM read_parquet(CASE ref {' '.join(cases) or 'WHEN NULL THEN NULL'} "
                        f"ELSE {unknown} END)")
            # the stored file is relative to the store folder (the store can move); this names it absolutely
            paths = [(id_, name, version, str(self._file(file))) for id_, name, version, file, _ in files]
            con.execute("CREATE OR REPLACE TEMP TABLE dataset_files (id VARCHAR, name VARCHAR, version INTEGER, "
                        "path VARCHAR)")
            if paths:
                con.executemany("INSERT INTO dataset_files VALUES (?, ?, ?, ?)", paths)
            try:
                relation = con.sql(query, params=list(params) if params else None)
                return pl.DataFrame() if relation is None else relation.pl()
            except duckdb.Error as exc:
                raise StoreError(f"the query failed: {exc}. {_SQL_HINT}") from exc


_EVAL_COLS = "id, name, version, content_hash, n_tasks, dataset_id, created_at"

#: What a failed query's error adds: the tables and the dataset macro ``store.sql`` offers.
_SQL_HINT = "Tables: datasets, runs, eval_sets, eval_set_tasks; a dataset's rows: dataset_rows('name')."
#: ``EXPLAIN`` or ``EXPLAIN ANALYZE`` before a statement (DuckDB runs what ``EXPLAIN ANALYZE`` explains).
_EXPLAIN = re.compile(r"^\s*explain(\s+analy[sz]e)?\b", re.IGNORECASE)


def _check_reads_only(query: str) -> None:
    """Refuse any statement of ``query`` that is not a SELECT (DuckDB's parser says which kind it is).

    The read-only connection keeps the store file as it is, but not the files around it: ``COPY ...
    TO``, ``EXPORT DATABASE``, ``ATTACH`` and ``EXPLAIN ANALYZE`` of a ``COPY`` write files,
    a dataset's Parquet file among them. ``SHOW``, ``DESCRIBE``, ``SUMMARIZE``, ``VALUES``,
    ``FROM ...`` and ``WITH ... SELECT`` parse as SELECT and run.

    Raises:
        StoreError: A statement of another kind, or SQL that does not parse (DuckDB's message).
    """
    import duckdb

    statements: list[Any] = []
    try:
        pending = list(duckdb.extract_statements(query))
        while pending:  # an EXPLAIN's statement is checked as well (EXPLAIN ANALYZE runs it)
            statement = pending.pop(0)
            statements.append(statement)
            inner = _EXPLAIN.sub("", statement.query, count=1) if statement.type == duckdb.StatementType.EXPLAIN else ""
            pending.extend(duckdb.extract_statements(inner) if inner.strip() else [])
    except duckdb.Error as exc:
        raise StoreError(f"the query failed: {exc}. {_SQL_HINT}") from exc
    for statement in statements:
        if statement.type not in (duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN):
            kind = str(statement.type).rsplit(".", 1)[-1]
            raise StoreError(f"the query failed: the store is queried read-only, so a statement must be a SELECT "
                             f"(or SHOW, DESCRIBE, EXPLAIN of one), got {kind}: "
                             f"{statement.query.strip()[:80]!r}. Write an answer to a file with "
                             "`wai sql QUERY -o FILE`, or from Python with store.sql(QUERY).write_parquet(...).")


def _pct_text(part: int, whole: int) -> str:
    return "n/a" if whole == 0 else f"{100.0 * part / whole:.0f}%"


def _pass_text(run: RunInfo) -> str:
    from whileai.report import fmt_num
    from whileai.store._reports import ci_text

    return f"{fmt_num(run.pass_at_1)} {ci_text(run.ci95)}"


def _scalar(value: Any) -> str | None:
    """A config value that is one value (a list means the rows were mixed: no single answer)."""
    return None if value is None or isinstance(value, (list, tuple, dict)) else str(value)


def _num(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def _most_common(df: pl.DataFrame, *names: str) -> str | None:
    for name in names:
        if name in df.columns and df[name].null_count() < df.height:
            counts = df[name].drop_nulls().cast(pl.String).value_counts(sort=True)
            return str(counts[name][0])
    return None


def harness_fingerprint(rows: table.IntoRows) -> str | None:
    """The harness's version: ``h-`` and 12 hex of sha256 over its instructions, tools and model.

    The instructions are the rows' system prompt, the tools their tool schemas and the model their
    ``model_version`` (the most common value of each). A prompt edit, a tool change or a model
    swap gives a new fingerprint without anyone naming a version: a harness is the instructions, tools
    and model name around the weights, and its fingerprint is its version (docs/store.md, "Runs").
    None when the rows carry none of the three.

    Examples:
        >>> harness_fingerprint([{"scenario_id": "t", "system_prompt": "Be brief.", "model_version": "m1"}])
        'h-009be4c61ae0'
    """
    df = rows if isinstance(rows, pl.DataFrame) else table.frame(rows)
    parts = (_most_common(df, "system_prompt"), _most_common(df, "tools"), _most_common(df, "model_version"))
    if all(v is None for v in parts):
        return None
    return fingerprint(*parts)


def fingerprint(instructions: str | None, tools: str | None, model: str | None) -> str:
    """``h-`` and 12 hex of sha256 over one canonical JSON of instructions, tools (as text) and model."""
    parts = {"instructions": instructions, "tools": tools, "model": model}
    text = table.canonical_json(parts)
    return "h-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _marker_summaries(df: pl.DataFrame, seed: int | None) -> dict[str, Any]:
    names = table.markers_of(df) if "markers" in df.columns else []
    if not names:
        return {}
    from whileai.measure import marker_summary

    data = marker_summary(df, seed=0 if seed is None else seed).to_dict()["markers"]
    return {str(k): {"mean": v.get("mean"), "ci95": v.get("ci95")} for k, v in data.items()}


def _coverage_warnings(df: pl.DataFrame, pinned: EvalSetInfo) -> list[str]:
    have = set(df["task_key"].unique().to_list())
    want = set(pinned.task_keys)
    missing, extra = len(want - have), len(have - want)
    out = []
    if missing:
        out.append(f"the run covers {len(want) - missing:,} of the {len(want):,} tasks pinned in {pinned.id}; "
                   "scores over different task sets are not comparable. Re-run the missing tasks (tasks=).")
    if extra:
        out.append(f"{extra:,} of the run's tasks are not in {pinned.id}; filter them out before comparing.")
    return out


def _metric_pair(a: float | None, a_ci: Any, b: float | None, b_ci: Any) -> MetricPair:
    delta = None if a is None or b is None else b - a
    return MetricPair(a=a, a_ci95=a_ci, b=b, b_ci95=b_ci, delta=delta)


def _task_keys(rows: Any) -> list[str]:
    if isinstance(rows, (list, tuple, set, frozenset)) and rows and all(isinstance(r, str) for r in rows):
        return sorted(set(rows))
    if isinstance(rows, pl.Series):
        return sorted(set(rows.drop_nulls().cast(pl.String).to_list()))
    df = table.frame(rows, columns=["task_key"])
    return df["task_key"].unique().sort().to_list()


def _new_run_id() -> str:
    return "r-" + uuid.uuid4().hex[:12]
