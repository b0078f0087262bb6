"""The tool-use family's oracle: it plays the reference solver's gold plan, one call per turn.

The gold plan is computed by each domain's `solve(world, request)` when the task is generated
(`agentgym.envs.tooluse.domains.<domain>.solve`); the oracle replays it. It re-sends a call whose
result was an injected failure (a noise wrapper's), and maps the ids the plan predicted to the
ids the tools actually returned, so it stays correct when noise shifts what the world hands out.
"""

from __future__ import annotations

import json
from typing import Any

from agentgym.core.render import to_json

__all__ = ["Oracle", "is_injected_failure", "call"]


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


class Oracle:
    """Plays `env.task.gold.plan` in order; retries injected failures. (It never needs to
    re-query a corrupted result: it acts on the gold, not on what the tools return.) A detail
    the request leaves out (ambiguity) it first asks the user for, as a careful assistant would,
    although it knows the answer: a detail used before it is obtained is not a recovery."""

    def __init__(self, env: Any) -> None:
        self._env = env
        self._i = 0
        self._sent = False
        self._ids: dict[str, str] = {}
        self._asked: set[str] = set()

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
        plan = self._env.task.gold.plan
        if not self._sent:
            question = self._question()
            if question is not None:
                return question
        if self._sent:
            results = [m["content"] for m in info.get("messages", ()) if m.get("role") == "tool"]
            content = results[0] if results else ""
            records = info.get("calls") or [None]
            if not is_injected_failure(content, records[0]):
                step = plan[self._i]
                if step.produces and content.startswith("{"):
                    got = json.loads(content)
                    for key, predicted in step.produces.items():
                        if isinstance(got.get(key), str):
                            self._ids[predicted] = got[key]
                self._i += 1
        if self._i >= len(plan):
            self._sent = False
            return "All done."
        step = plan[self._i]
        self._sent = True
        return call(step.name, {k: self._substitute(v) for k, v in step.arguments.items()})
