"""The module texts of an exported environment: ``<name>/__init__.py`` and ``<name>/_v1.py``.

They are written as files and imported in the trainer's process, so they depend on nothing from
whileai: the standard library, plus ``datasets`` and ``verifiers`` when they are installed.
Two verifiers APIs are served (docs/export.md, "A verifiers environment for GRPO"):

- verifiers 0.4.x, ``verifiers.v1``: ``_v1.py`` defines a ``Taskset`` (one ``Task`` per exported
  task, the reward a ``@vf.reward`` calling the judge), a ``Toolset`` MCP server whose tools
  reach the environment's ``call_tool``, and a chat ``Harness`` with no shell, all exported in
  the package's ``__all__`` so ``vf-eval <name>`` and ``load_taskset`` find them.
- the 0.3 line (``vf.load_environment``): ``load_environment()`` returns a ``vf.MultiTurnEnv``
  that declares its tools as ``tool_defs`` (``oai_tools`` is refused from 0.1.14 on) and stops
  on a reply without tool calls.

``__NAME__`` (the module), ``__CLASS__`` (its CamelCase class prefix) and ``__VERSION__`` are
replaced when the files are written.
"""

from __future__ import annotations

__all__ = ["INIT_TEMPLATE", "V1_TEMPLATE"]

INIT_TEMPLATE = '''"""__NAME__: a tool-calling environment for GRPO, exported by whileai __VERSION__.

With verifiers 0.4.x, ``vf-eval __NAME__`` (or ``verifiers.v1.load_taskset``) loads
``__CLASS__Taskset`` from ``__all__``. With the 0.3 line, ``vf.load_environment("__NAME__")``
calls :func:`load_environment`, which returns a ``vf.MultiTurnEnv``. Without verifiers it returns
a plain :class:`Environment` holding the same datasets, tools and reward, so any GRPO loop can
drive it. Tools answer through :func:`call_tool` (a live tool named in ``spec.json``, else the
result the recorded rollouts got); the reward is :func:`score` (the exported judge).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SPEC: dict[str, Any] = json.loads((HERE / "spec.json").read_text(encoding="utf-8"))

__all__ = ["SPEC", "Environment", "build_dataset", "call_tool", "load_environment", "load_rows", "score"]


def _has_v1() -> bool:
    try:
        return importlib.util.find_spec("verifiers.v1.taskset") is not None
    except ImportError:
        return False


if _has_v1():  # verifiers 0.4.x: its loader takes the Taskset (and our Harness) from __all__
    __all__ += ["__CLASS__Taskset", "__CLASS__Harness"]


def __getattr__(attr: str) -> Any:
    if attr in ("__CLASS__Taskset", "__CLASS__Harness", "__CLASS__Task", "__CLASS__Toolset", "__CLASS__Data"):
        from __NAME__ import _v1

        return getattr(_v1, attr)
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


def load_rows(split: str = "train") -> list[dict[str, Any]]:
    """The tasks of one split (``train`` or ``holdout``) as dicts: prompt, info, example_id, task."""
    path = HERE / "data" / f"{split}.jsonl"
    if split not in ("train", "holdout") or not path.exists():
        raise ValueError(f"split must be 'train' or 'holdout', got {split!r}.")
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
        {"prompt": [], "info": [], "example_id": [], "task": []})


def _info(info: Any) -> dict[str, Any]:
    if isinstance(info, str):
        return json.loads(info)
    return dict(info or {})


def _arguments(arguments: Any) -> Any:
    if isinstance(arguments, str):
        try:
            return json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return arguments
    return arguments


def _canonical(arguments: Any) -> str:
    value = _arguments(arguments)
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, separators=(",", ":"))


def _resolve(ref: str) -> Any:
    module, _, attr = ref.partition(":")
    target: Any = importlib.import_module(module)
    for part in attr.split("."):
        target = getattr(target, part)
    return target


def call_tool(name: str, arguments: Any, info: Any) -> str:
    """Answer one tool call: the live tool ``spec.json`` names for ``name`` (``module:function``,
    called with the arguments), else the result the task recorded for this call (same tool, same
    arguments). A call with neither gets a JSON error naming the tool, so the policy sees a
    failed call rather than an invented result."""
    ref = (SPEC.get("tool_refs") or {}).get(name)
    if ref:
        args = _arguments(arguments)
        try:
            result = _resolve(ref)(**(args if isinstance(args, dict) else {}))
        except Exception as exc:  # the tool's own failure is the policy's observation
            return json.dumps({"error": f"{name} raised {type(exc).__name__}: {exc}"})
        return result if isinstance(result, str) else json.dumps(result, default=str)
    wanted = _canonical(arguments)
    for item in _info(info).get("tool_results", []):
        if item.get("name") == name and _canonical(item.get("arguments")) == wanted:
            return str(item.get("result"))
    return json.dumps({"error": f"no recorded result for {name} with these arguments"})


def _reward_function() -> Any:
    ref = SPEC.get("reward")
    return _resolve(ref) if ref else None


def score(completion: Any, prompt: Any = None, info: Any = None, **kwargs: Any) -> float:
    """The exported reward on one rollout: the judge receives a whileai row and returns a
    number or ``{"reward": ...}`` (the whileai judge contract)."""
    judge = _reward_function()
    if judge is None:
        raise RuntimeError(
            "this environment was exported without a reward; re-export it with "
            "export_environment(..., reward='module:function')."
        )
    details = _info(info)
    messages = [_plain(m) for m in list(prompt or [])] + (
        [_plain(m) for m in completion] if isinstance(completion, list)
        else [{"role": "assistant", "content": str(completion)}])
    final = next((m.get("content") for m in reversed(messages)
                  if m.get("role") == "assistant" and not m.get("tool_calls")), None)
    row = {
        "scenario_id": details.get("task_key"),
        "prompt": details.get("prompt_text"),
        "system_prompt": SPEC.get("system_prompt"),
        "tools": SPEC.get("tools"),
        "messages": messages,
        "final_text": final,
    }
    out = judge(row)
    if isinstance(out, dict):
        out = out.get("reward")
    return 0.0 if out is None else float(out)


def _plain(message: Any) -> dict[str, Any]:
    """A message as a whileai dict: role, content, name, tool_call_id, tool_calls[{id, name, arguments}]."""
    if hasattr(message, "model_dump"):
        message = message.model_dump(exclude_none=True)
    message = dict(message)
    calls = []
    for call in message.get("tool_calls") or []:
        if hasattr(call, "model_dump"):
            call = call.model_dump(exclude_none=True)
        fn = call.get("function") or call
        calls.append({"id": call.get("id"), "name": fn.get("name"), "arguments": fn.get("arguments")})
    if calls:
        message["tool_calls"] = calls
    return message


class Environment:
    """The environment's pieces without ``verifiers``: datasets, tools, reward and tool calls."""

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
        return f"Environment({self.name!r}, train={len(self.dataset)}, holdout={len(self.eval_dataset)})"


def tool_defs() -> list[dict[str, Any]]:
    """The tools in verifiers' provider-agnostic shape: ``{name, description, parameters}``."""
    out = []
    for item in SPEC.get("tools") or []:
        fn = item.get("function", item)
        out.append({"name": fn["name"], "description": fn.get("description") or "",
                    "parameters": fn.get("parameters") or {"type": "object", "properties": {}}})
    return out


def _field(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def _classic_environment(vf: Any, dataset: Any, eval_dataset: Any, **kwargs: Any) -> Any:
    class ReplayToolEnv(vf.MultiTurnEnv):
        """Tools answer through call_tool; the rollout ends on a reply without tool calls."""

        @vf.stop
        async def replied(self, state: Any, **kw: Any) -> bool:
            trajectory = state.get("trajectory") or []
            if not trajectory:
                return False
            last = _field(trajectory[-1], "completion")[-1]
            return _field(last, "role") == "assistant" and not _field(last, "tool_calls")

        async def env_response(self, messages: Any, state: Any, **kw: Any) -> Any:
            info = state.get("info")
            replies = []
            for call in _field(messages[-1], "tool_calls") or []:
                fn = _field(call, "function") or call  # vf.ToolCall (name, arguments) or an OpenAI dict
                replies.append({"role": "tool", "tool_call_id": _field(call, "id"),
                                "content": call_tool(_field(fn, "name"), _field(fn, "arguments"), info)})
            return replies

    async def reward(completion: Any, prompt: Any = None, info: Any = None, **kw: Any) -> float:
        return score(completion, prompt=prompt, info=info)

    reward.__name__ = "judge"
    rubric = vf.Rubric(funcs=[reward], weights=[1.0])
    options = {"max_turns": SPEC.get("max_turns") or 10, **kwargs}
    return ReplayToolEnv(dataset=dataset, eval_dataset=eval_dataset if len(eval_dataset) else None, rubric=rubric,
                         tool_defs=tool_defs() or None, **options)


def load_environment(**kwargs: Any) -> Any:
    """The environment: a ``verifiers`` MultiTurnEnv on the 0.3 line, else an :class:`Environment`
    with the same datasets, tools and reward (verifiers 0.4.x loads ``__CLASS__Taskset`` instead)."""
    dataset, eval_dataset = build_dataset("train"), build_dataset("holdout")
    try:
        import verifiers as vf
    except ImportError:
        return Environment(dataset, eval_dataset)
    if hasattr(vf, "MultiTurnEnv") and hasattr(vf, "Rubric") and hasattr(vf, "stop"):
        return _classic_environment(vf, dataset, eval_dataset, **kwargs)
    return Environment(dataset, eval_dataset)
'''

