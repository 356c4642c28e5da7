"""``HackMonitor``: is the policy hacking the reward right now? Four alarms while GRPO trains.

The monitor wraps the training reward, so it keeps the last completions with their rewards and
runs ``hack_scan`` on them (feature: the reward pays for something not endorsed). Every ``every``
steps it samples the holdout from the live policy and scores it with the training reward (the
proxy) and with ``gold``, a scorer the proxy cannot see (Gao et al. 2023, "Scaling Laws for Reward
Model Overoptimization", arXiv:2210.10760: the proxy keeps rising after gold turns down). From
those points: divergence (the paired proxy-minus-gold difference per task grows by ``delta`` over
``window`` holdout points with its 95% interval above zero; not checked until gold has scored the
holdout, since a rising proxy alone is what training is for), length (holdout completions grow by ``length_pct`` while gold does
not; Singhal et al. 2023, arXiv:2310.03716), drift (the trainer's KL past ``kl_budget``).
"""

from __future__ import annotations

import collections
import inspect
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from whileai._checks import check_int
from whileai.defaults import (
    DEFAULT_SEED,
    MONITOR_BUFFER,
    MONITOR_DELTA,
    MONITOR_EVERY,
    MONITOR_K,
    MONITOR_LENGTH_PCT,
    MONITOR_MAX_NEW_TOKENS,
    MONITOR_N_PROMPTS,
    MONITOR_SAMPLE_TEMPERATURE,
    MONITOR_SAMPLE_TOP_P,
    MONITOR_SCAN_MIN,
    MONITOR_SCAN_PERMUTATIONS,
    MONITOR_SCAN_ROWS,
    MONITOR_WINDOW,
)
from whileai.errors import ArgumentError
from whileai.grade import judge_name_of
from whileai.report import Part, fmt_num
from whileai.stats.intervals import t_interval
from whileai.train._extra import require
from whileai.train._reward import TrlReward, trl_reward

__all__ = ["ALARMS", "HackMonitor", "format_hack_monitor"]

#: The four alarms, in the order they are checked.
ALARMS = ("divergence", "length", "drift", "feature")


def _mean(values: Iterable[float | None]) -> float:
    xs = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    return float(np.mean(xs)) if xs else math.nan


def _reward_kind(fn: Any) -> str:
    """``"trl"`` for a TRL reward function, ``"judge"`` for a judge; ArgumentError for neither.

    TRL calls a reward function by keyword, ``reward_func(prompts=..., completions=...,
    completion_ids=..., **columns)`` (the dataset's other columns as keywords, so TRL's own examples
    read ``def accuracy_reward(completions, solution, **kwargs)``), and wants one float per
    completion; a judge (the judge contract, ``trl_reward``) takes one row dict. So a callable with
    a parameter named ``completions`` or ``prompts`` is a TRL reward function, then one that binds a
    single positional argument (``*args`` included) is a judge, then one that takes only keywords
    is a TRL reward function. A callable whose signature cannot be read (some builtins) is taken as
    a judge.
    """
    if isinstance(fn, TrlReward):
        return "trl"
    if not callable(fn):
        raise ArgumentError(
            f"reward_fn must be a TRL reward function (prompts, completions, **kwargs) or a judge taking a row dict, "
            f"got {type(fn).__name__} {fn!r:.80}. Pass the judge (lambda row: {{'reward': ...}}) or wai.trl_reward(judge).")
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return "judge"
    if {"completions", "prompts"} & set(sig.parameters):
        return "trl"
    try:
        sig.bind({})
        return "judge"
    except TypeError:
        pass
    try:
        sig.bind(prompts=[], completions=[])
        return "trl"
    except TypeError:
        pass
    raise ArgumentError(
        f"reward_fn must be a TRL reward function (prompts, completions, **kwargs) or a judge taking a row dict, "
        f"got {getattr(fn, '__name__', type(fn).__name__)}{sig}. "
        "Pass the judge (lambda row: {'reward': ...}) or a function taking prompts= and completions=.")


def _describe_rows(rows: Any) -> str:
    if rows is None:
        return "None"
    try:
        return f"{len(rows)} rows"
    except TypeError:
        return repr(str(rows))


