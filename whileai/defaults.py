"""Every number whileai uses without being told, with its source beside it.

A constant with no source is a bug. Signatures, CLI defaults and CLI help text import from here,
so a default is named exactly once. Sections follow the loop: shared, simulate, grade, measure,
select, guard, export, store. Text constants are ``Final``: a type checker reads each as its
``Literal`` value, so ``ci_method: Literal["score", ...] = PASS_CI_METHOD`` checks as written.
"""

from __future__ import annotations

from typing import Final

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
# check_random_state convention; whileai.stats.check_rng).
DEFAULT_SEED = 0

# A rollout counts as a pass at reward >= 0.5 when rewards are partial credit (Lambert 2025,
# RLHF book, chapter Reward Modeling: outcome rewards thresholded at one half).
PASS_THRESHOLD = 0.5

# Version of the rollout-table layout written into JSONL (`schema_version`) and Parquet
# metadata. "1" keeps rows readable by tools that read the published whileai 0.131 row v1.
SCHEMA_VERSION: Final = "1"

# Hex characters kept from a sha256 for short ids (prompt-hash task keys, run ids): 16 hex =
# 64 bits, so a collision among 10 million tasks has probability about 3e-6 (birthday bound).
SHORT_HASH_CHARS = 16

# Rows per batch when a step streams a large table (readers, writers, chunked kernels). 65,536
# is Arrow's and Polars' own default record-batch size order; convention, untested beyond that.
CHUNK_ROWS = 65_536

# Bootstrap draws handled at once by a chunked kernel, so memory stays at tasks x this many
# floats rather than tasks x BOOTSTRAP_DRAWS (docs/architecture.md, "Speed model": never an n x draws matrix at once).
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

# The gain a holdout must be able to show: 5 points at 80% power (docs/measure.md, "holdout_size and detectable_effect").
HOLDOUT_EFFECT = 0.05

# Fewer shared tasks than this and compare_runs falls back to an unpaired test (docs/measure.md,
# "compare_runs": fewer than five shared tasks).
MIN_PAIRED_TASKS = 5

# Under this share of tasks paired, delta_report calls the arms not comparable (docs/measure.md,
# "delta_report (and compare)": under half paired is NOT COMPARABLE).
MIN_PAIRED_SHARE = 0.5

# Fewest tasks an interval is computed over; fewer gives NaN and a warning (whileai 0.131
# MIN_CI_TASKS = 3: a bootstrap over two tasks has three possible means).
MIN_CI_TASKS = 3

# pass^k and pass@k need at least this many rollouts per task to be worth reporting
# (whileai 0.131 pass_at(min_k=4); tau-bench reports k from 1 to 8).
MIN_K = 4

# Fewer rollouts per task than this and a band assignment is noisy: at 8 a task's band can be off
# by about 0.3 (docs/select.md, "The calibration stamp": "fewer than 16 rollouts per task").
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
CI_METHOD: Final = "t"

# Re-runs of an eval needed before run_std is worth reading (docs/measure.md, "eval_variance and noise_band").
EVAL_RUNS = 3

# --------------------------------------------------------------------------------------------
# ---- store ----
# --------------------------------------------------------------------------------------------

# Where the local store lives when neither open(path=) nor the WAI_STORE environment variable
# names a file: one DuckDB file in the working folder (docs/store.md, "Where things live"; the llm tool keeps its
# logs.db in one user folder the same way). Convention, untested.
STORE_PATH: Final = ".wai/store.duckdb"

# The environment variable that overrides STORE_PATH (docs/store.md, "Where things live").
STORE_ENV: Final = "WAI_STORE"

# Seconds a store call waits for another process's write lock before raising StoreBusyError.
# Store writes hold the lock only for their metadata transaction (milliseconds; the Parquet file
# is written before the lock is taken), so 10 s covers bursts of parallel writers.
# Convention, untested.
STORE_BUSY_TIMEOUT_S = 10.0

# Share of tasks split off into the holdout: 20% (whileai 0.131 ENV_HOLDOUT_FRACTION = 0.2, which
# cites Yu et al. 2025, DAPO, arXiv:2503.14476; convention).
HOLDOUT_SHARE = 0.2

# Hex characters of sha256(salt + task_key) read as the task's split bucket in [0, 1): 8 hex =
# 32 bits, far finer than any share a person asks for (whileai 0.131 HOLDOUT_BUCKET_HEX_CHARS = 8;
# convention, untested).
HOLDOUT_BUCKET_HEX_CHARS = 8

# --------------------------------------------------------------------------------------------
# ---- guard ----
# --------------------------------------------------------------------------------------------

# Within-ask shuffles of the reward behind the hack scan's noise floor tau (whileai 0.131
# hack_scan n_perm=100). tau is the (1 - HACK_ALPHA) quantile of the largest |rho| over all
# features under the shuffles, the max-statistic floor of Westfall and Young (1993, Resampling-
# Based Multiple Testing, ch. 2), so it holds family-wise over every feature scanned.
HACK_PERMUTATIONS = 100
HACK_ALPHA = 0.05

# The auto tier's vocabulary: the 200 most common words and word pairs in the agent's text
# (docs/guard.md, "What will the policy learn?"; whileai 0.131 top_k=200).
HACK_TOP_K = 200

# A feature seen on fewer rows than this (or missing from fewer) is not scanned: its correlation
# would rest on a handful of rollouts (whileai 0.131 min_obs=20; convention, untested).
HACK_MIN_OBS = 20
# A scan that clears min_obs on fewer features than this reports its power, not a clean bill: at 8
# tasks x 4 and 15 x 2 about 3 features clear min_obs=20 (docs/guard.md, "hack_scan"; measured in
# tests/guard/test_hack_power.py). Convention: HACK_TOP_K / 20.
HACK_MIN_FEATURES = 10

# Pairwise ANDs are tried among this many best single features (whileai 0.131 seeds=12, 66 pairs;
# convention, untested).
HACK_AND_SEEDS = 12

# Above this many scanned rows the auto tier's vocabulary is ranked on a hashed sample of asks of about this
# many rows, then every row is tokenised once against it; document-frequency ranks of the top 200
# are stable at this size (binomial sd of a 1% frequency is 0.03 points). Convention, untested.
HACK_VOCAB_SAMPLE_ROWS = 131_072

# Features printed by format_hack_scan (whileai 0.131 top_features=20).
HACK_TOP_FEATURES = 20

# Decontamination's near-copy rule: a row is a near copy when it holds word DECONTAM_NGRAM-grams
# covering at least DECONTAM_OVERLAP of ONE eval text's words (the share is the eval text's, so a
# copy wrapped in a longer prompt still counts). The 8-gram token-coverage
# rule is Llama 3's (Dubey et al. 2024, "The Llama 3 Herd of Models", section 5.1.4, following
# Singh et al. 2024); the 80% cut is Llama 2's "dirty" threshold (Touvron et al. 2023, appendix
# A.6: a sample is dirty when >= 80% of its tokens sit in matched spans; Llama 2 itself matched
# spans of more than 10 tokens). docs/guard.md calls the combination "the Llama 2 rule".
DECONTAM_NGRAM = 8
DECONTAM_OVERLAP = 0.8

# The semantic rule's cosine threshold, read off BGE where unrelated prompts score about 0.55
# (docs/guard.md, "Decontamination"); it needs picking for another embedder.
DECONTAM_SIMILARITY = 0.85

# How alike distinct eval tasks read to the embedder: this quantile of cosine over eval-prompt
# pairs with different task ids (docs/guard.md, "Decontamination": the 99th percentile), measured on at
# most DECONTAM_CROSS_TASK_SAMPLE eval prompts drawn by seed (2000 prompts = 2 million pairs;
# convention, untested).
DECONTAM_CROSS_TASK_QUANTILE = 0.99
DECONTAM_CROSS_TASK_SAMPLE = 2000

# Offending rows listed on the decontamination report (convention, untested).
DECONTAM_EXAMPLES = 10

# Matched (row position, eval text) pairs held at once by the near-copy join; rows are processed
# in chunks under this budget so memory stays bounded (about 16 bytes a pair; convention).
DECONTAM_PAIR_BUDGET = 20_000_000

# Texts handed to an embedder per call (convention, untested).
EMBED_BATCH = 4096

# Two prompts are near duplicates at word-set Jaccard >= 0.8 (whileai 0.131
# near_duplicate_prompts threshold=0.8; Broder 1997, "On the resemblance and containment of
# documents", for Jaccard resemblance and MinHash).
NEAR_DUP_JACCARD = 0.8

