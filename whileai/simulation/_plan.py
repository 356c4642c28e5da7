"""Planning a simulate run: the models resolved, the tasks chosen, the job written.

The checked arguments of ``wai.simulate`` become a :class:`_Run`: the agent, the simulated user
and the endpoints they call (with what each had sent before the run, for the egress account),
the situations with their k and how they were chosen, the run id (a hash of everything that
decides the rows), the ``tasks x k x runs`` rollouts to run, and the picklable :class:`_Job`
that runs them here or on Ray workers. Nothing runs yet, beyond the simulator model writing the
situations when one is given.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import polars as pl

from whileai.defaults import DYNAMIC_SAMPLING_CAP
from whileai.simulation._agents import resolve_agent
from whileai.simulation._endpoint import Endpoint
from whileai.simulation._job import _Job
from whileai.simulation._options import (
    Engine,
    Mode,
    RepeatPolicy,
    _check_run_inputs,
    _generation,
    _resolve_models,
)
from whileai.simulation._tasks import _choose_tasks, _Tasks
from whileai.simulation._tools import normalize_tools
from whileai.simulation._user import ModelUser, TemplateUser
from whileai.simulation._util import canonical, check_int, hkey


@dataclasses.dataclass
class _Run:
    """A planned run: what the rollouts need (``job``) and what the report reads of the plan."""

    job: _Job
    agent: Any  # the resolved agent (an Endpoint, a callable, a SeededAgent ...)
    agent_name: str
    user: TemplateUser | ModelUser | None
    endpoints: list[tuple[str, Endpoint]]
    sent_before: dict[int, dict[str, Any]]  # what each endpoint had sent before the run, by id
    chosen: _Tasks
    schemas: list[dict[str, Any]]
    generation: dict[str, Any]
    run_id: str
    eval_runs: list[int | None]
    total: int  # rollouts planned: tasks x k x runs
    dynamic_on: bool
    mode: Mode
    repeat_policy: RepeatPolicy
    runs: int
    seed: int
    hard_share: float
    fault_rate: float
    concurrency: int
    max_turns: int
    offline: bool
    engine: Engine
    warnings: list[str]


def _plan_run(agent: Any, *, model: Any, simulator: Any, user_simulator: Any, settings: dict[str, Any], tools: Any,
              system_prompt: Any, execute: Callable[[str, dict[str, Any]], Any] | None, tasks: Any, offline: bool,
              mode: Mode, repeat_policy: RepeatPolicy, repeats: int | None, budget: int | None, runs: int, seed: int,
              hard_share: float, fault_rate: float, fault_kinds: Sequence[str], max_turns: int, max_user_turns: int,
              concurrency: int, timeout: float | None, tool_timeout: float | None,
              score_rows: Callable[[pl.DataFrame], pl.DataFrame] | None, max_rollouts: int | None,
              engine: Engine) -> _Run:
    """The run ``simulate``'s checked arguments ask for: models resolved, tasks chosen, the job written."""
    agent, simulator, user, endpoints = _resolve_models(agent, model, simulator, user_simulator, settings,
                                                        replay=tasks is not None, offline=offline)
    _check_run_inputs(agent, replay=tasks is not None, fault_rate=fault_rate, system_prompt=system_prompt,
                      execute=execute, repeat_policy=repeat_policy, repeats=repeats)
    specs = normalize_tools(tools)
    call = resolve_agent(agent)
    policy = system_prompt or ""
    warnings: list[str] = []
    generation = _generation(agent, settings, seed)
    sent_before = {id(ep): ep.sent() for _, ep in endpoints}
    chosen = _choose_tasks(tasks, specs, policy, mode=mode, repeat_policy=repeat_policy, repeats=repeats,
                           budget=budget, seed=seed, hard_share=hard_share, fault_rate=fault_rate,
                           simulator=simulator, warnings=warnings, fault_kinds=fault_kinds)
    k, writer = chosen.k, chosen.writer
    schemas = [s.schema for s in specs]
    tools_json = canonical(schemas)
    run_id = "run-" + hkey(seed, policy, tools_json, call.name, mode, k, runs, max_turns, hard_share, fault_rate,
                           execute is not None, writer, hkey(*(t.scenario_id + t.prompt for t in chosen.task_list)),
                           chars=12)
    dynamic_on = repeat_policy == "dynamic" and score_rows is not None
    cap = 0
    if dynamic_on:
        cap = max_rollouts if max_rollouts is not None else DYNAMIC_SAMPLING_CAP * k
        cap = check_int("max_rollouts", cap, minimum=k, fix=f"Pass max_rollouts={DYNAMIC_SAMPLING_CAP * k}.")
    job = _Job(agent=agent, specs=tuple(specs), policy=policy, seed=seed, max_turns=max_turns, execute=execute,
               timeout=timeout, tool_timeout=tool_timeout, concurrency=concurrency, run_id=run_id, user=user,
               max_user_turns=max_user_turns, offline=bool(offline), k=k, cap=cap,
               score_rows=score_rows if dynamic_on else None, tools_json=tools_json, model_version=call.name,
               writer=writer, replayed=tasks is not None,
               parent_run=",".join(chosen.parent_runs) if chosen.parent_runs else None,
               generation=generation, user_model=user.name if user is not None else None)
    return _Run(job=job, agent=agent, agent_name=call.name, user=user, endpoints=endpoints, sent_before=sent_before,
                chosen=chosen, schemas=schemas, generation=generation, run_id=run_id,
                eval_runs=[None] if runs == 1 else list(range(1, runs + 1)),
                total=len(chosen.task_list) * k * runs, dynamic_on=dynamic_on, mode=mode,
                repeat_policy=repeat_policy, runs=runs, seed=seed, hard_share=hard_share, fault_rate=fault_rate,
                concurrency=concurrency, max_turns=max_turns, offline=bool(offline), engine=engine,
                warnings=warnings)
