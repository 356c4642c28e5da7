"""What a training call returns, the tracked-run protocol it reports into, and the cost line."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from pydantic import (
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from whileai._cost import gpu_cost
from whileai.report import NanFloat, Part, Report
from whileai.train._profile import SelectionReport

__all__ = ["CurvePoint", "HeldOutNumbers", "HeldOutRates", "HeldOutSide", "JudgeCalls", "Knobs", "MonitorAlarm", "MonitorPoint", "MonitorScan", "MonitorSettings", "MonitorSummary", "TrackedRun", "TrainResult",
           "cost_line"]


@runtime_checkable
class TrackedRun(Protocol):
    """What a training call needs from a tracked run (``whileai.platform``'s run has these three)."""

    def log(self, *, step: int, loss: float | None = None, lr: float | None = None, **metrics: Any) -> Any:
        """One point of the training curve."""

    def delta(self, before: Any, after: Any, **kw: Any) -> Any:
        """The held-out delta report, kept on the run."""

    def finish(self, *, status: str, hours: float | None = None, cost_usd: float | None = None,
               summary: dict[str, Any] | None = None, adapter: str | None = None) -> Any:
        """Close the run: done, failed or stopped."""


def cost_line(seconds: float, device: str, gpu_usd_per_hour: float | None) -> tuple[float | None, str]:
    """``(cost_usd, cost_basis)``: seconds / 3600 x rate to the cent, or None with the reason.

    The rate is ``gpu_usd_per_hour`` when given, else the device's row of ``GPU_USD_PER_HOUR``
    (``whileai._cost.gpu_cost``, the formula the platform's run records use). A CPU has no rate.

    Examples:
        >>> cost_line(1800, "NVIDIA A10G", 1.10)
        (0.55, 'estimate: NVIDIA A10G at $1.10/h (given), 1800 s; an estimate, not a bill')
        >>> cost_line(1800, "NVIDIA A10G", None)
        (0.55, 'estimate: A10G at $1.10/h, modal.com/pricing 2026-09-20, 1800 s; an estimate, not a bill')
        >>> cost_line(60, "cpu", None)[0] is None
        True
    """
    cost, basis = gpu_cost(device, seconds, rate=gpu_usd_per_hour)
    if cost is None:
        return None, f"GPU rate unknown: {device} for {seconds:.0f} s ({basis.removeprefix('no estimate: ')})"
    return cost, f"{basis}, {seconds:.0f} s; an estimate, not a bill"


class Knobs(Part):
    """The training knobs set on the call (``check_knobs``; a knob not set kept the trainer's default).

    The names and ranges are ``whileai.defaults.TRAINING_KNOBS``. A block dumps its knobs in the
    order they were given (the order each training call passes them), as the dict it replaced did.
    """

    epochs: int | None = None
    """SFT: passes over the set."""
    steps: int | None = None
    """DPO, GRPO, reward model: optimizer steps."""
    generations: int | None = None
    """GRPO: completions sampled per prompt."""
    learning_rate: float | None = None
    """The learning rate."""
    beta: float | None = None
    """DPO, GRPO: the KL coefficient."""
    max_completion_length: int | None = None
    """GRPO: token cap on a completion."""
    temperature: float | None = None
    """GRPO: sampling temperature."""
    loss_type: str | None = None
    """DPO, GRPO: the trainer's loss variant."""
    truncated: str | None = None
    """GRPO: ``mask`` or ``keep`` completions cut at the cap."""

    _given: list[str] = PrivateAttr(default_factory=list)

    @model_validator(mode="wrap")
    @classmethod
    def _keep_order(cls, data: Any, handler: ModelWrapValidatorHandler[Knobs]) -> Knobs:
        knobs = handler(data)
        if isinstance(data, Mapping):
            knobs._given = [k for k in data if k in cls.model_fields]
        return knobs

    def keys(self) -> list[str]:
        """The knobs set, in the order they were given."""
        given = [k for k in self._given if k in self.model_fields_set]
        return given + [k for k in type(self).model_fields if k in self.model_fields_set and k not in given]

    @model_serializer(mode="wrap")
    def _given_keys(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        return {k: out[k] for k in self.keys()}


class CurvePoint(Part):
    """One logged step of the training curve: step, loss, learning rate, then the trainer's other numbers.

    The other numbers are whatever the trainer logged at that step (``grad_norm``, GRPO's
    ``reward`` and ``rewards/<judge>/mean``, ``kl``, ...), kept under the trainer's names.
    """

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, NanFloat]

    step: int = 0
    """The optimizer step."""
    loss: NanFloat = math.nan
    """The training loss logged at that step (NaN when it diverged)."""
    lr: float | None = None
    """The learning rate (None when the trainer did not log it)."""


class JudgeCalls(Part):
    """The training reward's call counters (``TrlReward.stats()``)."""

    judge: str | None = None
    """The judge's name."""
    n_batches: int = 0
    """Trainer batches scored."""
    n_calls: int = 0
    """Rows the judge was called on."""
    n_errors: int = 0
    """Calls that failed (scored as the failure reward)."""
    statuses: dict[str, int] = Field(default_factory=dict)
    """Calls per judge status (ok, error, timeout, ...)."""
    markers: dict[str, float | None] = Field(default_factory=dict)
    """Mean of every marker the judge set, over every call."""


class MonitorAlarm(Part):
    """One alarm the hack monitor raised (each alarm once)."""

    name: str = ""
    """The alarm: divergence, feature, length or drift."""
    step: int = 0
    """The training step it was raised at."""
    line: str = ""
    """What it says, in one line."""
    stops: bool = False
    """Whether it stopped training (named in ``stop_on``)."""


class MonitorKl(Part):
    """The policy's KL to the reference at one logged step."""

    step: int = 0
    """The training step."""
    kl: float | None = None
    """The KL the trainer logged."""


class MonitorScan(Part):
    """The last hack scan of recent completions."""

    regime: str = ""
    """The scan's regime (whileai.guard.hack_scan)."""
    top_feature: str | None = None
    """The feature most correlated with the reward."""
    rho_max: float | None = None
    """Its correlation."""
    tau: float | None = None
    """The floor it is read against."""
    reward_hack: bool = False
    """Whether the scan calls it a reward hack."""


class MonitorSettings(Part):
    """The monitor's knobs, as set."""

    every: int = 0
    """Steps between holdout samples and scans."""
    window: int = 0
    """Holdout points the divergence test reads."""
    delta: float = 0.0
    """Proxy gain that, with gold flat, is divergence."""
    kl_budget: int | float | None = None
    """KL past which drift alarms (None: not watched); kept as given."""
    length_pct: float = 0.0
    """Relative growth of completion length that, with gold flat, is length."""
    endorsed: list[str] | None = None
    """Features the reward is meant to pay for (not alarmed on)."""


class MonitorPoint(Part):
    """One holdout point of the hack monitor: the mean proxy and gold reward and length of the holdout completions."""

    step: int = 0
    """The training step it was sampled at."""
    proxy_reward: NanFloat = math.nan
    """Mean training reward over the holdout completions (NaN when none was scored)."""
    gold_reward: NanFloat = math.nan
    """Mean gold reward (NaN without a gold judge, or before it scored)."""
    holdout_length: NanFloat = math.nan
    """Mean completion length."""


class MonitorSummary(Part):
    """The hack monitor's summary: the curve, the alarms, whether training was stopped (``HackMonitor.summary()``)."""

    notes: list[str] = Field(default_factory=list)
    """What the monitor cannot check yet, one line each."""
    points: list[MonitorPoint] = Field(default_factory=list)
    """One holdout point per sample: step, proxy_reward, gold_reward, holdout_length."""
    alarms: list[MonitorAlarm] = Field(default_factory=list)
    """Alarms raised, in order."""
    stopped: bool = False
    """Whether an alarm in ``stop_on`` stopped training."""
    stop_reason: str | None = None
    """The alarm line that stopped it."""
    stop_on: list[str] = Field(default_factory=list)
    """Alarms that stop training."""
    kl: list[MonitorKl] = Field(default_factory=list)
    """The KL at each logged step."""
    n_recent: int = 0
    """Completions in the scan buffer."""
    scan: MonitorScan | None = None
    """The last scan (None before the first)."""
    settings: MonitorSettings = Field(default_factory=MonitorSettings)
    """The knobs."""


class HeldOutSide(Part):
    """One side of a held-out block: the pass rate (or pair accuracy) over tasks, with its 95% interval."""

    pass_rate: float | None = None
    """Pass@1 (or pair accuracy), 0 to 1."""
    n_tasks: int = 0
    """Tasks (or pairs) it was read on."""
    k: int = 0
    """Rollouts a task (1 for pairs)."""
    ci95: list[float | None] | None = None
    """Its 95% interval: a bootstrap over tasks (``pass_at``), or Wilson for pair accuracy."""


class HeldOutRates(Part):
    """A held-out block whose sides are rates: the judge's pass@1 (sft, dpo, grpo) or the reward model's pair accuracy.

    The keys of ``summary["holdout"]`` (``whileai.measure.holdout_block``), then what the
    trainer adds: the judge, the delta report's headline and the judge's errors, or for the
    reward model which pairs it was read on.
    """

    metric: str
    """pass_at_1, or pair_accuracy (reward model)."""
    before: HeldOutSide
    """The base model's side."""
    after: HeldOutSide
    """The trained model's side."""
    delta: float | None = None
    """after - before (the delta report's paired target delta for pass_at_1)."""
    ci95: list[float | None] | None = None
    """The delta's 95% interval from the delta report (None for pair accuracy)."""
    verdict: str | None = None
    """The delta report's verdict word (None for pair accuracy)."""
    judge: str | None = None
    """The judge that graded both sides."""
    headline: str = ""
    """The delta report's headline."""
    judge_errors: int = 0
    """Judge calls that failed."""
    on: str = ""
    """Reward model: the pairs read, holdout or train (no holdout= given)."""


class HeldOutNumbers(Part):
    """A held-out block whose sides are plain numbers: SFT's eval loss before and after.

    Results stored before the held-out block took one shape (pass@1 and pair accuracy as bare
    numbers, with ``n_tasks`` and ``k`` or ``n_pairs`` beside them) load as this block too, and
    dump back the same JSON.
    """

    metric: str
    """loss (or, in a result stored by an earlier version, pass_at_1 or pair_accuracy)."""
    judge: str | None = None
    """An earlier version's pass_at_1 block: the judge."""
    n_tasks: int = 0
    """An earlier version's pass_at_1 block: held-out tasks."""
    k: int = 0
    """An earlier version's pass_at_1 block: rollouts a task."""
    before: float | None
    """The base model's value."""
    after: float | None
    """The trained model's value."""
    delta: float | None = None
    """after - before."""
    ci95: list[float | None] | None = None
    """An earlier version's pass_at_1 block: the delta's 95% interval."""
    verdict: str | None = None
    """An earlier version's pass_at_1 block: the delta report's verdict word."""
    headline: str = ""
    """An earlier version's pass_at_1 block: the delta report's headline."""
    judge_errors: int = 0
    """An earlier version's pass_at_1 block: judge calls that failed."""
    lower_is_better: bool = False
    """Whether a fall is the gain (True for loss)."""
    n: int = 0
    """Held-out rows the loss was read on."""
    n_pairs: int = 0
    """An earlier version's pair_accuracy block: pairs read."""
    on: str = ""
    """An earlier version's pair_accuracy block: holdout or train."""


class TrainResult(Report):
    """One training run on your own hardware: the adapter, the curve, the cost line and the held-out block."""

    method: str = "sft"
    """sft, dpo, grpo or rm."""
    base_model: str = ""
    """The model trained from (a hub name or a local path)."""
    adapter: str | None = None
    """Directory of the saved LoRA adapter (or full model with lora=False)."""
    status: str = "done"
    """done, or stopped (a monitor alarm in stop_on)."""
    stop_reason: str | None = None
    """The alarm line that stopped training."""
    steps: int = 0
    """Optimizer steps taken."""
    seconds: float = 0.0
    """Wall time of training."""
    device: str = "cpu"
    """Where it trained."""
    cost_usd: float | None = None
    """seconds / 3600 x rate, when a rate is known."""
    cost_basis: str = ""
    """The device, the rate and where it came from, or why there is no number."""
    knobs: Knobs = Field(default_factory=Knobs)
    """The knobs set (the rest were the trainer's defaults)."""
    curve: list[CurvePoint] = Field(default_factory=list)
    """Training curve: step, loss, lr and the trainer's other logged numbers."""
    selection: SelectionReport | None = None
    """The selection check run before training (``selection_report``)."""
    holdout: HeldOutRates | HeldOutNumbers | None = None
    """Held-out before/after: pass rates with the delta report's verdict (:class:`HeldOutRates`), or SFT's eval loss."""
    reward: JudgeCalls | None = None
    """GRPO: the judge's call counters (calls, errors by status, marker means)."""
    monitor: MonitorSummary | None = None
    """GRPO: the hack monitor's summary."""
    threshold: float | None = None
    """Reward model: the judge threshold on sigmoid(score)."""
    threshold_basis: str | None = None
    """Reward model: where the threshold came from (calibrated on held-out pairs, given, or the fallback)."""
    n_train: int = 0
    """Rows (SFT), pairs (DPO, RM) or prompts (GRPO) trained on."""

    def render(self) -> str:
        """Headline, cost line, curve ends, held-out verdict."""
        head = f"{self.method.upper()} {self.status}: {self.steps} steps in {self.seconds:.0f} s on {self.device}, {self.n_train} examples"
        lines = [head, f"  base {self.base_model}; adapter {self.adapter}"]
        cost = "unknown" if self.cost_usd is None else f"about ${self.cost_usd:.2f}"
        lines.append(f"  cost {cost} ({self.cost_basis})")
        losses = [p.loss for p in self.curve if math.isfinite(p.loss)]
        if losses:
            lines.append(f"  loss {losses[0]:.4f} -> {losses[-1]:.4f} over {len(losses)} logged steps")
        if self.holdout:
            h = self.holdout
            before, after = (h.before.pass_rate, h.after.pass_rate) if isinstance(h, HeldOutRates) else (h.before, h.after)
            lines.append(f"  held-out {h.metric}: {_num(before)} -> {_num(after)}" + (f", {h.verdict}" if h.verdict else ""))
        if self.stop_reason:
            lines.append(f"  stopped: {self.stop_reason}")
        lines.extend(f"! {w}" for w in self.warnings)
        return "\n".join(lines)


def _num(v: Any) -> str:
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.3f}"
