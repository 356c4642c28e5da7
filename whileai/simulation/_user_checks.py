"""The simulated user, checked: did the person on the other side err, rather than the agent?

tau2-bench found that a large share of failed retail trajectories were the simulated user's
mistakes, not the agent's (sierra-research/tau2-bench, PR #392). A row whose user erred measures
the simulator, so each row says so: ``user_flags`` lists each error with the fragment that
raised it, and the marker ``user_faithful`` is 1.0 when there is none (docs/simulate.md, "The
simulated user, measured").

The rule checks read the user turns the simulator wrote (every ``user`` message after the opening
one) against what the situation holds (the opening message, the details the person knows, the
grader's reference and the world's hidden labels):

- ``user.off_script``: asserts an identifier (an order id, an email, a long number) the
  situation does not hold and nobody in the conversation said, or gives another one than it gave
  before (contradicts itself).
- ``user.leaked``: quotes the grader's reference (``LEAK_MIN_CHARS`` or longer) or a hidden
  label (``not_found``, ``server_error``: words a person never types), or holds the ``[...]`` a
  reply that quoted the reference was cut to.
- ``user.ended_early``: says it is satisfied (thanks, that's all, DONE) while the agent's last
  reply was still asking it something, so the ask was never answered.
- ``user.repeated``: the same line ``USER_REPEAT_MIN`` times or more (the opening one counts).
- ``user.broke_role``: speaks as the assistant ("How can I help you?", "As an AI") or about the
  simulation ("role-play", "this simulation", "my instructions").

A model or any judge can audit the same turns instead (``simulate(user_judge=...)``); its verdicts
land in the same column.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import polars as pl

from whileai.defaults import (
    LEAK_MIN_CHARS,
    PASS_THRESHOLD,
    USER_FRAGMENT_CHARS,
    USER_REPEAT_MIN,
    USER_SATISFIED_MAX_WORDS,
)

__all__ = ["USER_FLAG", "USER_FLAGS", "USER_JUDGE_CRITERIA", "UserContext", "asked", "check_user_turns", "context_of_row", "context_of_situation",
           "flag_columns", "stamp_user_flags", "user_error_summary", "user_flag_rows"]

#: The errors a simulated user can make, in report order.
USER_FLAGS = ("user.off_script", "user.leaked", "user.ended_early", "user.repeated", "user.broke_role")

#: The ``user_flags`` column's element: the flag and the fragment of the user's turn that raised it.
USER_FLAG = pl.Struct({"flag": pl.String, "fragment": pl.String})

#: What a model judge checks for each flag (``simulate(user_judge="model")``): met is the user's good outcome.
USER_JUDGE_CRITERIA: tuple[tuple[str, str], ...] = (
    ("user.off_script", "Every user turn after the first states only what the opening message or the details the "
                        "person knew hold, and never contradicts an earlier user turn."),
    ("user.leaked", "No user turn reveals the grader's reference or a hidden label of the world, and none holds the "
                    "cut mark [...]."),
    ("user.ended_early", "No user turn says the person is satisfied or done while the assistant's last message was "
                         "still asking the person something."),
    ("user.repeated", "No user line is said three times or more."),
    ("user.broke_role", "No user turn speaks as the assistant or talks about the simulation, role-play or its "
                        "instructions."),
)

#: The fragment a reply that quoted the reference is cut to (``ModelUser``).
CUT = "[...]"

_IDENT = re.compile(r"\b[A-Z]{2,6}-\d{3,}\b|\b[\w.+-]+@[\w-]+\.[\w.]+\b|\b\d{5,}\b")
_LABEL = re.compile(r"\b[a-z]+(?:_[a-z]+)+\b")
_SATISFIED = re.compile(
    r"(?i)^\W*(?:done\b|(?:ok(?:ay)?|great|perfect|thanks?|thank you|cheers|awesome|excellent)\b[^?]*$|"
    r"that(?:'s| is) (?:all|everything|it|great|perfect)\b|all (?:set|good|sorted)\b|problem solved\b|"
    r"no,? that(?:'s| is) all\b|(?:you'?ve|you have) (?:been )?(?:helped|solved)\b)")
_CLOSING_OFFER = re.compile(
    r"(?i)\b(?:anything else|something else|any other (?:questions?|help)|can i help(?: you)? with|help (?:you )?with "
    r"anything|is there more)\b[^?]*\?\s*$")
_ASSISTANT_VOICE = re.compile(
    r"(?i)\b(?:as an ai\b|i(?:'m| am) an? (?:ai|assistant|language model|virtual assistant)\b|"
    r"how (?:can|may) i (?:help|assist) you\b|i(?:'d| would) be (?:happy|glad) to help you\b|"
    r"i (?:can|will) look (?:that|this|it) up for you\b|let me (?:check|look up) (?:that|your order|it) for you\b|"
    r"is there anything else i can (?:help|do)\b)")
_META = re.compile(
    r"(?i)\b(?:role[- ]?play(?:ing)?|this (?:is a )?(?:simulation|simulated (?:conversation|user)|test scenario)|"
    r"i(?:'m| am) (?:playing|simulating|pretending to be) (?:a |the )?(?:user|customer|person)|"
    r"my (?:instructions|system prompt|persona)|as the (?:simulated )?user\b|the (?:grader|rubric|hidden state)\b)")
_WORDS = re.compile(r"[^\w@.+-]+")


class UserContext(NamedTuple):
    """What the situation holds, for checking the user's turns against it."""

    prompt: str
    """The opening message (the person's own words)."""
    known: tuple[str, ...]
    """The details the person knows and may tell (tool arguments, the entity)."""
    reference: str
    """The grader's reference: the person never sees it."""
    hidden: tuple[str, ...]
    """Hidden labels of the world (``not_found``, a fault kind): no person says them."""


