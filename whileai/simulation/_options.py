"""The arguments of ``wai.simulate`` checked, and the models they name resolved.

Every check that can fail runs here, before the first rollout, so a bad argument costs no run:
the mode and repeat policy against the grader and the agent, the fault kinds, the seed, the
engine with its workers and output, and the checks that need the resolved agent. The agent, the
simulator and the simulated user are resolved to callables or endpoints, and the endpoints the
run will call are listed with their role (what can leave the machine) along with the generation
settings every row records.
"""

from __future__ import annotations

import os
from typing import Any, Literal, get_args

import numpy as np

from whileai import table
from whileai.defaults import DEFAULT_SEED
from whileai.errors import ArgumentError
from whileai.simulation._endpoint import Endpoint, as_endpoint
from whileai.simulation._seeded import SeededAgent
from whileai.simulation._user import ModelUser, resolve_user
from whileai.simulation._util import check_choice, check_int
from whileai.simulation._writer import ALL_FAULT_KINDS, FAULT_KINDS

Mode = Literal["rl", "sft", "eval"]
RepeatPolicy = Literal["fixed", "none", "dynamic"]


Engine = Literal["local", "ray"]


MODES: tuple[Mode, ...] = get_args(Mode)


REPEAT_POLICIES: tuple[RepeatPolicy, ...] = get_args(RepeatPolicy)


ENGINES: tuple[Engine, ...] = get_args(Engine)


def _check_policy(mode: Any, repeat_policy: Any, *, score_rows: Any, agent: Any, model: Any) -> tuple[Mode, RepeatPolicy]:
    """``mode`` and ``repeat_policy`` checked against each other, the grader and the agent given."""
    mode = check_choice("mode", mode, MODES, fix="Pass mode='rl' for training groups, 'sft' or 'eval'.")
    if repeat_policy in ("successive", "adaptive"):
        raise ArgumentError(
            f"repeat_policy must be 'fixed', 'none' or 'dynamic', got {repeat_policy!r}. For DAPO dynamic sampling pass "
            "repeat_policy='dynamic' with grader=judge.", argument="repeat_policy", value=repeat_policy)
    repeat_policy = check_choice("repeat_policy", repeat_policy, REPEAT_POLICIES,
                                 fix="Pass 'fixed' (k rollouts per task), 'none' (one per task) or 'dynamic' "
                                     "(with grader=).")
    if repeat_policy == "dynamic" and score_rows is None:
        raise ArgumentError("grader must be given with repeat_policy='dynamic', got none. Dynamic sampling grades each "
                            "group to see whether it is mixed: pass wai.simulate(..., repeat_policy='dynamic', "
                            "grader=judge).", argument="grader")
    if agent is not None and model is not None:
        raise ArgumentError(f"agent and model must not both be given, got agent={agent!r} and model={model!r}. Pass "
                            "model='provider/name' for the default tool-calling agent, or agent= for your own.",
                            argument="model")
    if agent is None and model is None:
        raise ArgumentError("agent must be given, got neither agent= nor model=. Pass model='openai/gpt-4o-mini' (the "
                            "default tool-calling agent), your agent callable, or wai.seeded_agent(tools) offline.",
                            argument="agent")
    return mode, repeat_policy


def _check_faults(faults: Any) -> tuple[str, ...]:
    """``faults=`` as a tuple of fault kinds (None: every tool fault of ``FAULT_KINDS``)."""
    if faults is None:
        return FAULT_KINDS
    chosen = [faults] if isinstance(faults, str) else list(faults) if isinstance(faults, (list, tuple)) else None
    if not chosen or any(k not in ALL_FAULT_KINDS for k in chosen):
        raise ArgumentError(f"faults must be a non-empty list of fault kinds from {', '.join(ALL_FAULT_KINDS)}, got "
                            f"{faults!r}. Pass e.g. faults=['injection'] (with fault_rate=1.0 for one in every task).",
                            argument="faults", value=faults)
    return tuple(dict.fromkeys(chosen))


def _seed_int(seed: Any) -> int:
    if seed is None:
        return DEFAULT_SEED
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**62))
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ArgumentError(f"seed must be an int or a numpy Generator, got {seed!r}. Pass seed=0 for example.",
                            argument="seed")
    return int(seed)


