"""Pure numeric kernels on numpy arrays: bootstrap, permutation, pass@k, Wilson, kappa, power, correlation, MinHash."""

from whileai.stats.agreement import cohen_kappa, confusion_2x2, kappa_interval, percent_agreement
from whileai.stats.binomial import binomial_greater_p, length_confound
from whileai.stats.bootstrap import (
    bootstrap_mean_ci,
    bootstrap_means,
    bootstrap_moments,
    paired_bootstrap_ci,
)
from whileai.stats.cluster import cluster_mean_ci
from whileai.stats.correlation import pearson
from whileai.stats.intervals import mean_interval, t_interval, t_quantile
from whileai.stats.minhash import band_keys, fmix64, minhash_signatures
from whileai.stats.passk import comb_ratio, pass_at_k, pass_pow_k
from whileai.stats.permutation import SignFlip, sign_flip_pvalue, sign_flip_test
from whileai.stats.power import (
    binomial_paired_var,
    concentrated_paired_var,
    detectable_effect_binomial,
    detectable_effect_sd,
    detectable_moved,
    noise_band_width,
    paired_tasks_needed,
    power_at,
    z_sum,
)
from whileai.stats.rng import check_rng
from whileai.stats.score import (
    cluster_wilson,
    clustered_rate_interval,
    effective_tasks,
    modified_wilson,
    score_interval,
)
from whileai.stats.wilson import wilson

__all__ = [
    "SignFlip",
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
