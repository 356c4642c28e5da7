"""Tracked runs, scores, verdicts and the brief: ``import whileai.platform as wp``.

``wp.track(agent, store=PATH)`` writes straight into the local DuckDB store; with ``base_url=``
(or after ``wai login``) the same calls go to a ``wai server``. The rules (verdict, brief, eval
checks, dashboard) are pure functions in ``whileai.platform._rules``, shared by the client, the
server and the pages. See docs/platform.md.

    >>> import whileai.platform as wp
    >>> tracked = wp.track({"name": "refunds", "model": "gpt-4.1"}, store="store.duckdb")  # doctest: +SKIP
    >>> run = tracked.run("sft-v1")                                                        # doctest: +SKIP
"""

from whileai.errors import PlatformError
from whileai.platform._backend import Backend, HttpBackend, LocalBackend, backend_for
from whileai.platform._client import Run, Tracked, attach_delta, attach_holdout, describe, track
from whileai.platform._credentials import (
    check_login,
    key_id,
    logout,
    resolve_api_key,
    resolve_base_url,
    save_login,
    status,
)
from whileai.platform._models import (
    AgentInfo,
    AgentSpec,
    Behavior,
    CutWarning,
    DatasetPush,
    Example,
    Experiment,
    Figure,
    FinishBody,
    Harness,
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
    ToolCall,
    TrainPoint,
    cut_middle,
)
from whileai.platform._push import push_file, push_rows
from whileai.platform._rules import (
    brief_of,
    cost_of,
    dashboard_of,
    diff_of,
    eval_checks,
    evals_of,
    noise_floor_points,
    verdict_of,
)
from whileai.platform._service import KeyInfo, create_key, list_keys, revoke_key
from whileai.platform._sweep import HarnessSweep, SweepArm, SweepReport
from whileai.platform._views import (
    AgentState,
    Brief,
    BriefItem,
    Dashboard,
    EvalCheck,
    EvalHealth,
    RunComparison,
    RunMissing,
    TaskChange,
    Verdict,
    VersionDiff,
)

__all__ = [
    "AgentInfo", "AgentSpec", "AgentState", "Backend", "Behavior", "Brief", "BriefItem", "CutWarning", "Dashboard", "DatasetPush",
    "EvalCheck", "EvalHealth", "Example", "Experiment", "Figure", "FinishBody", "Harness", "HarnessSweep", "HttpBackend", "KeyInfo",
    "LiveDay", "LocalBackend", "LogBody", "Message", "PlatformError", "RowsBody", "Run", "RunComparison", "RunMissing", "RunPatch", "RunRecord",
    "RunSpec", "ScoreBody", "ScoreRecord", "SweepArm", "SweepReport", "TaskChange", "ToolCall", "Tracked", "TrainPoint", "Verdict",
    "VersionDiff", "attach_delta",
    "attach_holdout", "brief_of", "cost_of", "create_key", "cut_middle", "dashboard_of", "describe", "diff_of", "eval_checks",
    "evals_of", "list_keys", "logout", "noise_floor_points", "push_file", "push_rows", "resolve_api_key", "resolve_base_url",
    "revoke_key", "save_login", "status",
    "track", "verdict_of",
    "backend_for",
    "check_login",
    "key_id",
    "Promote",
]