# An ask whose longest reply is more than this many times its shortest has a wide length spread
# (whileai 0.131 length_report max_spread=4.0; convention, untested).
LENGTH_MAX_SPREAD = 4.0

# Argument values shorter than this are not checked for grounding ("ok", "1" appear anywhere;
# whileai 0.131 ungrounded_arguments min_len=3).
GROUNDING_MIN_CHARS = 3

# Privileged strings shorter than this are not searched for in replies (whileai 0.131
# leak_report min_len=12: shorter needles match by accident).
LEAK_MIN_CHARS = 12

# Examples listed per flag or marker on guard reports (whileai 0.131 trace_flag_report
# examples=3, refusal_report examples=5).
GUARD_EXAMPLES = 3
REFUSAL_EXAMPLES = 5

# decontaminate's exact rule matches only texts of at least this many words: a short text ("Yes",
# "42") shared by a training row and an eval row is no evidence of contamination. The n-gram
# size, as n-gram decontamination counts only matches of at least n tokens (Llama 3, Dubey et al.
# 2024 section 5.1.4, 8-grams; GPT-3, Brown et al. 2020 appendix C, 8 to 13 words). The near rule
# (DECONTAM_OVERLAP) is measured on the eval text's words, the share of them inside 8-grams the
# training row also holds (Llama 3 section 5.1.4; Tulu 3, Lambert et al. 2024, decontamination).
DECONTAM_EXACT_MIN_WORDS = DECONTAM_NGRAM

# decontaminate's near rule (near=): "template" (the default) counts an eval word covered when it
# sits in an 8-gram the row holds with at most one word different (a one-word skip-gram: Llama 2,
# Touvron et al. 2023 appendix A.6, lets matched spans differ in a few positions), and asks the
# row to reproduce the eval text's slot words (words other eval tasks change in the same context:
# ids, amounts, names), weighted by inverse document frequency over the eval texts (Sparck Jones
# 1972), missing at most the heaviest one or 1 - DECONTAM_OVERLAP of their weight. "eval_cover"
# is the earlier rule (exact 8-grams only, no slot check). Measured on seeded templated data
# (tests/guard/test_decontam_rates.py, docs/guard.md).
DECONTAM_NEAR = "template"
# A word is a slot of its eval text when, with it masked, one of its 3-word contexts (the word
# and two neighbours) occurs in another eval task with a different word there (convention,
# measured: an 8-word context misses slots beside other slots, tests/guard/test_decontam_rates.py).
DECONTAM_SLOT_CONTEXT = 3

# --------------------------------------------------------------------------------------------
# ---- select ----
# --------------------------------------------------------------------------------------------

# Rows select(mode=...) keeps when no target is given; whole groups, never split
# (whileai 0.131 select(target=1000); convention, untested).
SELECT_TARGET = 1000

# select_for_sft keeps completions at or above this reward: a full pass under a 0/1 grader;
# lower it for a partial-credit grader (whileai 0.131 select_for_sft(min_reward=1.0); docs/select.md,
# "rejection sampling").
SFT_MIN_REWARD = 1.0

# The first head of the overall order select(mode="sft") reads each prompt's pick from, as a
# multiple of the rows it keeps (and the factor it grows by when that head holds too few
# prompts). A cost knob, not a statistic: the picks are the same at any value (a prompt's pick is
# its first row in that order). Four holds a target's worth of prompts at up to four completions
# per prompt sharing the top reward; on the 1M-row benchmark (8 per prompt) the first head held
# them, and the pick went from two windows over 0.5M eligible rows to one over 4,000.
PICK_HEAD_FACTOR = 4

# Rejection sampling wants 10 to 30 completions per prompt to choose among (Lambert 2025, RLHF
# book, chapter Rejection Sampling: Llama 3 samples 10 to 30); below 10 the SFT report says so.
REJECTION_SAMPLING_MIN_K = 10

# A preference pair needs rewards at least this far apart: 1.0 pairs a pass with a fail under a
# 0/1 grader; 0.5 admits partial credit (whileai 0.131 build_preference_pairs(min_margin=1.0)).
PAIR_MIN_MARGIN = 1.0

# Share of pairs whose chosen side is the longer reply above which the pairs report warns of a
# length confound: DPO learns length faster than the behaviour (Lambert 2025, chapter Direct
# Alignment; Park et al. 2024, arXiv:2403.19159). The threshold is convention, untested.
PAIR_LENGTH_CONFOUND = 0.6

# Difficulty tiers in a curriculum schedule (whileai 0.131 curriculum(tiers=3); convention,
# untested).
CURRICULUM_TIERS = 3

# Graded rollouts a task needs before it has a difficulty: one rollout is a 0 or a 1, not a rate
# (whileai 0.131 curriculum(min_rollouts=2)).
MIN_GROUP_ROLLOUTS = 2

# --------------------------------------------------------------------------------------------
# ---- export ----
# --------------------------------------------------------------------------------------------

# The wire shape export_dataset writes when none is named: the OpenAI chat row (docs/export.md,
# "What a row holds": format="openai" (the default)).
EXPORT_FORMAT: Final = "openai"

# Which agent turns carry loss: every assistant turn (docs/export.md, "What a row holds": 1 on the
# agent's turns, 0 on system, user and tool-output turns; whileai 0.131 mask_mode="assistant").
EXPORT_MASK_MODE: Final = "assistant"

# The marker appended to a tool message cut by max_tool_output_chars; {n} is the characters cut
# (docs/export.md, "What a row holds": "[... N chars of tool output truncated]").
TOOL_OUTPUT_TRUNCATION_MARKER: Final = "[... {n} chars of tool output truncated]"

# push_to_hub: the split a single table goes to, and repos private unless asked (the Hub's
# datasets library loads split="train" when none is named; docs/export.md, "Push to the Hugging
# Face Hub": private unless private=False).
HUB_SPLIT: Final = "train"
HUB_PRIVATE = True
# The revision each push pins, "zp-<id>", so load_dataset(..., revision="zp-ds_...") reads that
# exact push (docs/export.md, "Push to the Hugging Face Hub").
HUB_REVISION_PREFIX: Final = "zp-"

# Hex characters of FNV-1a-64(task_key) in an exported row's group_id (whileai 0.131 group_id is
# 12 hex; 48 bits, so a collision among a million tasks has probability about 2e-3; convention).
EXPORT_GROUP_ID_HEX = 12

# Invalid tool-call arguments and leaking rows listed by index on the export report; the counts
# cover all of them (convention, untested).
EXPORT_EXAMPLES = 20

# --------------------------------------------------------------------------------------------
# ---- grade ----
# --------------------------------------------------------------------------------------------

# Judge calls in flight at once when a judge is async or slow (whileai 0.131 run_judge
# concurrency=8; convention, untested). A fast sync judge runs inline: a thread hop per row would
# cost more than the call.
JUDGE_CONCURRENCY = 8

# A sync judge whose calls average more than this many seconds is moved off the main thread onto
# JUDGE_CONCURRENCY workers (5 ms: far above a Python rule's microseconds, far below a model
# call's hundreds of milliseconds). Convention, untested.
JUDGE_SLOW_S = 0.005

# The judge passes when the lower bound of its agreement with people is at least 0.80 ... (docs/grade.md,
# "judge_trust": the lower bound of its agreement with people is at least 0.80).
JUDGE_AGREEMENT_FLOOR = 0.80

# ... and Cohen's kappa at least 0.60 (docs/grade.md, same section); 0.61 is where Landis and Koch
# (1977, Biometrics 33:159) begin "substantial" agreement.
JUDGE_KAPPA_FLOOR = 0.60

# Partial-credit gold rows skipped from agreement: over this share the check is INCONCLUSIVE
# (docs/grade.md, "judge_trust": max_skipped_share (0.10)).
MAX_SKIPPED_SHARE = 0.10

# A probe is flagged only with at least this many rows in its denominator; under it the probe
# reads low power (docs/grade.md, "judge_trust": PROBE_MIN_N (20)).
PROBE_MIN_N = 20

# A probe is a hole at or over this exploit rate (docs/grade.md, "judge_probes": the holes at or over 10%;
# whileai 0.131 flip_flag=0.1). The consistency and filler flip rates use the same flag.
PROBE_FLAG_RATE = 0.10

# Rows re-judged for the consistency and filler checks, and rows each exploit probe tries
# (whileai 0.131 judge_trust / judge_probes sample=40; convention, untested).
TRUST_SAMPLE = 40

# Judge pass rates on short and long replies within one gold label differing by this much flag
# length bias (whileai 0.131 judge_trust length_gap_flag=0.15; convention, untested).
LENGTH_GAP_FLAG = 0.15

