"""Two versions tracked in a local store (whileai.platform, no server), scored on one behaviour, and the verdict a person reads first.

The program of docs/guides/platform.md, which shows it and what it printed when the site was built.

Run: python recipes/06-guides/platform/tracked_runs.py
"""

import whileai.platform as wp

tracked = wp.track({"name": "refund-agent", "model": "Qwen/Qwen3-4B", "instructions": "Refund orders.",
                    "tools": []}, name="refund-agent", store="runs.duckdb")
refunds = wp.Behavior(name="refunds", rubric="Refunds only after looking the order up.",
                      graded_by="program", test_version="refunds-holdout@1")
for version, score in (("base", 0.62), ("sft-v1", 0.73)):
    run = tracked.run(version)
    run.score(refunds, score, ci=0.05, n=120, fraction=True)
    run.finish(say=False)
print(tracked.verdict("refunds"))
