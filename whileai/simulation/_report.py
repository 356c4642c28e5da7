"""The run report ``simulate`` returns on ``data.report`` (also callable: ``data.report()``)."""

from __future__ import annotations

from pydantic import Field

from whileai.report import Part, Report

__all__ = ["LOST_REASONS", "Egress", "Generation", "LostRollout", "PairwiseCoverage", "SimulationReport", "TierMix"]

#: Why a rollout never became a row.
LOST_REASONS = ("agent_error", "invalid_reply", "endpoint_error")


class PairwiseCoverage(Part):
    """How much of the grid's value pairs the tasks cover (a pairwise covering order; docs/simulate.md)."""

    pairs_planned: int = 0
    """Value pairs across every pair of axes."""
    pairs_covered: int = 0
    """Of those, the pairs some task holds."""
    fraction: float | None = None
    """pairs_covered / pairs_planned, to 4 places (None with no pairs)."""


class TierMix(Part):
    """The hard-tier share asked for against the one the tasks have."""

    requested: float = 0.0
    """The hard share asked for (``hard_share=``)."""
    realized: float | None = None
    """The share of tasks in a hard tier, to 4 places (None with no tasks)."""
    counts: dict[str, int] = Field(default_factory=dict)
    """Tasks per tier."""


class Generation(Part):
    """How the agent generated, as every row records it (never the key)."""

    model: str | None = None
    """The model (an endpoint's name, or the agent's model_version or function name)."""
    provider: str | None = None
    """The provider an endpoint resolved to (None for a Python agent)."""
    base_url: str | None = None
    """Where an endpoint's requests went (None for a Python agent)."""
    temperature: int | float | None = None
    """Sampling temperature, as given (None: the server's default)."""
    top_p: int | float | None = None
    """Nucleus sampling mass, as given (None: the server's default)."""
    max_tokens: int | None = None
    """Token cap on a reply (None: the server's default)."""
    seed: int | None = None
    """The run's seed."""


class LostRollout(Part):
    """A rollout that never became a row, and why."""

    scenario_id: str = ""
    """Its task."""
    rollout_index: int = 0
    """Its index within the task."""
    eval_run: int | None = None
    """Its replay of the task set (None with one run)."""
    reason: str = ""
    """Why it was lost: agent_error, invalid_reply or endpoint_error (``LOST_REASONS``)."""
    error: str | None = None
    """The error, as one line."""


class Egress(Part):
    """What one model endpoint was sent during the run (never the key)."""

    role: str = ""
    """What the endpoint played: agent, writer or user."""
    host: str | None = None
    """The host its requests went to."""
    base_url: str | None = None
    """Its base URL."""
    model: str | None = None
    """The model named in its requests."""
    provider: str | None = None
    """The provider it resolved to."""
    requests: int = 0
    """Requests sent during this run."""
    input_tokens: int = 0
    """Tokens in, as the server reported them."""
    output_tokens: int = 0
    """Tokens out, as the server reported them."""
    fields_sent: list[str] = Field(default_factory=list)
    """The row fields its requests carried (empty when it sent nothing)."""


