"""The proof against the real consumer: an exported environment loaded and evaluated by verifiers.

``make test-verifiers`` installs verifiers from PyPI into its own virtual environments (0.4.0,
the ``verifiers.v1`` Taskset loader, and 0.3.1, the last of the 0.3 line) and names them in
``WAI_VERIFIERS_VENVS``. Each test exports an environment, loads it with verifiers' own loader,
and runs ``vf-eval`` for a few rollouts against a scripted OpenAI-compatible server on a free
127.0.0.1 port. The judge pays 0.75 for a reply built on a real tool result and 0.25 otherwise, so
a reward of 0.75 can only come from our judge having seen our tool's answer. Each vf-eval
command is the one the exported README gives, and the 0.4 run's ``traces.jsonl`` is read back by
``wai pass-at`` (the round trip export -> vf-eval -> wai). Without the
variable (a plain ``make test``) the tests skip and say how to run them.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.exporters._fake_openai import FakeOpenAI
from whileai.exporters import export_environment

VENVS = dict(item.split("=", 1) for item in os.environ.get("WAI_VERIFIERS_VENVS", "").split() if "=" in item)
EVAL_TIMEOUT_S = 420

TOOLS = [
    {"type": "function", "function": {"name": "get_order", "description": "Look up an order by id.",
                                      "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                                                     "required": ["order_id"]}}},
]
JUDGE = '''
def judge(row):
    """0.75 when the final reply quotes a tool result that is not an error, else 0.25."""
    text = row.get("final_text") or ""
    tools = [m for m in row["messages"] if m.get("role") == "tool"]
    ok = text.startswith("resolved:") and "error" not in text and bool(tools)
    return {"reward": 0.75 if ok else 0.25}
'''
LIVE_TOOL = '''
import json


def check_stock(sku: str) -> str:
    """Stock for one item (a live tool: the environment runs it)."""
    return json.dumps({"live": True, "sku": sku, "in_stock": 3})
'''


def _rows() -> list[dict]:
    """Three tasks, two rollouts each (one pass, one fail: inside the band), each with one recorded call."""
    rows = []
    for t in range(3):
        for k in range(2):
            rows.append({
                "scenario_id": f"order-{t}", "rollout_index": k, "prompt": f"Where is order A-{t}?", "reward": float(k),
                "messages": [
                    {"role": "user", "content": f"Where is order A-{t}?"},
                    {"role": "assistant", "content": None,
                     "tool_calls": [{"id": "c0", "name": "get_order", "arguments": json.dumps({"order_id": f"A-{t}"})}]},
                    {"role": "tool", "tool_call_id": "c0", "name": "get_order",
                     "content": json.dumps({"status": "shipped", "token": f"tok-{t}"})},
                    {"role": "assistant", "content": "It shipped."},
                ]})
    return rows


# the scripted policy: order-0 and order-1 ask for the recorded call, order-2 asks for another order
# (the replay answers with an error), and an extra ask reaches the live tool
SCRIPT = {
    "Where is order A-0?": {"name": "get_order", "arguments": {"order_id": "A-0"}},
    "Where is order A-1?": {"name": "get_order", "arguments": {"order_id": "A-1"}},
    "Where is order A-2?": {"name": "get_order", "arguments": {"order_id": "Z-9"}},
}
EXPECTED = {"order-0": 0.75, "order-1": 0.75, "order-2": 0.25}


def _venv(version: str) -> Path:
    if not VENVS:
        pytest.skip("verifiers is not installed for this run: `make test-verifiers` installs it into its own venv")
    path = VENVS.get(version)
    if path is None or not (Path(path) / "bin" / "vf-eval").exists():
        pytest.skip(f"verifiers {version} could not be installed into {path!r} (no registry?); its proof is skipped")
    return Path(path).resolve()


@pytest.fixture()
def exported(tmp_path, monkeypatch):
    """The environment folder and the folder holding the judge and live tool modules."""
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "vf_proof_judges.py").write_text(textwrap.dedent(JUDGE))
    (lib / "vf_proof_tools.py").write_text(textwrap.dedent(LIVE_TOOL))
    monkeypatch.syspath_prepend(str(lib))
    import vf_proof_tools

    rows = _rows()
    rows.append({**rows[0], "scenario_id": "stock", "prompt": "Is SKU-7 in stock?", "reward": 1.0,
                 "messages": [{"role": "user", "content": "Is SKU-7 in stock?"}, {"role": "assistant", "content": "?"}]})
    rows.append({**rows[-1], "rollout_index": 1, "reward": 0.0})
    report = export_environment(rows, tmp_path / "order_env", reward="vf_proof_judges:judge", holdout=0.0,
                                tools=[*TOOLS, vf_proof_tools.check_stock], system_prompt="You help with orders.")
    spec = json.loads((tmp_path / "order_env" / "order_env" / "spec.json").read_text())
    assert spec["tool_refs"] == {"check_stock": "vf_proof_tools:check_stock"}
    assert report["train"] == 4
    return tmp_path / "order_env", lib


def _script() -> dict:
    return {**SCRIPT, "Is SKU-7 in stock?": {"name": "check_stock", "arguments": {"sku": "SKU-7"}}}


def _env(venv: Path, folder: Path, lib: Path) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=f"{folder}{os.pathsep}{lib}", FAKE_OPENAI_KEY="not-a-key",
                PATH=f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}", VIRTUAL_ENV=str(venv))


def _run(cmd: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=EVAL_TIMEOUT_S)
    assert proc.returncode == 0, f"{' '.join(cmd[:2])} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def _check_tools(server: FakeOpenAI) -> None:
    seen = server.tool_results()
    for t in (0, 1):  # the replayed results the rollouts recorded
        assert json.dumps({"status": "shipped", "token": f"tok-{t}"}) in seen
    assert any("no recorded result for get_order" in s for s in seen)  # an unrecorded call: an error
    assert json.dumps({"live": True, "sku": "SKU-7", "in_stock": 3}) in seen  # the live tool ran


def test_verifiers_04_loads_the_taskset_and_vf_eval_scores_with_our_judge(exported, tmp_path):
    venv = _venv("0.4.0")
    folder, lib = exported
    env = _env(venv, folder, lib)
    probe = ("import json, verifiers.v1 as vf\n"
             "ts = vf.load_taskset(vf.TasksetConfig(id='order_env'))\n"
             "env = vf.load_environment(vf.SingleAgentEnvConfig(taskset=vf.TasksetConfig(id='order_env')))\n"
             "print(json.dumps([type(ts).__name__, type(env).__name__, sorted(t.key for t in ts)]))")
    out = json.loads(_run([str(venv / "bin" / "python"), "-c", probe], env, tmp_path).stdout.splitlines()[-1])
    assert out == ["OrderEnvTaskset", "SingleAgentEnv", sorted([*EXPECTED, "stock"])]
    with FakeOpenAI(_script()) as server:
        _run([*_readme_command(folder, "0.4.x", server.base_url, venv), "--output-dir", str(tmp_path / "runs")],
             env, tmp_path)
    traces = [json.loads(line) for f in (tmp_path / "runs").rglob("traces.jsonl") for line in f.read_text().splitlines()]
    rewards = {ep["task"]["key"]: ep["traces"][0]["rewards"]["judge"]["score"] for ep in traces}
    assert rewards == {**EXPECTED, "stock": 0.75}
    _check_tools(server)
    # the round trip: vf-eval's own traces read back by wai pass-at, which agrees with vf-eval's mean reward
    wai = Path(sys.executable).parent / "wai"
    proc = subprocess.run([str(wai), "pass-at", str(tmp_path / "runs"), "--k", "1", "--json"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["n_rows"] == 4 and report["n_tasks"] == 4
    assert report["pass_at_1"] == pytest.approx(sum(rewards.values()) / 4)


def _readme_command(folder: Path, release: str, base_url: str, venv: Path) -> list[str]:
    """The exported README's vf-eval command for ``release``, with the fake server, 4 tasks and 1 rollout each."""
    line = next(line for line in (folder / "README.md").read_text().splitlines()
                if line.startswith("vf-eval ") and line.endswith(f"# verifiers {release}"))
    words = shlex.split(line.split("#", 1)[0])
    swap = {"MODEL": "fake-model", "URL": base_url, "OPENAI_API_KEY": "FAKE_OPENAI_KEY", "5": "4", "3": "1"}
    return [str(venv / "bin" / "vf-eval"), *(swap.get(w, w) for w in words[1:])]


