"""whileai 0.131's client on this server: its request shapes read onto our routes (``ALIASES_0131``).

Each handler takes the request's path parameters, query and parsed JSON body (already through the
edge: JSON content type, finite numbers, size and depth), keeps only the keys 0.131's client sends
(another key is refused with 422 naming it, as our own bodies are), builds our body model (so its
rules and caps apply) and runs the one Service method of our equivalent route; the answer is
written in the shape 0.131's client reads. A route with no equivalent answers 410 with one line
naming it and what to use here (docs/platform.md, "0.131's client").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from whileai.errors import PlatformError
from whileai.platform._models import (
    AgentInfo,
    AgentSpec,
    Behavior,
    Figure,
    FinishBody,
    LiveDay,
    LogBody,
    RowsBody,
    RunPatch,
    RunRecord,
    RunSpec,
    ScoreBody,
    ScoreRecord,
)
from whileai.platform._routes import ALIASES_0131, Alias, field_message
from whileai.platform._service import Service

__all__ = ["HANDLERS", "gone_message", "is_0131"]

Handler = Callable[[Service, dict[str, str], Mapping[str, str], Any], Any]

#: What 0.131's transport sends as its User-Agent (its platform module's every request).
USER_AGENT_0131 = "whileai-sdk"

# 0.131's camelCase keys whose snake form is not the plain split (its aliases).
_SNAKE = {"costPer1k": "cost_per_1k", "p50s": "p50_s", "replies7d": "replies_7d"}
# 0.131's run statuses and ours: "evaluated" is its close of a run that was only scored.
_STATUS = {"evaluated": "done", "done": "done", "failed": "failed", "stopped": "stopped"}
# Keys that say a POST /runs body is 0.131's (ours has none of them).
_RUN_KEYS_0131 = frozenset({"base", "method", "targets", "trainedOn", "gpu", "trainer", "config", "after_dataset_id"})


def snake(key: str) -> str:
    """0.131's camelCase wire key as ours (``nTrain`` -> ``n_train``, ``costPer1k`` -> ``cost_per_1k``).

    Examples:
        >>> snake("decontaminatedDropped"), snake("lr"), snake("costPer1k")
        ('decontaminated_dropped', 'lr', 'cost_per_1k')
    """
    return _SNAKE.get(key) or re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower()


def _snaked(value: Any, *, keep: bool = False) -> Any:
    """A record block with every key snake_case, except the names under ``pins`` (library names)."""
    if isinstance(value, dict):
        return {(k if keep else snake(str(k))): _snaked(v, keep=str(k) == "pins") for k, v in value.items()}
    if isinstance(value, list):
        return [_snaked(v) for v in value]
    return value


def _only(body: Any, allowed: Iterable[str], what: str) -> dict[str, Any]:
    """``body`` as a dict holding only 0.131's keys for ``what``; else a 422 naming the first other key."""
    if not isinstance(body, dict):
        raise PlatformError(422, "invalid", f"the body of {what} must be a JSON object, got {type(body).__name__}. "
                                            "Send the object 0.131's client sends.")
    allowed = set(allowed)
    for key in body:
        if key not in allowed:
            raise PlatformError(422, "invalid", f"body field {key!r} is not one 0.131's {what} sends, got "
                                                f"{str(body[key])[:80]!r}. Send only {', '.join(sorted(allowed))}.",
                                argument=str(key))
    return body


def _list(body: Any, what: str) -> list[Any]:
    if not isinstance(body, list):
        raise PlatformError(422, "invalid", f"the body of {what} must be a JSON list, got {type(body).__name__}. "
                                            "Send the list 0.131's client sends.")
    return body