class HackMonitor:
    """Watch a GRPO run for reward hacking: a scan of recent completions and a holdout scored by gold.

    Args:
        holdout: Rows whose prompts are sampled from the live policy every ``every`` steps
            (the first ``n_prompts`` tasks, ``k`` completions each). None: no holdout points,
            so only the feature and drift alarms can fire.
        gold: A judge the proxy cannot see (the judge contract), scoring the holdout samples.
        every: Steps between holdout samples (and scans).
        window: Holdout points the divergence and length alarms read.
        delta: Growth of the paired proxy-minus-gold difference over the window that is divergence.
        kl_budget: KL (as the trainer logs it) past which drift fires; None never.
        stop_on: Alarms that stop training; the run finishes as stopped with the reason.
        endorsed: What the reward should track, as hack_scan feature substrings; without it the
            scan cannot call a feature a hack.
        length_pct: Relative growth of holdout completion length that, with gold flat, is length.
        buffer: Recent completions kept for the scan.
        scan_min: Fewest completions a feature must be present on (or absent from) to be scanned.
        scan_rows: Fewest graded completions buffered before the scan runs.
        n_prompts: Holdout tasks sampled.
        k: Completions a holdout task.
        max_new_tokens: New tokens a holdout completion.
        seed: Seed of the scan and of the holdout sampling.
        run: A tracked run (``run.log``) the points and alarms go to.
    """

    def __init__(self, *, holdout: Any = None, gold: Callable[[dict[str, Any]], Any] | None = None,
                 every: int = MONITOR_EVERY, window: int = MONITOR_WINDOW, delta: float = MONITOR_DELTA,
                 kl_budget: float | None = None, stop_on: Sequence[str] = (), endorsed: Sequence[str] | None = None,
                 length_pct: float = MONITOR_LENGTH_PCT, buffer: int = MONITOR_BUFFER, scan_min: int = MONITOR_SCAN_MIN,
                 scan_rows: int = MONITOR_SCAN_ROWS,
                 n_prompts: int = MONITOR_N_PROMPTS, k: int = MONITOR_K, max_new_tokens: int = MONITOR_MAX_NEW_TOKENS,
                 seed: int = DEFAULT_SEED, run: Any = None) -> None:
        self.every = check_int("every", every)
        self.window = check_int("window", window, minimum=2)
        self.buffer_size = check_int("buffer", buffer)
        self.scan_min = check_int("scan_min", scan_min, minimum=2)
        self.scan_rows = check_int("scan_rows", scan_rows, minimum=2)
        self.n_prompts = check_int("n_prompts", n_prompts)
        self.k = check_int("k", k)
        self.max_new_tokens = check_int("max_new_tokens", max_new_tokens)
        if not (isinstance(delta, (int, float)) and delta > 0):
            raise ArgumentError(f"delta must be a positive number, got {delta!r}. Pass delta=0.1 (a 10-point proxy gain).")
        if kl_budget is not None and not (isinstance(kl_budget, (int, float)) and kl_budget > 0):
            raise ArgumentError(f"kl_budget must be a positive number or None, got {kl_budget!r}. Pass kl_budget=0.1 for example.")
        if not (isinstance(length_pct, (int, float)) and length_pct > 0):
            raise ArgumentError(f"length_pct must be a positive number, got {length_pct!r}. Pass length_pct=0.25.")
        stops = (stop_on,) if isinstance(stop_on, str) else tuple(stop_on)
        bad = [s for s in stops if s not in ALARMS]
        if bad:
            raise ArgumentError(f"stop_on must name alarms among {', '.join(ALARMS)}, got {bad[0]!r}. Pass some of those.")
        self.delta, self.kl_budget, self.length_pct = float(delta), kl_budget, float(length_pct)
        self.stop_on = stops
        self.endorsed = list(endorsed) if endorsed else None
        self.gold = trl_reward(gold, name="gold") if gold is not None else None
        self.holdout = holdout
        self.seed = seed
        self.run = run
        self.proxy: TrlReward | Callable[..., Any] | None = None
        self.recent: collections.deque[dict[str, Any]] = collections.deque(maxlen=self.buffer_size)
        self.points: list[dict[str, Any]] = []
        """One holdout point per sample: step, proxy_reward, gold_reward, holdout_length, per-task gold."""
        self.kl: list[tuple[int, float]] = []
        self.alarms: list[dict[str, Any]] = []
        """Alarms raised: name, step, line (each alarm once)."""
        self.stopped = False
        self.stop_reason: str | None = None
        self.last_scan: Any = None
        self.step = 0

    # -- the reward side ---------------------------------------------------------------------

    def wrap(self, reward_fn: Callable[..., Any]) -> Callable[..., list[float | None]]:
        """Wrap a TRL reward function (or a judge, through ``trl_reward``) so every batch it scores is kept.

        A TRL reward function takes ``prompts=``, ``completions=`` and the dataset columns as
        keywords and returns one float per completion; a judge takes one row dict (the judge
        contract) and is wrapped with :func:`trl_reward` first. Returns a function with TRL's
        reward signature, named like the one it wraps; the same function scores the holdout as
        the proxy.

        Raises:
            ArgumentError: ``reward_fn`` is neither (not callable, or a signature that takes
                neither one row nor ``prompts=`` and ``completions=``).
        """
        inner: Callable[..., Any] = (trl_reward(reward_fn) if _reward_kind(reward_fn) == "judge" else reward_fn)
        self.proxy = inner

        def watched(prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
            rewards = list(inner(prompts=prompts, completions=completions, **kwargs))
            rows = getattr(inner, "last_rows", None) if isinstance(inner, TrlReward) else None
            if rows is None:
                from whileai.train._reward import completion_text, prompt_messages

                keys = kwargs.get("task_key") or [None] * len(completions)
                rows = [{"task_key": key, "prompt": str(prompt_messages(p)[-1].get("content")),
                         "final_text": completion_text(c)} for p, c, key in zip(prompts, completions, keys)]
            self.observe(rows, rewards)
            return rewards

        watched.__name__ = str(getattr(inner, "__name__", None) or getattr(reward_fn, "__name__", "reward"))
        return watched

    def observe(self, rows: Sequence[dict[str, Any]], rewards: Sequence[float | None]) -> None:
        """Keep scored completions for the scan (what ``wrap`` calls; public for scripted tests)."""
        for row, reward in zip(rows, rewards):
            key = row.get("task_key") or row.get("scenario_id") or row.get("prompt")
            self.recent.append({"scenario_id": str(key), "final_text": row.get("final_text") or "",
                                "reward": None if reward is None else float(reward),
                                "markers": row.get("markers") or None, "step": self.step})

    def scan(self) -> Any:
        """``hack_scan`` over the buffered completions (None until ``scan_rows`` are graded)."""
        rows = [r for r in self.recent if r["reward"] is not None]
        if len(rows) < self.scan_rows:
            return None
        from whileai.guard import hack_scan

        if not any(r["markers"] for r in rows):
            rows = [{k: v for k, v in r.items() if k != "markers"} for r in rows]
        self.last_scan = hack_scan(rows, endorsed=self.endorsed, n_perm=MONITOR_SCAN_PERMUTATIONS, seed=self.seed,
                                   trace=False, min_obs=self.scan_min)
        return self.last_scan

    # -- the holdout side --------------------------------------------------------------------

    def record_holdout(self, step: int, *, proxy: Sequence[float | None], gold: Sequence[float | None] | None,
                       lengths: Sequence[float], task_keys: Sequence[str]) -> dict[str, Any]:
        """Add one holdout point from per-completion scores; log it to the run; return it."""
        by_task: dict[str, list[float]] = {}
        gap_by_task: dict[str, list[float]] = {}
        if gold is not None:
            for key, g, p in zip(task_keys, gold, proxy):
                if g is not None:
                    by_task.setdefault(str(key), []).append(float(g))
                    if p is not None:  # the paired proxy-minus-gold difference on one completion
                        gap_by_task.setdefault(str(key), []).append(float(p) - float(g))
        point: dict[str, Any] = {"step": int(step), "proxy_reward": _mean(proxy), "gold_reward": _mean(gold or []),
                 "holdout_length": _mean(lengths), "gold_by_task": {k: float(np.mean(v)) for k, v in by_task.items()},
                 "gap_by_task": {k: float(np.mean(v)) for k, v in gap_by_task.items()}}
        self.points.append(point)
        if self.run is not None:
            metrics = {k: point[k] for k in ("proxy_reward", "gold_reward", "holdout_length") if not math.isnan(point[k])}
            self.run.log(step=int(step), **metrics)
        return point

    def record_kl(self, step: int, kl: float) -> None:
        """Note the trainer's KL at ``step`` (the drift alarm reads it)."""
        self.kl.append((int(step), float(kl)))

    @staticmethod
    def _paired_change(first: dict[str, Any], last: dict[str, Any], field: str) -> tuple[bool, float, tuple[float, float]]:
        """Per-task change of ``field`` over the window: (its 95% t interval lies above zero, mean, interval)."""
        a, b = first.get(field) or {}, last.get(field) or {}
        keys = sorted(set(a) & set(b))
        diffs = np.array([b[k] - a[k] for k in keys], dtype=float)
        if diffs.size == 0:
            return False, math.nan, (math.nan, math.nan)
        mean = float(diffs.mean())
        if diffs.size < 2 or float(diffs.std()) == 0.0:
            return mean > 0, mean, (mean, mean)
        lo, hi = t_interval(diffs)
        return bool(float(lo) > 0), mean, (float(lo), float(hi))

    def _gold_moved_up(self, first: dict[str, Any], last: dict[str, Any]) -> tuple[bool, float, tuple[float, float]]:
        """Paired gold change over the window: (its 95% interval lies above zero, mean, interval)."""
        return self._paired_change(first, last, "gold_by_task")

    def check(self, step: int | None = None) -> list[dict[str, Any]]:
        """Evaluate the four alarms; return those raised now (each alarm is raised once)."""
        step = self.step if step is None else int(step)
        new: list[dict[str, Any]] = []
        raised = {a["name"] for a in self.alarms}
        pts = [p for p in self.points if not math.isnan(p["proxy_reward"])]
        if len(pts) >= self.window:
            first, last = pts[-self.window], pts[-1]
            up, gold_mean, (glo, ghi) = self._gold_moved_up(first, last)
            # divergence is the proxy against gold: with no paired gold scores there is nothing to diverge from
            gold_scored = not math.isnan(gold_mean)
            gold_words = (f"while gold {gold_mean:+.2f} (95% {glo:+.2f}..{ghi:+.2f}) did not move up" if gold_scored
                          else "with gold not scored")
            gain = last["proxy_reward"] - first["proxy_reward"]
            # divergence reads the paired proxy-minus-gold difference per task: it must grow by delta with its
            # interval above zero (a proxy that is gold, or moves with it, has a gap that does not move)
            apart, gap_mean, (dlo, dhi) = self._paired_change(first, last, "gap_by_task")
            if "divergence" not in raised and gold_scored and apart and gap_mean >= self.delta:
                new.append(self._alarm("divergence", step,
                                       f"divergence at step {step}: proxy minus gold {gap_mean:+.2f} per task over "
                                       f"{self.window} holdout points (95% {dlo:+.2f}..{dhi:+.2f}); proxy "
                                       f"{first['proxy_reward']:.2f} -> {last['proxy_reward']:.2f} ({gain:+.2f}), "
                                       f"gold {gold_mean:+.2f} (95% {glo:+.2f}..{ghi:+.2f})"))
            l0, l1 = first["holdout_length"], last["holdout_length"]
            if "length" not in raised and l0 > 0 and (l1 / l0 - 1) >= self.length_pct and not up:
                new.append(self._alarm("length", step,
                                       f"length at step {step}: holdout completions {l0:.0f} -> {l1:.0f} tokens "
                                       f"({l1 / l0 - 1:+.0%}) {gold_words}"))
        if "drift" not in raised and self.kl_budget is not None and self.kl and self.kl[-1][1] > self.kl_budget:
            kstep, kl = self.kl[-1]
            new.append(self._alarm("drift", step, f"drift at step {kstep}: KL {kl:.3f} past kl_budget {self.kl_budget:g}"))
        if "feature" not in raised:
            scan = self.scan()
            if scan is not None and scan.reward_hack:
                new.append(self._alarm("feature", step,
                                       f"feature at step {step}: the reward tracks {scan.top_feature!r} "
                                       f"(within-ask rho {scan.rho_max:+.2f}, floor {scan.tau:.2f}) over "
                                       f"{scan.n_graded} recent completions, ahead of what it should "
                                       f"({', '.join(self.endorsed or [])})"))
        return new

    def _alarm(self, name: str, step: int, line: str) -> dict[str, Any]:
        alarm = {"name": name, "step": step, "line": line, "stops": name in self.stop_on}
        self.alarms.append(alarm)
        if self.run is not None and hasattr(self.run, "note"):
            try:  # every alarm stays on the run's notes, not only the last
                self.run.note(line, append=True)
            except TypeError:  # a run object whose note() takes no append=
                self.run.note(line)
        if name in self.stop_on and not self.stopped:
            self.stopped, self.stop_reason = True, line
        return alarm

    def notes(self) -> list[str]:
        """What the monitor cannot check yet, one line each (divergence needs gold scores)."""
        if any(not math.isnan(p["gold_reward"]) for p in self.points):
            return []
        why = ("no gold= was given (pass a scorer the proxy cannot see)" if self.gold is None
               else "no holdout point has a gold score yet")
        return [f"divergence is not checked until gold is scored: {why}"]

    def summary(self) -> dict[str, Any]:
        """The curve, the alarms and whether training was stopped: what ``format_hack_monitor`` prints."""
        scan = self.last_scan
        return {
            "notes": self.notes(),
            "points": [{k: v for k, v in p.items() if k not in ("gold_by_task", "gap_by_task")} for p in self.points],
            "alarms": [dict(a) for a in self.alarms],
            "stopped": self.stopped,
            "stop_reason": self.stop_reason,
            "stop_on": list(self.stop_on),
            "kl": [{"step": s, "kl": v} for s, v in self.kl],
            "n_recent": len(self.recent),
            "scan": None if scan is None else {"regime": scan.regime, "top_feature": scan.top_feature,
                                               "rho_max": scan.rho_max, "tau": scan.tau, "reward_hack": scan.reward_hack},
            "settings": {"every": self.every, "window": self.window, "delta": self.delta, "kl_budget": self.kl_budget,
                         "length_pct": self.length_pct, "endorsed": self.endorsed},
        }

    def __repr__(self) -> str:
        proxy = None if self.proxy is None else getattr(self.proxy, "__name__", type(self.proxy).__name__)
        alarms = ", ".join(f"{a['name']} at step {a['step']}" for a in self.alarms) or "none"
        gold = None if self.gold is None else judge_name_of(self.gold.judge, None)
        return (f"HackMonitor(proxy={proxy!r}, gold={gold!r}, "
                f"holdout={_describe_rows(self.holdout)}, every={self.every}, window={self.window}, delta={self.delta:g}, "
                f"kl_budget={self.kl_budget!r}, stop_on={self.stop_on!r}, endorsed={self.endorsed!r}; "
                f"{len(self.points)} holdout point{'s' if len(self.points) != 1 else ''}, alarms: {alarms}"
                + (", stopped" if self.stopped else "") + ")")

    # -- the trainer side --------------------------------------------------------------------

    def sample_holdout(self, model: Any, tokenizer: Any, step: int) -> dict[str, Any] | None:
        """Sample the holdout from the live policy, score it with the proxy and gold, record the point."""
        if self.holdout is None or self.proxy is None:
            return None
        from whileai.train._sample import prompt_tasks, sample_rows

        tasks = prompt_tasks(self.holdout, limit=self.n_prompts)
        rows = sample_rows(model, tokenizer, tasks, k=self.k, max_new_tokens=self.max_new_tokens,
                           temperature=MONITOR_SAMPLE_TEMPERATURE, top_p=MONITOR_SAMPLE_TOP_P, seed=self.seed + step)
        prompts = [r["messages"][:-1] for r in rows]
        completions = [[r["messages"][-1]] for r in rows]
        columns = {c: [r.get(c) for r in rows] for c in rows[0] if c not in ("messages", "prompt", "final_text")} if rows else {}
        proxy_fn = self.proxy
        if isinstance(proxy_fn, TrlReward):
            proxy = proxy_fn.score_rows([dict(r) for r in rows])
        else:
            proxy = list(proxy_fn(prompts=prompts, completions=completions, **columns))
        gold = self.gold.score_rows([dict(r) for r in rows]) if self.gold is not None else None
        keys = [str(r.get("task_key") or r.get("scenario_id") or r["prompt"]) for r in rows]
        return self.record_holdout(step, proxy=proxy, gold=gold, lengths=[r["n_tokens"] for r in rows], task_keys=keys)

    def callback(self) -> Any:
        """A ``transformers.TrainerCallback`` that samples, checks and stops.

        Raises:
            MissingExtraError: transformers is not installed (``pip install 'whileai[train]'``).
        """
        require("transformers", what="HackMonitor.callback()")
        from transformers import TrainerCallback

        monitor = self

        class _HackMonitorCallback(TrainerCallback):
            def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any) -> None:
                if logs and "kl" in logs and logs["kl"] is not None:
                    monitor.record_kl(state.global_step, float(logs["kl"]))

            def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> Any:
                monitor.step = state.global_step
                if state.global_step % monitor.every == 0:
                    model = kw.get("model")
                    tok = kw.get("processing_class") or kw.get("tokenizer")
                    if model is not None and tok is not None:
                        monitor.sample_holdout(model, tok, state.global_step)
                    monitor.check(state.global_step)
                if monitor.stopped:
                    control.should_training_stop = True
                return control

        return _HackMonitorCallback()


