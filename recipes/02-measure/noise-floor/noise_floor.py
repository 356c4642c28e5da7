"""The noise floor, offline: how far the same eval of the same model moves between re-runs.

Three evaluations of one model on the same 120 tasks (lineage.eval_run 0, 1, 2). eval_variance
reads the re-run standard deviation; noise_band says how far two means can drift apart from
re-running alone; a before/after gain inside that band is not a gain.

Run: python recipes/02-measure/noise-floor/noise_floor.py
"""

import polars as pl

import whileai as wai
from whileai.testing import rollout_table

reruns = pl.concat([rollout_table(120, 4, seed=1, eval_run=r, replica=r) for r in range(3)])
variance = wai.eval_variance(reruns)
print(variance)
print()
for runs in (1, 3):  # eval runs a side: averaging re-runs narrows the band by sqrt(runs)
    band = wai.noise_band(variance.run_std, runs, runs, df=variance.n_runs - 1)
    print(f"{runs} run(s) a side: two means of this model move up to {band:.3f} apart from re-running alone")