# Each side of a length comparison needs this many rows before a gap can be flagged (a 15-point
# gap on fewer is one or two rows). Convention, untested.
LENGTH_MIN_N = 10

# Disagreements listed in the judge_trust review queue (the count is always complete).
# Convention, untested.
REVIEW_QUEUE_MAX = 200

# Absolute and relative tolerance of verify.MathEqual (whileai 0.131 verify.Numeric tol=1e-6;
# convention, untested).
MATH_ABS_TOL = 1e-6
MATH_REL_TOL = 1e-9

# verify.CodeExec limits per run: wall clock seconds and address-space megabytes (whileai 0.131
# CodeExec timeout=10.0, mem_mb=512; convention, untested).
CODE_TIMEOUT_S = 10.0
CODE_MEM_MB = 512

# Characters of conversation a rubric judge sends its model (whileai 0.131 grade payload_chars=8000;
# convention, untested). Longer transcripts keep the head and the tail.
RUBRIC_TRANSCRIPT_CHARS = 8000

# --------------------------------------------------------------------------------------------
# ---- simulate ----
# --------------------------------------------------------------------------------------------

# Rollouts per run when budget= is not given (whileai 0.131 simulate(budget=1000); convention, untested).
SIM_BUDGET = 1000

# Rollouts per task under mode="rl": a GRPO group (Shao et al. 2024, DeepSeekMath, arXiv:2402.03300,
# sec. 4 samples a group per question; whileai 0.131 RL_ROLLOUTS_PER_PROMPT = 8; convention, untested).
RL_REPEATS = 8

# Completions per prompt under mode="sft": rejection sampling needs something to choose among
# (docs/select.md, "rejection sampling": four completions per phrasing).
SFT_COMPLETIONS_PER_PROMPT = 4

# Rollouts per task under mode="eval": enough for pass^k at the smallest k worth reporting (MIN_K = 4;
# tau-bench, Yao et al. 2024, arXiv:2406.12045, reports pass^k for k = 1..8).
EVAL_REPEATS = 4

# Share of tasks drawn from the hard tiers (ambiguous, boundary, adversarial) (whileai 0.131
# simulate(hard_share=0.40); convention, untested).
HARD_SHARE = 0.4

# Share of tasks whose world schedules a tool fault (timeout, server error, rate limit, malformed
# output, empty result, partial result) (convention, untested; whileai 0.131 used 0.5, 0.8 under rl,
# of fault-tagged cells only).
FAULT_RATE = 0.25

# Agent turns (assistant messages) before a rollout is cut and marked truncated (whileai 0.131
# avg_turns 12.0 for model agents; convention, untested).
MAX_TURNS = 10

# Rollouts in flight at once (docs/simulate.md, "simulate(agent, *, ...)": concurrency= caps parallel
# rollouts; whileai 0.131's HarnessSweep default is 32).
SIM_CONCURRENCY = 32

# Share of rollouts the seeded agent plants a misbehaviour on (whileai 0.131 seeded_agent(rate=0.35);
# it puts the quickstart's pass@1 near two thirds).
SEEDED_RATE = 0.35

# Tasks each policy clause of the system prompt gets, as a share of the run's tasks (at least one;
# clauses take at most half the run) (convention, untested).
CLAUSE_TASK_SHARE = 0.1

# Model endpoints: seconds per request, retries on 429/5xx/transport errors, and exponential
# backoff base and cap (OpenAI API docs, "Rate limits": retry with exponential backoff; the values
# are convention, untested). The key is read from ENDPOINT_KEY_ENV when api_key= is not given.
ENDPOINT_TIMEOUT_S = 60.0
ENDPOINT_MAX_RETRIES = 4
ENDPOINT_BACKOFF_S = 0.5
ENDPOINT_BACKOFF_CAP_S = 30.0
ENDPOINT_KEY_ENV: Final = "OPENAI_API_KEY"
# Retries after a refused connection to a server that has not answered once this session: a
# server that is not running refuses at once, so one short retry (after ENDPOINT_BACKOFF_S) tells
# a restart from a wrong URL or a stopped server within about a second (convention, untested;
# more retries only delayed the EndpointError by 8-12 s with the defaults above).
ENDPOINT_REFUSED_RETRIES = 1

# Seconds between progress-line redraws on a terminal (whileai 0.131 printed every 10 rollouts or
# 10 s; a redraw rate a person can read; convention).
PROGRESS_INTERVAL_S = 0.25

# --------------------------------------------------------------------------------------------
# ---- measure ----
# --------------------------------------------------------------------------------------------

# The interval on pass^k and pass@k: the score interval on the mean of the per-task unbiased
# estimates over effective tasks (whileai/stats/score.py: Korn and Graubard 1998, Survey
# Methodology 24:193; Brown, Cai and DasGupta 2001, Statistical Science 16:101). The percentile
# bootstrap over tasks it replaces covered 0.42 to 0.58 when rollouts exceed k; the measured grid is
# in docs/measure.md (benchmarks/coverage.py). "percentile", "bca" and "t" stay available.
KWAY_CI_METHOD: Final = "score"

# Most cells (draws x tasks) a bootstrap or Monte Carlo chunk holds at once: 4 million float64 =
# 32 MiB, so memory stays bounded at any table size (docs/architecture.md, "Speed model"). Convention, untested.
BOOTSTRAP_MAX_CELLS = 4_000_000

# Up to this many distinct per-task values the bootstrap draws a multinomial over the levels
# instead of resampling task indices (exactly the same distribution; docs/measure.md, "The bootstrap, fast and exact"). A pass
# rate over k rollouts has k + 1 levels. Convention: the multinomial costs O(levels) a draw.
BOOTSTRAP_MAX_LEVELS = 64

# The sign-flip test's null distribution is computed exactly (grouped by equal |difference|) while
# it has at most this many points; above, Monte Carlo with PERMUTATION_DRAWS draws. 2^20 points
# is about 16 MiB. Convention, untested.
EXACT_SIGN_FLIP_SUPPORT = 1 << 20

# The sign-flip interval (docs/measure.md, "compare_runs") inverts the test exactly on the joint
# null distribution of (sum e d, sum e) while it has at most this many cells: 2^21 float64 cells are
# 16 MiB (150 tasks at k = 4 use 91 thousand, 500 tasks at k = 4 one million). Convention, untested.
SIGN_FLIP_JOINT_SUPPORT = 1 << 21

# Monte Carlo sign flips are doubled from PERMUTATION_DRAWS up to PERMUTATION_MAX_DRAWS while the
# p-value is within PERMUTATION_ALPHA_MARGIN Monte Carlo errors of alpha (Phipson and Smyth 2010,
# SAGMB 9:39: the error is sqrt(p (1 - p) / draws), 0.0015 at p = 0.05 and 20,000 draws; 3 errors
# hold a crossing to about 0.1% per side). A p-value still within the margin at the most draws is
# reported as straddling alpha (SignFlip.straddles). Convention, measured in tests/stats/test_permutation.py.
PERMUTATION_MAX_DRAWS = 320_000
PERMUTATION_ALPHA_MARGIN = 3.0

# holdout_size sizes the binomial model for the exact sign-flip test that decides delta_report, by
# seeded simulation of this many evals at each n tried (whileai/stats/power.py sign_flip_power;
# Monte Carlo error 0.009 at power 0.8; the same seed at every n, so the power is smooth in n).
# The t test's answer gave the sign-flip test 0.74-0.78 power at 12-25 tasks. Convention, measured
# in tests/measure/test_holdout_sign_flip.py.
SIGN_FLIP_POWER_REPS = 2000
# Past this many tasks the simulated test reads its null sum by the normal limit (variance sum d^2,
# continuity-corrected): it decides as the exact test on 99.75% to 99.85% of evals at 99 to 369
# tasks (2,000 seeded evals each; tests/measure/test_holdout_sign_flip.py checks 150).
SIGN_FLIP_POWER_EXACT_MAX_TASKS = 100

# After a noise floor, a NO DIFFERENCE report says how many eval runs a side would bring the re-run
# band under the observed delta, searching up to this many (docs/measure.md, "What would resolve
# it"); past it, more runs are not the answer at this run_std. Convention, untested.
RESOLVE_MAX_EVAL_RUNS = 30

# Fewest paired tasks a sizing answer may give: the binomial formula's floor (docs/measure.md,
# "holdout_size and detectable_effect": the formula's floor of 2 tasks; whileai 0.131 MIN_HOLDOUT_TASKS).
MIN_HOLDOUT_TASKS = 2

