"""Every number whileai uses without being told, with its source beside it.

A constant with no source is a bug. Signatures, CLI defaults and CLI help text import from here,
so a default is named exactly once. Sections follow the loop: shared, simulate, grade, measure,
select, guard, export, store.
"""

from __future__ import annotations

# --------------------------------------------------------------------------------------------
# Shared across steps
# --------------------------------------------------------------------------------------------

# The interval on every reported number: 95%, the level Miller 2024 ("Adding Error Bars to
# Evals", arXiv:2411.00640, section 2) reports, and the convention in the eval literature.
CI_LEVEL = 0.95

# Resamples behind each bootstrap interval. Efron and Tibshirani (1993, An Introduction to the
# Bootstrap, ch. 19) put the floor for percentile intervals at about 1000; 2000 is convention.
BOOTSTRAP_DRAWS = 2000

# The seed every draw uses when none is given: reproducible by default (sklearn's
# check_random_state convention; our CONVENTIONS.md point 8).
DEFAULT_SEED = 0

# A rollout counts as a pass at reward >= 0.5 when rewards are partial credit (Lambert 2025,
# RLHF book, chapter Reward Modeling: outcome rewards thresholded at one half).
PASS_THRESHOLD = 0.5

# Version of the rollout-table layout written into JSONL (`schema_version`) and Parquet
# metadata. "1" keeps rows readable by tools that read the published whileai 0.131 row v1.
SCHEMA_VERSION = "1"

# Hex characters kept from a sha256 for short ids (prompt-hash task keys, run ids): 16 hex =
# 64 bits, so a collision among 10 million tasks has probability about 3e-6 (birthday bound).
SHORT_HASH_CHARS = 16

# Rows per batch when a step streams a large table (readers, writers, chunked kernels). 65,536
# is Arrow's and Polars' own default record-batch size order; convention, untested beyond that.
CHUNK_ROWS = 65_536

# Bootstrap draws handled at once by a chunked kernel, so memory stays at tasks x this many
# floats rather than tasks x BOOTSTRAP_DRAWS (DESIGN.md: never an n x draws matrix at once).
BOOTSTRAP_CHUNK = 250

# --------------------------------------------------------------------------------------------
# Measure
# --------------------------------------------------------------------------------------------

# The RL difficulty band: keep tasks the policy solves 20% to 80% of the time (Lambert 2025,
# chapter Reasoning; Yu et al. 2025, DAPO, arXiv:2503.14476, dynamic sampling).
DIFFICULTY_BAND = (0.2, 0.8)

# Pooled reward/feature correlation above which the hack scan flags a feature (Gao et al. 2022,
# "Scaling Laws for Reward Model Overoptimization", arXiv:2210.10760; threshold is convention).
HACK_THRESHOLD = 0.3

# The before run passes most of its tasks: little room for an improvement to show
# (whileai 0.131 ceiling_pass_rate; convention, untested).
CEILING_PASS_RATE = 0.9

# The base pass rate holdout_size models when none is measured or the measured one is saturated
# (whileai 0.131 holdout_size(base=0.6); a rate inside the difficulty band, convention).
BASE_PASS_RATE = 0.6

# Rollouts per task holdout_size assumes when k is not given (tau-bench reports pass^k up to 8,
# the quickstart uses 4; Yao et al. 2024, arXiv:2406.12045).
HOLDOUT_K = 4

# Power and test size for holdout sizing: 80% power at alpha 0.05 two-sided (Cohen 1988,
# Statistical Power Analysis, ch. 1 conventions).
POWER = 0.8
ALPHA = 0.05

# The gain a holdout must be able to show: 5 points at 80% power (seeds, "Train, holdout, eval").
HOLDOUT_EFFECT = 0.05

# Fewer shared tasks than this and compare_runs falls back to an unpaired test (seeds,
# "Intervals and comparison": fewer than five shared tasks).
MIN_PAIRED_TASKS = 5

# Under this share of tasks paired, delta_report calls the arms not comparable (seeds: "Under
# half paired is situations in delta_report's not_comparable").
MIN_PAIRED_SHARE = 0.5

# Fewest tasks an interval is computed over; fewer gives NaN and a warning (whileai 0.131
# MIN_CI_TASKS = 3: a bootstrap over two tasks has three possible means).
MIN_CI_TASKS = 3

# pass^k and pass@k need at least this many rollouts per task to be worth reporting
# (whileai 0.131 pass_at(min_k=4); tau-bench reports k from 1 to 8).
MIN_K = 4

# Fewer rollouts per task than this and a band assignment is noisy: at 8 a task's band can be off
# by about 0.3 (seeds, "Prune before training": "fewer than 16 rollouts per task").
BAND_MIN_ROLLOUTS = 16

# Sign-flip permutation draws when exact enumeration is too large (Good 2005, Permutation,
# Parametric and Bootstrap Tests of Hypotheses, ch. 3; p-value Monte Carlo error about 0.005).
PERMUTATION_DRAWS = 10_000

# Sign-flip tests enumerate all 2^n sign patterns exactly up to this many distinct tasks.
EXACT_PERMUTATION_MAX_N = 14

# The interval on a mean over tasks. "t" is the Student-t interval on task means that Miller
# 2024 (arXiv:2411.00640, section 2.1, clustered standard errors) recommends; it holds 95%
# coverage at 8 to 50 tasks where the plain percentile bootstrap covers about 0.92.
# "percentile" and "bca" (Efron 1987, JASA 82:171) are available on request.
CI_METHOD = "t"

# Re-runs of an eval needed before run_std is worth reading (seeds, "Run the eval three times").
EVAL_RUNS = 3
