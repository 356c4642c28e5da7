# The public names of whileai.stats, one line each and nowhere else. At run time __init__.py
# hands this file to whileai/_lazy.py, which imports a name's module on its first use; type
# checkers and editors read it for the types.

from .agreement import AgreementGate as AgreementGate
from .agreement import agreement_gate as agreement_gate
from .agreement import cohen_kappa as cohen_kappa
from .agreement import confusion_2x2 as confusion_2x2
from .agreement import kappa_interval as kappa_interval
from .agreement import percent_agreement as percent_agreement
from .binomial import binomial_greater_p as binomial_greater_p
from .binomial import length_confound as length_confound
from .bootstrap import bootstrap_mean_ci as bootstrap_mean_ci
from .bootstrap import bootstrap_means as bootstrap_means
from .bootstrap import bootstrap_moments as bootstrap_moments
from .bootstrap import paired_bootstrap_ci as paired_bootstrap_ci
from .cluster import cluster_mean_ci as cluster_mean_ci
from .correlation import pearson as pearson
from .intervals import mean_interval as mean_interval
from .intervals import t_interval as t_interval
from .intervals import t_quantile as t_quantile
from .minhash import band_keys as band_keys
from .minhash import fmix64 as fmix64
from .minhash import minhash_signatures as minhash_signatures
from .passk import comb_ratio as comb_ratio
from .passk import pass_at_k as pass_at_k
from .passk import pass_pow_k as pass_pow_k
from .permutation import SignFlip as SignFlip
from .permutation import sign_flip_pvalue as sign_flip_pvalue
from .permutation import sign_flip_test as sign_flip_test
from .power import binomial_paired_var as binomial_paired_var
from .power import concentrated_paired_var as concentrated_paired_var
from .power import detectable_effect_binomial as detectable_effect_binomial
from .power import detectable_effect_sd as detectable_effect_sd
from .power import detectable_moved as detectable_moved
from .power import noise_band_width as noise_band_width
from .power import noncentral_t_sf as noncentral_t_sf
from .power import paired_tasks_needed as paired_tasks_needed
from .power import power_at as power_at
from .power import z_sum as z_sum
from .rng import check_rng as check_rng
from .score import cluster_wilson as cluster_wilson
from .score import clustered_rate_interval as clustered_rate_interval
from .score import effective_tasks as effective_tasks
from .score import modified_wilson as modified_wilson
from .score import score_interval as score_interval
from .wilson import wilson as wilson
