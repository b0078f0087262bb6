"""What the expert has learned in one task, and how a playbook asks for what it still needs.

A playbook (the expert's plan for one domain) is written as a careful assistant works: read
this, then that, check it, confirm with the user, write. It runs from the top on every turn
against a `CaseFile`, the record of every call made and what came back; where it needs a
result the file does not hold yet, it raises a `Move` (the calls to make, or a message to the
user) and the turn ends there. So a change of plan (the user changes their mind, a result turns
out wrong) needs no bookkeeping: the next run simply takes another path, and every read it
already made is answered from the file.

How the file treats results, as a careful assistant does:

* a read that matters and cannot be checked otherwise is read twice, in one turn, and taken
  only when the reads agree, value by value (`copies=2`, `agentgym.agents.experts.votes`): a
  value mixed up in one reply never reaches a write;
* a result the playbook finds inconsistent, or every result after the user says something is
  wrong, is doubted (`doubt`) and read afresh;
* a read whose id does not resolve when used is read again (`forget_quoting`);
* a write whose call failed for a passing reason is read back with the domain's read-back
  tool before it is sent again (`write`), so an effect is never made twice;
* a call the tools refuse for good (not a passing failure) is not sent again: `Blocked`;
* a result that comes in pages (it names a `next_page`) is read whole: every later page is asked
  for in one turn, and the playbook sees the lists of all pages as one result.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

from agentgym.agents.experts.votes import vote
from agentgym.agents.turns import Call

__all__ = ["Move", "Blocked", "Halt", "Read", "CaseFile", "key_of", "MAX_READS"]

#: Results of one read after which the file settles for the likeliest (a read that never
#: agrees with itself is a tool at fault, not worth the rest of the turn budget).
MAX_READS = 6




def key_of(call: Call) -> str:
    """A call's identity: its name and arguments, canonically."""
    return json.dumps([call.name, call.arguments or {}], sort_keys=True, separators=(",", ":"))


class Move(Exception):  # noqa: N818 - a move is what the plan yields, not an error
    """The next move of a playbook: tool calls to make in one turn, or a message to the user."""

    def __init__(self, calls: list[Call] | None = None, say: str = "") -> None:
        super().__init__(say or ", ".join(c.name for c in calls or ()))
        self.calls = list(calls or ())
        self.say = say


class Halt(Exception):  # noqa: N818 - the plan's end, as `Move` is its next step
    """The work cannot go on as the user asked, and the user has been told why."""


class Blocked(Exception):
    """A call the tools refuse for good (the text says why): sending it again changes nothing."""

    def __init__(self, call: Call, text: str) -> None:
        super().__init__(text)
        self.call = call
        self.text = text


