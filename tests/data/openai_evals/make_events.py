"""Write an openai/evals event log with evals' own LocalRecorder (no model call)."""
import os
import sys

os.environ.setdefault("OPENAI_API_KEY", "sk-offline-not-used")
import evals.record as rec
from evals.base import RunSpec
from evals.record import LocalRecorder

spec = RunSpec(completion_fns=["dummy-completion-fn"], eval_name="arithmetic.dev.v0", base_eval="arithmetic",
               split="dev", run_config={"eval_spec": {"cls": "evals.elsuite.basic.match:Match"}, "seed": 20220722},
               created_by="whileai-fixture", run_id="260101000000ABCDEFGH", created_at="2026-01-01 00:00:00")
path = sys.argv[1]
recorder = LocalRecorder(path, spec)
samples = [("2+2=", "4", "4"), ("3*3=", "9", "6"), ("10-7=", "3", "3")]
for i, (q, want, got) in enumerate(samples):
    sid = f"arithmetic.dev.{i}"
    with recorder.as_default_recorder(sid):
        prompt = [{"role": "system", "content": "Answer with the number only."}, {"role": "user", "content": q}]
        rec.record_sampling(prompt=prompt, sampled=[got], model="dummy")
        rec.record_match(got == want, expected=[want], picked=got, sampled=got)
recorder.record_final_report({"accuracy": 2 / 3})
recorder.flush_events()