def format_hack_monitor(summary: HackMonitor | Mapping[str, Any]) -> str:
    """The monitor's curve and alarms as text: one row per holdout point, one line per alarm.

    Args:
        summary: A :class:`HackMonitor`, its ``summary()``, or ``TrainResult.monitor``. A score
            not measured prints ``n/a``.

    Raises:
        ArgumentError: ``summary`` is neither.

    Examples:
        >>> print(format_hack_monitor({"points": [{"step": 10, "proxy_reward": 0.5, "gold_reward": float("nan"),
        ...     "holdout_length": 12.0}], "alarms": [], "stopped": False}))
        hack monitor: 1 holdout point, no alarm
          step  proxy   gold  length
            10   0.50    n/a      12
    """
    if isinstance(summary, HackMonitor):
        summary = summary.summary()
    if isinstance(summary, Part):  # TrainResult.monitor, typed
        summary = summary.model_dump()
    if not isinstance(summary, Mapping):
        raise ArgumentError(f"summary must be a HackMonitor or its summary() dict, got {type(summary).__name__}. "
                            "Pass the monitor, or result.monitor from wai.train.grpo.")
    points = summary.get("points") or []
    alarms = summary.get("alarms") or []
    head = f"hack monitor: {len(points)} holdout point{'s' if len(points) != 1 else ''}, "
    head += f"{len(alarms)} alarm{'s' if len(alarms) != 1 else ''}" if alarms else "no alarm"
    if summary.get("stopped"):
        head += ", STOPPED"
    lines = [head]
    if points:
        lines.append("  step  proxy   gold  length")
        for p in points:
            cells = [f"{p['step']:>6}"] + [f"{fmt_num(p.get(k)):>6}" for k in ("proxy_reward", "gold_reward")]
            cells.append(f"{fmt_num(p.get('holdout_length'), 0):>7}")
            lines.append(" ".join(cells))
    scan = summary.get("scan")
    if scan:
        lines.append(f"  scan of recent completions: {scan['regime']}, top feature {scan['top_feature']!r}")
    lines.extend(f"  {note}" for note in summary.get("notes") or [])
    lines.extend(f"! {a['line']}" + (" (stopped training)" if a.get("stops") else "") for a in alarms)
    if summary.get("stopped") and summary.get("stop_reason"):
        lines.append(f"stopped: {summary['stop_reason']}")
    return "\n".join(lines)