def _valid(model: type[BaseModel], data: Any) -> Any:
    """``data`` validated into our body model; a 422 naming the field (as our own routes answer)."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        loc, message = field_message(exc)
        raise PlatformError(422, "invalid", message, argument=loc) from exc


def _dump(value: Any) -> Any:
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else value


def _present(**fields: Any) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


# --- agents ---------------------------------------------------------------------------------------


def _agent_0131(info: AgentInfo) -> dict[str, Any]:
    return _present(id=info.name, name=info.name, model=info.model, serving=info.served, candidate=info.candidate,
                    harness=_present(instructions=info.instructions, tools=info.tools, model=info.model) or None)


def agent_put(svc: Service, params: dict[str, str], query: Mapping[str, str], body: Any) -> Any:
    """``POST /agents`` as 0.131 sends it: ``{id, name, model, harness, frontier}``."""
    body = _only(body, ("id", "name", "model", "harness", "frontier"), "POST /agents")
    harness = _only(body.get("harness") or {}, ("label", "instructions", "tools", "model", "hash"), "harness")
    spec = _valid(AgentSpec, _present(name=body.get("id"), model=body.get("model") or harness.get("model"),
                                      instructions=harness.get("instructions"), tools=harness.get("tools")))
    return _agent_0131(svc.put_agent(spec))


def agents_list(svc: Service, params: dict[str, str], query: Mapping[str, str], body: Any) -> Any:
    """``GET /agents`` as 0.131 reads it: ``{agents: [...]}``."""
    return {"agents": [_agent_0131(a) for a in svc.agents()]}


# --- behaviors, experiment, figures, live ---------------------------------------------------------


def _behavior_0131(b: Behavior) -> dict[str, Any]:
    judge = _present(agreement=b.agreement, humanN=b.human_n, lengthBias=b.length_bias)
    return _present(name=b.name, testVersion=b.test_version, judge=judge or None, noiseFloor=b.noise_floor,
                    contamination=b.contamination, rewardIsJudge=b.reward_is_judge, gradedBy=b.graded_by,
                    rubric=b.rubric)


def behavior_put(svc: Service, params: dict[str, str], query: Mapping[str, str], body: Any) -> Any:
    """``PUT /agents/{agent}/behaviors/{name}``: 0.131's behavior, its judge block flattened onto ours."""
    body = _only(body, ("name", "testVersion", "n", "judge", "noiseFloor", "contamination", "rewardIsJudge",
                        "gradedBy", "description", "rubric"), "PUT /agents/{agent}/behaviors/{name}")
    judge = _only(body.get("judge") or {}, ("name", "agreement", "humanN", "lengthBias"), "judge")
    item = _valid(Behavior, _present(
        name=params["name"], test_version=body.get("testVersion"), noise_floor=body.get("noiseFloor"),
        contamination=body.get("contamination"), reward_is_judge=body.get("rewardIsJudge"),
        graded_by=body.get("gradedBy"), rubric=body.get("rubric"), agreement=judge.get("agreement"),
        human_n=judge.get("humanN"), length_bias=judge.get("lengthBias")))
    return _behavior_0131(svc.put_behavior(params["agent"], item))


def behaviors_list(svc: Service, params: dict[str, str], query: Mapping[str, str], body: Any) -> Any:
    """``GET /agents/{agent}/behaviors`` as 0.131 reads it: ``{behaviors: [...]}``."""
    return {"behaviors": [_behavior_0131(b) for b in svc.behaviors(params["agent"]).values()]}


def experiment_get(svc: Service, params: dict[str, str], query: Mapping[str, str], body: Any) -> Any:
    """The agent's experiment block; 404 when none was posted (how 0.131 learns there is none)."""
    exp = svc.state(params["agent"], train=False).experiment
    if exp is None:
        raise PlatformError(404, "not_found", f"agent {params['agent']!r} has no experiment block yet. Post one with "
                                              f"PUT /agents/{params['agent']}/experiment.")
    return exp.model_dump(mode="json", exclude_none=True)


def figure_put(svc: Service, params: dict[str, str], query: Mapping[str, str], body: Any) -> Any:
    """``PUT /agents/{agent}/figures/{name}``: the figure named by the path."""
    body = _only(body, ("figure", "caption", "run"), "PUT /agents/{agent}/figures/{name}")
    figure = _valid(Figure, _present(name=params["name"], caption=body.get("caption"), figure=body.get("figure")))
    return _dump(svc.put_figure(params["agent"], figure))


def figures_list(svc: Service, params: dict[str, str], query: Mapping[str, str], body: Any) -> Any:
    """The agent's figures as 0.131 reads them: ``{figures: [...]}`` by name."""
    figs = sorted(svc.state(params["agent"], train=False).figures, key=lambda f: f.name)
    return {"figures": [_dump(f) for f in figs]}


def live_post(svc: Service, params: dict[str, str], query: Mapping[str, str], body: Any) -> Any:
    """``POST /live``: 0.131's list of days, each with its agent, one of our calls per day."""
    out = []
    for item in _list(body, "POST /live"):
        item = _only(item, ("agent", "day", "version", "replies", "flagged", "p50s", "costUsd"), "POST /live")
        day = _valid(LiveDay, _present(day=item.get("day"), version=item.get("version"), replies=item.get("replies"),
                                       flagged=item.get("flagged")))
        out.append(_dump(svc.post_live(str(item.get("agent") or ""), day)))
    return {"live": out}


# --- runs -----------------------------------------------------------------------------------------


