"""`lm-mix`: the heuristic's play, speaking to the user the way language models phrase questions.

Its tool calls are the heuristic's. When the heuristic would send a message, `lm-mix` sends one
drawn from the check-users corpus (``agentgym/usercheck/data/*.jsonl``) instead, in one of four
forms, each drawn from a generator seeded by the episode (``info["seed"]``, the trial and the task
id), so an episode's messages are the same on every run:

- ``corpus``: a corpus phrasing alone, in place of the heuristic's message;
- ``two in one``: the heuristic's message, then a corpus phrasing (two questions in one turn);
- ``open``: the heuristic's message, then an open question of the corpus ("Anything else?");
- ``as is``: the heuristic's message.

Phrasings are those of the user's family (the current CrossTask segment's; a follow-up is a
dialog user's) and domain, in the styles models use (`LM_STYLES`: not the corpus's terse and typo
ones). ``{noun}`` becomes "place". The mix is a spread of phrasings to time the users on, not a
measured distribution of any model's behaviour; a phrasing that asks for something the heuristic
did not ask for can cost the episode its success, as a model's question would.

The corpus is read as data: the fields used here (`_USED`) must be present with their types,
other fields are ignored, so the corpus may grow without breaking this agent.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from agentgym.agents import make_agent
from agentgym.agents.base import Agent
from agentgym.core.protocol import parse_action

__all__ = ["LmMixAgent", "Phrasing", "load_phrasings", "parse_phrasing", "LM_STYLES", "FORMS"]

#: The corpus files of the users this agent talks to.
CORPUS_FILES = ("dialog.jsonl", "tooluse.jsonl")
#: Corpus styles language models use (a compound asks for two or three things at once).
LM_STYLES = ("question", "polite", "indirect", "imperative", "yesno", "domain", "compound")
#: How a message turn is phrased, and the weight of each form.
FORMS = (("corpus", 4), ("two in one", 3), ("open", 2), ("as is", 1))
#: What ``{noun}`` (the domain's noun, dialog only) becomes.
NOUN = "place"
#: The segment families whose users are another family's (a follow-up is a dialog booking's).
USER_FAMILY = {"followup": "dialog"}
#: The fields read from a corpus record and their types; others are ignored.
_USED: dict[str, type] = {"id": str, "family": str, "domains": list, "style": str, "asks": list, "text": str}
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")


@dataclass(frozen=True)
class Phrasing:
    """One corpus message: whom it is for, how it asks, what it asks for and its text."""

    id: str
    family: str
    domains: tuple[str, ...]
    style: str
    asks: tuple[str, ...]
    text: str

    @property
    def is_open(self) -> bool:
        """An open question ("Anything else I should know?")."""
        return self.asks == ("open",)


def parse_phrasing(raw: Any, where: str) -> Phrasing | None:
    """A phrasing from one corpus record, or None for one this agent does not send (a negative,
    which asks for nothing, or a text with a placeholder other than ``{noun}``).

    Raises:
        ValueError: a field this agent uses is missing or of the wrong type (naming `where`).
    """
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: a record must be a JSON object")
    for name, kind in _USED.items():
        if name not in raw:
            raise ValueError(f"{where}: missing field {name!r}")
        if not isinstance(raw[name], kind) or (kind is list and not all(isinstance(v, str) for v in raw[name])):
            raise ValueError(f"{where}: {name} must be {'a list of strings' if kind is list else kind.__name__}")
    text = raw["text"].replace("{noun}", NOUN)
    if not raw["asks"] or _PLACEHOLDER.search(text):
        return None
    return Phrasing(raw["id"], raw["family"], tuple(raw["domains"]), raw["style"], tuple(raw["asks"]), text)


@lru_cache(maxsize=None)
def load_phrasings(files: tuple[str, ...] = CORPUS_FILES) -> tuple[Phrasing, ...]:
    """Every phrasing this agent may send, from the corpus files in order."""
    data = resources.files("agentgym.usercheck") / "data"
    out = []
    for name in files:
        for no, line in enumerate((data / name).read_text("utf-8").splitlines(), 1):
            if line.strip():
                p = parse_phrasing(json.loads(line), f"{name}:{no}")
                if p is not None:
                    out.append(p)
    return tuple(out)


def is_tool_call(action: Any) -> bool:
    """Whether the action holds tool calls (else it is a message to the user)."""
    return not isinstance(action, str) or bool(parse_action(action).calls)


class LmMixAgent(Agent):
    """The heuristic's tool calls, with corpus phrasings as its messages (see the module docstring).

    Args:
        inner: the agent whose play this one follows (a built-in name or ``module:Class``).
        styles: the corpus styles it draws from.
    """

    name = "lm-mix"

    def __init__(self, inner: str = "heuristic", styles: tuple[str, ...] = LM_STYLES) -> None:
        self.inner_name, self.styles = inner, tuple(styles)
        self._inner = make_agent(inner)
        self._pool = tuple(p for p in load_phrasings() if p.style in self.styles or p.is_open)
        self._rng = random.Random(0)
        self._family, self._domain = "", ""

    def config(self) -> dict[str, Any]:
        return {"inner": self.inner_name, "styles": list(self.styles)}

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        task = info.get("task", {})
        self._rng = random.Random(f"lm-mix|{info.get('seed')}|{info.get('trial', 0)}|{task.get('id', '')}")
        self._family, self._domain = task.get("family", ""), task.get("domain", "")
        self._inner.reset(obs, info)

    def act(self, obs: str, info: dict[str, Any]) -> Any:
        action = self._inner.act(obs, info)
        if is_tool_call(action):
            return action
        segment = info.get("segment") or {}
        family = segment.get("family", self._family)
        return self.phrase(action, USER_FAMILY.get(family, family), segment.get("domain", self._domain))

    def phrase(self, message: str, family: str, domain: str) -> str:
        """The message sent in place of the heuristic's `message` to a user of `family` in `domain`."""
        fits = [p for p in self._pool if p.family == family and (not p.domains or domain in p.domains)]
        forms, weights = zip(*FORMS)
        form = self._rng.choices(forms, weights)[0]
        asking = [p for p in fits if not p.is_open]
        open_ = [p for p in fits if p.is_open]
        if form == "corpus" and asking:
            return self._rng.choice(asking).text
        if form == "two in one" and asking:
            return f"{message} {self._rng.choice(asking).text}"
        if form == "open" and open_:
            return f"{message} {self._rng.choice(open_).text}"
        return message
