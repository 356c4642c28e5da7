"""``optimize`` / ``select``: one door to the RL and SFT selections."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from whileai.defaults import DEFAULT_SEED, DIFFICULTY_BAND, SELECT_TARGET, SFT_MIN_REWARD
from whileai.errors import ArgumentError
from whileai.select._common import check_choice
from whileai.select._rl import select_for_rl
from whileai.select._sft import select_for_sft
from whileai.table import IntoRows

__all__ = ["MODES", "optimize", "select"]

#: What ``mode=`` accepts.
MODES = ("rl", "sft")

_RL_ONLY = {"band": DIFFICULTY_BAND, "enforce_band": True, "truncated": "drop", "order": "spread", "endorsed": None}
_SFT_ONLY = {"select": "top_per_prompt", "min_reward": SFT_MIN_REWARD, "k": None}


def optimize(
    rows: IntoRows,
    /,
    *,
    mode: Literal["rl", "sft"] = "rl",
    target: int | None = SELECT_TARGET,
    band: tuple[float, float] = DIFFICULTY_BAND,
    enforce_band: bool = True,
    truncated: Literal["drop", "keep", "penalize"] = "drop",
    order: Literal["spread", "middle"] = "spread",
    endorsed: Sequence[str] | None = None,
    select: Literal["top_per_prompt", "top_k_overall", "random_per_prompt", "random_k_overall"] = "top_per_prompt",
    min_reward: float = SFT_MIN_REWARD,
    k: int | None = None,
    seed: int | np.random.Generator = DEFAULT_SEED,
) -> Any:
    """Keep the rows that carry training signal: the RL difficulty band or SFT rejection sampling.

    ``mode="rl"`` runs :func:`select_for_rl` (privileged-leak, junk, duplicate, truncated,
    unanimous and out-of-band drops, then whole groups round-robin; seeds, "Prune before
    training");
    ``mode="sft"`` runs :func:`select_for_sft` (rejection sampling, Lambert 2025, chapter
    Rejection Sampling). ``wai.select`` and ``scored.select(mode=...)`` are this function.

    Args:
        rows: A graded rollout table, a ``ScoredData``, or anything ``table.frame`` reads.
        mode: "rl" or "sft".
        target: Most rows to keep (RL: whole groups, None keeps all eligible groups).
        band: RL only: the inclusive difficulty band (``DIFFICULTY_BAND``).
        enforce_band: RL only: apply the band.
        truncated: RL only: "drop", "keep" or "penalize" truncated rollouts.
        order: RL only: "spread" or "middle".
        endorsed: RL only: run ``whileai.guard.hack_scan`` with these endorsed features.
        select: SFT only: "top_per_prompt", "top_k_overall", "random_per_prompt", "random_k_overall".
        min_reward: SFT only: the reward a completion needs.
        k: SFT only: rows for the ``*_k_overall`` rules.
        seed: SFT only: seed for tie-breaks and the random rules.

    Returns:
        A ``whileai.data.Selection`` whose ``.report`` prints what was dropped and kept.

    Raises:
        ArgumentError: A bad ``mode`` or an option of the other mode set to a non-default value.
        TrainingSelectionError: Ungraded rows, nothing left after the filters, or ``min_reward``
            that no row meets.

    Examples:
        >>> from whileai.testing import rollout_table
        >>> sel = optimize(rollout_table(40, 8, pass_rates=[0.5] * 40, seed=3), mode="rl", target=64)
        >>> sel.report.n_selected, sel.report.groups_selected
        (64, 8)
    """
    mode = check_choice("mode", mode, MODES)  # type: ignore[assignment]
    given = {"band": band, "enforce_band": enforce_band, "truncated": truncated, "order": order, "endorsed": endorsed,
             "select": select, "min_reward": min_reward, "k": k}
    other = _SFT_ONLY if mode == "rl" else _RL_ONLY
    stray = [name for name, default in other.items() if not _same(given[name], default)]
    if stray:
        raise ArgumentError(
            f"{', '.join(n + '=' for n in stray)} must be left at the default with mode={mode!r}, got "
            f"{', '.join(f'{n}={given[n]!r}' for n in stray)}. "
            f"Those options belong to mode={'sft' if mode == 'rl' else 'rl'!r}; drop them or change mode.",
            argument=stray[0],
        )
    if mode == "rl":
        return select_for_rl(rows, target=target, band=band, enforce_band=enforce_band, truncated=truncated,
                             order=order, endorsed=endorsed)
    if target is None:
        raise ArgumentError('target must be a positive integer with mode="sft", got None. Pass for example target=1000.',
                            argument="target")
    return select_for_sft(rows, select=select, min_reward=min_reward, target=target, k=k, seed=seed)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return tuple(a) == tuple(b)
    return a is b or a == b


#: ``wai.select(rows, mode=...)``: the same function as :func:`optimize`.
select = optimize
