"""What every tool-use playbook shares: its interface, the confirmation before the first write,
the records that still stand, and the values a tool's schema allows."""

from __future__ import annotations

import re
from typing import Any, NoReturn, Sequence

from agentgym.agents.experts.briefs import section
from agentgym.agents.experts.casefile import Blocked, CaseFile, Halt
from agentgym.agents.experts.words import near, words_of

__all__ = ["Playbook", "standing", "allowed", "find_named"]

#: A reply that says yes and nothing else (a change of mind said with it is no yes to the plan).
_YES = re.compile(r"(?:yes,? )?(?:please go ahead|okay, go ahead with that|sounds good, please continue|"
                  r"that's everything i can think of\. please go ahead|that's right|"
                  r"alright, i understand\. please go ahead with that)\.?", re.I)


class Playbook:
    """One domain's plan, run from the top each turn against the `CaseFile` (see
    `agentgym.agents.experts.casefile`).

    A subclass reads the request in `__init__`, takes in what the user says later in `hear`,
    and plans in `plan`, which raises a `Move` until nothing is left to do.

    Args:
        brief: the system message (a session's brief: its section for this domain is used).
        request: the user's request.
        tools: the tool schemas the agent was given.
    """

    domain = ""
    #: The domain's read tools (a read whose id does not resolve is read again).
    reads: frozenset[str] = frozenset()
    #: The domain's write tools (their results are the records the expert made).
    writes: frozenset[str] = frozenset()

    def __init__(self, brief: str, request: str, tools: list[dict[str, Any]]) -> None:
        self.brief = section(brief, "tooluse", self.domain)
        self.request = request
        self.tools = tools
        #: Whether the brief asks for a yes to a plan that describes each write (the hard
        #: tier's consent policy), and the parts of plans the user said yes to.
        self.consent = "Consent before writes" in self.brief
        self.agreed: set[str] = set()

    def hear(self, text: str) -> bool:
        """Take in a user message; True when it changed what the user wants."""
        return False

    def plan(self, case: CaseFile) -> None:
        """Raise the next `Move`; return when the work is done."""
        raise NotImplementedError

    def summary(self) -> str:
        """What was done, for the closing message."""
        return "Everything you asked for is done."

    def confirm(self, case: CaseFile, plan: str, parts: Sequence[str] = ()) -> None:
        """Before the first write: say what will be done, with its values, and ask to go ahead
        or to hear anything else first. The user can then correct a value, add what it had not
        said, or change their mind before anything is final.

        Where the brief asks for consent before writes, each of the plan's `parts` (one write's
        words each; the whole plan when none) needs the user's yes: the parts not yet agreed are
        asked about (the whole plan when none was), and the work goes on only after a reply
        that says yes and nothing else; a part that changes is a new part, asked about anew."""
        if not self.consent:
            case.ask("confirm", f"Here is what I'm about to do: {plan} Shall I go ahead, or is there anything else "
                                "I should know first?")
            return
        parts = [p for p in parts if p] or [plan]
        pending = [p for p in parts if p not in self.agreed]
        if not pending:
            return
        text = plan if len(pending) == len(parts) else " ".join(pending)
        key = f"consent: {text}"
        # Not a yes: the plan again, as it stands (what the policies allow does not change
        # because the user presses for more).
        again = f"I'm sorry, but I can only do what the policies allow. Here is the plan again: {text} Shall I go ahead?"
        for ask in (f"Here is what I'm about to do: {text} Shall I go ahead, or is there anything else I should know "
                    "first?", again, again, again):
            case.ask(key, ask)
            said = case.said_since(key)
            if said and _YES.fullmatch(said[0].strip()):
                self.agreed.update(pending)
                return
            key += " (again)"
        self.stop(case, "I won't make these changes without your yes to them.")

    def agree(self, case: CaseFile, part: str) -> None:
        """Where the brief asks for consent before writes, the user's yes to one more write
        (an undo, a step a change of mind added) before it is made; nothing elsewhere."""
        if self.consent:
            self.confirm(case, f"I'll {part}", [part])

    def stop(self, case: CaseFile, why: str) -> NoReturn:
        """Tell the user why the work cannot go on as asked (a `Move`), then `Halt`."""
        case.ask("stop", f"{why} How would you like me to proceed?")
        raise Halt(why)


def standing(case: CaseFile, make: str, undo: str, key: str) -> list[tuple[dict[str, Any], Any]]:
    """The records the expert's `make` writes made that no `undo` write took back:
    (arguments, result), oldest first; `key` is the id both share."""
    undone = {args.get(key) for args, _ in case.made(undo)}
    return [(args, res) for args, res in case.made(make) if isinstance(res, dict) and res.get(key) not in undone]


def allowed(tools: list[dict[str, Any]], tool: str, parameter: str) -> list[Any]:
    """The values a tool's schema allows for a parameter (its enum), or []."""
    for t in tools:
        fn = t.get("function", t)
        if fn.get("name") == tool:
            prop = fn.get("parameters", {}).get("properties", {}).get(parameter, {})
            return list(prop.get("enum", ()))
    return []


def find_named(case: CaseFile, tool: str, name: str, where: tuple[str, str] | None = None) -> dict[str, Any] | None:
    """The directory match (`tool`, a search by name) for a person's full `name`: the match
    of that name, or of that name with a slip in a word (a name can reach the agent mistyped).
    Searched by the full name first, then by each of its words, as a person does when the
    full name finds nobody; None when no search finds such a match. `where` (a field and its
    value, "city" and "Berlin") keeps only the matches whose field says that value, a slip in
    a word allowed: it tells a person from a namesake."""
    want = words_of(name)
    for query in dict.fromkeys([name, *reversed(name.split())]):
        try:
            matches = case.read(tool, query=query).get("matches", [])
        except Blocked:  # nobody matches this spelling
            continue
        if where is not None and any(where[0] in m for m in matches):  # a directory that shows the field
            value = words_of(where[1])
            matches = [m for m in matches if len(words_of(str(m.get(where[0], "")))) == len(value)
                       and all(near(a, b) for a, b in zip(value, words_of(str(m.get(where[0], "")))))]
        exact = [m for m in matches if words_of(m.get("name", "")) == want]
        close = [m for m in matches if len(words_of(m.get("name", ""))) == len(want)
                 and all(near(a, b) or near(b, a) for a, b in zip(want, words_of(m.get("name", ""))))]
        if exact or len(close) == 1:
            return (exact or close)[0]
    return None