# eval_variance stability words by run_std in points: a held-constant eval moves 0.25 to 1.5
# points between runs (Lambert 2025, RLHF book, chapter Evaluation), so under 0.25 is
# very_stable, to 1.5 stable, to 3.0 noisy, above high_variance. The 3.0 edge is convention.
STABILITY_POINTS = (0.25, 1.5, 3.0)

# self_check: trials per check (quick) and under the CLI's --full (whileai 0.131 self_check
# trials=40, --full 400; Monte Carlo error at 400 trials is about 1.1 points at 95%), its seed,
# and the flag rule: more than three Monte Carlo errors on the bad side (the three-sigma rule;
# convention, untested).
SELF_CHECK_TRIALS = 40
SELF_CHECK_FULL_TRIALS = 400
SELF_CHECK_SEED = 0
SELF_CHECK_FLAG_ERRORS = 3.0

# self_check arms: tasks per arm in the false-alarm checks (the 0.131 case study's smaller eval,
# 30), eval sizes for the coverage check (10 and 20 tasks: where percentile intervals fail,
# Efron and Tibshirani 1993, ch. 13), eval sizes and planted gains for the power check (30 and 60
# tasks; +10 and +16 points, the case study's gains), rollouts per task (the quickstart's 4),
# task pass rates drawn uniform in (0.2, 0.7) (inside the difficulty band with room to gain;
# convention), and the share of near-duplicate tasks in the last false-alarm check (0.5,
# convention). All whileai 0.131 SELF_CHECK_* values.
SELF_CHECK_CASES = 30
SELF_CHECK_COVERAGE_CASES = (10, 20)
SELF_CHECK_POWER_CASES = (30, 60)
SELF_CHECK_EFFECTS = (0.1, 0.16)
SELF_CHECK_K = 4
SELF_CHECK_DIFFICULTY = (0.2, 0.7)
# self_check counts the unreplicated PASS on pure noise: identical arms whose eval drifts between
# runs by SELF_CHECK_DRIFT (the sd of a run-level shift of every task's pass rate: 1.5 points, the top
# of the 0.25 to 1.5 points a held-constant eval moves between runs, Lambert 2025, RLHF book,
# chapter Evaluation), one run a side and no run_std (docs/measure.md, "self_check").
SELF_CHECK_DRIFT = 0.015
SELF_CHECK_DRIFT_CASES = 100
SELF_CHECK_DUPLICATE_SHARE = 0.5

# ---- export (2) ----
# Chunks of CHUNK_ROWS an export builds at once in threads while the previous one is written:
# Polars releases the GIL, so two builders keep both cores of a small machine busy; memory stays
# at (workers + 1) chunks (convention, measured in benchmarks/bench_export.py).
EXPORT_WORKERS = 2

# ---- measure (binary task values) ----
# When every task's value is 0 or 1 (one rollout a task for pass@1; n == k for pass^k and pass@k),
# the mean over tasks is a binomial proportion over tasks and its interval is Wilson's (Wilson
# 1927, JASA 22:209; peers.md section 4.4: the percentile bootstrap degenerates at 0 and 1).
# Measured (docs/measure.md, Beta(2, 1.5) tasks, k = 4): pass@4 at 16 tasks covers 0.98 with
# Wilson and 0.81 with the percentile bootstrap; pass^4 at 8 tasks 0.93 against 0.84.
# None on a call keeps the general method.
BINARY_CI_METHOD: Final = "wilson"

# ---- measure (intervals that hold everywhere, failure table) ----
# The modified Wilson interval swaps Wilson's end nearest 0 (or 1) for the Poisson bound while at
# most this many successes (failures) sit there (Brown, Cai and DasGupta 2001, Statistical
# Science 16:101, section 4.1.1: x* = 2 up to n = 50, 3 up to 100; 3 everywhere keeps the
# interval monotone in n, at a little extra width for n <= 50).
SCORE_POISSON_MAX_X = 3

# The interval on pass@1 in pass_at: the clustered score interval on task pass rates, monotone in
# the passes (whileai/stats/score.py clustered_rate_interval). The t interval it replaces gave one
# pass in 32 rollouts a narrower upper end than zero passes and covered 0.88 at Beta(1, 9), k = 2,
# 16 tasks; measured grid in docs/measure.md. The interval on a paired gain is COMPARE_CI_METHOD.
PASS_CI_METHOD: Final = "score"

# The methods pass_at accepts for pass@1 and for pass^k / pass@k (score first: the default).
PASS_CI_METHODS = ("score", "t", "percentile", "bca")

# The interval on a paired gain in compare_runs and delta_report: the MOVER interval (Zou and
# Donner 2008, Statistics in Medicine 27:1693; Newcombe 1998, Statistics in Medicine 17:2635,
# method 10) from each side's clustered score interval on its mean (the one pass@1 reads, design
# effect floored at 1 / rollouts a task) and the correlation of the paired task values
# (whileai/stats/score.py paired_score_interval). The paired t interval it replaces has no width
# when every task moved alike: at 6 tasks x 2 rollouts from 0.02 to 0.95 it covered the gain 0.60
# (zero width in 40% of runs). Measured (tests/measure/test_compare_interval.py, 400 seeded runs a
# cell, 54 cells: tasks 6/12/30 x rollouts 2/4/8 x pass rates at the floor, middle, ceiling and
# spread over tasks): 0.943 to 1.000 (median 0.979, never zero width), the t interval 0.598 to
# 0.970 (19 cells under 0.93); table in docs/measure.md, "compare_runs". "t", "percentile" and
# "bca" stay selectable; CI_METHOD is unchanged for what else reads it.
# Now "sign_flip": the deciding sign-flip test's own confidence set for a shift (Garthwaite 1996,
# Biometrics 52:1387; whileai/stats/permutation.py sign_flip_interval), joined with the MOVER score
# interval away from zero, so the printed interval excludes zero exactly when the test rejects (the
# score interval alone disagreed with the verdict on up to 17.5% of evals and excluded zero on 6.5%
# of null ones at 150 tasks); coverage and agreement in tests/measure/test_compare_sign_flip.py.
COMPARE_CI_METHOD: Final = "sign_flip"

# The failure table's default dimension: the tool fault the rollout met (the landing page's Evals
# table of where the agent fails; the world fails on purpose, so faults are the first cut).
FAILURE_BY = ("fault_kind",)

# Groups kept per dimension in the failure table, most failures first (a table a person reads;
# convention, untested).
FAILURE_MAX_GROUPS = 50

# The group a missing value falls in (no fault met, no tool called, marker unset).
FAILURE_NONE_LABEL: Final = "(none)"
# ---- sandbox (CodeExec isolation) and optional timeouts ----
# CodeExec isolation: "auto" takes bubblewrap when it can run the interpreter unprivileged, else
# our own namespaces launcher, and refuses (SandboxError) when neither works; "none" only on
# purpose (docs/security.md).
CODE_ISOLATION: Final = "auto"
# The uid/gid the sandbox runs as when whileai runs as root: the kernel does not enforce
# RLIMIT_NPROC for root (kernel/fork.c, copy_process), so a fork bomb would not be capped.
# 65534 is "nobody" on Debian, Ubuntu and Fedora.
CODE_SANDBOX_UID = 65534
CODE_SANDBOX_GID = 65534
# Bytes of stdout + stderr the grader keeps; past it the program is killed and fails (the
# 300 MB print that took the grader from 14 to 615 MB; convention, untested).
CODE_MAX_OUTPUT_BYTES = 1 << 20
# RLIMIT_NPROC inside the sandbox: processes (threads count too) the sandbox's user may hold in
# its user namespace, the program itself included (bubblewrap's PID 1 counts too). Measured: a
# fork bomb stops at 31 forks (namespaces) or 30 (bwrap). Convention, untested beyond that.
CODE_MAX_PROCS = 32
# RLIMIT_FSIZE: the largest file the program may write, in MB (convention, untested).
CODE_FSIZE_MB = 64
# The sandbox's own /tmp (the work folder) is a tmpfs of at most this many MB, so a program
# cannot fill the host's disk (one call wrote 968 MB into the host's /tmp in 10 s). Convention:
# far above the few files a test writes, four times CODE_FSIZE_MB.
CODE_TMP_MB = 256
# Default wall-clock timeouts, so a hang no longer waits forever; None turns each off.
# A judge call (grade/run_judge): a model judge behind ENDPOINT_TIMEOUT_S with its retries
# stays far below it; CodeExec's own CODE_TIMEOUT_S is 10 s (convention, untested).
JUDGE_TIMEOUT_S = 300.0
# One agent turn (policy call) in simulate: a model call with retries at ENDPOINT_TIMEOUT_S
# fits well inside (convention, untested).
AGENT_TIMEOUT_S = 300.0
# One tool call in simulate: tools are local functions; a minute is generous (convention).
TOOL_TIMEOUT_S = 60.0