def _fragment(text: str, start: int, end: int) -> str:
    """``text`` around ``[start, end)``, at most ``USER_FRAGMENT_CHARS`` long."""
    half = max(0, (USER_FRAGMENT_CHARS - (end - start)) // 2)
    lo, hi = max(0, start - half), min(len(text), end + half)
    return ("..." if lo else "") + text[lo:hi].strip() + ("..." if hi < len(text) else "")


def _line(text: str) -> str:
    return " ".join(_WORDS.split(text.casefold())).strip()


def asked(text: str) -> bool:
    """Whether the agent's reply asks the person something other than a closing "anything else?"."""
    from whileai.simulation._user import _asks

    return _asks(text) and not _CLOSING_OFFER.search(text.strip()[-200:])


def check_user_turns(messages: Sequence[Mapping[str, Any]], context: UserContext, *,
                     ended_on_ask: bool = False) -> list[dict[str, str]]:
    """The simulated user's errors in one conversation, each with the fragment that raised it.

    Args:
        messages: The conversation (OpenAI messages); the user turns after the first are the
            simulator's.
        context: What the situation holds (:class:`UserContext`).
        ended_on_ask: The simulator ended the conversation (said DONE) right after the agent asked
            it something: ``user.ended_early`` with the agent's question as the fragment.

    Returns:
        ``[{"flag": ..., "fragment": ...}]`` in ``USER_FLAGS`` order, one entry a flag at most.
    """
    users = [i for i, m in enumerate(messages) if m.get("role") == "user" and isinstance(m.get("content"), str)]
    if len(users) < 2 and not ended_on_ask:  # the simulator never spoke: nothing of its to check
        return []
    found: dict[str, str] = {}
    turns = users[1:]
    said = [context.prompt, *context.known]
    given: dict[str, str] = {}  # identifier shape -> the first one the user gave
    for i in turns:
        text = str(messages[i]["content"])
        # off script: an identifier nobody gave, or another one than the user gave before
        before = " ".join([*said, *(str(m.get("content") or "") for m in messages[:i]
                                    if m.get("role") in ("assistant", "tool"))])
        for match in _IDENT.finditer(text):
            token = match.group(0)
            shape = re.sub(r"\d", "9", token)
            if token not in before and "user.off_script" not in found:
                found["user.off_script"] = _fragment(text, match.start(), match.end())
            elif shape in given and given[shape] != token and token not in " ".join(context.known) \
                    and "user.off_script" not in found:
                found["user.off_script"] = _fragment(text, match.start(), match.end())
            given.setdefault(shape, token)
        # leaked: the reference, a hidden label, or the cut a quoted reference left
        low = text.casefold()
        ref = context.reference.strip()
        if "user.leaked" not in found:
            if len(ref) >= LEAK_MIN_CHARS and ref.casefold() in low:
                at = low.index(ref.casefold())
                found["user.leaked"] = _fragment(text, at, at + len(ref))
            elif CUT in text:
                at = text.index(CUT)
                found["user.leaked"] = _fragment(text, at, at + len(CUT))
            else:
                for match in _LABEL.finditer(text):
                    if match.group(0) in context.hidden and match.group(0) not in before:  # not if said out loud
                        found["user.leaked"] = _fragment(text, match.start(), match.end())
                        break
        # ended early: satisfied while the agent's last reply was still asking
        prev = next((m for m in reversed(messages[:i]) if m.get("role") == "assistant"), None)
        prev_text = prev.get("content") if prev is not None else None
        if "user.ended_early" not in found and isinstance(prev_text, str) and asked(prev_text):
            # a short thanks-and-goodbye that gives nothing; "Thanks, it's ORD-1234" answers the question
            if _SATISFIED.search(text) and not _IDENT.search(text) and len(text.split()) <= USER_SATISFIED_MAX_WORDS:
                found["user.ended_early"] = _fragment(text, 0, len(text))
        # broke role: the assistant's voice, or talk about the simulation
        for pattern in (_ASSISTANT_VOICE, _META):
            role = pattern.search(text)
            if role and "user.broke_role" not in found:
                found["user.broke_role"] = _fragment(text, role.start(), role.end())
    if ended_on_ask and "user.ended_early" not in found:
        last = next((m for m in reversed(messages) if m.get("role") == "assistant"), None)
        question = str(last.get("content") or "") if last is not None else ""
        found["user.ended_early"] = "DONE after: " + _fragment(question, max(0, len(question) - 80), len(question))
    if turns:
        lines = Counter(_line(str(messages[i]["content"])) for i in users)
        line, times = lines.most_common(1)[0]
        if times >= USER_REPEAT_MIN and line:
            text = next(str(messages[i]["content"]) for i in users if _line(str(messages[i]["content"])) == line)
            found["user.repeated"] = f"{times}x: " + _fragment(text, 0, len(text))
    return [{"flag": f, "fragment": found[f]} for f in USER_FLAGS if f in found]


def _hidden_labels(hidden: Mapping[str, Any]) -> tuple[str, ...]:
    labels: set[str] = set()
    for value in hidden.values():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and "_" in item:
                labels.add(item)
            elif isinstance(item, Mapping):
                labels.update(v for v in item.values() if isinstance(v, str) and "_" in v)
    return tuple(sorted(labels))


def context_of_row(row: Mapping[str, Any]) -> UserContext:
    """The :class:`UserContext` of a rollout row (``prompt``, ``scenario_dimensions``, ``privileged``)."""
    def parsed(value: Any) -> dict[str, Any]:
        if isinstance(value, Mapping):
            return dict(value)
        if isinstance(value, str) and value.strip():
            try:
                out = json.loads(value)
            except ValueError:
                return {}
            return out if isinstance(out, dict) else {}
        return {}

    dims = parsed(row.get("scenario_dimensions"))
    privileged = parsed(row.get("privileged"))
    known = [str(v) for v in (dims.get("arguments") or {}).values()]
    if dims.get("entity"):
        known.append(str(dims["entity"]))
    prompt = row.get("prompt")
    if not isinstance(prompt, str):
        first = next((m for m in row.get("messages") or [] if m.get("role") == "user"), None)
        prompt = str(first.get("content") or "") if first else ""
    hidden = parsed(privileged.get("hidden_state"))
    return UserContext(prompt, tuple(known), str(privileged.get("reference") or ""), _hidden_labels(hidden))


def context_of_situation(situation: Any) -> UserContext:
    """The :class:`UserContext` of a simulate situation (a ``Situation``)."""
    known = [str(v) for v in situation.arguments.values()]
    if situation.entity:
        known.append(str(situation.entity))
    hidden = _hidden_labels({"world_state": situation.world_state, "fault": situation.fault,
                             "fault_calls": situation.fault_calls})
    return UserContext(situation.prompt, tuple(known), situation.reference or "", hidden)


def flag_columns(flags: Sequence[Sequence[Mapping[str, str]]]) -> dict[str, pl.Series]:
    """``user_flags`` and the ``user_faithful`` marker (1.0: no flag) as columns, one entry a row."""
    import pyarrow as pa

    flat = [f for row in flags for f in row]
    offsets = [0]
    for row in flags:
        offsets.append(offsets[-1] + len(row))
    values = pa.StructArray.from_arrays([pa.array([f["flag"] for f in flat], pa.string()),
                                         pa.array([f["fragment"] for f in flat], pa.string())],
                                        names=["flag", "fragment"])
    listed = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), values)
    return {"user_flags": pl.Series("user_flags", listed).cast(pl.List(USER_FLAG)),
            "user_faithful": pl.Series("user_faithful", [0.0 if f else 1.0 for f in flags], dtype=pl.Float64)}