def _score_0131(s: ScoreRecord) -> dict[str, Any]:
    return _present(id=s.id, behavior=s.behavior, score=s.value, ci=s.ci, n=s.n, version=s.version,
                    createdAt=s.created_at)


def _run_0131(run: RunRecord, scores: list[ScoreRecord]) -> dict[str, Any]:
    out = run.model_dump(mode="json")
    rec = run.record or {}
    out.update(_present(method=rec.get("method"), targets=rec.get("targets"), trainedOn=rec.get("trained_on"),
                        gpu=rec.get("gpu"), base=run.base_model))
    out.update(runId=run.id, createdAt=run.created_at, steps=run.total_steps,
               evals=[_score_0131(s) for s in scores if s.run_id == run.id])
    return out


def run_post(svc: Service, params: dict[str, str], query: Mapping[str, str], body: Any) -> Any:
    """``POST /runs`` from 0.131's ``tracked.run`` or ``training_run``: its extra fields go to the record."""
    body = _only(body, ("id", "agent", "version", "name", "base", "base_model", "dataset_id", "total_steps", "method",
                        "targets", "trainedOn", "harness", "gpu", "record", "trainer", "config", "after_dataset_id"),
                 "POST /runs")
    record = _snaked(body.get("record") or {})
    if not isinstance(record, dict):
        raise PlatformError(422, "invalid", f"body field 'record' must be an object, got {record!r}. Send a dict.",
                            argument="record")
    harness = body.get("harness")
    extra = _present(method=body.get("method"), targets=body.get("targets"), trained_on=body.get("trainedOn"),
                     gpu=body.get("gpu"), trainer=body.get("trainer"), config=body.get("config"),
                     after_dataset_id=body.get("after_dataset_id"),
                     harness={"label": harness} if isinstance(harness, str) else harness)
    spec = _valid(RunSpec, _present(id=body.get("id"), agent=body.get("agent"), version=body.get("version"),
                                    name=body.get("name"), dataset_id=body.get("dataset_id"),
                                    base_model=body.get("base_model") or body.get("base"),
                                    total_steps=body.get("total_steps"), record={**record, **extra} or None))
    out = _dump(svc.create_run(spec))
    out["runId"] = out["id"]
    return out


def runs_list(svc: Service, params: dict[str, str], query: Mapping[str, str], body: Any) -> Any:
    """``GET /runs`` as 0.131 reads it: ``{runs: [...]}``, each run with its evals."""
    runs = svc.runs(query.get("agent"), archived=query.get("archived", False))
    return {"runs": [_run_0131(r, svc.scores(r.id)) for r in runs]}


def run_get(svc: Service, params: dict[str, str], query: Mapping[str, str], body: Any) -> Any:
    """``GET /runs/{run_id}`` as 0.131's ``tracked.open`` reads it: with ``evals`` and ``train`` points."""
    run_id = params["run_id"]
    out = _run_0131(svc.run(run_id), svc.scores(run_id))
    out["train"] = svc.points(run_id)
    return out


def _finish(svc: Service, run_id: str, status: Any, **fields: Any) -> RunRecord:
    if status not in _STATUS:
        raise PlatformError(422, "invalid", f"body field 'status' must be one of {', '.join(_STATUS)}, got "
                                            f"{status!r}. Send evaluated or done to close the run.", argument="status")
    return svc.finish(run_id, _valid(FinishBody, _present(status=_STATUS[status], **fields)))


def _with_error(summary: Any, error: Any) -> Any:
    if error is None:
        return summary
    if summary is not None and not isinstance(summary, dict):
        return summary  # the model refuses it with the field named
    return {**(summary or {}), "error": str(error)}


def run_patch(svc: Service, params: dict[str, str], query: Mapping[str, str], body: Any) -> Any:
    """0.131's ``PATCH /runs/{run_id}``: with ``status`` a finish (its record, hours, cost), else a patch."""
    body = _only(body, ("status", "record", "hours", "gpu", "costUsd", "steps", "summary", "notes", "archived",
                        "error"), "PATCH /runs/{run_id}")
    run_id = params["run_id"]
    patch = _valid(RunPatch, _present(total_steps=body.get("steps"), notes=body.get("notes"),
                                      archived=body.get("archived")))
    if "status" in body:
        _finish(svc, run_id, body["status"], record=_snaked(body.get("record")), hours=body.get("hours"),
                gpu=body.get("gpu"), cost_usd=body.get("costUsd"),
                summary=_with_error(body.get("summary"), body.get("error")))
    elif any(k in body for k in ("record", "hours", "costUsd", "summary", "gpu", "error")):
        patch = _valid(RunPatch, {**patch.model_dump(exclude_unset=True), **_present(
            record=_snaked(body.get("record")), hours=body.get("hours"), cost_usd=body.get("costUsd"),
            summary=_with_error(body.get("summary"), body.get("error")))})
    if patch.model_fields_set:
        svc.patch_run(run_id, patch)
    return _run_0131(svc.run(run_id), svc.scores(run_id))


