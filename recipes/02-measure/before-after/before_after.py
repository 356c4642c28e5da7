"""Before and after, offline: is the gain real, and is it bigger than re-running the eval?

Two arms on the same 120 tasks, each evaluated three times (lineage.eval_run), so delta_report
reads the eval's own re-run noise from the rows and uses the t quantile at runs - 1 degrees of
freedom. holdout_size then says how many tasks a 5-point gain needs.

Run: python recipes/02-measure/before-after/before_after.py
"""

import polars as pl

import whileai as wai
from whileai.testing import rollout_table

before = pl.concat([rollout_table(120, 4, seed=1, eval_run=r, replica=r, policy_version="base") for r in range(3)])
after = pl.concat([rollout_table(120, 4, seed=1, shift=0.08, eval_run=r, replica=r + 3, policy_version="sft-v1") for r in range(3)])

print(wai.pass_at(before))
print(wai.pass_at(after))
print()
report = wai.delta_report(before, after, target="pass_at_1", must_not_regress=["honest_claims"])
print(wai.format_delta_report(report))
print()
print(wai.holdout_size(0.05, before=before, after=after))