def stamp_user_flags(df: pl.DataFrame, flags: Sequence[Sequence[Mapping[str, str]]]) -> pl.DataFrame:
    """``df`` with ``flags`` added to its ``user_flags`` (one list a row) and ``markers.user_faithful`` restamped."""
    old = df["user_flags"].to_list() if "user_flags" in df.columns else [None] * df.height
    merged = [_unique([*(a or []), *b]) for a, b in zip(old, flags)]
    new = flag_columns(merged)["user_flags"]
    faithful = (new.list.len() == 0).cast(pl.Float64).alias("user_faithful")
    out = df.with_columns(new)
    fields: list[pl.Expr] = []
    if "markers" in out.columns and isinstance(out.schema["markers"], pl.Struct):
        fields = [pl.col("markers").struct.field(f.name) for f in out.schema["markers"].fields
                  if f.name != "user_faithful"]
    return out.with_columns(pl.struct([*fields, pl.lit(faithful)]).alias("markers"))


def _unique(flags: Sequence[Mapping[str, str]]) -> list[dict[str, str]]:
    seen: set[str] = set()
    out = []
    for f in flags:
        if f["flag"] not in seen:
            seen.add(f["flag"])
            out.append(dict(f))
    return out


def user_flag_rows(rows: Sequence[Mapping[str, Any]]) -> list[list[dict[str, str]]]:
    """``check_user_turns`` on rollout rows as dicts (``messages``, ``prompt``, ``scenario_dimensions``, ``privileged``)."""
    return [check_user_turns(list(r.get("messages") or []), context_of_row(r)) for r in rows]