def _points(points: Any, what: str) -> list[dict[str, Any]]:
    """0.131's points: its wall-clock ``ts`` dropped, and a point with no metric left (a progress tick) skipped."""
    out = []
    for p in _list(points, what):
        if not isinstance(p, dict):
            out.append(p)  # the model refuses it with the field named
            continue
        p = {k: v for k, v in p.items() if k != "ts"}
        if set(p) - {"step"}:
            out.append(p)
    return out


def train_post(svc: Service, params: dict[str, str], query: Mapping[str, str], body: Any) -> Any:
    """``POST /runs/{run_id}/train``: 0.131's list of points, logged as ours."""
    points = _points(body, "POST /runs/{run_id}/train")
    if not points:
        return {"accepted": 0, "duplicate": False}
    return svc.log(params["run_id"], _valid(LogBody, {"points": points}))


def log_post(svc: Service, params: dict[str, str], query: Mapping[str, str], body: Any) -> Any:
    """0.131's ``POST /runs/{run_id}/log``: ``total_steps`` sets the run's, ``ts`` is not a metric."""
    body = _only(body, ("points", "total_steps"), "POST /runs/{run_id}/log")
    run_id = params["run_id"]
    if body.get("total_steps") is not None:
        svc.patch_run(run_id, _valid(RunPatch, {"total_steps": body["total_steps"]}))
    points = _points(body.get("points") or [], "POST /runs/{run_id}/log")
    if not points:
        svc.run(run_id)  # 404 for an unknown run, as the log route answers
        return {"accepted": 0, "duplicate": False}
    return svc.log(run_id, _valid(LogBody, {"points": points}))


def finish_post(svc: Service, params: dict[str, str], query: Mapping[str, str], body: Any) -> Any:
    """0.131's ``POST /runs/{run_id}/finish``: its ``error`` lands in the summary."""
    body = _only(body, ("status", "summary", "adapter", "error"), "POST /runs/{run_id}/finish")
    run = _finish(svc, params["run_id"], body.get("status", "done"), adapter=body.get("adapter"),
                  summary=_with_error(body.get("summary"), body.get("error")))
    out = _dump(run)
    out["runId"] = run.id
    return out


def _example(row: Any) -> Any:
    """0.131's graded row as ours: its per-row ``score`` is not kept."""
    if not isinstance(row, dict):
        return row
    return {k: v for k, v in _only(row, ("prompt", "reply", "ok", "why", "score", "tags", "reference", "detail"),
                                   "row").items() if k != "score" and v is not None}


def evals_post(svc: Service, params: dict[str, str], query: Mapping[str, str], body: Any) -> Any:
    """``POST /runs/{run_id}/evals``: 0.131's list of scores, each posted as ours (``score`` is the value)."""
    out = []
    for item in _list(body, "POST /runs/{run_id}/evals"):
        item = _only(item, ("behavior", "score", "ci", "n", "testVersion", "version", "examples"),
                     "POST /runs/{run_id}/evals")
        score = _valid(ScoreBody, _present(behavior=item.get("behavior"), value=item.get("score"), ci=item.get("ci"),
                                           n=item.get("n"), examples=[_example(e) for e in item.get("examples") or []]))
        out.append(_score_0131(svc.score(params["run_id"], score)))
    return {"evals": out}


def _newest(svc: Service, run_id: str, behavior: str) -> ScoreRecord:
    mine = [s for s in svc.scores(run_id) if s.behavior == behavior]
    if not mine:
        raise PlatformError(404, "not_found", f"score {behavior!r} does not exist on run {run_id!r}. Post it first "
                                              f"(POST /runs/{run_id}/scores).", name=behavior)
    return mine[-1]


def eval_rows_get(svc: Service, params: dict[str, str], query: Mapping[str, str], body: Any) -> Any:
    """The rows behind the run's newest score on the behavior: ``{rows: [...]}``."""
    rows = svc.rows(params["run_id"], params["behavior"])
    return {"rows": [r.model_dump(mode="json", exclude_none=True) for r in rows]}


