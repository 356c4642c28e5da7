"""Pure numeric kernels on numpy arrays: bootstrap, permutation, pass@k, Wilson, kappa, power, correlation, MinHash."""

from __future__ import annotations

from typing import TYPE_CHECKING

from whileai._lazy import exports

#: Submodule -> the public names it defines; each loads on first use (whileai/_lazy.py).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "whileai.stats.agreement": ("AgreementGate", "agreement_gate", "cohen_kappa", "confusion_2x2", "kappa_interval", "percent_agreement",),
    "whileai.stats.binomial": ("binomial_greater_p", "length_confound",),
    "whileai.stats.bootstrap": ("bootstrap_mean_ci", "bootstrap_means", "bootstrap_moments", "paired_bootstrap_ci",),
    "whileai.stats.cluster": ("cluster_mean_ci",),
    "whileai.stats.correlation": ("pearson",),
    "whileai.stats.intervals": ("mean_interval", "t_interval", "t_quantile",),
    "whileai.stats.minhash": ("band_keys", "fmix64", "minhash_signatures",),
    "whileai.stats.passk": ("comb_ratio", "pass_at_k", "pass_pow_k",),
    "whileai.stats.permutation": ("SignFlip", "sign_flip_pvalue", "sign_flip_test",),
    "whileai.stats.power": ("binomial_paired_var", "concentrated_paired_var", "detectable_effect_binomial", "detectable_effect_sd", "detectable_moved", "noise_band_width", "paired_tasks_needed", "power_at", "z_sum",),
    "whileai.stats.rng": ("check_rng",),
    "whileai.stats.score": ("cluster_wilson", "clustered_rate_interval", "effective_tasks", "modified_wilson", "score_interval",),
    "whileai.stats.wilson": ("wilson",),
}
__getattr__, __dir__ = exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - what type checkers see: the table above (tested)
    from whileai.stats.agreement import AgreementGate as AgreementGate
    from whileai.stats.agreement import agreement_gate as agreement_gate
    from whileai.stats.agreement import cohen_kappa as cohen_kappa
    from whileai.stats.agreement import confusion_2x2 as confusion_2x2
    from whileai.stats.agreement import kappa_interval as kappa_interval
    from whileai.stats.agreement import percent_agreement as percent_agreement
    from whileai.stats.binomial import binomial_greater_p as binomial_greater_p
    from whileai.stats.binomial import length_confound as length_confound
    from whileai.stats.bootstrap import bootstrap_mean_ci as bootstrap_mean_ci
    from whileai.stats.bootstrap import bootstrap_means as bootstrap_means
    from whileai.stats.bootstrap import bootstrap_moments as bootstrap_moments
    from whileai.stats.bootstrap import paired_bootstrap_ci as paired_bootstrap_ci
    from whileai.stats.cluster import cluster_mean_ci as cluster_mean_ci
    from whileai.stats.correlation import pearson as pearson
    from whileai.stats.intervals import mean_interval as mean_interval
    from whileai.stats.intervals import t_interval as t_interval
    from whileai.stats.intervals import t_quantile as t_quantile
    from whileai.stats.minhash import band_keys as band_keys
    from whileai.stats.minhash import fmix64 as fmix64
    from whileai.stats.minhash import minhash_signatures as minhash_signatures
    from whileai.stats.passk import comb_ratio as comb_ratio
    from whileai.stats.passk import pass_at_k as pass_at_k
    from whileai.stats.passk import pass_pow_k as pass_pow_k
    from whileai.stats.permutation import SignFlip as SignFlip
    from whileai.stats.permutation import sign_flip_pvalue as sign_flip_pvalue
    from whileai.stats.permutation import sign_flip_test as sign_flip_test
    from whileai.stats.power import binomial_paired_var as binomial_paired_var
    from whileai.stats.power import concentrated_paired_var as concentrated_paired_var
    from whileai.stats.power import detectable_effect_binomial as detectable_effect_binomial
    from whileai.stats.power import detectable_effect_sd as detectable_effect_sd
    from whileai.stats.power import detectable_moved as detectable_moved
    from whileai.stats.power import noise_band_width as noise_band_width
    from whileai.stats.power import paired_tasks_needed as paired_tasks_needed
    from whileai.stats.power import power_at as power_at
    from whileai.stats.power import z_sum as z_sum
    from whileai.stats.rng import check_rng as check_rng
    from whileai.stats.score import cluster_wilson as cluster_wilson
    from whileai.stats.score import clustered_rate_interval as clustered_rate_interval
    from whileai.stats.score import effective_tasks as effective_tasks
    from whileai.stats.score import modified_wilson as modified_wilson
    from whileai.stats.score import score_interval as score_interval
    from whileai.stats.wilson import wilson as wilson

__all__ = [
    "AgreementGate",
    "SignFlip",
    "agreement_gate",
    "band_keys",
    "binomial_greater_p",
    "binomial_paired_var",
    "bootstrap_mean_ci",
    "bootstrap_means",
    "bootstrap_moments",
    "check_rng",
    "cluster_mean_ci",
    "cluster_wilson",
    "clustered_rate_interval",
    "cohen_kappa",
    "comb_ratio",
    "concentrated_paired_var",
    "confusion_2x2",
    "detectable_effect_binomial",
    "detectable_effect_sd",
    "detectable_moved",
    "effective_tasks",
    "length_confound",
    "fmix64",
    "kappa_interval",
    "mean_interval",
    "minhash_signatures",
    "modified_wilson",
    "noise_band_width",
    "paired_bootstrap_ci",
    "paired_tasks_needed",
    "pass_at_k",
    "pass_pow_k",
    "pearson",
    "percent_agreement",
    "power_at",
    "score_interval",
    "sign_flip_pvalue",
    "sign_flip_test",
    "t_interval",
    "t_quantile",
    "wilson",
    "z_sum",
]
