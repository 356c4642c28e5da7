"""Tracked agents and runs in the DuckDB store: the one implementation both backends and the server use.

:class:`PlatformDB` opens the store for the length of each call (a notebook's
``track(..., store=PATH)``), while requests need it (``shared=True``, ``wai server``: closed
``SERVER_STORE_IDLE_S`` after the last one, so the CLI and notebooks use the file between
bursts of requests), or once
(``persistent=True``). One process's writes are serialised by a lock; reads use their own cursors.
Every write is one transaction committed before the call returns, so an acknowledged write
survives the process being killed (DuckDB replays its write-ahead log on the next open).

:class:`Service` is that store seen by one account: every query is scoped to it, and a run of
another account answers 404 exactly as an unknown one does.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import threading
import uuid
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from pydantic import TypeAdapter

from whileai.defaults import (
    LOCAL_ACCOUNT,
    ROWS_PER_SCORE,
    SERVER_STORE_IDLE_S,
    STORE_BUSY_TIMEOUT_S,
)
from whileai.errors import ArgumentError, PlatformError
from whileai.platform import _rules
from whileai.platform._models import (
    AgentInfo,
    AgentSpec,
    Behavior,
    DatasetPush,
    Example,
    Experiment,
    Figure,
    FinishBody,
    LiveDay,
    LogBody,
    Message,
    Promote,
    RowsBody,
    RunPatch,
    RunRecord,
    RunSpec,
    ScoreBody,
    ScoreRecord,
)
from whileai.platform._views import (
    AgentState,
    Brief,
    Dashboard,
    EvalHealth,
    FigureRecord,
    LiveRecord,
    RunComparison,
    Verdict,
    VersionDiff,
)
from whileai.store import connect, resolve_path, transaction, utcnow

__all__ = ["KeyInfo", "PlatformDB", "Service", "create_key", "list_keys", "revoke_key"]

#: DuckDB strftime pattern of the ISO 8601 UTC timestamps every record carries.
_ISO = "%Y-%m-%dT%H:%M:%S.%gZ"
_SCORES: TypeAdapter[list[ScoreRecord]] = TypeAdapter(list[ScoreRecord])
_RUNS: TypeAdapter[list[RunRecord]] = TypeAdapter(list[RunRecord])
_RUN_KEYS = ("id", "agent", "version", "name", "dataset_id", "base_model", "total_steps", "status", "created_at",
             "finished_at", "record", "summary", "hours", "cost_usd", "cost_basis", "adapter", "notes", "archived",
             "delta", "n_points", "last_step")

_RUN_COLS = ("r.id, r.agent, r.version, r.name, r.dataset_id, r.base_model, r.total_steps, r.status, "
             "strftime(r.created_at, '%Y-%m-%dT%H:%M:%S.%gZ'), strftime(r.finished_at, '%Y-%m-%dT%H:%M:%S.%gZ'), r.record, r.summary, r.hours, r.cost_usd, r.cost_basis, r.adapter, r.notes, r.archived, "
             "r.delta")
_RUN_SELECT = (f"SELECT {_RUN_COLS}, coalesce(p.n, 0), p.last FROM tracked_runs r "
               "LEFT JOIN (SELECT run_id, count(*) AS n, max(step) AS last FROM run_points GROUP BY run_id) p "
               "ON p.run_id = r.id")


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat(timespec="milliseconds") + "Z"


def _one(cursor: Any) -> Any:
    """The first row of a result, reading it to the end (DuckDB refuses new work on an unread result)."""
    rows = cursor.fetchall()
    return rows[0] if rows else None


def _dumps(value: Any) -> str:
    return json.dumps(value, default=str, separators=(",", ":"), ensure_ascii=False)


def _merge(old: dict[str, Any], new: dict[str, Any] | None) -> dict[str, Any]:
    out = dict(old)
    for key, value in (new or {}).items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def not_found(what: str, ident: str, fix: str) -> PlatformError:
    """The 404 every unknown (or another account's) object answers."""
    return PlatformError(404, "not_found", f"{what} {ident!r} does not exist on this server (or belongs to another "
                                           f"account). {fix}", name=ident)


class KeyInfo:
    """A key created by :func:`create_key`: the key text (shown once), its public id and account."""

    def __init__(self, key: str, key_id: str, account: str) -> None:
        self.key, self.key_id, self.account = key, key_id, account

    def __repr__(self) -> str:
        return f"KeyInfo(key_id={self.key_id!r}, account={self.account!r})"


class PlatformDB:
    """The store file, opened per call, held while in use, or held for good (see the module docstring).

    ``shared=True`` (``wai server``): the file is opened when a request needs it and closed
    ``idle_s`` seconds after the last request in flight is done, so between bursts of requests
    other processes (the CLI, a notebook) open it, and requests that overlap share one connection.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, persistent: bool = False,
                 shared: bool = False, timeout: float = STORE_BUSY_TIMEOUT_S,
                 idle_s: float = SERVER_STORE_IDLE_S) -> None:
        self.path = resolve_path(path)
        self.timeout = float(timeout)
        self.persistent = persistent
        self.shared = shared and not persistent
        self._lock = threading.Lock()
        self._lease_lock = threading.Lock()
        self._users = 0
        self.idle_s = float(idle_s)
        self._timer: threading.Timer | None = None
        self._ctx: Any = None
        self._con: Any = None
        if persistent:
            self._ctx = connect(self.path, timeout=self.timeout)
            self._con = self._ctx.__enter__()

    def close(self) -> None:
        """Close a held connection (no-op when the store is opened per call, or none is in use)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._ctx is not None and self._users == 0:
            ctx, self._ctx, self._con = self._ctx, None, None
            ctx.__exit__(None, None, None)

    def acquire(self) -> None:
        """Hold the store open (``shared``): the first holder opens it; a no-op otherwise."""
        if not self.shared:
            return
        with self._lease_lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self._con is None:
                ctx = connect(self.path, timeout=self.timeout)
                self._con = ctx.__enter__()
                self._ctx = ctx
            self._users += 1

    def release(self) -> None:
        """Let go of :meth:`acquire`; ``idle_s`` after the last holder, the file is closed for other processes."""
        if not self.shared:
            return
        with self._lease_lock:
            self._users -= 1
            if self._users == 0:
                if self.idle_s <= 0:
                    self.close()
                else:
                    self._timer = threading.Timer(self.idle_s, self._close_if_idle)
                    self._timer.daemon = True
                    self._timer.start()

    def _close_if_idle(self) -> None:
        with self._lease_lock:
            if self._users == 0:
                self._timer = None
                self.close()

    @contextlib.contextmanager
    def _held(self) -> Iterator[None]:
        self.acquire()
        try:
            yield
        finally:
            self.release()

    @contextlib.contextmanager
    def read(self) -> Iterator[Any]:
        """A connection (or cursor) to read with."""
        with self._held():
            if self._con is not None:
                cur = self._con.cursor()
                try:
                    yield cur
                finally:
                    cur.close()
            else:
                with connect(self.path, timeout=self.timeout) as con:
                    yield con

    @contextlib.contextmanager
    def write(self) -> Iterator[Any]:
        """A connection inside one transaction, committed when the block ends."""
        with self._held():
            if self._con is not None:
                with self._lock:
                    cur = self._con.cursor()
                    try:
                        with transaction(cur):
                            yield cur
                    finally:
                        cur.close()
            else:
                with self._lock, connect(self.path, timeout=self.timeout) as con, transaction(con):
                    yield con

    # --- accounts and keys --------------------------------------------------------------------

    def keys_on(self) -> bool:
        """Whether the store holds any API key (then every request must carry one)."""
        with self.read() as con:
            return bool(con.execute("SELECT count(*) FROM api_keys").fetchall()[0][0])

    def account_of(self, key: str | None) -> tuple[str, str]:
        """The (account id, key id) a key belongs to.

        Raises:
            PlatformError: 401 for a missing, malformed or unknown key.
        """
        if not key:
            raise PlatformError(401, "missing_key", "this server has API keys turned on and the request carries none. "
                                                    "Send X-Api-Key (wai login --server URL --key K, or WHILEAI_API_KEY).")
        parts = key.split("_", 2)
        row = None
        if len(parts) == 3 and parts[0] == "wai":
            with self.read() as con:
                row = _one(con.execute("SELECT account_id, key_hash FROM api_keys WHERE id = ?", [parts[1]]))
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()
        if row is None or not hmac.compare_digest(row[1], digest):
            raise PlatformError(401, "unauthorized", "the API key is not one this server issued (or was mistyped). "
                                                     "Create one with wai keys create NAME on the server's store.")
        return str(row[0]), parts[1]

    def ensure_account(self, con: Any, name: str) -> str:
        """The id of account ``name``, created when new."""
        row = _one(con.execute("SELECT id FROM accounts WHERE name = ?", [name]))
        if row:
            return str(row[0])
        account_id = LOCAL_ACCOUNT if name == LOCAL_ACCOUNT else "acct-" + uuid.uuid4().hex[:12]
        con.execute("INSERT INTO accounts VALUES (?, ?, ?)", [account_id, name, utcnow()])
        return account_id


def create_key(name: str, *, store: str | os.PathLike[str] | None = None) -> KeyInfo:
    """Create account ``name`` (or a second key for it) and return the key, which is shown only once.

    Only the key's sha256 is stored; its public id (``wai_<id>_...``) is what logs show. Once a
    store holds a key, ``wai server`` asks every request for one.

    Args:
        name: The account's name (letters, digits, ``.``, ``_``, ``-``).
        store: The store file (default ``$WAI_STORE``, else ``.wai/store.duckdb``).

    Raises:
        ArgumentError: A bad name.
    """
    from whileai.store import check_name

    check_name(name, "account name")
    key_id = secrets.token_hex(5)
    key = f"wai_{key_id}_{secrets.token_urlsafe(24)}"
    db = PlatformDB(store)
    with db.write() as con:
        account_id = db.ensure_account(con, name)
        con.execute("INSERT INTO api_keys VALUES (?, ?, ?, ?)",
                    [key_id, account_id, hashlib.sha256(key.encode("utf-8")).hexdigest(), utcnow()])
    return KeyInfo(key, key_id, name)


#: What a revoked key's hash is replaced with: no sha256 hex digest equals it, and the row stays, so
#: the store keeps asking every request for a key after its last key is revoked.
_REVOKED = "revoked"


def list_keys(*, store: str | os.PathLike[str] | None = None) -> list[dict[str, Any]]:
    """Every API key of the store by public id: its account, when it was made, and whether it is revoked.

    The key text is never stored, so it is never listed (``wai keys list``).
    """
    db = PlatformDB(store)
    with db.read() as con:
        rows = con.execute("SELECT k.id, a.name, strftime(k.created_at, '%Y-%m-%dT%H:%M:%SZ'), k.key_hash "
                           "FROM api_keys k LEFT JOIN accounts a ON a.id = k.account_id "
                           "ORDER BY k.created_at, k.id").fetchall()
    return [{"key_id": r[0], "account": r[1], "created_at": r[2], "revoked": str(r[3]).startswith(_REVOKED)}
            for r in rows]


def revoke_key(key_id: str, *, store: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Revoke the key with public id ``key_id`` (the ``<id>`` of ``wai_<id>_...``): it answers 401 from then on.

    Its hash is erased and the row kept, so a store whose last key is revoked still asks every
    request for a key (it never falls back to the open local account).

    Raises:
        ArgumentError: No key has that id (the message lists the ids there are).
    """
    from whileai.errors import ArgumentError

    key_id = key_id.removeprefix("wai_").split("_", 1)[0] if key_id.startswith("wai_") else key_id
    db = PlatformDB(store)
    with db.write() as con:
        row = _one(con.execute("SELECT key_hash FROM api_keys WHERE id = ?", [key_id]))
        if row is None:
            ids = [r[0] for r in con.execute("SELECT id FROM api_keys ORDER BY created_at").fetchall()]
            raise ArgumentError(f"key id must be one of this store's keys ({', '.join(ids) or 'none'}), got "
                                f"{key_id!r}. List them with wai keys list.", argument="key_id", value=key_id)
        con.execute("UPDATE api_keys SET key_hash = ? WHERE id = ?", [f"{_REVOKED} {utcnow().isoformat()}", key_id])
    return {"key_id": key_id, "revoked": True, "was_revoked": str(row[0]).startswith(_REVOKED)}


class Service:
    """The tracked-run records of one account in one store; every method is one short transaction."""

    def __init__(self, db: PlatformDB, account: str = LOCAL_ACCOUNT) -> None:
        self.db = db
        self.account = account

    @classmethod
    def local(cls, store: str | os.PathLike[str] | None = None, *, api_key: str | None = None) -> Service:
        """The store opened per call, as the local account (or the account of ``api_key``)."""
        db = PlatformDB(store)
        if api_key:
            return cls(db, db.account_of(api_key)[0])
        with db.write() as con:
            db.ensure_account(con, LOCAL_ACCOUNT)
        return cls(db, LOCAL_ACCOUNT)

    # --- agents -------------------------------------------------------------------------------

    def _agent_row(self, con: Any, name: str) -> Any:
        return _one(con.execute("SELECT name, model, instructions, tools, served, created_at FROM agents "
                           "WHERE account_id = ? AND name = ?", [self.account, name]))

    @staticmethod
    def _agent(row: Any) -> AgentInfo:
        return AgentInfo(name=row[0], model=row[1], instructions=row[2], tools=json.loads(row[3]), served=row[4],
                         created_at=_iso(row[5]) or "")

    def put_agent(self, spec: AgentSpec) -> AgentInfo:
        """Create the agent, or update what ``spec`` sets on it (model, instructions, tools, served)."""
        with self.db.write() as con:
            row = self._agent_row(con, spec.name)
            if row is None:
                con.execute("INSERT INTO agents VALUES (?, ?, ?, ?, ?, ?, NULL, ?)",
                            [self.account, spec.name, spec.model, spec.instructions, _dumps(spec.tools), spec.served,
                             utcnow()])
            else:
                con.execute("UPDATE agents SET model = coalesce(?, model), instructions = coalesce(?, instructions), "
                            "tools = CASE WHEN ? = '[]' THEN tools ELSE ? END, served = coalesce(?, served) "
                            "WHERE account_id = ? AND name = ?",
                            [spec.model, spec.instructions, _dumps(spec.tools), _dumps(spec.tools), spec.served,
                             self.account, spec.name])
            return self._agent(self._agent_row(con, spec.name))

    def agent(self, name: str) -> AgentInfo:
        """One agent (404 when unknown)."""
        with self.db.read() as con:
            row = self._agent_row(con, name)
        if row is None:
            raise not_found("agent", name, "Create it with wp.track(agent, name=...) or POST /agents.")
        return self._agent(row)

    def agents(self) -> list[AgentInfo]:
        """Every agent of the account, by name."""
        with self.db.read() as con:
            rows = con.execute("SELECT name, model, instructions, tools, served, created_at FROM agents "
                               "WHERE account_id = ? ORDER BY name", [self.account]).fetchall()
        return [self._agent(r) for r in rows]

    def delete_agent(self, name: str) -> dict[str, Any]:
        """Remove the agent and everything under it (no undo)."""
        self.agent(name)
        with self.db.write() as con:
            ids = [r[0] for r in con.execute("SELECT id FROM tracked_runs WHERE account_id = ? AND agent = ?",
                                             [self.account, name]).fetchall()]
            for run_id in ids:
                self._delete_run(con, run_id)
            for table in ("behaviors", "figures", "live_days"):
                con.execute(f"DELETE FROM {table} WHERE account_id = ? AND agent = ?", [self.account, name])
            con.execute("DELETE FROM agents WHERE account_id = ? AND name = ?", [self.account, name])
        return {"deleted": name, "runs": len(ids)}

    def served(self, agent: str) -> str | None:
        """The version candidates are measured against (``_rules.served_of``).

        The agent's served slot, else the first version scored; None before any score.

        Raises:
            PlatformError: 404 for an unknown agent.
        """
        return _rules.served_of(self.state(agent, train=False))

    def promotable(self, agent: str, version: str) -> list[RunRecord]:
        """The agent's runs of ``version``, oldest first: what ``promote`` would serve.

        Raises:
            PlatformError: 404 for an unknown agent, 422 for a version none of its runs has.
        """
        runs = self.runs(agent, archived=True)
        mine = [r for r in runs if (r.version or r.id) == version]
        if not mine:
            known = sorted({r.version or r.id for r in runs})
            raise PlatformError(422, "invalid", f"version must be one of {agent!r}'s run versions to be served, got "
                                                f"{version!r} (versions: {', '.join(known) or 'none'}). "
                                                "Open a run of it first.", argument="version")
        return mine

    def promote(self, agent: str, body: Promote) -> AgentInfo:
        """Serve ``body.version`` and record it on that version's newest run (``summary["promoted"]``).

        The record says when, by whom and which version it replaced, so the run table shows who
        changed what the candidates are measured against.

        Raises:
            PlatformError: 404 for an unknown agent, 422 for a version none of its runs has.
        """
        self.agent(agent)  # 404 first
        run = self.promotable(agent, body.version)[-1]
        previous = self.served(agent)
        promoted = {"at": utcnow().isoformat(timespec="seconds") + "Z", "by": body.by or self.account,
                    "from": previous}
        with self.db.write() as con:
            con.execute("UPDATE agents SET served = ? WHERE account_id = ? AND name = ?",
                        [body.version, self.account, agent])
            con.execute("UPDATE tracked_runs SET summary = ? WHERE id = ?",
                        [_dumps(_merge(run.summary, {"promoted": promoted})), run.id])
        return self.agent(agent)

    def put_behavior(self, agent: str, behavior: Behavior) -> Behavior:
        """Create or replace one behavior's definition."""
        self.agent(agent)
        with self.db.write() as con:
            con.execute("INSERT OR REPLACE INTO behaviors VALUES (?, ?, ?, ?, ?)",
                        [self.account, agent, behavior.name, behavior.model_dump_json(), utcnow()])
        return behavior

    def behaviors(self, agent: str) -> dict[str, Behavior]:
        """The agent's behaviors by name."""
        self.agent(agent)
        with self.db.read() as con:
            rows = con.execute("SELECT name, spec FROM behaviors WHERE account_id = ? AND agent = ? ORDER BY name",
                               [self.account, agent]).fetchall()
        return {r[0]: Behavior.model_validate_json(r[1]) for r in rows}

    def set_experiment(self, agent: str, experiment: Experiment) -> Experiment:
        """Replace the agent's experiment block."""
        self.agent(agent)
        with self.db.write() as con:
            con.execute("UPDATE agents SET experiment = ? WHERE account_id = ? AND name = ?",
                        [experiment.model_dump_json(), self.account, agent])
        return experiment

    def put_figure(self, agent: str, figure: Figure) -> FigureRecord:
        """Create or replace one figure."""
        self.agent(agent)
        with self.db.write() as con:
            con.execute("INSERT OR REPLACE INTO figures VALUES (?, ?, ?, ?, ?, ?)",
                        [self.account, agent, figure.name, figure.caption, _dumps(figure.figure), utcnow()])
        return FigureRecord(name=figure.name, caption=figure.caption, figure=figure.figure)

    def post_live(self, agent: str, day: LiveDay) -> LiveRecord:
        """Record a day of traffic on a version (default: the served one)."""
        info = self.agent(agent)
        version = day.version or info.served
        if version is None:
            version = _rules.served_of(self.state(agent)) or "served"
        with self.db.write() as con:
            con.execute("INSERT OR REPLACE INTO live_days VALUES (?, ?, ?, ?, ?, ?)",
                        [self.account, agent, day.day, version, day.replies, day.flagged])
        return LiveRecord(day=day.day, version=version, replies=day.replies, flagged=day.flagged)

    # --- runs ---------------------------------------------------------------------------------

    @staticmethod
    def _runs(rows: list[Any]) -> list[RunRecord]:
        out = []
        for r in rows:
            d = dict(zip(_RUN_KEYS, r))
            d["record"], d["summary"] = json.loads(d["record"]), json.loads(d["summary"])
            d["delta"] = json.loads(d["delta"]) if d["delta"] else None
            d["archived"], d["n_points"] = bool(d["archived"]), int(d["n_points"])
            out.append(d)
        return _RUNS.validate_python(out)

    def create_run(self, spec: RunSpec) -> RunRecord:
        """Open a run; an id that already exists is refused (409), never reset."""
        run_id = spec.id or "tr-" + uuid.uuid4().hex[:12]
        record = dict(spec.record or {})
        if spec.harness is not None:
            record = _merge(record, {"provenance": {"pins": {"harness": spec.harness.version}},
                                     "harness": spec.harness.model_dump()})
        if spec.agent is not None:
            try:
                self.agent(spec.agent)
            except PlatformError:
                self.put_agent(AgentSpec(name=spec.agent))
        with self.db.write() as con:
            if _one(con.execute("SELECT 1 FROM tracked_runs WHERE id = ?", [run_id])):
                raise PlatformError(409, "conflict", f"run id {run_id!r} already exists; a POST never resets a run. "
                                                     f"Bind to it with tracked.open({run_id!r}) or PATCH /runs/{run_id}.")
            con.execute("INSERT INTO tracked_runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, NULL, ?, '{}', "
                        "NULL, NULL, NULL, NULL, NULL, FALSE, NULL)",
                        [run_id, self.account, spec.agent, spec.version, spec.name or spec.version, spec.dataset_id,
                         spec.base_model, spec.total_steps, utcnow(), _dumps(record)])
        return self.run(run_id)

    def run(self, run_id: str) -> RunRecord:
        """One run (404 when unknown or another account's)."""
        with self.db.read() as con:
            row = _one(con.execute(f"{_RUN_SELECT} WHERE r.id = ? AND r.account_id = ?", [run_id, self.account]))
        if row is None:
            raise not_found("run", run_id, "List the ids with tracked.runs() (GET /runs).")
        return self._runs([row])[0]

    def runs(self, agent: str | None = None, *, archived: bool | str | None = False) -> list[RunRecord]:
        """The account's runs (of one agent when given), oldest first; archived ones only when asked.

        ``archived`` is a flag, or its query-string spelling (``true``/``1``/``yes``).
        """
        archived = archived is True or str(archived).lower() in ("true", "1", "yes")
        sql = f"{_RUN_SELECT} WHERE r.account_id = ?"
        params: list[Any] = [self.account]
        if agent is not None:
            sql += " AND r.agent = ?"
            params.append(agent)
        if not archived:
            sql += " AND NOT r.archived"
        with self.db.read() as con:
            rows = con.execute(sql + " ORDER BY r.created_at, r.id", params).fetchall()
        return self._runs(rows)

    def patch_run(self, run_id: str, patch: RunPatch) -> RunRecord:
        """Fill what a run is missing; dicts merge, other fields replace."""
        current = self.run(run_id)
        sets = patch.model_dump(exclude_unset=True)
        record = _merge(current.record, sets.pop("record", None))
        summary = _merge(current.summary, sets.pop("summary", None))
        delta = sets.pop("delta", current.delta)
        with self.db.write() as con:
            con.execute("UPDATE tracked_runs SET record = ?, summary = ?, delta = ? WHERE id = ?",
                        [_dumps(record), _dumps(summary), None if delta is None else _dumps(delta), run_id])
            for key, value in sets.items():
                con.execute(f"UPDATE tracked_runs SET {key} = ? WHERE id = ?", [value, run_id])
        return self.run(run_id)

    def _delete_run(self, con: Any, run_id: str) -> None:
        con.execute("DELETE FROM score_rows WHERE score_id IN (SELECT id FROM scores WHERE run_id = ?)", [run_id])
        for table, col in (("scores", "run_id"), ("run_points", "run_id"), ("batches", "run_id"), ("tracked_runs", "id")):
            con.execute(f"DELETE FROM {table} WHERE {col} = ?", [run_id])

    def delete_run(self, run_id: str) -> dict[str, Any]:
        """Remove one run with its points, scores and rows."""
        self.run(run_id)
        with self.db.write() as con:
            self._delete_run(con, run_id)
        return {"deleted": run_id}

    def _batch_seen(self, con: Any, run_id: str, batch_id: str | None) -> bool:
        if batch_id is None:
            return False
        if _one(con.execute("SELECT 1 FROM batches WHERE run_id = ? AND batch_id = ?", [run_id, batch_id])):
            return True
        con.execute("INSERT INTO batches VALUES (?, ?)", [run_id, batch_id])
        return False

    def log(self, run_id: str, body: LogBody) -> dict[str, Any]:
        """Append training points; a batch id already stored is acknowledged and not stored twice."""
        import pyarrow as pa

        self.run(run_id)
        points = body.points
        tbl = pa.table({
            "step": pa.array([p.step for p in points], pa.int64()),
            "loss": pa.array([p.loss for p in points], pa.float64()),
            "lr": pa.array([p.lr for p in points], pa.float64()),
            "metrics": pa.array([_dumps(p.model_extra) if p.model_extra else None for p in points], pa.string()),
        })
        with self.db.write() as con:
            if self._batch_seen(con, run_id, body.batch_id):
                return {"accepted": 0, "duplicate": True}
            con.register("_wai_points", tbl)
            try:
                con.execute("INSERT INTO run_points SELECT ?, step, loss, lr, metrics, nextval('platform_seq') "
                            "FROM _wai_points", [run_id])
            finally:
                con.unregister("_wai_points")
        return {"accepted": len(points), "duplicate": False}

    def points(self, run_id: str) -> list[dict[str, Any]]:
        """The run's training points, in the order they were logged."""
        self.run(run_id)
        with self.db.read() as con:
            rows = con.execute("SELECT step, loss, lr, metrics FROM run_points WHERE run_id = ? ORDER BY seq",
                               [run_id]).fetchall()
        return [{"step": r[0], "loss": r[1], "lr": r[2], **(json.loads(r[3]) if r[3] else {})} for r in rows]

    def finish(self, run_id: str, body: FinishBody) -> RunRecord:
        """Close the run: status, summary, adapter, record, hours and cost (estimated from gpu and seconds)."""
        current = self.run(run_id)
        hours = body.hours if body.hours is not None else (None if body.seconds is None else body.seconds / 3600.0)
        cost, basis = body.cost_usd, current.cost_basis
        if cost is None and (body.gpu is not None or body.seconds is not None):
            cost, basis = _rules.cost_of(body.gpu, body.seconds)
        elif cost is not None:
            basis = "reported by the caller"
        summary = _merge(current.summary, body.summary)
        if body.gpu is not None or body.seconds is not None:
            summary = _merge(summary, {"gpu": body.gpu, "seconds": body.seconds, "cost_usd": cost, "cost_basis": basis})
        with self.db.write() as con:
            con.execute("UPDATE tracked_runs SET status = ?, finished_at = ?, summary = ?, record = ?, "
                        "adapter = coalesce(?, adapter), hours = coalesce(?, hours), cost_usd = coalesce(?, cost_usd), "
                        "cost_basis = ? WHERE id = ?",
                        [body.status, utcnow(), _dumps(summary), _dumps(_merge(current.record, body.record)),
                         body.adapter, hours, cost, basis, run_id])
        return self.run(run_id)

    # --- scores -------------------------------------------------------------------------------

    def score(self, run_id: str, body: ScoreBody) -> ScoreRecord:
        """Post one behavior's score on a run (the behavior is created when new)."""
        run = self.run(run_id)
        if run.agent is not None and body.behavior not in self.behaviors(run.agent):
            self.put_behavior(run.agent, Behavior(name=body.behavior))
        score_id = "sc-" + uuid.uuid4().hex[:12]
        with self.db.write() as con:
            con.execute("INSERT INTO scores VALUES (?, ?, ?, ?, ?, ?, ?, nextval('platform_seq'), ?)",
                        [score_id, run_id, body.behavior, body.value, body.ci, body.n,
                         _dumps([e.model_dump() for e in body.examples]), utcnow()])
        return self._scores("s.id = ?", [score_id])[0]

    def _scores(self, where: str, params: list[Any]) -> list[ScoreRecord]:
        with self.db.read() as con:
            rows = con.execute(
                "SELECT s.id, s.run_id, s.behavior, coalesce(r.version, r.id), s.value, s.ci, s.n, s.examples, "
                f"s.seq, strftime(s.created_at, '{_ISO}'), coalesce(x.n, 0) FROM scores s "
                "JOIN tracked_runs r ON r.id = s.run_id "
                "LEFT JOIN (SELECT score_id, count(*) AS n FROM score_rows GROUP BY score_id) x ON x.score_id = s.id "
                f"WHERE r.account_id = ? AND {where} ORDER BY s.seq", [self.account, *params]).fetchall()
        keys = ("id", "run_id", "behavior", "version", "value", "ci", "n", "examples", "seq", "created_at", "n_rows")
        return _SCORES.validate_python([dict(zip(keys, (*r[:7], [] if r[7] == "[]" else json.loads(r[7]), *r[8:])))
                                        for r in rows])

    def scores(self, run_id: str) -> list[ScoreRecord]:
        """The run's scores, in posting order."""
        self.run(run_id)
        return self._scores("s.run_id = ?", [run_id])

    def add_rows(self, run_id: str, score_id: str, body: RowsBody) -> dict[str, Any]:
        """Append graded rows behind a score (500 a call, 20,000 a score); a repeated batch id is not stored twice."""
        import pyarrow as pa

        if not self._scores("s.id = ? AND s.run_id = ?", [score_id, run_id]):
            self.run(run_id)
            raise not_found("score", score_id, f"Post the score first (POST /runs/{run_id}/scores).")
        rows = body.rows
        tbl = pa.table({
            "prompt": pa.array([r.prompt for r in rows], pa.string()),
            "reply": pa.array([r.reply for r in rows], pa.string()),
            "ok": pa.array([r.ok for r in rows], pa.bool_()),
            "why": pa.array([r.why for r in rows], pa.string()),
            "reference": pa.array([r.reference for r in rows], pa.string()),
            "detail": pa.array([r.detail for r in rows], pa.string()),
            "tags": pa.array([_dumps(r.tags) for r in rows], pa.string()),
            "task": pa.array([r.task for r in rows], pa.string()),
            "messages": pa.array([None if r.messages is None else _dumps([m.model_dump(exclude_defaults=True)
                                                                          for m in r.messages]) for r in rows],
                                 pa.string()),
        })
        with self.db.write() as con:
            if self._batch_seen(con, run_id, body.batch_id):
                return {"accepted": 0, "duplicate": True}
            have = con.execute("SELECT count(*) FROM score_rows WHERE score_id = ?", [score_id]).fetchall()[0][0]
            if have + len(rows) > ROWS_PER_SCORE:
                raise PlatformError(422, "too_many_rows", f"rows behind one score must be at most {ROWS_PER_SCORE:,}, "
                                                          f"got {have + len(rows):,}. Post a sample of the graded set.")
            con.register("_wai_rows", tbl)
            try:
                con.execute("INSERT INTO score_rows (score_id, seq, prompt, reply, ok, why, reference, detail, tags, "
                            "task, messages) SELECT ?, nextval('platform_seq'), prompt, reply, ok, why, reference, "
                            "detail, tags, task, messages FROM _wai_rows", [score_id])
            finally:
                con.unregister("_wai_rows")
        return {"accepted": len(rows), "duplicate": False}

    def rows(self, run_id: str, behavior: str) -> list[Example]:
        """The graded rows behind the run's newest score on ``behavior``."""
        mine = [s for s in self.scores(run_id) if s.behavior == behavior]
        if not mine:
            raise not_found("score", behavior, f"Run {run_id} has no score on it; post run.score({behavior!r}, ...).")
        return self._score_rows(mine[-1].id)

    def _score_rows(self, score_id: str) -> list[Example]:
        with self.db.read() as con:
            rows = con.execute("SELECT prompt, reply, ok, why, reference, detail, tags, task, messages FROM score_rows "
                               "WHERE score_id = ? ORDER BY seq", [score_id]).fetchall()
        return [Example.model_construct(prompt=r[0], reply=r[1], ok=r[2], why=r[3], reference=r[4], detail=r[5],
                                        tags=json.loads(r[6]) if r[6] else {}, task=r[7],
                                        messages=None if r[8] is None else
                                        [Message.model_validate(m) for m in json.loads(r[8])])
                for r in rows]

    # --- datasets -----------------------------------------------------------------------------

    def push_dataset(self, body: DatasetPush) -> dict[str, Any]:
        """Save pushed rows as a new version of a dataset in this store (Parquet beside it, lineage kept).

        Datasets are the store's, shared by every account on it (the store's own datasets table).
        """
        from whileai.store import Store

        info = Store(self.db.path, timeout=self.db.timeout).save_dataset(
            body.rows, body.name, purpose=body.purpose, parent=body.parent, meta=body.meta)
        return info.to_dict()

    # --- the page's data ----------------------------------------------------------------------

    def state(self, agent: str, *, train: bool = True) -> AgentState:
        """Every row the rules read about one agent; an archived run and its scores are left out."""
        info = self.agent(agent)
        runs = self.runs(agent)
        with self.db.read() as con:
            exp = con.execute("SELECT experiment FROM agents WHERE account_id = ? AND name = ?",
                              [self.account, agent]).fetchall()[0][0]
            figs = con.execute("SELECT name, caption, figure FROM figures WHERE account_id = ? AND agent = ? "
                               "ORDER BY created_at, name", [self.account, agent]).fetchall()
            live = con.execute("SELECT day, version, replies, flagged FROM live_days WHERE account_id = ? AND agent = ? "
                               "ORDER BY day, version", [self.account, agent]).fetchall()
            points = con.execute("SELECT p.run_id, p.step, p.loss, p.lr, p.metrics FROM run_points p JOIN tracked_runs r "
                                 "ON r.id = p.run_id WHERE r.account_id = ? AND r.agent = ? AND NOT r.archived "
                                 "ORDER BY p.seq",
                                 [self.account, agent]).fetchall() if train else []
        curves: dict[str, list[dict[str, Any]]] = {}
        for run_id, step, loss, lr, metrics in points:
            curves.setdefault(run_id, []).append({"step": step, "loss": loss, "lr": lr,
                                                  **(json.loads(metrics) if metrics else {})})
        return AgentState(
            agent=info, behaviors=self.behaviors(agent), runs=runs,
            scores=self._scores("r.agent = ? AND NOT r.archived", [agent]),
            experiment=Experiment.model_validate_json(exp) if exp else None,
            figures=[FigureRecord(name=f[0], caption=f[1], figure=json.loads(f[2])) for f in figs],
            live=[LiveRecord(day=d, version=v, replies=r, flagged=f) for d, v, r, f in live],
            train=curves,
        )

    def verdict(self, agent: str, behavior: str, version: str | None = None) -> Verdict:
        """``_rules.verdict_of`` on the agent's rows."""
        return _rules.verdict_of(self.state(agent, train=False), behavior, version)

    def brief(self, agent: str) -> Brief:
        """``_rules.brief_of`` on the agent's rows."""
        return _rules.brief_of(self.state(agent, train=False))

    def evals(self, agent: str) -> list[EvalHealth]:
        """``_rules.evals_of`` on the agent's rows."""
        return _rules.evals_of(self.state(agent, train=False))

    def dashboard(self, agent: str) -> Dashboard:
        """``_rules.dashboard_of`` on the agent's rows."""
        return _rules.dashboard_of(self.state(agent))

    def compare(self, runs: str | Sequence[str], metric: str | None = None) -> RunComparison:
        """Runs side by side (``_compare.compare_of``): every metric they logged, one series per run, their configs.

        Args:
            runs: Run ids, as a list or comma-separated (the query string's ``?runs=a,b``), in the
                order the table and legend show them; archived runs are compared when named.
            metric: Only this metric's series.

        Raises:
            PlatformError: 422 for no run or more than ``COMPARE_RUNS_MAX``; 404 for an unknown run.
        """
        from whileai.defaults import COMPARE_RUNS_MAX
        from whileai.platform._compare import compare_of

        ids = list(dict.fromkeys(r.strip() for r in (runs.split(",") if isinstance(runs, str) else runs) if r.strip()))
        if not ids or len(ids) > COMPARE_RUNS_MAX:
            raise PlatformError(422, "invalid", f"runs must name 1 to {COMPARE_RUNS_MAX} run ids, got {len(ids)}. "
                                                "Pass ?runs=ID,ID (tracked.runs() lists them).", argument="runs")
        placeholders = ", ".join("?" for _ in ids)
        with self.db.read() as con:  # one read of the runs (each run() aggregates every point of the store)
            found = {r.id: r for r in self._runs(con.execute(
                f"{_RUN_SELECT} WHERE r.account_id = ? AND r.id IN ({placeholders})", [self.account, *ids]).fetchall())}
            unknown = [i for i in ids if i not in found]
            if unknown:
                raise not_found("run", unknown[0], "List the ids with tracked.runs() (GET /runs).")
            rows = con.execute(f"SELECT run_id, step, loss, lr, metrics FROM run_points WHERE run_id IN ({placeholders}) "
                               "ORDER BY seq", ids).fetchall()
        records = [found[i] for i in ids]
        points: dict[str, list[dict[str, Any]]] = {}
        for run_id, step, loss, lr, extra in rows:
            points.setdefault(run_id, []).append({"step": step, "loss": loss, "lr": lr,
                                                  **(json.loads(extra) if extra else {})})
        try:
            return compare_of(records, points, metric=metric)
        except ArgumentError as exc:
            raise PlatformError(422, "invalid", exc.message, argument="metric") from exc

    def diff(self, agent: str, behavior: str, a: str, b: str) -> VersionDiff:
        """``_rules.diff_of`` on the graded rows behind each version's newest score on ``behavior``.

        Raises:
            PlatformError: 404 for an unknown agent or a version not scored on ``behavior``; 422 for
                a score posted without its graded rows.
        """
        state = self.state(agent, train=False)
        latest = _rules.latest_scores(state.scores, behavior)
        rows = []
        for version in (a, b):
            score = latest.get((behavior, version))
            if score is None:
                scored = ", ".join(sorted(v for _, v in latest)) or "none"
                raise not_found("score", f"{version} on {behavior}",
                                f"Versions scored on {behavior!r}: {scored}. Post run.score({behavior!r}, ..., rows=[...]) "
                                "on it first.")
            got = self._score_rows(score.id)
            if not got:
                raise PlatformError(422, "no_rows", f"graded rows must be posted behind {version}'s score on "
                                                    f"{behavior!r} to diff it, got none. Post run.score({behavior!r}, "
                                                    "value, ..., rows=[Example(..., task=...)]).", argument="rows")
            rows.append(got)
        return _rules.diff_of(behavior, a, b, rows[0], rows[1])
