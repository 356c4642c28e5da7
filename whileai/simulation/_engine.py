"""``wai.simulate``: run an agent through a covering grid of situations, one row per rollout.

The agent meets a world that fails on purpose; every conversation comes back as a row of the
rollout table. The agent is a callable, an object with a chat method, a ``wai.Endpoint``, or a
model named as a string (``model="openai/gpt-4o-mini"``: the default tool-calling agent over that
endpoint). A simulated user can answer the agent's clarifying questions, generation settings are
recorded on every row, and the report lists what left the machine. ``simulate`` reads as its
phases, each in a module of its own: check the arguments (``_options``), plan the run
(``_plan``, ``_tasks``), run every rollout here or over Ray (``_job``, ``_rollout``,
``_dynamic``), and report (``_reporting``, ``_frames``).
"""

from __future__ import annotations

import inspect
import os
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
import polars as pl

from whileai._progress import ProgressArg, check_progress
from whileai._timeouts import check_timeout
from whileai.defaults import (
    AGENT_TIMEOUT_S,
    DEFAULT_SEED,
    FAULT_RATE,
    HARD_SHARE,
    MAX_TURNS,
    MAX_USER_TURNS,
    SIM_CONCURRENCY,
    TOOL_TIMEOUT_S,
)
from whileai.simulation._endpoint import Endpoint
from whileai.simulation._job import _run_rollouts
from whileai.simulation._options import (
    Engine,
    Mode,
    RepeatPolicy,
    _check_engine,
    _check_faults,
    _check_policy,
    _seed_int,
)
from whileai.simulation._plan import _plan_run
from whileai.simulation._progress import Progress
from whileai.simulation._reporting import _deliver, _report_run
from whileai.simulation._util import check_int, check_share, reject_unknown

__all__ = ["simulate"]