def _check_engine(engine: Any, num_workers: Any, output: Any, *,
                  user_audit: Any) -> tuple[Engine, int | None, str | os.PathLike[str] | None]:
    """``engine``, ``num_workers`` and ``output`` checked together, before the first rollout (a bad path costs no run)."""
    engine = check_choice("engine", engine, ENGINES,
                          fix="Pass engine='local', or engine='ray' with num_workers= and output='rows/'.")
    if engine == "ray" and user_audit is not None:
        raise ArgumentError("user_judge must run with engine='local', got engine='ray': the rows stay in the workers' "
                            "Parquet folder. Audit them after with the rule checks' user_flags, or run locally.",
                            argument="user_judge")
    if engine == "local" and num_workers is not None:
        raise ArgumentError(f"num_workers must come with engine='ray', got num_workers={num_workers!r} and engine='local'. "
                            "Pass engine='ray' to fan the rollouts out over Ray, or drop num_workers=.",
                            argument="num_workers", value=num_workers)
    if num_workers is not None:
        num_workers = check_int("num_workers", num_workers, minimum=1, fix="Pass num_workers=4 for four Ray workers.")
    if engine == "ray":
        from whileai.simulation import _ray

        output = _ray.check_folder(output)
    elif output is not None:
        table.check_output(output)
    return engine, num_workers, output


def _check_run_inputs(agent: Any, *, replay: bool, fault_rate: float, system_prompt: Any, execute: Any,
                      repeat_policy: RepeatPolicy, repeats: int | None) -> None:
    """The checks that need the resolved agent, or one argument against another."""
    if isinstance(agent, SeededAgent) and not replay and fault_rate == 0 and not agent.possible_kinds(faults=False):
        raise ArgumentError(f"fault_rate must be above 0 for seeded_agent(kinds={list(agent.kinds)!r}), got 0: "
                            "ignored_failure and followed_injection need a tool call that meets a fault, so no rollout "
                            "could be seeded. "
                            "Pass fault_rate=0.25, or add a kind that always can (skipped_tool, filler, ...).",
                            argument="fault_rate", value=fault_rate)
    if system_prompt is not None and not isinstance(system_prompt, str):
        raise ArgumentError(f"system_prompt must be text, got {type(system_prompt).__name__}. Pass the policy as a string.")
    if execute is not None and not callable(execute):
        raise ArgumentError(f"execute must be a callable (tool_name, arguments) -> result, got {execute!r}.")
    if repeat_policy == "none" and repeats not in (None, 1):
        raise ArgumentError(f"repeats must be 1 with repeat_policy='none', got {repeats!r}. "
                            "Use repeat_policy='fixed' for k rollouts per task.")


def _resolve_models(agent: Any, model: Any, simulator: Any, user_simulator: Any, settings: dict[str, Any], *,
                    replay: bool, offline: bool) -> tuple[Any, Any, Any, list[tuple[str, Endpoint]]]:
    """The agent, the simulator, the simulated user, and the model endpoints the run will call.

    ``model`` becomes the agent's endpoint, with the sampling ``settings``; with ``offline`` any
    endpoint is refused.
    """
    simulator = as_endpoint(simulator)
    if simulator is not False and simulator is not None and not isinstance(simulator, Endpoint):
        raise ArgumentError(f"simulator must be False (the template writer), a model name or a wai.Endpoint, got "
                            f"{simulator!r}. Pass simulator=False, or simulator='openai/gpt-4o-mini'.",
                            argument="simulator")
    user = resolve_user(user_simulator)
    agent = as_endpoint(model if model is not None else agent)
    if isinstance(agent, Endpoint) and any(v is not None for v in settings.values()):
        agent = agent.with_settings(**settings)
    # a replay keeps the pinned situations: the simulator writes none of them
    endpoints = _endpoints(agent, None if replay else simulator, user)
    if offline and endpoints:
        role, ep = endpoints[0]
        raise ArgumentError(f"offline must make no network call, but the {role} is the model {ep.model!r} at "
                            f"{ep.base_url}. Use an offline agent (wai.seeded_agent, a callable), simulator=False and "
                            "user_simulator='template', or drop offline=True.", argument="offline")
    return agent, simulator, user, endpoints


def _endpoints(agent: Any, simulator: Any, user: Any) -> list[tuple[str, Endpoint]]:
    """The model endpoints a run will call, with their role: what can leave the machine."""
    out: list[tuple[str, Endpoint]] = []
    if isinstance(agent, Endpoint):
        out.append(("agent", agent))
    if isinstance(simulator, Endpoint):
        out.append(("writer", simulator))
    if isinstance(user, ModelUser) and isinstance(user.endpoint, Endpoint):
        out.append(("user", user.endpoint))
    return out


def _generation(agent: Any, settings: dict[str, Any], seed: int) -> dict[str, Any]:
    """What every row records of how the agent generated: model, provider, base URL, sampling settings, seed."""
    if isinstance(agent, Endpoint):
        out = agent.settings()
    else:
        out = {"model": getattr(agent, "model_version", None) or getattr(agent, "__name__", None) or type(agent).__name__,
               "provider": None, "base_url": None, **settings}
    out["seed"] = seed
    return out