# --------------------------------------------------------------------------------------------
# ---- simulate: models named as strings, the simulated user, dynamic sampling ----
# --------------------------------------------------------------------------------------------

# Where a model named "provider/model" is served: provider -> (OpenAI-compatible base URL, the
# provider's own key variable or None for a local server that needs none, source). Every entry
# speaks POST {base_url}/chat/completions with "Authorization: Bearer <key>". Base URLs as each
# provider documents its OpenAI-compatible API (read 2026-12-01); local servers at their default
# loopback ports (vLLM `vllm serve` 8000, Ollama 11434, LM Studio 1234); base_url= overrides.
MODEL_PROVIDERS: dict[str, tuple[str, str | None, str]] = {
    "openai": ("https://api.openai.com/v1", "OPENAI_API_KEY", "platform.openai.com/docs/api-reference"),
    "anthropic": ("https://api.anthropic.com/v1", "ANTHROPIC_API_KEY",
                  "docs.anthropic.com, OpenAI SDK compatibility"),
    "together": ("https://api.together.xyz/v1", "TOGETHER_API_KEY", "docs.together.ai, OpenAI compatibility"),
    "fireworks": ("https://api.fireworks.ai/inference/v1", "FIREWORKS_API_KEY",
                  "docs.fireworks.ai, OpenAI compatibility"),
    "groq": ("https://api.groq.com/openai/v1", "GROQ_API_KEY", "console.groq.com/docs/openai"),
    "openrouter": ("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", "openrouter.ai/docs/quickstart"),
    "deepseek": ("https://api.deepseek.com/v1", "DEEPSEEK_API_KEY", "api-docs.deepseek.com"),
    "mistral": ("https://api.mistral.ai/v1", "MISTRAL_API_KEY", "docs.mistral.ai/api"),
    "vllm": ("http://127.0.0.1:8000/v1", None, "docs.vllm.ai, OpenAI-compatible server (vllm serve, port 8000)"),
    "ollama": ("http://127.0.0.1:11434/v1", None, "github.com/ollama/ollama docs/openai.md (port 11434)"),
    "lmstudio": ("http://127.0.0.1:1234/v1", None, "lmstudio.ai/docs, OpenAI compatibility (port 1234)"),
}

# The provider of a bare model name ("gpt-4o-mini"): OpenAI, except names Anthropic publishes
# ("claude-..."), which go to Anthropic (convention).
DEFAULT_PROVIDER: Final = "openai"

# User turns the simulated user may add after the opening message before the rollout ends
# (whileai 0.131 patience="normal" walked away after the second question; convention, untested).
MAX_USER_TURNS = 3
# The simulated user's own errors (docs/simulate.md, "The simulated user, measured"): the same line
# this many times is user.repeated (tau2-bench's user-simulator review counts a user stuck in a
# loop as the simulator's error, sierra-research/tau2-bench PR #392; three is the line),
# and each flag keeps this many characters of the user's turn around what raised it (convention).
USER_REPEAT_MIN = 3
USER_FRAGMENT_CHARS = 120
# A satisfied turn ("thanks, that's all") after an unanswered question is user.ended_early only when
# it is this short and names no identifier: a longer turn, or "Thanks, it's ORD-1234", answers it
# (convention; the hand-labelled set in tests/data/user_turns_labelled.jsonl checks it).
USER_SATISFIED_MAX_WORDS = 8

# Dynamic sampling (DAPO, Yu et al. 2025, section 3.2): rollouts an ask may reach while its group is
# all-pass or all-fail, as a multiple of repeats (DAPO over-samples until the batch is full of
# mixed groups; the cap bounds the cost of an ask that never mixes; convention, untested).
DYNAMIC_SAMPLING_CAP = 4

# ---- reliability (writes, store, keys, inputs) ----
# Temporary files a write makes beside its target are named ``.<name>.<pid>.<token>`` plus this
# suffix, so a later write to the same folder can recognise (and sweep) the ones a killed process
# left (docs/reliability.md, "Writes"; convention).
TEMP_SUFFIX: Final = ".wai-tmp"
# A leftover temporary file is swept only when the process that made it is gone and it has not
# been written for this many seconds: a live writer touches its file continuously, and the age
# keeps a writer on another machine sharing the folder safe from a pid that only looks dead here
# (convention, docs/reliability.md).
STALE_TEMP_AGE_S = 600.0
# Output suffixes a row writer accepts, and the format each means; any other suffix is refused
# rather than written as JSONL under a misleading name (docs/reliability.md, "Writes").
OUTPUT_SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".jsonl.gz": "jsonl", ".ndjson.gz": "jsonl",
                   ".parquet": "parquet", ".pq": "parquet"}
# The suffixes that mean a Parquet file, read or written (derived from OUTPUT_SUFFIXES).
PARQUET_SUFFIXES = tuple(suffix for suffix, kind in OUTPUT_SUFFIXES.items() if kind == "parquet")
# The DuckDB storage format a new store file is created with: v1.1.0 files open in every DuckDB
# release from 1.1 on, which is what users' notebooks and BI tools have (DuckDB docs, "Storage
# Versions and Format"; checked: a 2.0.x file written with it opens in duckdb 1.4.4 and 1.1.3).
STORE_STORAGE_VERSION: Final = "v1.1.0"
# The oldest duckdb that opens a store (pyproject.toml's floor): 1.0 cannot read the v1.1.0 storage
# format, and SET VARIABLE (docs/store.md, "The store outside wai") came in 1.1 (DuckDB 1.1.0
# release notes). make test-store-compat opens a store with duckdb<2.
DUCKDB_MIN_VERSION = (1, 1)
# Header and parameter names whose values an Endpoint never shows: any name containing one of
# these (case-insensitive), e.g. Authorization, api-key, x-auth-token, client_secret (OWASP
# Logging Cheat Sheet, "Data to exclude"; convention).
SECRET_NAME_PARTS = ("key", "auth", "token", "secret")
# ---- charts, notebook displays and progress ----
# Figures are Plotly figure JSON drawn by plotly.js-basic on the Runs page, so only scatter, bar
# and pie traces (the bundle's trace types, plotly.js dist README), 1 to 50 traces, at most
# 200 KB of JSON: the limits the tracked-runs API puts on a posted figure (docs/notebook.md).
FIGURE_TRACE_TYPES = ("scatter", "bar", "pie")
FIGURE_MAX_TRACES = 50
FIGURE_MAX_BYTES = 200_000
# Colours: the Okabe-Ito palette, readable with the common colour-vision deficiencies (Okabe and
# Ito 2008, "Color Universal Design"); good = bluish green, bad = vermillion, neutral = blue.
CHART_COLORS = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
CHART_GOOD: Final = "#009E73"
CHART_BAD: Final = "#D55E00"
CHART_NEUTRAL: Final = "#0072B2"
CHART_MUTED: Final = "#999999"
# Shaded bands (the difficulty band, the noise band): translucent grey (convention).
CHART_BAND_FILL: Final = "rgba(0, 114, 178, 0.12)"
# Figure size in pixels: fits a notebook cell and a Runs-page grid column (convention).
CHART_WIDTH = 640
CHART_HEIGHT = 380
# Plot margins in pixels (left, right, top for the title, bottom for the axis title; convention).
CHART_MARGIN = {"l": 60, "r": 20, "t": 60, "b": 50}
# Bins of the per-task difficulty histogram over [0, 1]: ten 10-point bins, so the 20-80% band's
# edges fall on bin edges (Lambert 2025, chapter Reasoning, for the band).
DIFFICULTY_BINS = 10
# Points on a power or sizing curve against n_tasks (convention: smooth at chart width).
CURVE_POINTS = 60
# Rows of .df an HTML display of a data object shows, and the longest cell text (convention).
DISPLAY_ROWS = 5
DISPLAY_CELL_CHARS = 80
# Longest plain repr of a report: one line (convention).
REPR_CHARS = 160
# Progress bars (tqdm.auto) start at these sizes (convention, the thresholds the hand-written lines
# used): every simulation (an agent call is slow), 1,000 judged rows (a fast judge finishes sooner
# than a bar draws), and 4 x CHUNK_ROWS rows for export, decontamination and store hashing.
PROGRESS_MIN_ROLLOUTS = 1
PROGRESS_MIN_JUDGE_ROWS = 1000
PROGRESS_MIN_ROWS = 4 * 65_536
# ---- train (your own GPU, through TRL) ----
from collections.abc import Mapping  # noqa: E402
from types import MappingProxyType  # noqa: E402
from typing import Any  # noqa: E402