def simulate(
    agent: Any = None,
    *,
    model: str | Endpoint | None = None,
    tools: Sequence[Any] | None = None,
    system_prompt: str | None = None,
    simulator: Literal[False] | str | Endpoint | None = False,
    user_simulator: bool | str | Endpoint | None = None,
    max_user_turns: int = MAX_USER_TURNS,
    mode: Mode = "rl",
    repeats: int | None = None,
    repeat_policy: RepeatPolicy = "fixed",
    budget: int | None = None,
    tasks: Any = None,
    runs: int = 1,
    concurrency: int = SIM_CONCURRENCY,
    seed: int | np.random.Generator | None = DEFAULT_SEED,
    hard_share: float = HARD_SHARE,
    fault_rate: float = FAULT_RATE,
    faults: Sequence[str] | None = None,
    max_turns: int = MAX_TURNS,
    temperature: float | None = None,
    top_p: float | None = None,
    max_tokens: int | None = None,
    execute: Callable[[str, dict[str, Any]], Any] | None = None,
    offline: bool = False,
    score_rows: Callable[[pl.DataFrame], pl.DataFrame] | None = None,
    user_audit: Callable[[pl.DataFrame], list[list[dict[str, str]]]] | None = None,
    max_rollouts: int | None = None,
    output: str | os.PathLike[str] | None = None,
    progress: ProgressArg = None,
    timeout: float | None = AGENT_TIMEOUT_S,
    tool_timeout: float | None = TOOL_TIMEOUT_S,
    engine: Engine = "local",
    num_workers: int | None = None,
    **unknown: Any,
) -> Any:
    """Run an agent through the situations of a covering grid and return every rollout as a row.

    The template situation writer (``simulator=False``: no model, no network) takes tasks from a
    pairwise covering array over tools x world state (found, not found, ambiguous, partial) x
    user stance (cooperative, vague, impatient, adversarial, off-topic) x ask family (direct,
    indirect, compound), plus one block of cells per policy clause of the system prompt (docs/simulate.md,
    "The situations: a covering grid": a task's identity is its grid cell). Every
    tool call is answered from the task's generated world, with faults scheduled on a
    ``fault_rate`` share of tasks (timeout, server error, rate limit, malformed output, empty
    result, partial result). Each task is rolled ``repeats`` times; the agent runs multi-turn
    until it answers without a tool call or hits ``max_turns`` (the row is then truncated). With
    a simulated user the rollout goes on after such an answer when the person has more to say
    (an answer to the agent's clarifying question), up to ``max_user_turns``.

    Args:
        agent: A callable ``(messages, tools) -> assistant message`` (sync or async), an object
            with ``achat``/``chat``/``respond``, a ``wai.Endpoint``, ``wai.seeded_agent(tools)``,
            or a model named as a string (the same as ``model=``).
        model: Instead of ``agent``: a model named as a string (``"openai/gpt-4o-mini"``,
            ``"anthropic/claude-..."``, ``"vllm/<model>"``; the provider's own key variable) or a
            ``wai.Endpoint``. The default tool-calling agent sends the conversation and the tool
            schemas, and runs the calls it answers with against the world.
        tools: ``@wai.tool`` functions or OpenAI tool schemas.
        system_prompt: The agent's policy; each normative sentence ("Never refund more than
            $100 without a manager.") is a clause with its own block of tasks.
        simulator: ``False`` for the template writer; a model (name or ``Endpoint``) to have it
            write each situation from the same grid cell (the template's text is the fallback,
            and so is a duplicate of an earlier written prompt); each keeps its cell's task id.
        user_simulator: Who plays the person after the opening message: None (nobody: the
            rollout ends at the agent's first answer), ``"template"`` or True (the offline user,
            which answers a clarifying question from the situation by stance), or a model (name
            or ``Endpoint``). Rows record every user turn in ``messages``, the simulated user's own
            errors in ``user_flags`` (each with the fragment that raised it) and the marker
            ``user_faithful`` (1.0: no error; docs/simulate.md, "The simulated user, measured").
        max_user_turns: User turns the simulated user may add to one rollout (``MAX_USER_TURNS``).
        mode: ``"rl"`` (k = RL_REPEATS), ``"sft"`` (k = SFT_COMPLETIONS_PER_PROMPT) or ``"eval"``
            (k = EVAL_REPEATS) when ``repeats`` is not given. Stored in ``data.meta["mode"]``.
        repeats: Rollouts per task (k).
        repeat_policy: ``"fixed"`` rolls every task k times; ``"none"`` draws a new task for
            every rollout (k = 1); ``"dynamic"`` (DAPO dynamic sampling, Yu et al. 2025, with
            a grader: ``wai.simulate(..., grader=judge)``) rolls k, then keeps adding k rollouts
            to an ask whose group is all-pass or all-fail, up to ``max_rollouts``.
        budget: Rollouts per run (default SIM_BUDGET); the run takes ``budget // k`` tasks.
            With ``tasks=`` the default is every pinned task at k.
        tasks: Re-run exactly these tasks (an earlier ``SimulationData``, its rows, or a
            JSONL/Parquet path): same scenario ids, prompts, world state and faults; nothing new
            is drawn. k defaults to the pinned run's k.
        runs: Replay the task set this many times; rows carry ``lineage.eval_run`` (1..runs).
        concurrency: Rollouts in flight at once (threads for a sync agent, asyncio for async
            agents and endpoints; the seeded agent runs inline).
        seed: Which cells are drawn. Pass an int for reproducible results: the same seed gives
            the same tasks at any concurrency.
        hard_share: Share of tasks from the hard tiers (ambiguous, boundary, adversarial).
        fault_rate: Chance that each task's world schedules a tool fault: a draw keyed on the
            task's grid cell, so a task keeps its fault across runs and the share in a small run
            varies around it (docs/simulate.md, "The world").
        faults: The fault kinds a faulted task's world draws from (default every kind of
            ``FAULT_KINDS``): any of them and ``"injection"``, a tool result carrying a planted
            instruction that tries to turn the agent against its owner (send private data out,
            call a destructive tool, reveal the system prompt; docs/simulate.md, "Safety evals").
            ``faults=["injection"], fault_rate=1.0`` plants one in every task.
        max_turns: Agent turns before a rollout is cut and marked ``truncated``.
        temperature: Sent to the agent's endpoint; recorded on every row (``lineage``) either way.
        top_p: Likewise.
        max_tokens: Likewise.
        execute: Answer tool calls with ``execute(tool_name, arguments)`` instead of the
            generated world (scheduled faults still fire first). Sync or ``async def``: an
            awaitable result is awaited on the run's event loop (a sync agent runs it to
            completion on one of its own). A result that is not a string goes to the agent as
            strict JSON (NaN and infinities as null).
        offline: Refuse every network call: a model endpoint anywhere in the run raises before
            the first rollout, and one reached from inside an agent raises when it is called.
        score_rows: Dynamic sampling's grader as a function from rows to the same rows graded
            (``reward`` and the judge columns); the fluent ``wai.simulate(grader=judge)`` builds it
            from a judge with ``run_judge``. The rows come back graded.
        user_audit: Audits the simulated user's turns: a function from the rows to one list of
            ``{"flag", "fragment"}`` a row, added to the rule checks' ``user_flags``; the fluent
            ``wai.simulate(user_judge=judge)`` builds it from any judge (a model name, an
            ``Endpoint``, a callable) with ``run_judge`` (docs/simulate.md, "The simulated user,
            measured").
        max_rollouts: Dynamic sampling's cap on rollouts per ask (default
            ``DYNAMIC_SAMPLING_CAP`` x k).
        output: Also write the rows to this JSONL or Parquet path (atomically).
        progress: A tqdm.auto bar of rollouts landed: None (default) draws it on a terminal or in a
            notebook only, True wherever it can, False never; a callable receives
            ``(done, total, info)`` instead (info: situations, lost, lost_by).
        timeout: Seconds one agent turn may take (``AGENT_TIMEOUT_S``); past it the rollout is
            lost as ``agent_error``. None: no limit. The seeded agent is never timed.
        tool_timeout: Seconds one ``execute`` call may take, an awaited one included
            (``TOOL_TIMEOUT_S``); past it the agent sees a ``tool_error``. None: no limit.
        engine: ``"local"`` (this process) or ``"ray"``: the rollouts fan out over Ray tasks,
            each running this engine on its share of the tasks, and the rows go straight from
            the workers into the Parquet folder ``output`` (docs/scale.md, "Simulate on Ray").
            The same seed gives the same tasks and, with a deterministic agent, the same rows.
        num_workers: Ray tasks in flight at once (``engine="ray"`` only; default: the CPUs the
            Ray cluster has). Each runs ``concurrency`` rollouts at once.
        **unknown: Rejected with a ``TypeError`` naming each unknown keyword.

    Returns:
        With ``engine="ray"`` a :class:`whileai.table.raydata.FolderResult` (the folder the
        workers wrote, the report, the meta). Otherwise a :class:`whileai.table.StepResult`: the rows in ``df``; ``meta`` holds ``system_prompt``,
        ``tools`` (schemas), ``mode``, ``repeats``; ``report`` is a :class:`SimulationReport`
        (``rollouts_lost``, ``rollouts_lost_by``, pairwise coverage, tier mix, faults met);
        ``lost`` the rollouts that never landed. ``wai.simulate`` wraps it as ``SimulationData``.

    Raises:
        ArgumentError: ``budget`` or ``repeats`` below 1, ``budget`` below ``repeats``, an
            unknown ``mode``/``repeat_policy``, a share outside [0, 1], something that is not an
            agent, both or neither of ``agent`` and ``model``, ``repeat_policy="dynamic"`` without
            a grader, a model endpoint under ``offline=True``, or ``fault_rate=0`` for a
            ``seeded_agent`` whose only kinds need a fault, or a kind outside ``FAULT_KINDS`` and
            ``"injection"`` in ``faults``; with ``engine="ray"``, no ``output`` folder, an agent
            that cannot be pickled, a key passed as ``api_key=``, or a ``user_judge``.
        EndpointError: The agent's endpoint answered 401, 403 or 404 (a wrong key, a key without
            access, a wrong URL or model), or refused the connection before it had answered once
            (a server that is not running): the run stops at once rather than losing every
            rollout; or a hosted provider's key variable is unset.
        TypeError: An unknown keyword argument (``UnknownArgumentError``).

    Examples:
        >>> import whileai as wai
        >>> @wai.tool
        ... def get_order(order_id: str) -> dict:
        ...     '''Look up an order by id.'''
        >>> data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order],
        ...                     system_prompt="Help customers with orders.", repeats=4, budget=64)
        >>> len(data), data.n_tasks, data.k
        (64, 16, 4)
    """
    started = time.perf_counter()
    # --- check: every argument before the first rollout ---------------------------------------
    reject_unknown("simulate", unknown, _KNOWN)
    check_progress(progress)
    mode, repeat_policy = _check_policy(mode, repeat_policy, score_rows=score_rows, agent=agent, model=model)
    max_user_turns = check_int("max_user_turns", max_user_turns, minimum=0, fix="Pass max_user_turns=3.")
    if repeats is not None:
        repeats = check_int("repeats", repeats, minimum=1, fix="Pass repeats=4 for four rollouts per task.")
    if budget is not None:
        budget = check_int("budget", budget, minimum=1, fix="Pass budget=64 for 64 rollouts.")
    runs = check_int("runs", runs, minimum=1, fix="Pass runs=3 to replay the task set three times.")
    concurrency = check_int("concurrency", concurrency, minimum=1, fix="Pass concurrency=8 for eight rollouts at once.")
    max_turns = check_int("max_turns", max_turns, minimum=1, fix="Pass max_turns=10.")
    timeout, tool_timeout = check_timeout("timeout", timeout), check_timeout("tool_timeout", tool_timeout)
    hard_share = check_share("hard_share", hard_share, fix="Pass hard_share=0.4.")
    fault_rate = check_share("fault_rate", fault_rate, fix="Pass fault_rate=0.25, or 0 for a world that never fails.")
    fault_kinds = _check_faults(faults)
    seed_int = _seed_int(seed)
    engine, num_workers, output = _check_engine(engine, num_workers, output, user_audit=user_audit)

    # --- plan: the models resolved, the tasks chosen, the job written -------------------------
    run = _plan_run(agent, model=model, simulator=simulator, user_simulator=user_simulator,
                    settings={"temperature": temperature, "top_p": top_p, "max_tokens": max_tokens}, tools=tools,
                    system_prompt=system_prompt, execute=execute, tasks=tasks, offline=offline, mode=mode,
                    repeat_policy=repeat_policy, repeats=repeats, budget=budget, runs=runs, seed=seed_int,
                    hard_share=hard_share, fault_rate=fault_rate, fault_kinds=fault_kinds, max_turns=max_turns,
                    max_user_turns=max_user_turns, concurrency=concurrency, timeout=timeout,
                    tool_timeout=tool_timeout, score_rows=score_rows, max_rollouts=max_rollouts, engine=engine)

    # --- run: every rollout, here or over Ray -------------------------------------------------
    landed, done, egress = _run_rollouts(run.job, run.chosen.task_list, run.eval_runs, total=run.total,
                                         engine=engine, output=output, num_workers=num_workers,
                                         progress=Progress(run.total, progress=progress), endpoints=run.endpoints,
                                         dynamic=run.dynamic_on)

    # --- report: the rows audited, the report written, the rows returned or left in the folder -
    report, df = _report_run(run, landed, done, egress, user_audit=user_audit, started=started)
    return _deliver(run, report, df, landed.lost_df, done, output=output, started=started)


#: The keywords ``simulate`` takes, for the did-you-mean of an unknown one.
_KNOWN = tuple(name for name, p in inspect.signature(simulate).parameters.items() if p.kind is p.KEYWORD_ONLY)
