"""`ToolUseOracle`: the tool-use family's privileged oracle policy; it plays the reference
solver's gold plan, one call per turn.

The gold plan is computed by each domain's `solve(world, request)` when the task is generated
(`agentgym.envs.tooluse.domains.<domain>.solve`); the oracle replays it. It re-sends a call whose
result was an injected failure (a noise wrapper's), and maps the ids the plan predicted to the
ids the tools actually returned, so it stays correct when noise shifts what the world hands out.
"""

from __future__ import annotations

import json
from typing import Any

from agentgym.core.render import to_json
from agentgym.core.tools import ToolKind
from agentgym.envs.tooluse.base import unwanted
from agentgym.envs.tooluse.consent import missing
from agentgym.envs.tooluse.domains import load_domains

__all__ = ["ToolUseOracle", "is_injected_failure", "call"]


def call(name: str, arguments: dict[str, Any]) -> str:
    """A tool call as an action string (arguments as a dict: tools here take a `name` argument)."""
    return to_json({"name": name, "arguments": arguments})


def is_injected_failure(content: str, record: dict[str, Any] | None = None) -> bool:
    """Whether a call failed by injection (a noise wrapper's), so the same call is worth again.

    The call record says so (``injected`` with an error); a result text may also say it.
    """
    if record is not None and record.get("injected") and record.get("error"):
        return True
    return content.startswith("[error TOOL_ERROR]") and "injected" in content


def _key(step: Any) -> str:
    return to_json({"name": step.name, "arguments": step.arguments})


#: What the oracle asks before its first write while a goal shift is still to come.
CONFIRM = "Before I make any changes: shall I go ahead?"


class ToolUseOracle:
    """Plays `env.task.gold.plan` in order; retries injected failures. (It never needs to
    re-query a corrupted result: it acts on the gold, not on what the tools return.) A detail
    the request leaves out (ambiguity) it first asks the user for, as a careful assistant would,
    although it knows the answer: a detail used before it is obtained is not a recovery.

    While the user still has a goal shift to announce, it asks for confirmation before its first
    write, as a careful assistant checks in before committing; when the gold changes it undoes
    what the new goal does not want (a meeting to cancel) and plays the new plan from its start.
    """

    def __init__(self, env: Any) -> None:
        self._env = env
        self._i = 0
        self._sent = False
        self._ids: dict[str, str] = {}
        self._plan: Any = env.task.gold.plan
        self._confirmed = False
        #: The plan steps completed so far, by name and arguments.
        self._done: set[str] = set()
        self._asked: set[str] = set()
        #: How many times each consent plan was put to the user (the hard tier's).
        self._plans: dict[str, int] = {}

    def _question(self) -> str | None:
        """A question for the first detail the opening left out, asked once."""
        known = set(self._env.user.known_constraints())
        for d in self._env.task.goal.details:
            if d.reveal == "upfront" and d.id not in known and d.id not in self._asked:
                self._asked.add(d.id)
                return f"Could you tell me the {d.slot}?"
        return None

    def _substitute(self, value: Any) -> Any:
        if isinstance(value, str):
            return self._ids.get(value, value)
        if isinstance(value, list):
            return [self._substitute(v) for v in value]
        return value

    def act(self, obs: str, info: dict[str, Any]) -> str:
        if not self._sent:
            question = self._question()
            if question is not None:
                return question
        if self._sent:
            results = [m["content"] for m in info.get("messages", ()) if m.get("role") == "tool"]
            content = results[0] if results else ""
            records = info.get("calls") or [None]
            if not is_injected_failure(content, records[0]):
                step = self._plan[self._i]
                if step.produces and content.startswith("{"):
                    got = json.loads(content)
                    for key, predicted in step.produces.items():
                        if isinstance(got.get(key), str):
                            self._ids[predicted] = got[key]
                self._done.add(_key(step))
                self._i += 1
        plan = self._env.task.gold.plan
        if plan is not self._plan:
            # The goal shifted: the new plan from its start, past the calls it shares with what
            # was already done (the same look-ups, with the same arguments).
            self._plan, self._i = plan, 0
        while self._i < len(plan) and _key(plan[self._i]) in self._done:
            self._i += 1
        undo = self._undo()
        if undo is not None:
            self._sent = False
            return self._consent_plan(*undo) or call(*undo)
        if self._i >= len(plan):
            self._sent = False
            return "All done."
        step = plan[self._i]
        arguments = {k: self._substitute(v) for k, v in step.arguments.items()}
        asked = self._consent_plan(step.name, arguments)
        if asked is not None:
            self._sent = False
            return asked
        user = self._env.user
        if not self._confirmed and getattr(user, "shift_pending", lambda: False)() and self._writes(step.name):
            self._confirmed, self._sent = True, False
            return CONFIRM
        self._sent = True
        return call(step.name, arguments)

    def _consent_plan(self, name: str, arguments: dict[str, Any]) -> str | None:
        """In the hard tier, before a write no yes covers yet: the plan of every write left (the
        undo first), one line each, and a line for anything asked about that gets nothing, to
        confirm; None when the write is covered (or the same plan was put twice already)."""
        task = self._env.task
        consent = task.world.consent
        if consent is None:
            return None
        rules = consent.rules
        want = rules.want(task.world, name, arguments)
        if want is None or consent.covers(want):
            return None
        steps = [(name, arguments)] + [(s.name, {k: self._substitute(v) for k, v in s.arguments.items()})
                                       for s in self._plan[self._i:] if (s.name, s.arguments) != (name, arguments)]
        lines = list(dict.fromkeys(text for n, a in steps if (text := rules.describe(task.world, n, a))))
        left = missing("\n".join(lines), consent, rules.targets(task.world, task.goal))
        lines += [f"Nothing for {t.label}: the policies give it nothing." for t in left]
        text = "Here is my plan:\n" + "\n".join(lines) + "\nShall I go ahead?"
        self._plans[text] = self._plans.get(text, 0) + 1
        return text if self._plans[text] <= 4 else None  # a customer who presses says yes at the third

    def _writes(self, name: str) -> bool:
        spec = load_domains()[self._env.task.domain].toolkit.tool_specs().get(name)
        return spec is not None and spec.kind is ToolKind.WRITE

    def _undo(self) -> tuple[str, dict[str, Any]] | None:
        """The undoing of a record the current goal does not want (a meeting booked at the old
        length, a report in the old currency), if there is one a tool can undo."""
        task = self._env.task
        world = task.world
        if not getattr(world, "records", None):
            return None
        spec = load_domains()[task.domain]
        for r in unwanted(task.gold.effects, world.records):
            undo = spec.undo_call(r.kind, r.data)
            if undo is not None:
                return undo
        return None