# Fewest tasks with both a pass and a fail a grouped method (GRPO, DPO, reward model) should learn
# from before train warns (whileai 0.131 TRAIN_MIN_MIXED_TASKS; convention, untested).
TRAIN_MIN_MIXED_TASKS = 32

# LoRA rank and alpha (Hu et al. 2021, LoRA, arXiv:2106.09685, section 4.1: r in 1..64 works;
# alpha = 2r is the common choice; whileai 0.131 TRAINING_LORA_RANK / _ALPHA).
TRAINING_LORA_RANK = 16
TRAINING_LORA_ALPHA = 32

# SFT epochs when epochs=None (Lambert et al. 2024, Tulu 3, arXiv:2411.15124, SFT recipe: 2 epochs).
TRAINING_SFT_EPOCHS = 2

# Optimizer steps for GRPO, DPO and the reward model when steps=None (convention, untested: a
# short run a person can watch end to end; the knob's range allows far more).
TRAINING_STEPS = 200

# Learning rate when learning_rate=None: LoRA's best rate sits about ten times the full
# fine-tuning one (Schulman et al. 2025, "LoRA Without Regret", Thinking Machines Lab), so ten
# times the cited paper's full-weight rate: SFT 5e-6 (Tulu 3), DPO 5e-7 (Tulu 3 DPO), GRPO 1e-6
# (Shao et al. 2024, DeepSeekMath, arXiv:2402.03300, section 4.2), reward model 3e-6
# (Ouyang et al. 2022, InstructGPT, arXiv:2203.02155, appendix C.2, 6B RM 9e-6 rounded down).
TRAINING_LORA_LR_FACTOR = 10.0

# Every training knob: the range it is accepted in and the value the cited paper used; a value
# outside the range is refused with the reference. None keeps the trainer's default. Sources:
# DeepSeekMath GRPO (arXiv:2402.03300, section 4.2: 64 samples a question, lr 1e-6, KL 0.04,
# max length 1024); DPO (Rafailov et al. 2023, arXiv:2305.18290, section 6: beta 0.1); DAPO
# (Yu et al. 2025, arXiv:2503.14476: token-level loss, overlong completions masked, sampling
# temperature 1.0); Tulu 3 (arXiv:2411.15124: SFT 2 epochs at 5e-6, DPO at 5e-7).
TRAINING_KNOBS: Mapping[str, Mapping[str, Any]] = MappingProxyType({
    "epochs": MappingProxyType({"lo": 1, "hi": 20, "paper": 2, "source": "Tulu 3, arXiv:2411.15124 (SFT)"}),
    "steps": MappingProxyType({"lo": 1, "hi": 1_000_000, "paper": None,
                               "source": "no paper value: steps scale with the set (TRAINING_STEPS when None)"}),
    "generations": MappingProxyType({"lo": 2, "hi": 256, "paper": 64,
                                     "source": "DeepSeekMath GRPO, arXiv:2402.03300 section 4.2"}),
    "learning_rate": MappingProxyType({"lo": 1e-8, "hi": 1e-2,
                                       "paper": MappingProxyType({"sft": 5e-6, "dpo": 5e-7, "grpo": 1e-6, "rm": 3e-6}),
                                       "source": "Tulu 3 (SFT, DPO), DeepSeekMath (GRPO), InstructGPT (RM); full weights"}),
    "beta": MappingProxyType({"lo": 0.0, "hi": 1.0, "paper": MappingProxyType({"dpo": 0.1, "grpo": 0.04}),
                              "source": "DPO arXiv:2305.18290 section 6; DeepSeekMath KL coefficient"}),
    "max_completion_length": MappingProxyType({"lo": 1, "hi": 32_768, "paper": 1024,
                                               "source": "DeepSeekMath GRPO, arXiv:2402.03300 section 4.2"}),
    "temperature": MappingProxyType({"lo": 0.0, "hi": 2.0, "paper": 1.0, "source": "DAPO, arXiv:2503.14476"}),
    "loss_type": MappingProxyType({"choices": MappingProxyType({"grpo": ("grpo", "dr_grpo", "dapo", "bnpo"),
                                                                "dpo": ("sigmoid", "ipo", "hinge", "robust")}),
                                   "paper": MappingProxyType({"grpo": "dapo", "dpo": "sigmoid"}),
                                   "source": "DAPO token-level loss, arXiv:2503.14476; DPO sigmoid loss"}),
    "truncated": MappingProxyType({"choices": MappingProxyType({"grpo": ("mask", "keep")}),
                                   "paper": MappingProxyType({"grpo": "mask"}),
                                   "source": "DAPO overlong filtering, arXiv:2503.14476"}),
})

# Tiny local model for smoke runs (--tiny): hidden size and layers (convention: small enough
# for a few CPU steps a second).
TRAIN_TINY_HIDDEN = 32
TRAIN_TINY_LAYERS = 2

# Where a run's adapter and checkpoints go when output=None (convention).
TRAIN_OUTPUT_DIR: Final = "wai-train"

# Holdout sampling, for the monitor and the held-out delta: tasks sampled (MONITOR_N_PROMPTS),
# rollouts a task (MONITOR_K), new tokens a completion, and the sampling temperature / top_p
# (whileai 0.131 MONITOR_N_PROMPTS 32, MONITOR_K 4, MONITOR_MAX_NEW_TOKENS 256,
# MONITOR_SAMPLE_TEMPERATURE 0.8, MONITOR_SAMPLE_TOP_P 0.95; convention, untested).
MONITOR_N_PROMPTS = 32
MONITOR_K = 4
MONITOR_MAX_NEW_TOKENS = 256
MONITOR_SAMPLE_TEMPERATURE = 0.8
MONITOR_SAMPLE_TOP_P = 0.95

# HackMonitor: holdout every MONITOR_EVERY steps; alarms read the last MONITOR_WINDOW holdout
# points; divergence needs proxy up by MONITOR_DELTA over the window; length needs holdout
# completions longer by MONITOR_LENGTH_PCT (Singhal et al. 2023, "A Long Way to Go",
# arXiv:2310.03716: length is the first thing a proxy reward pays for; the 25% edge is whileai
# 0.131's); the recent-completion buffer holds MONITOR_BUFFER rows; the scan waits for
# MONITOR_SCAN_ROWS graded ones (at 16 a chance feature cleared the floor on the tiny GRPO
# recipe's clean judge; 48 did not) and scans features present on at least MONITOR_SCAN_MIN;
# its shuffle floor uses MONITOR_SCAN_PERMUTATIONS (whileai 0.131 values otherwise; convention).
MONITOR_EVERY = 10
MONITOR_WINDOW = 3
MONITOR_DELTA = 0.1
MONITOR_LENGTH_PCT = 0.25
MONITOR_BUFFER = 512
MONITOR_SCAN_MIN = 8
MONITOR_SCAN_ROWS = 48
MONITOR_SCAN_PERMUTATIONS = 50

# A trained reward model's judge threshold when the result carries none: the midpoint of a
# Bradley-Terry score's sigmoid (convention).
REWARD_MODEL_THRESHOLD = 0.5

# The behavior a training run's held-out pass rate is posted on as a score (run.score), so the brief
# and the verdicts read what the trainer measured (docs/platform.md, "Report a training run").
HOLDOUT_BEHAVIOR: Final = "holdout"
# The behavior a trained reward model's held-out pair accuracy is posted on: a different quantity
# from a policy's held-out pass rate, so never mixed into the same behavior's versions (convention).
REWARD_MODEL_HOLDOUT_BEHAVIOR: Final = "holdout_pair_accuracy"

# Turns a graded row's transcript keeps (whileai's cap: the API's caps are per text, and a 20,000-row
# score of long agent loops would otherwise hold millions of turns); past it the middle turns go,
# the first and last kept, as cut_middle does for one text.
TRANSCRIPT_MESSAGES_MAX = 64

# GRPO prompts per optimizer step (each with `generations` completions) when not given
# (convention, untested: TRL's batch must be a multiple of the group size).
TRAIN_PROMPTS_PER_STEP = 4

