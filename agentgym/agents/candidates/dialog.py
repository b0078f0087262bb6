"""`DialogCandidates`: a clarifying question for each slot the user lexicon knows (and one asking
everything at once), ``search`` with the needs the user stated, ``check_availability``, ``book``,
``get_details`` and a proposal for each place seen in tool results, ``cancel_booking`` for each
active booking with ``list_bookings`` to read them back, the answer that a booking the user came
back about still fits, and a few plain replies. It hears the user as the heuristic's dialog
strategy does (`agentgym.agents.strategies.dialog.heard_facts`).
"""

from __future__ import annotations

import itertools
from typing import Any

from agentgym.agents.candidates.base import PLAIN_REPLIES, CandidateBuilder
from agentgym.agents.strategies.dialog import heard_facts
from agentgym.agents.transcript import BriefVocabulary, brief_of, tool_results, user_texts
from agentgym.core.protocol import parse_action
from agentgym.core.render import call_text

__all__ = ["DialogCandidates"]


#: A clarifying question per lexicon slot; `{label}` is the domain's category word.
_SLOT_QUESTIONS = {
    "category": "Which {label} would you like?",
    "area": "Which area would you like?",
    "price": "What is your budget?",
    "rating": "What minimum rating do you want?",
    "amenity": "Do you need any amenities?",
    "time": "Which day and what time of day would you like?",
}


#: The answer to a user who came back about a booking, when it still meets every need.
_STILL_FITS = "Yes, I checked: the booking still meets everything you need, including that."


class DialogCandidates(CandidateBuilder):
    """Candidates for the dialog family: questions, searches, and actions on seen places."""

    family = "dialog"

    def _start(self, view: dict[str, Any]) -> None:
        from agentgym.envs.dialog.domain import load_lexicon  # public package data

        vocab = BriefVocabulary.of(brief_of(view.get("messages", ())))
        self._label = vocab.label or "type"
        self._vocab = vocab.lists()
        self._slots = tuple(load_lexicon().slots)
        self._needs: dict[str, Any] = {}
        self._amenities: list[str] = []
        self._day: str | None = None
        self._slot: str | None = None
        #: Entity id -> name, most recently seen first.
        self._entities: dict[str, str] = {}
        self._bookings: list[str] = []
        self._search: dict[str, Any] | None = None
        self._more_pages = False
        #: The user came back about a booking ("does it still work?").
        self._asked_back = False

    # ---------------------------------------------------------------- reading the transcript
    def _acted(self, action: Any) -> None:
        parsed = parse_action(action)
        for c in parsed.calls:
            if c.name == "search" and c.arguments is not None:
                self._search = dict(c.arguments)

    def _observe(self, messages: Any) -> None:
        for text in user_texts(messages):
            self._hear(text)
            self._asked_back = "still work" in text
        for result in tool_results(messages):
            self._result(result.name, result.data)

    def _hear(self, text: str) -> None:
        for name, value in heard_facts(text, self._vocab):
            if name == "amenities":
                if value not in self._amenities:
                    self._amenities.append(value)
            elif name == "day":
                self._day = value
            elif name == "slot":
                self._slot = value
            else:
                self._needs[name] = value

    def _seen(self, items: list[dict[str, Any]]) -> None:
        fresh = {str(r["id"]): str(r.get("name", r["id"])) for r in items if isinstance(r, dict) and "id" in r}
        self._entities = {**fresh, **{k: v for k, v in self._entities.items() if k not in fresh}}

    def _result(self, name: str, result: Any) -> None:
        if not isinstance(result, dict):
            return
        if name == "search":
            self._seen(list(result.get("results", ())))
            self._more_pages = int(result.get("page", 1)) < int(result.get("pages", 1))
        elif name == "get_details":
            self._seen([result])
        elif name == "book" and "booking_id" in result:
            self._bookings.append(str(result["booking_id"]))
        elif name == "cancel_booking" and result.get("booking_id") in self._bookings:
            self._bookings.remove(result["booking_id"])

    # ---------------------------------------------------------------- building
    def _search_args(self) -> dict[str, Any]:
        args = dict(self._needs)
        if self._amenities:
            args["amenities"] = list(self._amenities)
        return args

    def _build(self) -> list[str]:
        label = self._label
        asks = [_SLOT_QUESTIONS.get(s, "What about the " + s + "?").format(label=label) for s in self._slots]
        out = [
            f"To find the right place: which {label}, which area, what budget, what minimum rating, "
            "which amenities, and which day and time would you like?",
            *asks,
        ]
        args = self._search_args()
        out.append(call_text("search", **args))
        if self._more_pages and self._search is not None:
            out.append(call_text("search", **{**self._search, "page": int(self._search.get("page", 1)) + 1}))
        timed = self._day is not None and self._slot is not None
        for item_id, name in itertools.islice(self._entities.items(), self.config.max_entities):
            if timed:
                out.append(call_text("check_availability", item_id=item_id, day=self._day, slot=self._slot))
                out.append(call_text("book", item_id=item_id, day=self._day, slot=self._slot))
            out.append(call_text("get_details", item_id=item_id))
            if self.config.proposals:
                out.append(f"How about {name}?")
        out += [call_text("cancel_booking", booking_id=b) for b in self._bookings]
        if self._bookings:
            out.append(call_text("list_bookings"))
            if self._asked_back:
                out.append(_STILL_FITS)
        out += PLAIN_REPLIES
        return out