@dataclass(frozen=True)
class Read:
    """A read a playbook needs: the call, how many agreeing results it takes (2 for a value
    that matters and has no other check), and what a result must satisfy to be taken at all
    (a result at odds with itself is read again)."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    copies: int = 1
    valid: Callable[[Any], bool] | None = None
    #: Only results read after this point count (`CaseFile.last_write`): what a read shows of
    #: the world's state is stale once a write changed it.
    since: int = 0


@dataclass
class _Outcome:
    seq: int
    ok: bool
    value: Any  # the decoded result, or the error text
    text: str  # the raw content
    transient: bool = False


@dataclass
class CaseFile:
    """Every call made in one task and what came back, and what the user said (see the module
    docstring)."""

    #: Outcomes per call identity, oldest first.
    outcomes: dict[str, list[_Outcome]] = field(default_factory=dict)
    #: Per call identity, the sequence number from which its results are trusted.
    trusted_from: dict[str, int] = field(default_factory=dict)
    #: Successful writes in order: the call and its result.
    writes: list[tuple[Call, Any]] = field(default_factory=list)
    #: The user's messages after the request, in order.
    heard: list[str] = field(default_factory=list)
    #: Questions asked of the user (by key), and how many messages it had said by then.
    asked: dict[str, int] = field(default_factory=dict)
    #: Values (as JSON text) that did not resolve when used: a result holding one is wrong.
    unresolved: set[str] = field(default_factory=set)
    #: Reads (by identity) that gave such a value: read twice from then on.
    suspect: set[str] = field(default_factory=set)
    seq: int = 0

    # ------------------------------------------------------------------ taking results in
    def record(self, call: Call, content: str, transient: bool, write: bool) -> None:
        """Take in what one call returned (`content`, the tool message's text)."""
        self.seq += 1
        ok = not content.startswith("[error")
        value: Any = content
        if ok:
            try:
                value = json.loads(content)
            except json.JSONDecodeError:
                ok = False
        self.outcomes.setdefault(key_of(call), []).append(_Outcome(self.seq, ok, value, content, transient))
        if ok and write:
            self.writes.append((call, value))

    def hear(self, text: str) -> None:
        self.heard.append(text)

    # ------------------------------------------------------------------ asking for reads
    def get(self, *reads: Read) -> list[Any]:
        """The trusted result of each read (see `Read`). Raises `Move` with every call still
        needed, so independent reads go in one turn, or `Blocked` for a read the tools refuse."""
        out: list[Any] = []
        missing: list[Call] = []
        for read in reads:
            call = Call(read.name, read.arguments)
            value, need = self._trusted(call, read)
            if not need and isinstance(value, dict) and "next_page" in value and "page" not in read.arguments:
                value, more = self._rest(read, value)
                missing += more
            out.append(value)
            missing += [call] * need
        if missing:
            raise Move(missing)
        return out

    def _rest(self, read: Read, first: dict[str, Any]) -> tuple[Any, list[Call]]:
        """A result that comes in pages, whole: (its first page with every list the later pages
        hold appended, or None while one is missing; the calls for the missing pages, all at once,
        as the first page says how many there are)."""
        pages = first.get("pages")
        merged = {k: v for k, v in first.items() if k not in ("page", "pages", "next_page")}
        missing: list[Call] = []
        for page in range(2, pages + 1 if isinstance(pages, int) else 2):
            args = {**read.arguments, "page": page}
            value, need = self._trusted(Call(read.name, args), Read(read.name, args, read.copies, read.valid, read.since))
            missing += [Call(read.name, args)] * need
            for key, rows in (value or {}).items() if isinstance(value, dict) else ():
                if isinstance(rows, list) and isinstance(merged.get(key), list):
                    merged[key] = merged[key] + rows
        return (None if missing else merged), missing

    def has(self, read: Read) -> bool:
        """Whether the file holds a trusted result of `read` (asking for nothing)."""
        try:
            return self._trusted(Call(read.name, read.arguments), read)[1] == 0
        except Blocked:
            return False

    def refused(self, name: str, **arguments: Any) -> bool:
        """Whether the tools refused this call for good the last time it was made."""
        key = key_of(Call(name, arguments))
        history = [o for o in self.outcomes.get(key, ()) if o.seq > self.trusted_from.get(key, 0)]
        return bool(history) and not history[-1].ok and not history[-1].transient

    def read(self, name: str, copies: int = 1, **arguments: Any) -> Any:
        """One read's trusted result (see `get`)."""
        return self.get(Read(name, arguments, copies))[0]

    def _trusted(self, call: Call, read: Read) -> tuple[Any, int]:
        """(the trusted value or None, how many more calls it takes)."""
        key = key_of(call)
        since = max(self.trusted_from.get(key, 0), read.since)
        history = [o for o in self.outcomes.get(key, ()) if o.seq > since]
        if history and not history[-1].ok and not history[-1].transient:
            raise Blocked(call, history[-1].text)
        results = [o for o in history if o.ok and not any(bad in o.text for bad in self.unresolved)]
        settle = len(results) >= MAX_READS  # a tool that never agrees with itself: take the likeliest
        if read.valid is not None and not settle:
            results = [o for o in results if read.valid(o.value)]
        # A read that once gave an id that did not resolve is read twice from then on.
        copies = max(read.copies, 2 if key in self.suspect else 1)
        if not results:
            return None, copies
        if copies <= 1:
            return results[-1].value, 0
        agreed = vote([o.value for o in results], copies)
        if agreed.settled or settle:
            return agreed.value, 0
        # A disagreement takes two more reads to settle: ask for both at once.
        return None, 2 if agreed.disputed else max(1, copies - len(results))

    def doubt(self, name: str | None = None, **arguments: Any) -> None:
        """Trust no result had so far of a read (of every read when `name` is None)."""
        if name is None:
            for key in self.outcomes:
                self.trusted_from[key] = self.seq
            return
        self.trusted_from[key_of(Call(name, arguments))] = self.seq

    def forget_quoting(self, value: str, reads: frozenset[str]) -> bool:
        """Doubt every read (among the tools `reads`) whose results hold `value`, an id that did
        not resolve, and take no result that holds it again. True when one held it."""
        found = False
        quoted = json.dumps(value)
        self.unresolved.add(quoted)
        for key, outcomes in self.outcomes.items():
            if json.loads(key)[0] in reads and any(o.ok and quoted in o.text for o in outcomes):
                self.trusted_from[key] = self.seq
                self.suspect.add(key)
                found = True
        return found

    # ------------------------------------------------------------------ writes
    def last_write(self, *names: str) -> int:
        """The point of the latest successful write of one of the tools `names` (0: none)."""
        return max((o.seq for c, _ in self.writes if c.name in names
                    for o in self.outcomes.get(key_of(c), ()) if o.ok), default=0)

    def made(self, name: str) -> list[tuple[dict[str, Any], Any]]:
        """The successful writes of tool `name`: (arguments, result), oldest first."""
        return [(c.arguments or {}, r) for c, r in self.writes if c.name == name]

    def write(self, name: str, arguments: dict[str, Any], readback: Call | None = None,
              landed: Callable[[Any], Any] | None = None) -> Any:
        """Ask for a write to be made: raises `Move` with the call, or first with the read-back
        when this write's last attempt failed for a passing reason (its effect unseen). When the
        read-back shows the effect (`landed(result)` gives the record), the write counts as made
        and that record is returned. `Blocked` for a write the tools refused for good."""
        call = Call(name, arguments)
        history = self.outcomes.get(key_of(call), [])
        if history and not history[-1].ok:
            last = history[-1]
            if not last.transient:
                raise Blocked(call, last.text)
            if readback is not None and landed is not None:
                back = [o for o in self.outcomes.get(key_of(readback), ()) if o.seq > last.seq and o.ok]
                if not back:
                    raise Move([readback])
                record = landed(back[-1].value)
                if record is not None:
                    self.writes.append((call, record))
                    return record
        raise Move([call])

    # ------------------------------------------------------------------ the user
    def ask(self, key: str, text: str) -> None:
        """Ask the user `text` once (by `key`): raises `Move` until it has been asked and the
        user has said something since."""
        if key not in self.asked:
            self.asked[key] = len(self.heard)
            raise Move(say=text)
        if len(self.heard) <= self.asked[key]:
            raise Move(say=text)

    def said_since(self, key: str) -> list[str]:
        """What the user said after the question `key` was asked (all of it if never asked)."""
        return self.heard[self.asked.get(key, 0):]