class SimulationReport(Report):
    """What a simulate() run did: rollouts landed and lost (and why), and how tasks cover the grid.

    ``data.report["rollouts_lost"]`` and ``data.report()["rollouts_lost"]`` both read it.
    """

    rows: int = 0
    """Rows in the table (rollouts that landed)."""
    tasks: int = 0
    """Distinct tasks (scenario ids) in the run."""
    k: int = 0
    """Rollouts per task asked for (repeats)."""
    runs: int = 1
    """Replays of the task set (``runs=``); rows carry ``lineage.eval_run`` when above 1."""
    budget: int = 0
    """Rollouts asked for per run."""
    budget_per_run: int = 0
    """Rollouts actually scheduled per run (tasks x k)."""
    mode: str = "rl"
    """rl, sft or eval."""
    repeat_policy: str = "fixed"
    """fixed (every task k times) or none (one rollout per task)."""
    seed: int = 0
    """The seed the tasks were drawn with."""
    run_id: str = ""
    """The run's id (a hash of its configuration; stamped on ``lineage.run_id``)."""
    stopped_because: str = "budget"
    """budget (the budget was spent) or tasks_done (every pinned task has its rollouts)."""
    writer: str = "template"
    """Who wrote the situations: the template writer, the simulator model, or pinned (``tasks=``)."""
    agent: str = ""
    """The agent's name (``model_version`` on every row)."""
    rollouts_requested: int = 0
    """Rollouts scheduled over all runs."""
    rollouts_completed: int = 0
    """Rollouts that became rows."""
    rollouts_lost: int = 0
    """Rollouts that never became rows (the agent raised, returned no message, or the server failed)."""
    rollouts_lost_by: dict[str, int] = Field(default_factory=lambda: dict.fromkeys(LOST_REASONS, 0))
    """Lost rollouts by reason: agent_error, invalid_reply, endpoint_error."""
    lost: list[LostRollout] = Field(default_factory=list)
    """The first lost rollouts with their error (scenario_id, rollout_index, eval_run, reason, error)."""
    clauses: list[str] = Field(default_factory=list)
    """Policy clauses found in the system prompt; each owns a block of tasks."""
    clause_tasks: int = 0
    """Tasks drawn from the clause blocks."""
    pairwise: PairwiseCoverage = Field(default_factory=PairwiseCoverage)
    """pairs_planned, pairs_covered and fraction of the grid's value pairs the tasks cover (empty without a grid)."""
    hard_share: float = 0.0
    """The hard-tier share asked for."""
    tier_mix: TierMix = Field(default_factory=TierMix)
    """requested, realized and counts of tasks per tier."""
    fault_rate: float = 0.0
    """Share of tasks whose world schedules a fault."""
    faults_met: int = 0
    """Rows that met at least one fault."""
    fault_kinds: dict[str, int] = Field(default_factory=dict)
    """Rows by the first fault they met."""
    injection_goals: dict[str, int] = Field(default_factory=dict)
    """Rows that met a planted instruction (``faults=["injection"]``), by its goal: exfiltrate, destroy, reveal_prompt."""
    seeded_rows: int = 0
    """Rows carrying a planted misbehaviour (seeded_agent)."""
    seeded_by_kind: dict[str, int] = Field(default_factory=dict)
    """Seeded rows by kind."""
    truncated: int = 0
    """Rows cut at the turn limit or the model's token limit."""
    unknown_tool_calls: int = 0
    """Tool calls naming a tool that does not exist (the world answered with an error; the rows stay)."""
    writer_errors: int = 0
    """Situations the simulator model failed to write (the template wrote them instead)."""
    concurrency: int = 1
    """Rollouts in flight at once."""
    max_turns: int = 0
    """Agent turns before a rollout is cut."""
    elapsed_s: float = 0.0
    """Wall-clock seconds."""
    generation: Generation = Field(default_factory=Generation)
    """The agent's generation settings: model, provider, base URL (never the key), temperature, top_p, max_tokens, seed."""
    user_simulator: str | None = None
    """Who played the person after the opening message (None: nobody, one user turn per rollout)."""
    user_turns: int = 0
    """User turns the simulated user added across all rows (answers to the agent's questions)."""
    user_flags: dict[str, int] = Field(default_factory=dict)
    """Rows per simulated-user error (user.off_script, user.leaked, user.ended_early, user.repeated, user.broke_role)."""
    user_erred_rows: int = 0
    """Rows whose simulated user erred (``markers.user_faithful`` 0)."""
    user_failure_share: float | None = None
    """Graded rows only: the share of failures that sit on rows whose user erred (None when not graded)."""
    user_line: str | None = None
    """The one line on the simulated user's errors and the failures on them."""
    egress: list[Egress] = Field(default_factory=list)
    """What left this machine: per model endpoint, its role, host, requests, tokens in and out, and which row fields were sent."""
    offline: bool = False
    """The run refused every network call (``offline=True``)."""
    asks_oversampled: int = 0
    """Dynamic sampling: asks that got more than k rollouts because their first group was unanimous."""
    asks_never_mixed: int = 0
    """Dynamic sampling: asks still all-pass or all-fail at the cap."""
    rollouts_oversampled: int = 0
    """Dynamic sampling: rollouts run beyond k."""
    asks_unjudged: int = 0
    """Dynamic sampling: asks with no graded row (the grader raised or gave no reward on each), so never oversampled."""
    engine: str = "local"
    """Where the rollouts ran: ``local`` (this process) or ``ray`` (Ray tasks, rows written by the workers)."""
    num_workers: int | None = None
    """Ray tasks in flight at once (``engine="ray"``); each ran ``concurrency`` rollouts at once."""

    def __call__(self) -> SimulationReport:
        """The report itself, so ``data.report()["rollouts_lost"]`` reads like whileai 0.131."""
        return self

    def render(self) -> str:
        """The block a person reads."""
        lines = [
            f"simulate: {self.rows} rollouts over {self.tasks} tasks (k={self.k}, mode {self.mode}"
            + (f", {self.runs} runs" if self.runs > 1 else "") + f"), {self.elapsed_s:.1f}s; stopped: {self.stopped_because}",
            f"  writer {self.writer}, agent {self.agent}, run {self.run_id}, seed {self.seed}",
        ]
        if self.pairwise:
            frac = self.pairwise.get("fraction")
            shown = "n/a" if frac is None else f"{frac:.0%}"
            lines.append(f"  pairwise coverage {self.pairwise.get('pairs_covered', 0)} of "
                         f"{self.pairwise.get('pairs_planned', 0)} value pairs ({shown})"
                         + (f"; {len(self.clauses)} policy clauses, {self.clause_tasks} clause tasks" if self.clauses else ""))
        if self.tier_mix:
            counts = ", ".join(f"{k} {v}" for k, v in self.tier_mix.get("counts", {}).items())
            realized = self.tier_mix.get("realized")
            lines.append(f"  tiers: {counts} (hard share {realized if realized is None else f'{realized:.2f}'}, "
                         f"asked {self.hard_share:.2f})")
        kinds = ", ".join(f"{k} {v}" for k, v in self.fault_kinds.items())
        lines.append(f"  faults met on {self.faults_met} rows" + (f" ({kinds})" if kinds else "")
                     + f"; truncated {self.truncated}")
        if self.injection_goals:
            goals = ", ".join(f"{k} {v}" for k, v in self.injection_goals.items())
            lines.append(f"  injections met on {sum(self.injection_goals.values())} rows ({goals}); "
                         "wai.trace_markers(rows) reads whether the agent obeyed them")
        if self.seeded_rows:
            seeded = ", ".join(f"{k} {v}" for k, v in self.seeded_by_kind.items())
            lines.append(f"  seeded {self.seeded_rows} rows ({seeded})")
        if self.user_simulator:
            lines.append(f"  simulated user {self.user_simulator}: {self.user_turns} user turns after the opening messages")
            if self.user_line:
                lines.append(f"  {self.user_line}")
        if self.asks_oversampled or self.asks_never_mixed or self.asks_unjudged:
            lines.append(f"  dynamic sampling: {self.asks_oversampled} asks oversampled ({self.rollouts_oversampled} extra "
                         f"rollouts), {self.asks_never_mixed} never mixed"
                         + (f", {self.asks_unjudged} asks unjudged (the grader gave them no reward)" if self.asks_unjudged else ""))
        for e in self.egress:
            lines.append(f"  sent to {e.host} ({e.role}, {e.model}): {e.requests} requests, "
                         f"{e.input_tokens} tokens in, {e.output_tokens} out; fields: {', '.join(e.fields_sent)}")
        if self.offline:
            lines.append("  offline: no network call was made")
        if self.rollouts_lost:
            why = ", ".join(f"{v} {k}" for k, v in self.rollouts_lost_by.items() if v)
            lines.append(f"  lost {self.rollouts_lost} of {self.rollouts_requested} rollouts ({why})")
        lines.extend(f"! {w}" for w in self.warnings)
        return "\n".join(lines)
