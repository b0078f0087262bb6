"""What a tool chain remembers of an episode (`ChainMemory`): the values seen under each stem,
the records and lists of the tool results (`IndexedRecord`, `Listing`), the calls made, and the
user's words, folded in from the public transcript one step at a time."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from agentgym.agents.candidates.chain_tools import is_id, tools_of
from agentgym.agents.transcript import (
    YEAR,
    ResultRecord,
    answer_calls,
    key_stem,
    result_records,
    transient,
    user_texts,
)
from agentgym.core.protocol import parse_action
from agentgym.core.render import call_text

__all__ = ["ChainMemory", "IndexedRecord", "Listing", "kindred", "push_recent", "ends_last", "STOP_WORDS",
           "AFTER_PREPOSITION"]

_LOWER_WORD = re.compile(r"(?<![\w-])[a-z][a-z0-9_-]{2,}(?![\w-])")
AFTER_PREPOSITION = re.compile(r"\b(?:to|for|from|on|of|with|by|in)\s+(?:the\s+|a\s+|an\s+)?([a-z][a-z0-9_-]+)")
#: Function words never taken for a value named in free text.
STOP_WORDS = frozenset("""a an the and or but if then than to for from on of with by in at as is are was were be been
being it its this that these those there here not no yes do does did done can could should would will shall may
might must have has had after before over under into onto out up down off again only also very more most less all
any some each every other such own same so too just now still yet per via about above below between while during
i me my we our you your he she they them their his her us one two three first last next new old open
closed""".split())


def push_recent(bucket: list[Any], value: Any, limit: int = 24) -> None:
    """Put `value` first in `bucket` (most recent first, no duplicates, bounded)."""
    if value in bucket:
        bucket.remove(value)
    bucket.insert(0, value)
    del bucket[limit:]



#: Stems that name the same kind of value (money, a clock time): an argument of one draws on
#: values seen under the others too (``create_transfer.amount`` takes ``sum_amounts``' total).
_KINDRED = tuple(tuple(map(key_stem, group)) for group in (
    ("amount", "total", "price", "sum", "cost", "balance", "credit", "refund"), ("utc", "time", "start", "clock")))


def kindred(s: str) -> tuple[str, ...]:
    """The stems of the same kind as `s` (itself included)."""
    return next((group for group in _KINDRED if s in group), (s,))



def ends_last(items: list[Any]) -> list[Any]:
    """`items` reordered so that, known one after the other (each most recent first), the last
    and the first come out first, then the second-last and the second, and so on."""
    order: list[Any] = []
    lo, hi = 0, len(items) - 1
    while lo <= hi:
        order.append(items[hi])
        if hi != lo:
            order.append(items[lo])
        lo, hi = lo + 1, hi - 1
    return order[::-1]



@dataclass(slots=True)
class IndexedRecord:
    """A dict in a tool result, indexed by stem: its scalar fields (with its parents' scalars under it) and where
    it sat (the list it is an item of, its index)."""

    step: int
    fields: dict[str, Any]
    #: The keys that are the record's own (not its parents'), in the result's order.
    own: tuple[str, ...]
    #: The tool whose result it is part of.
    tool: str = ""
    list_key: str = ""
    index: int = -1
    #: Per stem: the value a later call made from this record returned under that stem.
    derived: dict[str, Any] = field(default_factory=dict)
    #: The stems of its fields.
    stems: frozenset[str] = frozenset()
    #: Stem -> its keys with that stem, its own keys first.
    keys_by_stem: dict[str, list[str]] = field(default_factory=dict)
    #: Stem -> the ids it holds under that stem (own or its parents'); stem -> its own values.
    ids_by_stem: dict[str, list[Any]] = field(default_factory=dict)
    own_by_stem: dict[str, list[Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.stems = frozenset(key_stem(k) for k in self.fields)
        own = set(self.own)
        for k in sorted(self.fields, key=lambda k: k not in own):
            s, v = key_stem(k), self.fields[k]
            self.keys_by_stem.setdefault(s, []).append(k)
            if is_id(k, v):
                self.ids_by_stem.setdefault(s, []).append(v)
            if k in own:
                self.own_by_stem.setdefault(s, []).append(v)


@dataclass(slots=True)
class Listing:
    """A list of records in one tool result (the expenses of a month, the items of an order)."""

    step: int
    key: str
    records: list[IndexedRecord]



class ChainMemory:
    """What a tool chain has learnt of one episode from its public transcript: the tools, the
    brief, the user's words, every value seen under each stem (results and calls, most recent
    first), the records and lists of the results, the arrays the agent's calls gave, the calls
    that need not be made again, and the words of the latest result's free text."""

    def __init__(self) -> None:
        self.start([], "")

    def start(self, tools: Iterable[Any], brief: str) -> None:
        """Clear the episode state: the tools on offer and the system brief."""
        self.tools = tools_of(tools)
        self.brief = brief
        self.user_text: list[str] = []
        self.step = 0
        #: Stem -> values seen under it (results and calls), most recent first.
        self.by_stem: dict[str, list[Any]] = {}
        #: When each (stem, value) was last seen: a counter over the episode.
        self.seen_at: dict[tuple[str, str], int] = {}
        self._clock = 0
        self.records: list[IndexedRecord] = []
        self.listings: list[Listing] = []
        #: Words of the free text of the latest tool result that could name a thing, those right
        #: after a preposition first (``waiting for billing``, ``email returned 500``).
        self.result_named: list[str] = []
        self.result_words: list[str] = []
        #: Array arguments of earlier calls, most recent first: (item stem, value).
        self.arrays: list[tuple[str, list[Any]]] = []
        #: Calls that succeeded, or failed for a reason a retry does not change (canonical
        #: text): never offered again. A call that failed transiently (a timeout) may be.
        self.done: set[str] = set()
        self._pending: list[tuple[str, dict[str, Any]]] = []
        self.years = YEAR.findall(brief)
        #: What building computes from the transcript, kept until the next message arrives.
        self.memo: dict[Any, Any] = {}

    def acted(self, action: Any) -> None:
        """Fold in the agent's own action: its calls wait for their results."""
        parsed = parse_action(action)
        self._pending = [(c.name, dict(c.arguments)) for c in parsed.calls
                         if c.error is None and isinstance(c.arguments, dict)]

    def observe(self, messages: Sequence[Mapping[str, Any]]) -> None:
        """Fold in new chat messages: the user's words, tool results (matched to the calls)."""
        self.step += 1
        self.memo = {}
        results = answer_calls(list(self._pending), messages)
        self._pending = []
        if results:
            self.result_named, self.result_words = [], []
        self.user_text += user_texts(messages)
        for res in results:
            if res.call is not None:
                self._called(res.call[0], res.call[1], None if res.failed else res.data)
                if res.failed and not transient(res.text):
                    self.done.add(call_text(res.call[0], **res.call[1]))
            if isinstance(res.data, (dict, list)):
                self._result(res.data, res.name)
            elif res.failed:
                # A refusal may name what would work ("can be swapped to black").
                for w in AFTER_PREPOSITION.findall(res.text.split("]", 1)[-1]):
                    if w not in STOP_WORDS and w not in self.result_named:
                        self.result_named.append(w)

    def _called(self, name: str, args: dict[str, Any], result: Any) -> None:
        for key, value in args.items():
            if isinstance(value, list):
                self.arrays.insert(0, (key_stem(key), value))
                del self.arrays[8:]
            elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
                self._know(key_stem(key), value)
        if result is None:
            return
        self.done.add(call_text(name, **args))
        if not isinstance(result, dict):
            return
        # A call made from one record's values (two or more arguments equal to its fields of
        # their stems): its result's values derive from that record. The best match wins.
        best, best_n = None, 1
        for rec in reversed(self.records[-64:]):
            n = sum(1 for a, v in args.items() if not isinstance(v, (list, dict))
                    and any(key_stem(k) == key_stem(a) and rv == v for k, rv in rec.fields.items()))
            if n > best_n:
                best, best_n = rec, n
        if best is not None:
            for k, v in result.items():
                if isinstance(v, (int, float, str)) and not isinstance(v, bool):
                    best.derived.setdefault(key_stem(k), v)

    def _records_in_order(self, recs: list[IndexedRecord]) -> None:
        """Know a listing's fields so that its last and first items come first (a list's ends are
        what chains take: the latest deploy, the earliest free slot)."""
        for rec in ends_last(recs):
            for k in rec.own:
                v = rec.fields[k]
                if not isinstance(v, bool):
                    self._know(key_stem(k), v)

    def _result(self, data: Any, tool: str) -> None:
        """Know a result's records and lists: each record's fields as it comes, each list's
        records again in the order chains take them once the list is complete."""
        indexed: dict[int, IndexedRecord] = {}
        for part in result_records(data):
            if isinstance(part, ResultRecord):
                for k, v in part.own.items():
                    if not isinstance(v, bool):
                        self._know(key_stem(k), v)
                    if isinstance(v, str) and " " in v:
                        self._free_text(v)
                rec = indexed[id(part)] = IndexedRecord(self.step, {**part.inherited, **part.own}, tuple(part.own),
                                                        tool, part.list_key, part.index)
                self.records.append(rec)
                del self.records[:-128]
                continue
            recs = [indexed[id(r)] for r in part.records]
            if recs:
                self.listings.insert(0, Listing(self.step, part.key, recs))
                del self.listings[16:]
                self._records_in_order(recs)
            for x in ends_last(part.scalars):
                self._know(key_stem(part.key), x)
            for x in part.scalars:
                if isinstance(x, str):
                    self._free_text(x)

    def _know(self, s: str, value: Any) -> None:
        push_recent(self.by_stem.setdefault(s, []), value, limit=64)
        self._clock += 1
        self.seen_at[(s, repr(value))] = self._clock

    def known(self, s: str) -> list[Any]:
        """Values seen under `s` and its kindred stems, most recent first."""
        group = kindred(s)
        if len(group) == 1:
            return list(self.by_stem.get(s, ()))
        pairs = [(self.seen_at.get((g, repr(v)), 0), v) for g in group for v in self.by_stem.get(g, ())]
        pairs.sort(key=lambda p: -p[0])
        return list(dict.fromkeys(v for _, v in pairs))

    def _free_text(self, text: str) -> None:
        for w in _LOWER_WORD.findall(text):
            if w not in STOP_WORDS and not w.endswith(("ing", "ed")) and w not in self.result_words:
                self.result_words.append(w)
        for w in AFTER_PREPOSITION.findall(text):
            if w not in STOP_WORDS and w not in self.result_named:
                self.result_named.append(w)

    def said(self) -> str:
        """Everything the user said so far, one message a line."""
        hit = self.memo.get("said")
        if hit is None:
            hit = self.memo["said"] = "\n".join(self.user_text)
        return hit
