"""``optimize`` / ``select``: one door to the RL and SFT selections."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Literal

from whileai.errors import ArgumentError
from whileai.selection._args import check_choice
from whileai.selection._rl import select_for_rl
from whileai.selection._sft import select_for_sft
from whileai.table import IntoRows, StepResult, is_ray_dataset

__all__ = ["MODES", "optimize"]

#: What ``mode=`` accepts.
MODES = ("rl", "sft")

_SELECTORS: dict[str, Callable[..., StepResult]] = {"rl": select_for_rl, "sft": select_for_sft}


def _options(fn: Any) -> frozenset[str]:
    return frozenset(name for name, p in inspect.signature(fn).parameters.items() if p.kind is p.KEYWORD_ONLY)


_OPTIONS = {mode: _options(fn) for mode, fn in _SELECTORS.items()}


def optimize(rows: IntoRows, /, *, mode: Literal["rl", "sft"] = "rl", **options: Any) -> StepResult:
    """Keep the rows that carry training signal: the RL difficulty band or SFT rejection sampling.

    ``mode="rl"`` runs :func:`select_for_rl` (privileged-leak, junk, duplicate, truncated,
    unanimous and out-of-band drops, then whole groups round-robin; docs/select.md, "Prune
    before training"); ``mode="sft"`` runs :func:`select_for_sft` (rejection sampling, Lambert
    2025, chapter Rejection Sampling). ``options`` are that function's own keyword options, with
    its defaults; an option of the other mode (``seed=`` with ``mode="rl"``, ``band=`` with
    ``mode="sft"``) is refused rather than ignored. ``wai.select`` and ``scored.select(mode=...)``
    are this function, wrapped as a ``Selection``.

    Args:
        rows: A graded rollout table, a ``ScoredData``, or anything ``table.frame`` reads.
        mode: "rl" or "sft".
        **options: Keyword options of :func:`select_for_rl` or :func:`select_for_sft`.

    Returns:
        The selector's :class:`whileai.table.StepResult` (kept rows and the report that prints
        what was dropped and kept).

    Raises:
        ArgumentError: A bad ``mode``, or an option the chosen mode does not take.
        TrainingSelectionError: Ungraded rows, nothing left after the filters, or ``min_reward``
            that no row meets.

    Examples:
        >>> from whileai.testing import rollout_table
        >>> sel = optimize(rollout_table(40, 8, pass_rates=[0.5] * 40, seed=3), mode="rl", target=64)
        >>> sel.report.n_selected, sel.report.groups_selected
        (64, 8)
    """
    mode = check_choice("mode", mode, MODES)  # type: ignore[assignment]
    if is_ray_dataset(rows):
        from whileai.selection._ray import select as ray_select

        return ray_select(rows, mode=mode, **options)  # type: ignore[return-value]
    stray = sorted(set(options) - _OPTIONS[mode])
    if stray:
        other = "sft" if mode == "rl" else "rl"
        owner = [n for n in stray if n in _OPTIONS[other]]
        fix = (f"Those options ({', '.join(n + '=' for n in owner)}) belong to mode={other!r}; "
               "drop them or change mode" if owner else
               f"mode={mode!r} takes {', '.join(sorted(_OPTIONS[mode]))}")
        raise ArgumentError(
            f"options must be those mode={mode!r} takes, got {', '.join(f'{n}={options[n]!r}' for n in stray)}. {fix}.",
            argument=stray[0])
    return _SELECTORS[mode](rows, **options)

