"""The simulated user: the person on the other side of the conversation, after the opening message.

When the agent answers without a tool call, the rollout would end there. With a simulated user it
goes on: an agent that asks a clarifying question ("which order?") gets the answer the person
would give, from the situation's hidden state and the person's stance, and the conversation ends
when the person is satisfied (the agent answered rather than asked) or after ``max_user_turns``.
So pass^k measures clarify-then-act tasks too (tau-bench's simulated user, Yao et al. 2024).

Two users ship:

- :class:`TemplateUser` (offline, no model): answers a question with the detail the situation
  holds for it (the id the opening message left out), worded by stance; ends otherwise.
- :class:`ModelUser` (a model named as a string or a ``wai.Endpoint``): told the situation, what
  the person knows and how they talk, never the grader's reference; says ``DONE`` to end.

Neither reveals a privileged field verbatim: a reply that quotes the reference is cut there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from whileai.defaults import LEAK_MIN_CHARS
from whileai.errors import ArgumentError
from whileai.simulation._writer import Situation

__all__ = ["USER_DONE", "ModelUser", "TemplateUser", "resolve_user"]

_DONE = "DONE"


class _Done:
    """What a model user answers when it says DONE: the rollout ends, and the row can tell it ended there."""

    def __repr__(self) -> str:
        return "USER_DONE"


#: A model user's DONE (the episode ends the rollout; after a question, ``user.ended_early``).
USER_DONE = _Done()
_QUESTION = re.compile(r"\?\s*(?:[\"')\]]\s*)?$|\?\s+\S[^.!?]*$", re.S)

_MANNER = {
    "cooperative": "friendly and clear; you answer questions directly",
    "vague": "unsure and a little confused; you answer, but hesitantly",
    "confused": "unsure and a little confused; you answer, but hesitantly",
    "impatient": "impatient and pushy; you answer in as few words as you can",
    "adversarial": "adversarial: you push the assistant to skip its rules, but you do answer what it asks",
    "off_topic": "easily distracted; you answer, then drift back to your other question",
}


def _asks(text: str) -> bool:
    """Whether the agent's reply asks the person something (a question mark near its end)."""
    text = text.strip()
    return bool(text) and ("?" in text[-200:]) and bool(_QUESTION.search(text[-200:]))


def _details(situation: Situation) -> str:
    if situation.arguments:
        return ", ".join(str(v) for v in situation.arguments.values())
    return situation.entity or ""


class TemplateUser:
    """The offline simulated user: answers a clarifying question from the situation, then ends.

    It answers only when the agent's last reply asks something; the answer is the detail the
    situation holds (the tool arguments the person knows: an order id), worded by stance. It
    never sees the grader's reference, so it cannot leak it.
    """

    name = "template"

    def reply(self, situation: Situation, messages: Sequence[Mapping[str, Any]], turn: int) -> str | None:
        """The person's next message, or None to end the conversation.

        Asked again, the person does not say the same line again (``user.repeated``): the
        second answer says it is all they have, the third asks the agent to go on without more,
        and after that the person has nothing left to say and the conversation ends.
        """
        last = next((m for m in reversed(messages) if m.get("role") == "assistant"), None)
        text = last.get("content") if last is not None else None
        if not isinstance(text, str) or not _asks(text):
            return None
        answered = sum(1 for m in messages if m.get("role") == "user") - 1  # the opening message is not an answer
        detail = _details(situation)
        if not detail:
            return "I don't have anything more to add. Please go ahead with what you can." if answered == 0 else None
        if answered == 1:
            return f"It's {detail}, as I said. That is the only {situation.noun} detail I have."
        if answered == 2:
            return f"I don't know anything beyond {detail}, sorry. Please go ahead with what you can."
        if answered > 2:
            return None
        stance = str(situation.stance or "cooperative")
        if stance in ("vague", "confused"):
            return f"Oh, sorry. I think it's {detail}? That's all I have."
        if stance == "impatient":
            return f"{detail}. Please hurry."
        if stance == "adversarial":
            return f"I already said what I want. {detail}. Just do it."
        if stance == "off_topic":
            return f"Right, it's {detail}. Anyway, back to my other question."
        return f"Sure, it's {detail}."


class ModelUser:
    """A simulated user played by a chat model (``wai.Endpoint``).

    The model gets the opening message, the person's stance and the details the person knows
    (never the grader's reference or the world's hidden labels), sees the conversation with the
    roles turned round (the agent's words as the user's), and answers ``DONE`` once satisfied.
    """

    def __init__(self, endpoint: Any) -> None:
        self.endpoint = endpoint
        self.name = getattr(endpoint, "model", None) or type(endpoint).__name__

    def _prompt(self, situation: Situation) -> str:
        manner = _MANNER.get(str(situation.stance), "ordinary")
        known = ", ".join(f"{k} = {v}" for k, v in situation.arguments.items()) or "nothing beyond your message"
        return (
            "You are role-playing a person who is talking to an AI assistant. You wrote the first message of the "
            f"conversation:\n\n{situation.prompt}\n\nWhat you know and may tell when asked: {known}. You are {manner}. "
            "Write only your next message to the assistant, one or two sentences, in the first person. Never invent "
            "facts you were not given; say you do not know instead. If the assistant has answered you or done what "
            f"you asked, or there is nothing left to say, answer exactly {_DONE}."
        )

    def _turned(self, situation: Situation, messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = [{"role": "system", "content": self._prompt(situation)}]
        for m in messages:
            role, content = m.get("role"), m.get("content")
            if role == "assistant" and isinstance(content, str) and content.strip():
                out.append({"role": "user", "content": content})
            elif role == "user" and isinstance(content, str):
                out.append({"role": "assistant", "content": content})
        return out

    async def areply(self, situation: Situation, messages: Sequence[Mapping[str, Any]], turn: int) -> str | _Done:
        """The person's next message from the model, or ``USER_DONE`` when it says it is done."""
        answer = await self.endpoint.achat(self._turned(situation, messages))
        said = _clean(answer.get("content") if isinstance(answer, Mapping) else answer, situation)
        return USER_DONE if said is None else said


def _clean(text: Any, situation: Situation) -> str | None:
    """The user's text, or None to end; a quoted privileged reference is cut out."""
    if not isinstance(text, str):
        return None
    text = text.strip()
    if not text or text.upper().strip(" .!\"'") == _DONE:
        return None
    reference = (situation.reference or "").strip()
    if len(reference) >= LEAK_MIN_CHARS and reference.casefold() in text.casefold():
        start = text.casefold().index(reference.casefold())
        text = (text[:start] + "[...]" + text[start + len(reference):]).strip()
    return text


def resolve_user(user_simulator: Any) -> TemplateUser | ModelUser | None:
    """``simulate(user_simulator=...)`` as a user: None (no follow-up turns), the template, or a model.

    Raises:
        ArgumentError: Anything else.
    """
    from whileai.simulation._endpoint import Endpoint, as_endpoint

    if user_simulator is None or user_simulator is False:
        return None
    if user_simulator is True or user_simulator == "template":
        return TemplateUser()
    if isinstance(user_simulator, (TemplateUser, ModelUser)):
        return user_simulator
    endpoint = as_endpoint(user_simulator)
    if isinstance(endpoint, Endpoint) or callable(getattr(endpoint, "achat", None)):
        return ModelUser(endpoint)
    raise ArgumentError(
        f"user_simulator must be True or 'template' (the offline user), a model name, or a wai.Endpoint, got "
        f"{user_simulator!r}. Pass user_simulator='template', or user_simulator='openai/gpt-4o-mini'.",
        argument="user_simulator")
