"""The expert's tool-use strategy: a careful assistant working through one request with the tools.

It reads the brief and the request, then plays its domain's playbook
(`agentgym.agents.experts.tooluse_playbooks`) against what it has learned so far (a
`CaseFile`), one turn at a time:

* it asks the user for a detail the request leaves out (a currency, a meeting's length, the
  account's email), and reads the brief's policies and figures rather than guessing them;
* it makes independent reads in one turn and follows the chain of dependent ones, reading
  twice what a final write rests on and has no other check, and again what looks inconsistent;
* before its first write it says what it will do, with the values, and asks to go ahead, so a
  wrong value or a change of mind is heard before anything is final;
* it takes a change of mind into the plan (the plan runs from the top each turn, so only what
  the change alters is done anew), and undoes with the domain's undo tools a record that is no
  longer wanted or that the user says is wrong, after reading afresh what it rested on;
* it reads back a write whose call failed, before sending it again; it re-reads a result whose
  id did not resolve; and it tells the user when the tools refuse what the request needs.

It reads only what any agent sees: the messages, the tool schemas and the public task card.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentgym.agents.experts.casefile import Blocked, CaseFile, Halt, Move
from agentgym.agents.experts.tooluse_playbooks import PLAYBOOKS, Playbook
from agentgym.agents.transcript import brief_of, transient
from agentgym.agents.turns import Call, action_of, results_of

__all__ = ["ToolUseExpert", "DONE"]

#: What it says when there is nothing left that it can do.
DONE = "I have done everything I can for this request."
#: How many times it reads everything afresh because the user says something is wrong.
_DOUBTS = 2
_QUOTED = re.compile(r"'([^']{1,64})'")


class ToolUseExpert:
    """See the module docstring."""

    def __init__(self) -> None:
        self.book: Playbook | None = None
        self.case = CaseFile()
        self._sent: list[Call] = []
        self._first = True
        self._doubts = 0
        #: The number of writes when it last said the work was done (None: never).
        self._claimed: int | None = None
        self._blocked: set[str] = set()

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        messages = info.get("messages", ())
        brief = brief_of(messages)
        request = next((m["content"] for m in messages if m.get("role") == "user"), "")
        domain = info.get("task", {}).get("domain", "")
        make = PLAYBOOKS.get(domain)
        self.book = make(brief, request, list(info.get("tools", ()))) if make else None
        self.case, self._sent, self._first, self._doubts, self._claimed = CaseFile(), [], True, 0, None
        self._blocked = set()

    def act(self, obs: str, info: dict[str, Any]) -> str:
        if self.book is None:
            return DONE
        if self._first:
            self._first = False  # the step that started the task: the request, read at reset
        else:
            self._absorb(info)
        return self._next()

    def _absorb(self, info: dict[str, Any]) -> None:
        """Take in one step: each call's result, then the user's words."""
        book, case = self.book, self.case
        assert book is not None
        wrote = False
        for call, msg in zip(self._sent, results_of(info)):
            content = str(msg.get("content", ""))
            write = call.name in book.writes
            case.record(call, content, transient(content), write)
            if write and not content.startswith("[error"):
                wrote = True
            elif content.startswith("[error TOOL_ERROR]") and not transient(content):
                # An id that did not resolve came from a read that may have been wrong: read it again.
                sent = json.dumps(call.arguments)
                for value in _QUOTED.findall(content):
                    if json.dumps(value) in sent:  # a value the call passed on
                        case.forget_quoting(value, book.reads)
        self._sent = []
        for m in info.get("messages", ()):
            text = str(m.get("content", ""))
            if m.get("role") != "user" or text.startswith("[error"):
                continue
            case.hear(text)
            changed = book.hear(text)
            if not changed and (wrote or self._claimed is not None) and self._doubts < _DOUBTS:
                # Said after a write or a report of the work: something the user sees is not
                # right, so what the work rested on is read afresh before it is put right.
                self._doubts += 1
                case.doubt()

    def _next(self) -> str:
        book = self.book
        assert book is not None
        try:
            book.plan(self.case)
        except Move as move:
            if move.calls:
                self._sent = move.calls
                return action_of(move.calls)
            return move.say
        except Halt:
            return DONE
        except Blocked as blocked:
            if blocked.text in self._blocked:
                return DONE
            self._blocked.add(blocked.text)
            reason = blocked.text.split("] ", 1)[-1]
            return f"I'm sorry, I couldn't go on: {blocked.call.name} was refused ({reason})."
        if self._claimed != len(self.case.writes):
            self._claimed = len(self.case.writes)
            return book.summary()
        return DONE