def eval_rows_post(svc: Service, params: dict[str, str], query: Mapping[str, str], body: Any) -> Any:
    """0.131's ``{rows, offset}``, appended behind the run's newest score on the behavior."""
    body = _only(body, ("rows", "offset"), "POST /runs/{run_id}/evals/{behavior}/rows")
    score = _newest(svc, params["run_id"], params["behavior"])
    rows = _valid(RowsBody, {"rows": [_example(r) for r in _list(body.get("rows"), "rows")]})
    return svc.add_rows(params["run_id"], score.id, rows)


def eval_rows_delete(svc: Service, params: dict[str, str], query: Mapping[str, str], body: Any) -> Any:
    """0.131 clears a score's rows before posting them: a score with none has nothing to clear (200)."""
    run_id, behavior = params["run_id"], params["behavior"]
    score = _newest(svc, run_id, behavior)
    if score.n_rows:
        raise PlatformError(409, "conflict", f"DELETE /runs/{run_id}/evals/{behavior}/rows: rows behind a score are "
                                             f"kept as posted, and {score.id} holds {score.n_rows}. Post a new score "
                                             f"(POST /runs/{run_id}/scores) with its rows instead.")
    return {"deleted": 0}


# --- the screen -----------------------------------------------------------------------------------


def dashboard_get(svc: Service, params: dict[str, str], query: Mapping[str, str], body: Any) -> Any:
    """0.131's dashboard of one behavior (``?behavior=``, else the first): agent, versions, verdict.

    The versions are each version's newest score on the behavior, in posting order; the verdict
    is ours (``GET /agents/{agent}/verdict``), in 0.131's field names. 0.131's client resolves its
    own line from these and ``GET /runs``.
    """
    agent = params["agent"]
    state = svc.state(agent, train=False)
    names = sorted(state.behaviors)
    name = query.get("behavior") or (names[0] if names else None)
    out: dict[str, Any] = {"agent": _agent_0131(state.agent), "behaviors": names, "versions": [], "deltas": []}
    if name is None:
        return out
    behavior = state.behaviors.get(name) or _valid(Behavior, {"name": name})
    newest: dict[str, ScoreRecord] = {}
    for s in sorted(state.scores, key=lambda s: s.seq):
        if s.behavior == name:
            newest.pop(s.version or s.run_id, None)
            newest[s.version or s.run_id] = s
    verdict = svc.verdict(agent, name)
    served = verdict.served or state.agent.served
    out["agent"]["serving"] = served
    out.update(behavior=_behavior_0131(behavior),
               versions=[_present(v=v, score=s.value, ci=s.ci, n=s.n, run=s.run_id) for v, s in newest.items()],
               verdict=_present(candidate=verdict.candidate, serving=served, delta=verdict.delta, behavior=name,
                                noiseFloor=verdict.noise_floor, n=verdict.n))
    return out


HANDLERS: dict[str, Handler] = {
    f.__name__: f for f in (
        agent_put, agents_list, behavior_put, behaviors_list, experiment_get, figure_put, figures_list, live_post,
        run_post, runs_list, run_get, run_patch, train_post, log_post, finish_post, evals_post, eval_rows_get,
        eval_rows_post, eval_rows_delete, dashboard_get)
}


def is_0131(alias: Alias, headers: Mapping[str, str], body: Any) -> bool:
    """Whether a request on a route both clients use is 0.131's (its body's keys, or its User-Agent)."""
    if alias.shared == "agent":
        return headers.get("user-agent", "").startswith(USER_AGENT_0131)
    if not isinstance(body, dict):
        return False
    if alias.path == "/agents":
        return "id" in body
    if alias.path == "/runs":
        return bool(_RUN_KEYS_0131 & set(body)) or isinstance(body.get("harness"), str)
    if alias.path == "/runs/{run_id}":
        return bool({"status", "costUsd", "gpu", "steps", "error"} & set(body))
    if alias.path == "/runs/{run_id}/log":
        points = body.get("points")
        return "total_steps" in body or (isinstance(points, list) and any(isinstance(p, dict) and "ts" in p
                                                                          for p in points))
    if alias.path == "/runs/{run_id}/finish":
        return "error" in body
    return False


def gone_message(alias: Alias, method: str, path: str) -> str:
    """The one line a route with no equivalent answers (410)."""
    return (f"{method} {path} is {alias.note}, which this server does not have (410). "
            f"Use {alias.equivalent} instead.")


def _check_table() -> None:
    """Every alias with a handler names one that exists (import time: a typo fails the first test)."""
    missing = [a.handler for a in ALIASES_0131 if a.handler is not None and a.handler not in HANDLERS]
    if missing:
        raise RuntimeError(f"ALIASES_0131 names handlers that do not exist: {missing}")


_check_table()
