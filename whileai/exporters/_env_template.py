"""The module text of an exported environment (``<name>/__init__.py``).

It is written as a file and imported in the trainer's process, so it depends on nothing from
whileai: only the standard library, plus ``datasets`` and ``verifiers`` when they are installed.
"""

from __future__ import annotations

__all__ = ["MODULE_TEMPLATE"]

MODULE_TEMPLATE = '''"""{name}: a tool-calling environment for GRPO, exported by whileai {version}.

``load_environment()`` builds the task dataset (``data/train.jsonl``, and ``data/holdout.jsonl``
as the eval split: a task is wholly on one side) and, when the classic ``verifiers`` API is
installed, returns a ``verifiers`` multi-turn environment whose tools replay the results recorded
for each task and whose rubric calls the exported reward. Without it, it returns a plain
``Environment`` holding the same pieces, so any GRPO loop can drive it.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SPEC: dict[str, Any] = json.loads((HERE / "spec.json").read_text(encoding="utf-8"))

__all__ = ["Environment", "SPEC", "build_dataset", "call_tool", "load_environment", "load_rows", "score"]


def load_rows(split: str = "train") -> list[dict[str, Any]]:
    """The tasks of one split (``train`` or ``holdout``) as dicts: prompt, info, example_id, task."""
    path = HERE / "data" / f"{{split}}.jsonl"
    if not path.exists():
        raise ValueError(f"split must be 'train' or 'holdout', got {{split!r}}.")
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def build_dataset(split: str = "train") -> Any:
    """The split as a ``datasets.Dataset`` when ``datasets`` is installed, else a list of dicts.

    ``info`` is kept as JSON text in the Dataset (its nested tool results vary by task, which an
    Arrow schema cannot hold as one struct); ``score`` and ``call_tool`` accept either form.
    """
    rows = load_rows(split)
    try:
        import datasets
    except ImportError:
        return rows
    flat = [dict(row, info=json.dumps(row["info"])) for row in rows]
    return datasets.Dataset.from_list(flat) if flat else datasets.Dataset.from_dict(
        {{"prompt": [], "info": [], "example_id": [], "task": []}})


def _info(info: Any) -> dict[str, Any]:
    if isinstance(info, str):
        return json.loads(info)
    return dict(info or {{}})


def _canonical(arguments: Any) -> str:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {{}}
        except ValueError:
            return arguments
    return json.dumps(arguments, sort_keys=True, separators=(",", ":"))


def call_tool(name: str, arguments: Any, info: Any) -> str:
    """Replay the result the task recorded for this call (same tool, same arguments).

    A call the recorded rollouts never made gets a JSON error naming the tool, so the policy
    sees a failed call rather than an invented result.
    """
    wanted = _canonical(arguments)
    for item in _info(info).get("tool_results", []):
        if item.get("name") == name and _canonical(item.get("arguments")) == wanted:
            return str(item.get("result"))
    return json.dumps({{"error": f"no recorded result for {{name}} with these arguments"}})


def _reward_function() -> Any:
    ref = SPEC.get("reward")
    if not ref:
        return None
    module, _, attr = ref.partition(":")
    target: Any = importlib.import_module(module)
    for part in attr.split("."):
        target = getattr(target, part)
    return target


def score(completion: Any, prompt: Any = None, info: Any = None, **kwargs: Any) -> float:
    """The exported reward on one rollout: the judge receives a whileai row and returns a
    number or ``{{"reward": ...}}`` (the whileai judge contract)."""
    judge = _reward_function()
    if judge is None:
        raise RuntimeError(
            "this environment was exported without a reward; re-export it with "
            "export_environment(..., reward='module:function')."
        )
    details = _info(info)
    messages = list(prompt or []) + (list(completion) if isinstance(completion, list)
                                     else [{{"role": "assistant", "content": str(completion)}}])
    final = next((m.get("content") for m in reversed(messages)
                  if m.get("role") == "assistant" and not m.get("tool_calls")), None)
    row = {{
        "scenario_id": details.get("task_key"),
        "prompt": details.get("prompt_text"),
        "system_prompt": SPEC.get("system_prompt"),
        "tools": SPEC.get("tools"),
        "messages": messages,
        "final_text": final,
    }}
    out = judge(row)
    if isinstance(out, dict):
        out = out.get("reward")
    return 0.0 if out is None else float(out)


class Environment:
    """The environment's pieces without ``verifiers``: datasets, tools, reward and tool replay."""

    def __init__(self, dataset: Any, eval_dataset: Any) -> None:
        self.name = SPEC["name"]
        self.dataset = dataset
        self.eval_dataset = eval_dataset
        self.system_prompt = SPEC.get("system_prompt")
        self.tools = SPEC.get("tools") or []
        self.max_turns = SPEC.get("max_turns")
        self.score = score
        self.call_tool = call_tool

    def __repr__(self) -> str:
        return f"Environment({{self.name!r}}, train={{len(self.dataset)}}, holdout={{len(self.eval_dataset)}})"


def _verifiers_environment(vf: Any, dataset: Any, eval_dataset: Any, **kwargs: Any) -> Any:
    class ReplayToolEnv(vf.MultiTurnEnv):  # type: ignore[misc, name-defined]
        """Tools answer from the results recorded for the task; the rollout ends on a reply."""

        async def is_completed(self, messages: Any, state: Any, **kw: Any) -> bool:
            last = messages[-1] if isinstance(messages, list) and messages else {{}}
            return isinstance(last, dict) and last.get("role") == "assistant" and not last.get("tool_calls")

        async def env_response(self, messages: Any, state: Any, **kw: Any) -> Any:
            info = state.get("info") if isinstance(state, dict) else None
            replies = []
            for call in messages[-1].get("tool_calls") or []:
                fn = call.get("function", call) if isinstance(call, dict) else call.function
                name = fn.get("name") if isinstance(fn, dict) else fn.name
                args = fn.get("arguments") if isinstance(fn, dict) else fn.arguments
                call_id = call.get("id") if isinstance(call, dict) else call.id
                replies.append({{"role": "tool", "tool_call_id": call_id, "content": call_tool(name, args, info)}})
            return replies, state

    rubric = vf.Rubric(funcs=[score], weights=[1.0])
    options = {{"max_turns": SPEC.get("max_turns") or 10, **kwargs}}
    return ReplayToolEnv(dataset=dataset, eval_dataset=eval_dataset, rubric=rubric,
                         oai_tools=SPEC.get("tools") or None, **options)


def load_environment(**kwargs: Any) -> Any:
    """The environment: a ``verifiers`` MultiTurnEnv when the classic API is installed, else an
    :class:`Environment` with the same datasets, tools and reward."""
    dataset, eval_dataset = build_dataset("train"), build_dataset("holdout")
    try:
        import verifiers as vf
    except ImportError:
        return Environment(dataset, eval_dataset)
    if hasattr(vf, "MultiTurnEnv") and hasattr(vf, "Rubric"):
        return _verifiers_environment(vf, dataset, eval_dataset, **kwargs)
    return Environment(dataset, eval_dataset)
'''
