"""The REST routes, as data: one table the server mounts and the HTTP client calls.

Each route names the :class:`~whileai.platform._service.Service` method it runs, where that
method's arguments come from (path, query, or the JSON body validated by a pydantic model) and
what it returns, so the server's handlers and the client's requests cannot drift apart, and the
OpenAPI document is generated from the same table (docs/platform.md, "REST routes").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from whileai.errors import ArgumentError
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

__all__ = ["ALIASES_0131", "ROUTES", "Alias", "Route", "build", "field_message"]


@dataclass(frozen=True)
class Route:
    """One REST route: method, path, the Service method it runs, its body and query arguments."""

    method: str
    path: str
    op: str
    summary: str
    returns: Any
    body: tuple[str, type[BaseModel]] | None = None
    query: tuple[str, ...] = ()
    required_query: tuple[str, ...] = ()
    status: int = 200
    tags: tuple[str, ...] = field(default=("runs",))

    @property
    def path_params(self) -> tuple[str, ...]:
        """The ``{name}`` parts of the path, in order."""
        return tuple(p[1:-1] for p in self.path.split("/") if p.startswith("{"))


_A = ("agents",)
ROUTES: tuple[Route, ...] = (
    Route("POST", "/agents", "put_agent", "Create an agent, or update its model, instructions, tools or served version.",
          AgentInfo, body=("spec", AgentSpec), tags=_A),
    Route("GET", "/agents", "agents", "The account's agents.", list[AgentInfo], tags=_A),
    Route("GET", "/agents/{name}", "agent", "One agent.", AgentInfo, tags=_A),
    Route("DELETE", "/agents/{name}", "delete_agent", "Remove an agent and everything under it (no undo).", dict, tags=_A),
    Route("PUT", "/agents/{agent}/behaviors", "put_behavior", "Create or replace a behavior (its rubric, grader, "
          "test version, noise floor, judge agreement).", Behavior, body=("behavior", Behavior), tags=_A),
    Route("GET", "/agents/{agent}/behaviors", "behaviors", "The agent's behaviors by name.", dict[str, Behavior], tags=_A),
    Route("PUT", "/agents/{agent}/experiment", "set_experiment", "Replace the agent's experiment block.", Experiment,
          body=("experiment", Experiment), tags=_A),
    Route("PUT", "/agents/{agent}/figures", "put_figure", "Create or replace a Plotly figure (JSON).", FigureRecord,
          body=("figure", Figure), tags=_A),
    Route("POST", "/agents/{agent}/live", "post_live", "Record a day of traffic on a version you serve.", LiveRecord,
          body=("day", LiveDay), tags=_A),
    Route("POST", "/agents/{agent}/promote", "promote", "Serve a version (the one candidates are compared against); "
          "recorded on its newest run.", AgentInfo, body=("body", Promote), tags=_A),
    Route("GET", "/agents/{agent}/state", "state", "Every stored row the rules read about the agent.", AgentState, tags=_A),
    Route("GET", "/agents/{agent}/verdict", "verdict", "The verdict on one behavior (candidate resolved per behavior).",
          Verdict, query=("behavior", "version"), required_query=("behavior",), tags=_A),
    Route("GET", "/agents/{agent}/brief", "brief", "What happened, what it means, what to do next.", Brief, tags=_A),
    Route("GET", "/agents/{agent}/evals", "evals", "One eval health per behavior, with the eight checks.",
          list[EvalHealth], tags=_A),
    Route("GET", "/agents/{agent}/dashboard", "dashboard", "The Runs page as data.", Dashboard, tags=_A),
    Route("GET", "/agents/{agent}/diff", "diff", "Two versions scored on one behavior, task by task: improved, "
          "regressed, same, with the paired delta and its interval.", VersionDiff, query=("behavior", "a", "b"),
          required_query=("behavior", "a", "b"), tags=_A),
    Route("POST", "/runs", "create_run", "Open a run (name, dataset_id, base_model, total_steps); returns runId. "
          "An id that exists is refused with 409.", RunRecord, body=("spec", RunSpec), status=201),
    Route("GET", "/runs", "runs", "The account's runs, oldest first (of one agent with ?agent=; archived ones with "
          "?archived=true).", list[RunRecord], query=("agent", "archived")),
    Route("GET", "/runs/{run_id}", "run", "One run record.", RunRecord),
    Route("GET", "/compare", "compare", "Runs side by side (?runs=ID,ID, up to 20): every metric they logged, one "
          "series per run (thinned to 500 points), and their record and summary field by field, the fields that "
          "differ marked; ?metric= keeps one metric's series.", RunComparison, query=("runs", "metric"),
          required_query=("runs",)),
    Route("PATCH", "/runs/{run_id}", "patch_run", "Fill what a run is missing: record, summary, hours, cost, notes.",
          RunRecord, body=("patch", RunPatch)),
    Route("DELETE", "/runs/{run_id}", "delete_run", "Remove a run with its points, scores and rows.", dict),
    Route("POST", "/runs/{run_id}/log", "log", "Append up to 500 training points.", dict, body=("body", LogBody)),
    Route("GET", "/runs/{run_id}/points", "points", "The run's training points, in logging order.", list[dict]),
    Route("POST", "/runs/{run_id}/finish", "finish", "Close a run: status (done, failed, stopped), summary, adapter.",
          RunRecord, body=("body", FinishBody)),
    Route("POST", "/runs/{run_id}/scores", "score", "Post a behavior's score in points, with its sample of graded rows.",
          ScoreRecord, body=("body", ScoreBody), status=201),
    Route("GET", "/runs/{run_id}/scores", "scores", "The run's scores, in posting order.", list[ScoreRecord]),
    Route("POST", "/runs/{run_id}/scores/{score_id}/rows", "add_rows", "Append up to 500 graded rows behind a score.",
          dict, body=("body", RowsBody)),
    Route("POST", "/datasets", "push_dataset", "Save rows as a new version of a dataset in the server's store, "
          "with parent lineage.", dict, body=("body", DatasetPush), status=201, tags=("datasets",)),
    Route("GET", "/runs/{run_id}/rows", "rows", "The graded rows behind the run's newest score on a behavior.",
          list[Example], query=("behavior",), required_query=("behavior",)),
)

#: Routes by Service method name (the HTTP client's lookup).
BY_OP: dict[str, Route] = {r.op: r for r in ROUTES}


@dataclass(frozen=True)
class Alias:
    """One route whileai 0.131's client calls, and what answers it here (docs/platform.md, "0.131's client").

    ``handler`` names the translation in ``server/_compat.py`` (None: the route has no equivalent and
    answers 410 naming ``equivalent``). ``shared`` marks a method and path that are also ours: the
    request is read as 0.131's by its body's keys (``body``), or by 0.131's ``User-Agent:
    whileai-sdk`` (``agent``) where only the answer's shape differs.
    """

    method: str
    path: str
    equivalent: str
    handler: str | None = None
    note: str = ""
    shared: str | None = None
    status: int = 200


ALIASES_0131: tuple[Alias, ...] = (
    Alias("POST", "/agents", "POST /agents", "agent_put", "id is the agent's name; harness instructions, tools and "
          "model land on the agent; name (display) and frontier are not kept", shared="body"),
    Alias("GET", "/agents", "GET /agents", "agents_list", "answered as {agents: [...]}", shared="agent"),
    Alias("PUT", "/agents/{agent}/behaviors/{name}", "PUT /agents/{agent}/behaviors", "behavior_put",
          "judge.agreement, humanN, lengthBias become the behavior's; n (it goes with each score) and description are "
          "not kept"),
    Alias("GET", "/agents/{agent}/behaviors", "GET /agents/{agent}/behaviors", "behaviors_list",
          "answered as {behaviors: [...]}", shared="agent"),
    Alias("GET", "/agents/{agent}/experiment", "GET /agents/{agent}/dashboard (experiment)", "experiment_get",
          "404 when none was posted, as 0.131 reads it"),
    Alias("PUT", "/agents/{agent}/figures/{name}", "PUT /agents/{agent}/figures", "figure_put",
          "run (a figure's run) is not kept: a figure belongs to the agent"),
    Alias("GET", "/agents/{agent}/figures", "GET /agents/{agent}/dashboard (figures)", "figures_list"),
    Alias("GET", "/agents/{agent}/dashboard", "GET /agents/{agent}/dashboard", "dashboard_get",
          "0.131's screen shape (agent, behavior, versions, verdict); the client resolves its verdict from it",
          shared="agent"),
    Alias("POST", "/live", "POST /agents/{agent}/live", "live_post", "one call per day; p50s and costUsd are not kept"),
    Alias("POST", "/runs", "POST /runs", "run_post", "base, method, targets, trainedOn, gpu, trainer, config and "
          "after_dataset_id land in the run record", shared="body", status=201),
    Alias("GET", "/runs", "GET /runs?agent=", "runs_list", "answered as {runs: [...]}, each with its evals",
          shared="agent"),
    Alias("GET", "/runs/{run_id}", "GET /runs/{run_id}", "run_get", "with its evals and train points",
          shared="agent"),
    Alias("PATCH", "/runs/{run_id}", "POST /runs/{run_id}/finish, PATCH /runs/{run_id}", "run_patch",
          "a body with status finishes the run (evaluated reads as done); steps set total_steps; error lands in "
          "the summary", shared="body"),
    Alias("POST", "/runs/{run_id}/train", "POST /runs/{run_id}/log", "train_post", "a list of points"),
    Alias("POST", "/runs/{run_id}/log", "POST /runs/{run_id}/log", "log_post",
          "total_steps sets the run's; a point's ts (wall clock) is not kept as a metric", shared="body"),
    Alias("POST", "/runs/{run_id}/finish", "POST /runs/{run_id}/finish", "finish_post",
          "error lands in the summary", shared="body"),
    Alias("POST", "/runs/{run_id}/evals", "POST /runs/{run_id}/scores", "evals_post",
          "score is the value in points; testVersion and version (the behavior's and the run's) and a row's score "
          "are not kept", status=201),
    Alias("GET", "/runs/{run_id}/evals/{behavior}/rows", "GET /runs/{run_id}/rows?behavior=", "eval_rows_get"),
    Alias("POST", "/runs/{run_id}/evals/{behavior}/rows", "POST /runs/{run_id}/scores/{score_id}/rows",
          "eval_rows_post", "appended behind the run's newest score on the behavior; offset is not needed"),
    Alias("DELETE", "/runs/{run_id}/evals/{behavior}/rows", "POST /runs/{run_id}/scores (a new score)",
          "eval_rows_delete", "rows behind a score are kept as posted: a score with none answers 200, one with "
          "rows 409"),
    Alias("*", "/datasets/{dataset}/train", "wai.train (sft, grpo, dpo, reward_model) on your machine, reported "
          "with wai.train.tracked_callback", note="0.131's hosted training"),
    Alias("*", "/models", "recipes/04-train/serve (serve the adapter with vLLM yourself)",
          note="0.131's hosted serving"),
    Alias("*", "/models/{rest:path}", "recipes/04-train/serve (serve the adapter with vLLM yourself)",
          note="0.131's hosted serving"),
    Alias("*", "/runs/{run_id}/score", "wai.reward_model(run) on your machine", note="0.131's hosted reward model"),
    Alias("*", "/runs/{run_id}/hf-publish", "push_to_hub (docs/export.md)", note="0.131's hosted Hub publishing"),
    Alias("*", "/datasets/{dataset}/{rest:path}", "POST /datasets (push rows), then read them from the store "
          "(wai.store)", note="0.131's hosted datasets"),
    Alias("*", "/catalog{rest:path}", "POST /datasets and the store (wai.store)", note="0.131's hosted catalog"),
    Alias("*", "/device/{rest:path}", "wai keys create NAME on the server, then wai login --server URL --api-key KEY",
          note="0.131's hosted sign-in"),
    Alias("*", "/me", "GET /whoami", note="0.131's hosted account"),
    Alias("*", "/signup", "wai keys create NAME on the server", note="0.131's hosted sign-up"),
    Alias("*", "/auth/{rest:path}", "wai keys create NAME (a key per person or job)", note="0.131's delegated "
          "credentials"),
    Alias("*", "/traces{rest:path}", "graded rows with their messages (POST /runs/{run_id}/scores/{score_id}/rows)",
          note="0.131's hosted traces"),
)


def field_message(exc: ValidationError, where: str = "body") -> tuple[str, str]:
    """(field, message) for the first error of a pydantic validation: the field named, then what to do."""
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err.get("loc", ())) or "(the whole body)"
    msg = str(err.get("msg", "is invalid")).removeprefix("Value error, ")
    value = err.get("input")
    shown = repr(value) if not isinstance(value, (dict, list)) else type(value).__name__
    more = f" ({len(exc.errors()) - 1} more error(s) after this one)" if len(exc.errors()) > 1 else ""
    if "got " in msg:  # a validator of ours, which says what it got (and may end with its fix)
        return loc, f"{where} field {loc!r}: {msg.rstrip('.')}{more}. Fix that field and send it again."
    return loc, f"{where} field {loc!r}: {msg}, got {shown[:200]}{more}. Fix that field and send it again."


def build(model: type[BaseModel], /, **fields: Any) -> Any:
    """Validate ``fields`` into ``model`` on the client, raising an ArgumentError that names the field."""
    try:
        return model(**fields)
    except ValidationError as exc:
        loc, message = field_message(exc, model.__name__)
        raise ArgumentError(message, argument=loc) from exc