V1_TEMPLATE = '''"""__NAME__ for verifiers 0.4.x (``verifiers.v1``): the taskset, its tools and its harness.

``python -m __NAME__._v1`` serves the tools over MCP (verifiers starts it once per rollout).
"""

from __future__ import annotations

import inspect
import json
from typing import Any

import verifiers.v1 as vf
from verifiers.v1.harnesses.null import NullHarness

from __NAME__ import SPEC, call_tool, load_rows, score

__all__ = ["__CLASS__Data", "__CLASS__Harness", "__CLASS__Task", "__CLASS__TaskConfig", "__CLASS__Taskset",
           "__CLASS__TasksetConfig", "__CLASS__Toolset"]

_TYPES = {"string": str, "integer": int, "number": float, "boolean": bool, "array": list, "object": dict}


class __CLASS__Data(vf.TaskData):
    """One exported task: the prompt plus its ``info`` (task key, pass rate, recorded tool results)."""

    info: dict[str, Any] = {}


class __CLASS__Toolset(vf.Toolset[vf.ToolsetConfig]):
    """The exported tools, advertised under their own names; each call goes to ``call_tool``."""

    TOOL_PREFIX = None

    def __init__(self, config: vf.ToolsetConfig) -> None:
        super().__init__(config)
        self.info: dict[str, Any] = {}

    async def setup_task(self, task: Any) -> None:
        self.info = dict(getattr(task, "info", None) or {})

    def register(self, mcp: Any) -> None:
        for item in SPEC.get("tools") or []:
            fn = item.get("function", item)
            mcp.add_tool(self._with_state(self._tool(fn)), name=fn["name"],
                         description=fn.get("description") or None)

    def _tool(self, fn: dict[str, Any]) -> Any:
        schema = fn.get("parameters") or {}
        required = set(schema.get("required") or [])
        params = [
            inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY,
                              default=inspect.Parameter.empty if key in required else None,
                              annotation=_TYPES.get(str(spec.get("type")), Any) if isinstance(spec, dict) else Any)
            for key, spec in (schema.get("properties") or {}).items()
        ]
        name = fn["name"]

        def tool(**arguments: Any) -> str:
            given = {k: v for k, v in arguments.items() if v is not None or k in required}
            return call_tool(name, given, self.info)

        tool.__name__ = name
        tool.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
        return tool


class __CLASS__TaskConfig(vf.TaskConfig):
    tools: vf.ToolsetConfig = vf.ToolsetConfig()


class __CLASS__Task(vf.Task[__CLASS__Data, vf.State, __CLASS__TaskConfig]):
    """One task; the reward is the exported judge on the rollout's messages."""

    @property
    def key(self) -> str:
        return str(self.data.info.get("task_key") or self.hash)

    @classmethod
    def toolsets(cls, config: __CLASS__TaskConfig) -> list[vf.Toolset]:
        return [__CLASS__Toolset(config.tools)] if SPEC.get("tools") else []

    @vf.reward(weight=1.0)
    async def judge(self, trace: vf.Trace) -> float:
        return score(list(trace.messages), info=self.data.info)


class __CLASS__TasksetConfig(vf.TasksetConfig):
    split: str = "train"
    """Which exported split to load: train or holdout."""
    task: __CLASS__TaskConfig = __CLASS__TaskConfig()


class __CLASS__Taskset(vf.Taskset[__CLASS__Task, __CLASS__TasksetConfig]):
    """The exported tasks of one split, one Task each."""

    def load(self) -> list[__CLASS__Task]:
        tasks = []
        # a plain TasksetConfig (vf.load_taskset(vf.TasksetConfig(id=...))) has neither field: train, defaults
        split, task_config = getattr(self.config, "split", "train"), getattr(self.config, "task", None)
        for row in load_rows(split):
            prompt = row["prompt"]
            system = next((m["content"] for m in prompt if m.get("role") == "system"), None)
            user = [m for m in prompt if m.get("role") != "system"]
            ask = user[0]["content"] if len(user) == 1 else json.loads(json.dumps(user))
            data = __CLASS__Data(id=str(row["info"].get("task_key")), prompt=ask, system_prompt=system,
                                info=row["info"])
            tasks.append(__CLASS__Task(data, task_config if isinstance(task_config, __CLASS__TaskConfig) else None))
        return tasks


class __CLASS__Harness(NullHarness):
    """A chat loop with the exported tools and no shell (verifiers' null harness)."""


if __name__ == "__main__":
    __CLASS__Toolset.run()
'''