# ---- platform (tracked runs, verdicts, the brief, wai server) ----
# What a row and a score card can hold: the hosted API's caps (whileai 0.131 whileai.platform,
# mirroring the API's evalrows limits; docs/platform.md, "What a row can hold"). Text past a cap is
# cut in the middle, keeping head and tail, with a "[... N chars cut ...]" marker.
ROW_TEXT_MAX = 2000
EXAMPLE_WHY_MAX = 400
EXAMPLE_TEXT_MAX = 1200
RUBRIC_MAX = 4000
EXAMPLES_MAX = 20
ROWS_PER_CALL = 500
ROWS_PER_SCORE = 20_000
TAGS_MAX = 8
TAG_KEY_MAX = 32
TAG_VALUE_MAX = 80
# The 20-row sample a score card shows when examples= is not given: the first 14 failures and the
# first 6 passes of rows= (whileai 0.131 run.score).
SAMPLE_FAILURES = 14
SAMPLE_PASSES = 6
# Markdown caps: a run note, each experiment field (whileai 0.131 run.note / tracked.experiment).
NOTE_MAX = 8192
EXPERIMENT_FIELD_MAX = 4096
# Figures: name pattern, JSON size, trace count and trace types the page can draw (plotly.js-basic
# ships scatter, bar and pie); layout keys dropped before posting (whileai 0.131 tracked.figure).
# (FIGURE_MAX_BYTES, FIGURE_MAX_TRACES and FIGURE_TRACE_TYPES are the notebook section's, above.)
FIGURE_NAME_PATTERN = r"^[a-z0-9][a-z0-9-]{0,39}$"
FIGURE_DROPPED_LAYOUT = ("images", "updatemenus", "sliders", "template")
# A behavior name is the platform's identifier rule: lower-case letters, digits and '_', starting
# with a letter, at most 64 characters ('refund_policy', not 'refund policy'). Convention of the
# hosted API (whileai 0.131 Behavior).
BEHAVIOR_NAME_PATTERN = r"^[a-z][a-z0-9_]{0,63}$"
# Log points: at most this many a call (the API's cap; whileai 0.131 TRAINING_MAX_BATCH), and the
# client flushes its buffer every LOG_FLUSH_EVERY points or LOG_FLUSH_SECONDS seconds (whileai
# 0.131 TRAINING_FLUSH_EVERY / TRAINING_FLUSH_SECONDS). The buffer keeps at most LOG_BUFFER_MAX
# unsent points while the server is down, dropping the oldest (convention, untested).
LOG_POINTS_PER_CALL = 500
LOG_FLUSH_EVERY = 25
LOG_FLUSH_SECONDS = 15.0
LOG_BUFFER_MAX = 100_000
# The verdict's evidence rules: a score over fewer than 50 asks, or a judge whose agreement with
# people is under 0.80 (or unmeasured), reads "unproven:" (whileai 0.131 verdict; the 0.80 floor is
# judge_trust's agreement floor). A judge whose short/long pass-rate gap within one human label
# exceeds 0.10 fails the length-bias check (convention, untested).
VERDICT_MIN_N = 50
VERDICT_MIN_AGREEMENT = 0.8
LENGTH_BIAS_MAX = 0.10
# A harness sweep's variant label, prompt@model, is at most this long (the Runs page's axis label;
# convention).
SWEEP_LABEL_MAX = 64
# The brief lists at most this many next steps (whileai 0.131 brief: "three at most").
BRIEF_MAX_ITEMS = 3
# What a person cannot read yet is grouped by kind, naming the first few of each (convention).
CANNOT_READ_SHOWN = 3
# wai server: where it listens (loopback unless --host says otherwise; 8484 is whileai 0.131's
# local port), the saved login, and the header every request carries (whileai 0.131 X-Api-Key).
SERVER_HOST: Final = "127.0.0.1"
SERVER_PORT = 8484
CREDENTIALS_PATH: Final = "~/.whileai/credentials.json"
API_KEY_ENV: Final = "WHILEAI_API_KEY"
BASE_URL_ENV: Final = "WHILEAI_BASE_URL"
API_KEY_HEADER: Final = "X-Api-Key"
# The largest request body wai server reads, in bytes; a larger one answers 413 before it is parsed
# (a 100 MB run record took the server from 183 to 667 MB). A 500-row call at the text caps
# (ROWS_PER_CALL x (2 x EXAMPLE_TEXT_MAX + EXAMPLE_WHY_MAX + TAGS_MAX x (TAG_KEY_MAX + TAG_VALUE_MAX)),
# about 1.9 M characters, under 8 MB even at 4 bytes a character) fits well under it; no route
# needs more than 25 MB (convention).
SERVER_BODY_MAX_BYTES = 25 * 1024 * 1024
# JSON nesting the server accepts in a body (Python's json raises RecursionError near 1,000; every
# body model nests under 10 deep; convention).
SERVER_JSON_MAX_DEPTH = 64
# Host names wai server answers besides the address it is bound to (DNS rebinding: a page on
# another name that resolves to 127.0.0.1 must not reach it; RFC 9110 section 7.2). Loopback names
# are allowed when it listens on loopback; --allow-host adds more.
SERVER_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
# Seconds wai server keeps the store open after its last request before it closes the file for
# other processes (the CLI waits at most this long after the requests in flight). Closing after
# every request made each sequential call reopen and checkpoint the file: 250-390 ms a call against
# 50-100 ms held (create_app over TestClient, 200 log calls, loaded 2-core machine). Convention.
SERVER_STORE_IDLE_S = 1.0
# The account a store's records belong to when no API key is in use (one person, one laptop).
LOCAL_ACCOUNT: Final = "local"
# Seconds an HTTP call to wai server waits before it counts as failed (whileai 0.131
# PLATFORM_REQUEST_TIMEOUT_S is 120 for the hosted API; a local server answers in milliseconds, so
# 30 s is generous. Convention).
PLATFORM_TIMEOUT_S = 30.0
# GPU list prices per hour, USD: what a training run's cost_usd estimates (seconds / 3600 x rate,
# to the cent). Modal's on-demand list price, read on GPU_PRICE_SOURCE's day (whileai 0.131
# GPU_USD_PER_HOUR). A GPU not here leaves cost_usd None and the basis says so.
# Only the rates checked against that page are listed; add a GPU with its own source line.
GPU_USD_PER_HOUR = {"A10G": 1.10, "L40S": 1.95, "H100": 3.95}
GPU_PRICE_SOURCE: Final = "modal.com/pricing 2026-09-20"
SECONDS_PER_HOUR = 3600
# ---- interop (verifiers environments, SQL over the store, CLI exit codes) ----
# The verifiers releases an exported environment declares in its pyproject: the ones
# `make test-verifiers` loads and evaluates it with (0.3.1, the last of the 0.3 line, through
# vf.load_environment; 0.4.0, the verifiers.v1 Taskset loader), up to the next minor release
# (docs/export.md, "A verifiers environment for GRPO").
ENV_VERIFIERS_RANGE: Final = ">=0.3.1,<0.5"
# Suffixes a result table (per-task stats, a `wai sql` answer) may be written to, and the format
# each means; any other is refused (docs/cli.md, "Output formats").
FRAME_SUFFIXES = {".csv": "csv", ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet",
                  ".pq": "parquet"}


# ---- performance: linear steps and bounded memory -------------------------------------------
# decontaminate's near-copy rule: an n-gram shared by more than this many eval texts (a template
# sentence) is "frequent"; pairs are found from the rare n-grams and bounded with the frequent
# ones before any is verified (docs/performance.md; a cost knob, not a statistic: the result is
# exact at every value; convention).
DECONTAM_RARE_FAN = 32

# ---- pages (the Runs page, sign-in, wai report) ----
# A version chart draws each behavior's newest this many versions, plus the served one and the
# candidate (the run table lists every run; a bar chart of 1,000 versions reads as none. Convention).
PAGE_VERSIONS_SHOWN = 30
# The training curve draws the newest this many runs that logged points (one colour each; the
# Okabe-Ito palette has 8, CHART_COLORS), each thinned to at most this many points per metric.
PAGE_CURVE_RUNS = 5
PAGE_CURVE_POINTS = 500
# The rows page's sample: the score card's 20 rows (whileai 0.131: "a sample of up to 20 graded rows").
ROWS_PAGE_SAMPLE = 20
# A prompt or reply longer than this many characters is folded (<details>) on the rows and diff
# pages, its first 120 characters in the summary: a page of 2,000 rows stays scannable (convention).
PAGE_LONG_TEXT_CHARS = 600
# Compare runs (GET /compare, the run explorer): at most this many runs side by side (one colour
# each would need more than CHART_COLORS' 8 long before; a config table past 20 columns reads as
# none. Convention), and a config value longer than this many characters is cut with an ellipsis.
COMPARE_RUNS_MAX = 20
COMPARE_VALUE_CHARS = 200
# The run explorer's search reads this many characters of a run's note; its smoothing slider goes
# from 0 (none) to this weight of an exponential moving average (TensorBoard's scalar smoothing,
# whose slider also stops short of 1, where the line would never move).
EXPLORE_NOTE_CHARS = 200
EXPLORE_SMOOTH_MAX = 0.99
# The session cookie the pages sign in with: HttpOnly, SameSite=Strict, a signed random session
# id (never the key). Eight hours, a working day (convention; Jupyter's cookie lasts the session).
SESSION_COOKIE: Final = "wai_session"
SESSION_MAX_AGE_S = 8 * 3600

