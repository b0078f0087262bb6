"""`CrossTaskCandidates`: the builder of the active sub-task's family, switched at the session's
public boundaries (``info["segment"]``, ``info["segment_switch"]``); a follow-up goes on with the
dialog builder that saw the booking.
"""

from __future__ import annotations

from typing import Any, Mapping

from agentgym.agents.candidates import make_builder
from agentgym.agents.candidates.base import PLAIN_REPLIES, CandidateBuilder

__all__ = ["CrossTaskCandidates"]


class CrossTaskCandidates(CandidateBuilder):
    """Candidates for a cross-task session: the builder of the active sub-task's family.

    The session's public boundaries (``info["segment"]`` at reset, ``info["segment_switch"]`` on
    the step a sub-task ends) say which family is active. Each sub-task gets a fresh builder of
    its family that sees the session brief, every tool and the new request; the messages of a
    step go to the builder of the sub-task they belong to (the result of the call that ended a
    sub-task to the old one, the user's switch message to the new one). A follow-up that returns
    to the dialog booking goes on with that dialog's builder, which remembers the places and the
    booking.
    """

    family = "crosstask"

    def _start(self, view: dict[str, Any]) -> None:
        self._brief = next((m for m in view.get("messages", ()) if m.get("role") == "system"), None)
        self._tools = list(view.get("tools", ()))
        self._task = dict(view.get("task") or {})
        self._dialogs: dict[str, CandidateBuilder] = {}
        self._active: CandidateBuilder | None = None
        self._switch_to(view.get("segment") or {})

    def _switch_to(self, segment: Mapping[str, Any]) -> None:
        family, domain = segment.get("family"), str(segment.get("domain") or "")
        if family == "followup" and domain in self._dialogs:
            self._active = self._dialogs[domain]
            return
        builder = make_builder("dialog" if family == "followup" else family, self.config)
        messages = [self._brief] if self._brief is not None else []
        own = _domain_tools(family, domain)
        tools = [t for t in self._tools if own is None or (t.get("function") or t).get("name") in own]
        builder.reset("", {"messages": messages, "tools": tools,
                           "task": {**self._task, "family": family, "domain": domain}})
        if family in ("dialog", "followup"):
            self._dialogs[domain] = builder
        self._active = builder

    def _observe(self, messages: Any) -> None:
        if self._active is not None:
            self._active._observe([m for m in messages if m.get("role") != "system"])

    def _acted(self, action: Any) -> None:
        if self._active is not None:
            self._active._acted(action)

    def _step_view(self, view: dict[str, Any]) -> None:
        messages = list(view.get("messages", ()))
        started = [s["started"] for s in view.get("segment_switch") or () if isinstance(s, dict) and s.get("started")]
        if not started:
            self._observe(messages)
            return
        # The user's message announces the switch: what comes before it belongs to the old sub-task.
        cut = next((i for i, m in enumerate(messages) if m.get("role") == "user"), len(messages))
        self._observe(messages[:cut])
        for segment in started:
            self._switch_to(segment)
        self._observe(messages[cut:])

    def _build(self) -> list[str]:
        return self._active._build() if self._active is not None else list(PLAIN_REPLIES)


def _domain_tools(family: str | None, domain: str) -> frozenset[str] | None:
    """The tool names of a tool-use domain the package ships (public: the domain's toolkit
    class), so a session's sub-task is offered its own tools; None for any other."""
    if family != "tooluse":
        return None
    from agentgym.envs.tooluse.domains import load_domains

    spec = load_domains().get(domain)
    return frozenset(spec.toolkit.tool_specs()) if spec is not None else None