def test_verifiers_03_loads_the_environment_and_vf_eval_scores_with_our_judge(exported, tmp_path):
    venv = _venv("0.3.1")
    folder, lib = exported
    env = _env(venv, folder, lib)
    probe = ("import verifiers as vf\n"
             "e = vf.load_environment('order_env')\n"
             "print(isinstance(e, vf.MultiTurnEnv), [t.name for t in e.tool_defs])")
    assert _run([str(venv / "bin" / "python"), "-c", probe], env, tmp_path).stdout.split() == [
        "True", "['get_order',", "'check_stock']"]
    with FakeOpenAI(_script()) as server:
        _run([*_readme_command(folder, "0.3.x", server.base_url, venv), "-o", str(tmp_path / "runs")], env, tmp_path)
    results = [json.loads(line) for f in (tmp_path / "runs").rglob("results.jsonl") for line in f.read_text().splitlines()]
    rewards = {r["info"]["task_key"]: r["reward"] for r in results}
    assert rewards == {**EXPECTED, "stock": 0.75}
    _check_tools(server)


def test_skips_without_the_target_say_how():
    if VENVS:
        pytest.skip("running under make test-verifiers")
    with pytest.raises(pytest.skip.Exception, match="make test-verifiers"):
        _venv("0.4.0")
    assert sys.executable  # the plain suite runs this file and only skips the proofs