# ---- hack_scan at scale (bounded memory, Ray) ----
# Seed of Polars' hash of the task key that picks the asks ranking hack_scan's vocabulary above
# HACK_VOCAB_SAMPLE_ROWS rows: whole asks by hash, so the same asks are chosen however the rows are
# ordered or partitioned (a local frame, chunks, Ray blocks). Any fixed value; convention.
HACK_VOCAB_HASH_SEED = 20_250_101

# ---- simulate on Ray (docs/scale.md, "Simulate on Ray") ----
# The rollouts are cut into parts of whole tasks; each part is one Ray task that runs the local
# engine and writes one Parquet file. At least this many parts per worker, so the progress bar
# moves and a slow part does not hold the run (convention, as Ray Data's blocks per CPU).
RAY_SIM_PARTS_PER_WORKER = 4
# And parts of at most about this many rollouts, so a worker's rows in memory stay bounded: one
# Arrow batch of the local engine (its _BATCH, 2048 rollouts; convention).
RAY_SIM_PART_ROLLOUTS = 2048
# CPUs Ray reserves for each part's task: one, as for any Ray task (Ray's default num_cpus=1).
RAY_SIM_TASK_CPUS = 1.0

# ---- select and export from a Parquet file: bounded reads -------------------------------------------
# Largest Parquet row group an export reads whole (each decoded once, then cut into CHUNK_ROWS
# chunks); larger ones are read a chunk at a time. 4 x CHUNK_ROWS keeps the block at a few hundred
# MB of conversations (about 1.2 KB a row in memory on the benchmark's rows, docs/performance.md).
EXPORT_BLOCK_ROWS = 4 * CHUNK_ROWS

# ---- reading JSONL projected (whileai/table/_jsonl_engine.py: DuckDB's JSON reader) ----
# Lines at the head of a JSONL file parsed in Python to learn which fields rows have: a wanted
# field they show is kept as a column even where every row holds null (as the full read keeps it);
# one they do not show is kept only where some row holds a value. A cost knob, not a statistic
# (convention; 1,024 lines cost about 10 ms).
JSONL_SCHEMA_HEAD_LINES = 1_024
# Longest JSONL line (one row) DuckDB's JSON reader takes in a projected read (its
# ``maximum_object_size``; DuckDB's own default is 16 MiB). A row past it is read by the
# line-by-line parser instead, so no row is refused for its size (convention: 64 MiB holds a
# conversation of some 60,000 turns).
JSONL_MAX_LINE_BYTES = 64 * 2**20
# Bytes of stdin copied at once to the file a projected read parses (convention: 16 MiB, a
# buffer under the allocator's 32 MiB mmap threshold is reused, not faulted in afresh).
JSONL_NATIVE_BLOCK_BYTES = 16 * 2**20

# ---- select from a Parquet file: fetching the kept rows ----------------------------------------------
# Rows of a row group decoded at once while select reads its kept rows' conversations: the read
# stops after the batch that holds the group's last kept row, so kept rows near the start of a
# group cost a fraction of it. A cost knob, not a statistic (the same rows whatever the size).
# On the 1M-row benchmark file (125,000-row groups) rl's fetch took 0.08 / 0.1 / 0.15 CPU s at
# 4,096 / 16,384 / 65,536 rows and sft's was within noise (1.2 s) at all three (docs/performance.md).
FETCH_BATCH_ROWS = 16_384
# Threads that decode a Parquet file's conversations while select reads them (the decision read's
# tool calls, then the kept rows and every message's role): the row groups are split into this many runs of
# consecutive groups, each read by a reader of its own (pyarrow releases the GIL while it
# decompresses and decodes; the conversations are one column and most of the bytes, so pyarrow's
# own threads, which split a read by column, leave a core idle). Two keep both cores of a small
# machine busy: sft's fetch of 1,000 rows scattered over the 1M-row benchmark file's 8 groups went
# from 1.34-1.45 s to 0.83-0.94 s, its decision read from 0.57-0.69 s to 0.42-0.47 s
# (docs/performance.md, "Fifth pass"). Memory grows by one batch of FETCH_BATCH_ROWS per thread.
# A cost knob: the same rows at any count.
FETCH_THREADS = 2
# The one switch of the read path's speed paths (docs/performance.md has each one's measured gain;
# the same rows, reports and exported bytes either way: tests/table/test_source_same_rows.py,
# test_columnar.py, test_jsonl_fast.py). Read at each call. On:
# - a Parquet file (a JSONL file spooled to one) is read decision columns first (tool calls reduced
#   to their names and arguments) and the kept rows' whole conversations last (whileai/table/
#   _source.py), instead of table.frame of every row: what keeps select under 2 GB at 1M rows;
# - nested columns (conversations, 0.131 steps, json columns given as structs) are normalised with
#   Polars expressions (whileai/table/_columnar.py) where their dtype allows: table.frame of 100k
#   0.131-shaped Parquet rows 45 -> 3 CPU s (benchmarks/bench_nested.py);
# - a JSONL batch in a known shape is read columnar (whileai/table/_jsonl_full.py: pyarrow's JSON
#   reader, DuckDB's JSON functions), instead of json.loads and the normaliser per row: select from
#   100k-row JSONL 38-45 -> 12-18 CPU s (benchmarks/bench_real.py).
# False runs the plain path (whole reads, the per-row normaliser) everywhere.
FAST_READ = True

# ---- export: JSON lines encoded by shape (whileai/exporters/_rows.py, docs/performance.md) ----
# Most patterns of null row keys in one chunk written as one json_encode each (a struct of the
# non-null keys); a chunk with more goes through one encode and the null-key pattern pass. A cost
# knob, not a statistic: both write the same bytes (convention; rows carry a handful of patterns).
EXPORT_NULL_SHAPES = 16
# Samples of up to this many messages have their loss mask told apart by one int64 (a bit per
# message, the length beside it), so each distinct mask is written once; 48 bits keep the key
# exact in the float64 sum that builds it (53-bit mantissa).
EXPORT_MASK_BITS = 48
# Up to this many distinct loss masks in a chunk, each is written once and gathered; more are
# written by numpy into one buffer (the same text; convention).
EXPORT_MASK_KINDS = 4096


# ---- the Student-t quantile without scipy (whileai.stats.intervals.t_quantile) -------------------
#: Degrees of freedom up to which the t quantile is solved on the exact finite sums of Abramowitz
#: and Stegun (1964) 26.7.3-4; above, the Cornish-Fisher expansion 26.7.5 to 1/nu^4 is used, whose
#: first omitted term is below 3e-14 relative there up to the 0.999999 level (measured against
#: scipy.special.stdtrit in tests/stats/test_t_quantile.py).
T_QUANTILE_SERIES_MAX_DF = 2000
#: Newton steps at most on that sum: from the Cornish-Fisher start it converges in two to five
#: (six at nu = 3 and level 0.9999); the cap only bounds a pathological level.
T_QUANTILE_NEWTON_STEPS = 60


# ------------------------------------------------------------------------------------------
# JSONL spooled to a temporary Parquet file (select and export from a JSONL path, issue 20)
# ------------------------------------------------------------------------------------------

# Compression of the temporary Parquet file a JSONL input is spooled to (whileai/table/_spool.py):
# written once and read once or twice, on local disk, so pyarrow's LZ4 codec (0.30 s to write
# 100k OpenAI-shaped rows against zstd's 0.34 s, 4 MB against 3, measured on the benchmark file
# of benchmarks/bench_files.py) rather than the zstd the files we keep use.
SPOOL_COMPRESSION: Final = "lz4"

# Rows from which a Parquet file in another writer's shape (whileai 0.131's rows through pyarrow:
# tool-call arguments as structs, steps a list of structs) is spooled to whileai's shape before a
# step reads it decision columns first (whileai/table/_spool.py). Below it the whole read is kept:
# measured on the generator's Parquet (benchmarks/bench_real.py, genpq), the whole read at 1M rows
# peaks near 4 GB, while at 100k rows spooling costs more CPU than it saves memory (docs/performance.md).
SPOOL_PARQUET_MIN_ROWS: Final = 250_000
