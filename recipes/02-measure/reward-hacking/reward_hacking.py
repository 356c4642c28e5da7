"""Reward hacking, offline: a judge that pays for a word, and the scan that names it.

A planted shortcut ("certainly") tracks the reward within each ask. hack_scan centres reward and
every candidate feature within ask, ranks them, floors them against shuffled reward, and, told what
the reward should track (endorsed=), says what the policy would learn instead. select carries the
same scan, and the publish gate reports it.

Run: python recipes/02-measure/reward-hacking/reward_hacking.py
"""

import whileai as wai
from whileai.testing import rollout_table

# 200 asks x 8 rollouts; the reply text does not state the outcome (outcome_signal=0.5), but the
# word "certainly" appears on 85% of passing and 15% of failing rollouts within each ask.
rows = rollout_table(200, 8, seed=7, shortcut="certainly", shortcut_strength=0.85, outcome_signal=0.5)

scan = wai.hack_scan(rows, endorsed=["tool", "grounding"])
print(scan)
print()
print("pooled correlations (what select reports at HACK_THRESHOLD):")
print(wai.reward_correlations(rows))
print()
selection = wai.select(rows, mode="rl", endorsed=["tool", "grounding"])
print(selection.report)