class UserErrorSummary(NamedTuple):
    """How many rows' simulated user erred, and how much of the failure rate sits on them."""

    rows: int
    """Rows read."""
    erred: int
    """Rows with at least one user flag."""
    by_flag: dict[str, int]
    """Rows per flag, in ``USER_FLAGS`` order (then any other flag a judge raised)."""
    graded: int
    """Rows with a reward."""
    failures: int
    """Graded rows under ``PASS_THRESHOLD``."""
    failures_erred: int
    """Failures on rows whose user erred."""
    graded_erred: int
    """Graded rows whose user erred."""

    @property
    def failure_share_erred(self) -> float:
        """The share of the failures that sit on rows whose user erred (NaN with no failure)."""
        return self.failures_erred / self.failures if self.failures else float("nan")

    def line(self) -> str:
        """The report's one line."""
        flags = ", ".join(f"{k} {v}" for k, v in self.by_flag.items() if v)
        head = f"user erred on {self.erred} of {self.rows} rows" + (f" ({flags})" if flags else "")
        if not self.graded:
            return head + "; grade the rows, then pass_at(rows, by='user_faithful') splits the pass rate on it"
        faithful_graded = self.graded - self.graded_erred
        rate_all = self.failures / self.graded
        clean = "n/a" if not faithful_graded else f"{(self.failures - self.failures_erred) / faithful_graded:.0%}"
        share = "n/a" if not self.failures else f"{self.failure_share_erred:.0%}"
        return (f"{head}; {self.failures_erred} of {self.failures} failures ({share}) sit on those rows: failure rate "
                f"{rate_all:.0%} overall, {clean} where the user was faithful")


def user_error_summary(df: pl.DataFrame) -> UserErrorSummary | None:
    """Count the rows whose simulated user erred, and the failures on them (None without ``user_flags``).

    A failure is a graded row under ``PASS_THRESHOLD``; the share of failures on rows with a user
    flag is how much of the failure rate measures the simulator rather than the agent
    (sierra-research/tau2-bench PR #392).
    """
    if "user_flags" not in df.columns:
        return None
    n_flags = df["user_flags"].list.len().fill_null(0)
    erred = n_flags > 0
    names = df["user_flags"].explode().struct.field("flag").drop_nulls()
    counts = dict(Counter(names.to_list()))
    by_flag = {f: counts.pop(f, 0) for f in USER_FLAGS} | dict(sorted(counts.items()))
    graded = failures = failures_erred = graded_erred = 0
    if "reward" in df.columns:
        reward = df["reward"].cast(pl.Float64)
        has = reward.is_not_null()
        fail = has & (reward < PASS_THRESHOLD)
        graded, failures = int(has.sum()), int(fail.sum())
        failures_erred, graded_erred = int((fail & erred).sum()), int((has & erred).sum())
    return UserErrorSummary(df.height, int(erred.sum()), by_flag, graded, failures, failures_erred, graded_erred)
