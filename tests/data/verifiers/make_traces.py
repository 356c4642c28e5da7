"""Write real vf-eval output for the reader tests: verifiers 0.4.0 ``traces.jsonl`` and 0.3.1 ``results.jsonl``.

    make test-verifiers   # once: installs .venv-verifiers (0.4.0) and .venv-verifiers-0.3 (0.3.1)
    .venv/bin/python tests/data/verifiers/make_traces.py tests/data/verifiers [WORK] [v04|v03]

Exports the order environment of ``tests/exporters/test_verifiers.py`` (three order tasks whose
judge pays 0.75 for a reply built on a tool result, else 0.25, and a fourth task), then runs each
release's own ``vf-eval`` offline against the loopback scripted server
(``tests/exporters/_fake_openai.py``): 4 tasks, 2 rollouts each. The server answers the fourth
task's ask with HTTP 500, so its rollouts end in a provider error. The run folders are copied
under ``v04/`` and ``v03/`` without vf-eval's logs; machine paths and ports are left as written.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from tests.exporters import test_verifiers as proof  # noqa: E402
from tests.exporters._fake_openai import FakeOpenAI  # noqa: E402
from whileai.exporters import export_environment  # noqa: E402

BROKEN = "Cancel order C-3."


def main(out: Path, work: Path, only: str | None = None) -> None:
    lib = work / "lib"
    lib.mkdir(parents=True, exist_ok=True)
    (lib / "vf_proof_judges.py").write_text(textwrap.dedent(proof.JUDGE))
    (lib / "vf_proof_tools.py").write_text(textwrap.dedent(proof.LIVE_TOOL))
    sys.path.insert(0, str(lib))
    import vf_proof_tools

    rows = proof._rows()
    rows += [{**rows[0], "scenario_id": "cancel", "prompt": BROKEN, "rollout_index": k, "reward": float(k),
              "messages": [{"role": "user", "content": BROKEN}, {"role": "assistant", "content": "?"}]}
             for k in range(2)]
    export_environment(rows, work / "order_env", reward="vf_proof_judges:judge", holdout=0.0,
                       tools=[*proof.TOOLS, vf_proof_tools.check_stock], system_prompt="You help with orders.")
    for version, venv, folder in (("0.4.0", ROOT / ".venv-verifiers", "v04"), ("0.3.1", ROOT / ".venv-verifiers-0.3", "v03")):
        if only is not None and folder != only:
            continue
        env = proof._env(venv.resolve(), work / "order_env", lib)
        runs = work / f"runs-{folder}"
        with FakeOpenAI(proof.SCRIPT, fail=(BROKEN,)) as server:
            if version == "0.4.0":
                cmd = [str(venv / "bin" / "vf-eval"), "order_env", "--model", "fake-model",
                       "--client.base-url", server.base_url, "--client.api-key-var", "FAKE_OPENAI_KEY",
                       "--env.agent.runtime.type", "subprocess", "-n", "4", "-r", "2", "--push", "false",
                       "--output-dir", str(runs)]
            else:
                cmd = [str(venv / "bin" / "vf-eval"), "order_env", "-m", "fake-model", "-b", server.base_url,
                       "-k", "FAKE_OPENAI_KEY", "-n", "4", "-r", "2", "-s", "-o", str(runs)]
            proc = subprocess.run(cmd, env=env, cwd=work, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise SystemExit(f"vf-eval {version} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        print(proc.stdout[-1500:])
        target = out / folder
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(runs, target, ignore=shutil.ignore_patterns("logs", "*.log"))


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve(), Path(sys.argv[2] if len(sys.argv) > 2 else "/tmp/wai-vf-fixture").resolve(),
         sys.argv[3] if len(sys.argv) > 3 else None)
