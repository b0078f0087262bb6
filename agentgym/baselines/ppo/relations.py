"""How a candidate call stands beside the others of its tool: what the user asked for, and the
limits the brief ties to the tool (features version 5).

A candidate's other features look at it alone (where each of its values was last mentioned); the
errors a fitted policy makes on unseen sessions are choices between calls of one tool that differ
in one value (`get_order` of another order than the one the user described) or between two
tools a policy's limit decides (`refund_item` of 69.00 where a line of
the brief asks for `request_refund_approval` over 150.00). These features say which call of a tool
the user's words point at, and which side of a limit on its own tool an amount falls, in terms
that name no value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

__all__ = ["Call", "tool_limits", "limit_features", "sibling_features"]

#: A number after a word that puts a limit before it (``more than 150.00``, ``over 1000``).
_LIMIT = re.compile(r"\b(?:than|over|above|below|under|exceeds|least|most|limit)\s+(\d+(?:\.\d+)?)\b")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
#: A word as code spells it (a tool's name: ``request_refund_approval``).
_CODE_WORD = re.compile(r"[a-z][a-z0-9_]*")


@dataclass(slots=True)
class Call:
    """What the sibling features need of one candidate: its tool (``""`` for a message), its
    values (lower case), and per value how many of the values of the record it sits in the
    user's latest words name (`asked`)."""

    tool: str
    values: list[str]
    asked: list[int]


def tool_limits(brief: Iterable[str], tools: Iterable[str]) -> list[tuple[float, frozenset[str]]]:
    """The limits each line of the brief sets, with the tools the line names (``A refund of more
    than 150.00 USD needs a manager's approval first: call request_refund_approval and pass its
    approval_id to refund_item``: 150.0, {request_refund_approval, refund_item}); lines naming no
    tool are left out."""
    known = {n.lower() for n in tools}
    out: list[tuple[float, frozenset[str]]] = []
    for text in brief:
        for line in text.lower().splitlines():
            numbers = _LIMIT.findall(line)
            if not numbers:
                continue
            named = frozenset(set(_CODE_WORD.findall(line)) & known)
            if named:
                out += [(float(v), named) for v in numbers[:2]]
    return out


def limit_features(tool: str, values: Sequence[str], limits: Sequence[tuple[float, frozenset[str]]],
                   words: bool) -> list[str]:
    """Which side of each limit the brief ties to `tool` the call's numbers fall on (``over``: the
    line's approval is needed; ``within``: it is not); with `words`, also with the tool's name (which
    tool of the line it is decides whether over is right)."""
    out: list[str] = []
    mine = [v for v, tools in limits if tool in tools]
    if not mine:
        return out
    numbers = [float(x) for x in values if _NUMBER.fullmatch(x)]
    for number in numbers[:3]:
        for limit in mine[:2]:
            side = "over" if number > limit else "within"
            out.append(f"s:toollimit:{side}")
            if words:
                out.append(f"s:toollimit:{tool}:{side}")
    if not numbers:
        out.append("s:toollimit:none")
    return out


def sibling_features(calls: Sequence[Call]) -> list[list[str]]:
    """Per candidate, how it stands among the calls of its tool that differ from it: whether the
    record of one of its own values (one its siblings do not all share) holds more of what the
    user's latest words name than the others' (``s:sib:asked:top``, ``...:below``; nothing where
    all hold as much). Calls whose tool has one candidate get ``s:sib:alone``."""
    groups: dict[str, list[int]] = {}
    for i, c in enumerate(calls):
        if c.tool:
            groups.setdefault(c.tool, []).append(i)
    out: list[list[str]] = [[] for _ in calls]
    for members in groups.values():
        if len(members) == 1:
            out[members[0]].append("s:sib:alone")
            continue
        common = set.intersection(*(set(calls[i].values) for i in members))
        asked = {i: max((n for v, n in zip(calls[i].values, calls[i].asked) if v not in common), default=0)
                 for i in members}
        best = max(asked.values())
        if best > min(asked.values()):
            for i in members:
                out[i].append("s:sib:asked:top" if asked[i] == best else "s:sib:asked:below")
    return out
