"""`ToolChainCandidates`: the next calls of a tool chain, with arguments filled from what is known.

A tool-use request takes a chain of dependent calls: the ids one look-up returns feed the next,
amounts are converted and added up, a free slot found by one call is booked by the next. This
builder knows no domain. It reads the tool schemas, the brief, the user's words and the tool
results, and offers each tool with its arguments filled from values that public information
gives, in the ways chains pass values on:

* by key: an argument takes the values seen under a key of the same stem (``from_account`` and
  ``account_id`` share ``account``, ``root_cause_service`` and ``service`` share ``service``,
  ``person_ids`` and ``person_id`` share ``person``), most recent first;
* by record: the arguments a result record has fields for are filled from that one record
  (``convert`` from one expense: its amount, currency and date; ``refund_item`` from one item:
  its order, id and price), so values that belong together stay together;
* by set: an array argument takes the stem's values over the latest list of records, over the
  records the user's words select (the ``approved`` ones), and with each record's value replaced
  by the result of the call made from it (a converted amount); or an array used in an earlier
  call (the attendees of a free-slot search), or every id of one kind seen so far;
* from the user's and the brief's words by what the argument's name says it holds: ISO dates,
  months (a month's name and the brief's year), times, emails, ids, quoted titles, capitalised
  names, enum values the user mentions, numbers next to the unit the argument names, and a
  phrase after "for" (``swap it for the 34 variant``);
* from free text in results: words shaped like the stem's known values (a service named in a
  log line), those after a preposition first.

Arguments of one stem in one call get distinct values (a conversion from a currency to itself is
never offered), enum values the user named win over the rest, and a call that already succeeded
is not offered again. Besides calls: a question for each detail the tools need that nothing has
given yet (worded from the argument's name), and the plain replies.
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from agentgym.agents.transcript import (
    DATE,
    EMAIL,
    ID,
    MONTH_ISO,
    MONTH_NAME,
    MONTHS,
    NAME,
    QUOTED,
    TIME,
    YEAR,
    ResultRecord,
    answer_calls,
    key_stem,
    result_records,
    transient,
    user_texts,
    value_check,
)
from agentgym.core.protocol import parse_action
from agentgym.core.render import call_text
from agentgym.users.understanding.words import singular

__all__ = ["ToolChainCandidates", "CHAIN_REPLIES"]


#: Plain replies of a tool chain: moving on, the generic question, and the final answer.
CHAIN_REPLIES = (
    "Okay, let me look into that.",
    "Is there anything else I should know?",
    "Done. Is there anything else you need?",
)

_UNIT_NUMBER = re.compile(r"(\d+(?:\.\d+)?)[\s-]*([a-z]+)")
_FOR_PHRASE = re.compile(r"\bfor (?:the |a |an )?([\w][\w '-]{0,40}?)(?: variant| version| one| instead)?(?=[.?!,;]|$)",
                         re.I)
_LOWER_WORD = re.compile(r"(?<![\w-])[a-z][a-z0-9_-]{2,}(?![\w-])")
_PREPOSITION = re.compile(r"\b(?:to|for|from|on|of|with|by|in)\s+(?:the\s+|a\s+|an\s+)?([a-z][a-z0-9_-]+)")
#: Function words never taken for a value named in free text.
_STOP = frozenset("""a an the and or but if then than to for from on of with by in at as is are was were be been
being it its this that these those there here not no yes do does did done can could should would will shall may
might must have has had after before over under into onto out up down off again only also very more most less all
any some each every other such own same so too just now still yet per via about above below between while during
i me my we our you your he she they them their his her us one two three first last next new old open
closed""".split())
#: Argument stems that hold free text: filled with a line made of the call's other values.
_PROSE = frozenset(map(key_stem, ("summary", "description", "note", "reason", "comment", "message", "body", "text")))
#: Argument stems whose value the user may name as a phrase after "for" (``for the 34 variant``).
_FREE_CHOICE = frozenset(map(key_stem, ("variant", "version", "option", "size")))
#: Words of an argument's name that say its value has a format no plain word has.
_FORMATTED = frozenset({"id", "ids", "email", "date", "month", "time", "utc", "url", "phone", "title"})
#: Argument stems whose values only come from tools (asking the user for them is no use).
_FROM_TOOLS = frozenset(map(key_stem, ("amount", "total", "price", "utc", "version", "incident", "meeting", "approval",
                                        "report", "account", "item", "customer", "expense", "person", "attendee")))


def _push(bucket: list[Any], value: Any, limit: int = 24) -> None:
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


def _kind(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    kinds = [k for k in (kind if isinstance(kind, list) else [kind]) if k != "null"]
    return kinds[0] if kinds else "any"


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
            if _is_id(k, v):
                self.ids_by_stem.setdefault(s, []).append(v)
            if k in own:
                self.own_by_stem.setdefault(s, []).append(v)


@dataclass(slots=True)
class Listing:
    """A list of records in one tool result (the expenses of a month, the items of an order)."""

    step: int
    key: str
    records: list[IndexedRecord]


@dataclass(slots=True)
class Arg:
    """One tool parameter."""

    name: str
    stem: str
    schema: dict[str, Any]
    required: bool
    #: The JSON type (the first non-null one).
    kind: str = ""
    #: The words of the name (``duration_minutes`` -> duration, minutes).
    words: frozenset[str] = frozenset()
    #: Whether a value fits its schema, and (an array) whether an item fits its items' schema.
    fits: Callable[[Any], bool] = field(default=lambda value: True, repr=False)
    item_fits: Callable[[Any], bool] = field(default=lambda value: True, repr=False)

    def __post_init__(self) -> None:
        self.kind = _kind(self.schema)
        self.words = frozenset(self.name.lower().split("_"))
        self.fits = value_check(self.schema)
        self.item_fits = value_check(self.schema.get("items") or {})


@dataclass(slots=True)
class Tool:
    name: str
    args: list[Arg]
    description: str = ""
    #: The stems of its required arguments (a record sharing none binds nothing).
    stems: frozenset[str] = frozenset()
    #: The first five letters of the words of its name, arguments and descriptions.
    vocabulary: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        self.stems = frozenset(a.stem for a in self.args if a.required)
        text = " ".join([self.name, self.description, *(a.name for a in self.args),
                         *(str(a.schema.get("description", "")) for a in self.args)]).lower().replace("_", " ")
        self.vocabulary = frozenset(w[:5] for w in re.findall(r"[a-z]{3,}", text))


def _tools_of(schemas: Iterable[Any]) -> list[Tool]:
    out = []
    for t in schemas:
        if not isinstance(t, dict):
            continue
        fn = t.get("function", t)
        params = fn.get("parameters") or {}
        props = params.get("properties") or {}
        required = set(params.get("required") or ())
        args = [Arg(name, key_stem(name), dict(schema), name in required) for name, schema in props.items()
                if isinstance(schema, dict)]
        if isinstance(fn.get("name"), str):
            out.append(Tool(fn["name"], args, str(fn.get("description") or "")))
    return out


class ToolChainCandidates:
    """The tool-chain candidate logic; `agentgym.wrappers.candidates.ToolUseCandidates` is the
    `CandidateBuilder` around it (this class holds only the episode's knowledge and building).

    Args:
        max_entities: records of results that get calls, most recent first.
        values_per_argument: values tried per argument (most relevant first).
        calls_per_tool: calls offered per tool at most.
    """

    def __init__(self, max_entities: int = 8, values_per_argument: int = 3, calls_per_tool: int = 6) -> None:
        self.max_entities = max_entities
        self.k = values_per_argument
        self.calls_per_tool = calls_per_tool
        self.start([], "")

    # ------------------------------------------------------------------ reading the transcript
    def start(self, tools: Iterable[Any], brief: str) -> None:
        """Clear the episode state: the tools on offer and the system brief."""
        self.tools = _tools_of(tools)
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
        self._years = YEAR.findall(brief)
        #: What building computes from the transcript, kept until the next message arrives.
        self._memo: dict[Any, Any] = {}

    def acted(self, action: Any) -> None:
        """Fold in the agent's own action: its calls wait for their results."""
        parsed = parse_action(action)
        self._pending = [(c.name, dict(c.arguments)) for c in parsed.calls
                         if c.error is None and isinstance(c.arguments, dict)]

    def observe(self, messages: Sequence[Mapping[str, Any]]) -> None:
        """Fold in new chat messages: the user's words, tool results (matched to the calls)."""
        self.step += 1
        self._memo = {}
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
                for w in _PREPOSITION.findall(res.text.split("]", 1)[-1]):
                    if w not in _STOP and w not in self.result_named:
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
        for rec in _ends_last(recs):
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
            for x in _ends_last(part.scalars):
                self._know(key_stem(part.key), x)
            for x in part.scalars:
                if isinstance(x, str):
                    self._free_text(x)

    def _know(self, s: str, value: Any) -> None:
        _push(self.by_stem.setdefault(s, []), value, limit=64)
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
            if w not in _STOP and not w.endswith(("ing", "ed")) and w not in self.result_words:
                self.result_words.append(w)
        for w in _PREPOSITION.findall(text):
            if w not in _STOP and w not in self.result_named:
                self.result_named.append(w)

    # ------------------------------------------------------------------ values from words
    def _said(self) -> str:
        hit = self._memo.get("said")
        if hit is None:
            hit = self._memo["said"] = "\n".join(self.user_text)
        return hit

    def _words_facts(self) -> dict[str, Any]:
        """What the user's words (and for ids the brief's) hold, by kind; once per step."""
        hit = self._memo.get("facts")
        if hit is not None:
            return hit
        said = self._said()
        years = YEAR.findall(said) or self._years
        months = [f"{y}-{m}" for y, m in MONTH_ISO.findall(said)]
        for mname in MONTH_NAME.findall(said):
            number = MONTHS.index(mname.lower()) + 1
            months += [f"{y}-{number:02d}" for y in dict.fromkeys(years)]
        facts = {
            "date": DATE.findall(said),
            "month": months,
            "time": TIME.findall(said),
            "email": [e.rstrip(".") for e in EMAIL.findall(said)],
            "id": ID.findall(said) + ID.findall(self.brief),
            "quoted": QUOTED.findall(said),
            "name": NAME.findall(re.sub(r"[\"\u201c][^\"\u201d]*[\"\u201d]", "", said)),
            "unit": _UNIT_NUMBER.findall(said.lower()),
            "for": [p.strip() for p in _FOR_PHRASE.findall(said)],
        }
        self._memo["facts"] = facts
        return facts

    def _text_values(self, arg: Arg) -> list[Any]:
        """Values the user's (and for ids the brief's) words give `arg`, by what its name says
        it holds."""
        facts = self._words_facts()
        words, s = arg.words, arg.stem
        out: list[Any] = []
        if "date" in words:
            out += facts["date"]
        if "month" in words:
            out += facts["month"]
        if words & {"time", "start", "utc", "at"}:
            out += facts["time"]
        if "email" in words:
            out += facts["email"]
        if "id" in words or "ids" in words:
            out += self._ids_for(s, facts["id"])
        if words & {"title", "subject", "topic", "name"}:
            out += facts["quoted"]
        if words & {"query", "name"}:
            out += facts["name"]
        if arg.kind in ("integer", "number"):
            unit = [w for w in words if w not in ("id", "ids")]
            for number, after in facts["unit"]:
                if any(after.startswith(singular(u)) for u in unit):
                    out.append(float(number) if "." in number else int(number))
        if arg.kind == "string" and "enum" not in arg.schema and s in _FREE_CHOICE:
            out += facts["for"]
        return out

    def _ids_for(self, s: str, ids: list[str]) -> list[str]:
        """The ids of `ids` that can be this stem's: with the prefix of its known ids, else with
        a prefix that abbreviates it (``O-`` an order, ``INC-`` an incident), else any."""
        prefixes = {v.split("-")[0] for v in self.by_stem.get(s, ()) if isinstance(v, str) and ID.fullmatch(v)}
        if prefixes:
            return [i for i in ids if i.split("-")[0] in prefixes]
        short = [i for i in ids if _abbreviates(i.split("-")[0].lower(), s)]
        if short:
            return short
        stems = [a.stem for tool in self.tools for a in tool.args]
        return [i for i in ids if not any(_abbreviates(i.split("-")[0].lower(), t) for t in stems)]

    def _mentioned(self, values: Sequence[Any]) -> list[Any]:
        """The values the user's words name (whole words, any case), in the order given."""
        key = ("mentioned", tuple(values))
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = self._find_mentioned(values)
        return hit

    def _find_mentioned(self, values: Sequence[Any]) -> list[Any]:
        said = self._said().lower()
        out = []
        for v in values:
            if isinstance(v, str) and v and re.search(r"(?<![\w-])" + re.escape(v.lower()) + r"(?![\w-])", said):
                out.append(v)
            elif isinstance(v, (int, float)) and not isinstance(v, bool) and re.search(
                    r"(?<![\w.])" + re.escape(str(v)) + r"(?![\w.])", said):
                out.append(v)
        return out

    # ------------------------------------------------------------------ values per argument
    def values(self, arg: Arg, limit: int | None = None) -> list[Any]:
        """Values for one argument outside any record, most relevant first (at most `limit`,
        by default `values_per_argument`)."""
        limit = self.k if limit is None else limit
        key = ("values", id(arg), limit)
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = self._values(arg, limit)
        return hit

    def _values(self, arg: Arg, limit: int) -> list[Any]:
        schema, s = arg.schema, arg.stem
        if arg.kind == "array":
            return self._sets(arg)[:limit]
        pool: list[Any] = []
        if "enum" in schema:
            enum = list(schema["enum"])
            named = self._mentioned(enum)
            seen = [v for v in self.by_stem.get(s, ()) if v in enum]
            pool = named or seen or enum
        else:
            text = self._text_values(arg)
            known = self.known(s)
            # What the user's words give for this kind of value, then what tools said, latest first.
            pool = text + known
            if arg.kind == "string" and not text:
                pool += self._named_in_results(s)
                if not known and s in self._lookup_stems() and not arg.words & _FORMATTED \
                        and not _names_another(arg.name):
                    pool += self._named_by_user()
            if arg.kind in ("number", "integer"):
                pool += self._latest_numbers()
        out: list[Any] = []
        for v in pool:
            if v not in out and arg.fits(v):
                out.append(v)
        return out[:limit]

    def _named_in_results(self, s: str) -> list[str]:
        """Words of the latest result's free text that could name a thing (lower-case, no
        function word, no verb form; those after a preposition first), where this stem's known
        values are such words too (services named in a log line)."""
        known = [v for v in self.by_stem.get(s, ()) if isinstance(v, str)]
        if not known or not all(re.fullmatch(r"[a-z][a-z0-9_-]*", v) for v in known):
            return []
        return [w for w in self.result_named + self.result_words if w not in known]

    def _lookup_stems(self) -> set[str]:
        """The stems tools look things up by: the one required argument of a one-argument tool
        (``get_metrics(service)``). Only these take a thing the user names without capitals."""
        hit = self._memo.get("lookup")
        if hit is None:
            hit = self._memo["lookup"] = {a.stem for t in self.tools for a in t.args
                                          if a.required and sum(b.required for b in t.args) == 1}
        return hit

    def _named_by_user(self) -> list[str]:
        """Lower-case words right after a preposition in the user's words (``failures on
        shipping``): a thing named without capitals, for an argument nothing else fills."""
        vocabulary = self._memo.get("vocabulary")
        if vocabulary is None:
            vocabulary = self._memo["vocabulary"] = {w for tool in self.tools for w in tool.vocabulary}
        out: list[str] = []
        for text in self.user_text:
            for w in _PREPOSITION.findall(text):
                # "from my order", "a return": words the tools use are not the thing named.
                if w not in _STOP and w not in out and w[:5] not in vocabulary:
                    out.append(w)
        return out

    def _latest_numbers(self) -> list[Any]:
        last = self.records[-1] if self.records else None
        if last is None or last.step != self.step:
            return []
        return [v for k, v in last.fields.items() if k in last.own and isinstance(v, (int, float))
                and not isinstance(v, bool)]

    def _sets(self, arg: Arg) -> list[list[Any]]:
        """Candidate values of an array argument (see the module docstring), in this order: over
        the latest listing of several records (the selected ones first, derived values first),
        arrays given in earlier calls, every id of the stem's kind, then over other listings."""
        s = arg.stem
        latest: list[list[Any]] = []
        others: list[list[Any]] = []
        first = True
        for listing in self.listings[:4]:
            if not any(any(key_stem(k) == s for k in r.own) for r in listing.records):
                continue
            chosen = self._selected(listing.records)
            groups = ([chosen] if chosen is not None else []) + [listing.records]
            bucket = latest if first and len(listing.records) > 1 else others
            first = False
            for group in groups:
                raw = [self._field(r, s) for r in group]
                derived = [r.derived.get(s, self._field(r, s)) for r in group]
                for values in (derived, raw):
                    values = [v for v in values if v is not None and arg.item_fits(v)]
                    if values and all(_is_id("", v) for v in values):
                        values = list(dict.fromkeys(values))  # an id once; equal amounts stay
                    if values:
                        bucket.append(values)
        given = [list(value) for _, value in self.arrays if value and all(arg.item_fits(v) for v in value)]
        ids = self._ids_like(s)
        out: list[list[Any]] = []
        for values in latest + given + ([ids] if ids else []) + others:
            if values not in out:
                out.append(values)
        return [v[: int(arg.schema.get("maxItems", 50))] for v in out]

    def _ids_like(self, s: str) -> list[str]:
        """Every id with the prefix of this stem's known ids, brief first, each look-up's first."""
        known = [v for v in self.by_stem.get(s, ()) if isinstance(v, str) and ID.fullmatch(v)]
        if not known:
            return []
        prefix = known[0].split("-")[0] + "-"
        out = [i for i in ID.findall(self.brief) if i.startswith(prefix)]
        for listing in reversed(self.listings):
            first = listing.records[0] if listing.records else None
            if first is not None:
                out += [v for k, v in first.fields.items() if k in first.own and key_stem(k) == s and isinstance(v, str)]
        return list(dict.fromkeys(out))

    def _selected(self, records: list[IndexedRecord]) -> list[IndexedRecord] | None:
        """The records the user's words select by a field value (the ``approved`` expenses), or
        None. A field selects when its values split the records and the user names exactly one
        of them; a value some tool takes as an enum argument (a currency to pay in) is the
        user's choice of argument, not a selection. The first such field, in the records' order."""
        said = self._said().lower()
        arguments = {v for tool in self.tools for a in tool.args for v in a.schema.get("enum", ())}
        for key in records[0].own if records else ():
            values = [r.fields.get(key) for r in records]
            distinct = list(dict.fromkeys(v for v in values if isinstance(v, str)))
            if not 1 < len(distinct) <= 4:
                continue
            named = [v for v in distinct if v not in arguments and re.search(r"\b" + re.escape(v.lower()) + r"\b", said)]
            if len(named) == 1:
                return [r for r in records if r.fields.get(key) == named[0]]
        return None

    @staticmethod
    def _field(rec: IndexedRecord, s: str) -> Any:
        """The record's own field of stem `s` (a set is over the records' own values: the busy
        times of one person do not make a list of that person)."""
        for k in rec.own:
            if key_stem(k) == s:
                return rec.fields[k]
        return None

    # ------------------------------------------------------------------ calls
    def _bind(self, tool: Tool, rec: IndexedRecord) -> dict[str, Any] | None:
        """The arguments `rec` fills, or None when it fills none from its own fields.

        An argument takes the record's field of its stem (its own name first, the record's own
        fields before its parents'); a number with no such field takes the record's only
        number (a refund's amount, an item's price). Two arguments of one stem never both bind
        (``from_currency`` does, ``to_currency`` draws on the user's words).
        """
        bound: dict[str, Any] = {}
        keys_used: set[str] = set()
        stems_bound: set[str] = set()
        for arg in tool.args:
            # new_variant, to_version, to_currency name a value other than the record's own.
            if not arg.required or arg.kind == "array" or arg.stem in stems_bound or _names_another(arg.name):
                continue
            keys = rec.keys_by_stem.get(arg.stem, ())
            if arg.name in keys:
                keys = [arg.name, *(k for k in keys if k != arg.name)]
            for k in keys:
                if arg.fits(rec.fields[k]):
                    bound[arg.name] = rec.fields[k]
                    keys_used.add(k)
                    stems_bound.add(arg.stem)
                    break
        for arg in tool.args:
            if arg.required and arg.name not in bound and arg.kind in ("number", "integer") and "enum" not in arg.schema:
                nums = [k for k in rec.own if k not in keys_used and isinstance(rec.fields[k], (int, float))
                        and not isinstance(rec.fields[k], bool) and arg.fits(rec.fields[k])]
                if len(nums) == 1:
                    bound[arg.name] = rec.fields[nums[0]]
                    keys_used.add(nums[0])
        own = [k for k in rec.own if k in keys_used]
        required = [a for a in tool.args if a.required]
        # The record's identity (its own id), or two fields (one its own): else the call is no
        # more this record's than the pools' (an amount alone picks nothing out).
        identified = any(k == "id" or k.endswith("_id") for k in own)
        return bound if own and (identified or len(keys_used) >= min(2, len(required))) else None

    def _complete(self, tool: Tool, fixed: dict[str, Any]) -> list[dict[str, Any]]:
        """Calls of `tool` that keep `fixed` and fill its other required arguments."""
        fixed = dict(fixed)
        names, choices = [], []
        open_args = [a for a in tool.args if a.required and a.name not in fixed]
        # A call with one open argument offers as many of its values as calls fit.
        limit = self.calls_per_tool if len(open_args) == 1 else None
        for arg in tool.args:
            if arg.name in fixed:
                continue
            if not arg.required:
                extra = self._optional(arg)
                if extra is not None:
                    fixed[arg.name] = extra
                continue
            values = [_PROSE_SLOT] if arg.stem in _PROSE and arg.kind == "string" else self.values(arg, limit)
            if not values:
                return []
            names.append(arg)
            choices.append(values)
        out: list[dict[str, Any]] = []
        for rank in _diverse_ranks(tuple(len(c) for c in choices), self.calls_per_tool * 4):
            combo = [c[i] for c, i in zip(choices, rank)]
            args = {**fixed, **{a.name: v for a, v in zip(names, combo)}}
            if not _distinct_per_stem(args) or not self._agrees(tool, args) or self._contradicted(args, fixed):
                continue
            for a, v in args.items():
                if v is _PROSE_SLOT:
                    args[a] = " ".join(str(x) for k, x in args.items() if k != a and not isinstance(x, list)
                                       and x is not _PROSE_SLOT)[:200]
            out.append({a.name: args[a.name] for a in tool.args if a.name in args})
            if len(out) >= self.calls_per_tool:
                break
        return out

    def _contradicted(self, args: Mapping[str, Any], fixed: Mapping[str, Any]) -> bool:
        """Whether a record says the values do not go together. A record holding one argument's
        value as its own field contradicts another argument's value when it holds a different
        id of that argument's stem (the item of another order); a record identified by an
        argument's id also contradicts any other value it holds differently under that
        argument's stem or a kindred one (another item's price as this item's amount). An
        attribute alone contradicts nothing: it may differ on purpose (the variant to check)."""
        index = self._memo.get("index")
        if index is None:
            index = self._memo["index"] = {}
            for rec in self.records[-64:]:
                for k in rec.own:
                    v = rec.fields[k]
                    if isinstance(v, (str, int, float)) and not isinstance(v, bool):
                        index.setdefault((key_stem(k), v), []).append(rec)
        values = [(a, key_stem(a), v) for a, v in args.items()
                  if isinstance(v, (str, int, float)) and not isinstance(v, bool)]
        if all(a in fixed for a, _, _ in values):
            return False  # the record's own values (or none): nothing the pools put together
        for a, s, v in values:
            recs = index.get((s, v))
            if not recs:
                continue
            identified = _is_id(a, v)
            for rec in recs:
                for b, t, w in values:
                    if t == s or (a in fixed and b in fixed) or _names_another(b):
                        continue
                    held = list(rec.ids_by_stem.get(t, ()))
                    if identified:
                        for k in kindred(t):
                            held += rec.own_by_stem.get(k, ())
                    if held and w not in held:
                        return True
        return False

    def _agrees(self, tool: Tool, args: Mapping[str, Any]) -> bool:
        """Whether the call keeps to the enum values the user named: where the user named values
        of an enum, some argument of that stem takes one (a transfer from the account in another
        currency than the one asked for does not; a conversion to it does)."""
        for arg in tool.args:
            enum = arg.schema.get("enum")
            if not enum or arg.name not in args:
                continue
            named = self._mentioned(enum)
            if named and not any(args.get(a.name) in named for a in tool.args if a.stem == arg.stem):
                return False
        return True

    def _optional(self, arg: Arg) -> Any:
        """An optional argument is given only when a tool result handed out its value just now
        (an approval id for the call that needs it)."""
        if arg.kind != "string" or "enum" in arg.schema:
            return None
        last = self.records[-1] if self.records else None
        if last is None or last.step != self.step:
            return None
        return next((v for k, v in last.fields.items() if k in last.own and key_stem(k) == arg.stem), None)

    def calls(self) -> list[str]:
        """Every tool call on offer now: per tool, up to `calls_per_tool` filled from the pools
        (the most relevant values of each argument) and up to as many from single records (the
        records no call has used yet first, most recent first)."""
        out: list[str] = []
        selection = self._selection()
        records = [r for r in self.records[::-1]
                   if selection is None or r not in selection[0] or r in selection[1]][: self.max_entities * 4]
        records.sort(key=lambda r: bool(r.derived))  # stable: unused records first, each most recent first
        for tool in self.tools:
            if not any(a.required for a in tool.args):
                plain = call_text(tool.name)
                if plain not in self.done:
                    out.append(plain)
                continue
            pooled = [call_text(tool.name, **args) for args in self._complete(tool, {})]
            bound: list[str] = []
            for rec in records:
                if rec.tool == tool.name:
                    continue  # a tool's output is not its own next input (no convert of a conversion)
                if not tool.stems & rec.stems and not any(a.kind in ("number", "integer") for a in tool.args):
                    continue
                fixed = self._bind(tool, rec)
                if fixed is not None:
                    bound += [call_text(tool.name, **args) for args in self._complete(tool, fixed)[:2]]
                if len(bound) >= self.max_entities:
                    break
            fresh = [c for c in dict.fromkeys(pooled[: max(1, self.calls_per_tool // 2)] + bound + pooled)
                     if c not in self.done]
            out += fresh[: self.calls_per_tool]
        return out

    def _selection(self) -> tuple[list[IndexedRecord], list[IndexedRecord]] | None:
        """The latest listing and the records of it the user's words select, if they do."""
        for listing in self.listings[:1]:
            chosen = self._selected(listing.records)
            if chosen is not None:
                return listing.records, chosen
        return None

    def questions(self) -> list[str]:
        """A question per detail the tools need that nothing has given yet."""
        out: list[str] = []
        for tool in self.tools:
            for arg in tool.args:
                if not arg.required or arg.stem in _FROM_TOOLS or arg.stem in _PROSE or arg.kind == "array":
                    continue
                if self.values(arg) and ("enum" not in arg.schema or self._mentioned(arg.schema["enum"])):
                    continue
                noun = " ".join(w for w in arg.name.lower().split("_") if w not in ("id", "ids", "from", "to", "new"))
                q = f"Which {noun} should I use?"
                if q not in out:
                    out.append(q)
        return out[:4]


@functools.lru_cache(maxsize=1024)
def _diverse_ranks(sizes: tuple[int, ...], limit: int) -> tuple[tuple[int, ...], ...]:
    """Index tuples into per-argument value lists, best first (the top value of every argument,
    then one argument at its next value, and so on), but every value of every argument shows up
    once as early as it can: the combinations that bring in a value not yet used come first."""
    ranks = sorted(itertools.product(*(range(n) for n in sizes)), key=lambda r: (sum(r), max(r, default=0), r))
    seen: set[tuple[int, int]] = set()
    first: list[tuple[int, ...]] = []
    rest: list[tuple[int, ...]] = []
    for r in ranks:
        pairs = {(i, v) for i, v in enumerate(r)}
        if pairs - seen:
            first.append(r)
            seen |= pairs
        else:
            rest.append(r)
    return tuple((first + rest)[:limit])


def _abbreviates(prefix: str, word: str) -> bool:
    """Whether an id prefix abbreviates a word: its start (``inc`` incident, ``o`` order) or
    its initial and consonants in order (``acc`` account)."""
    if not prefix or not word or prefix[0] != word[0]:
        return False
    if word.startswith(prefix):
        return True
    rest = iter(word[1:])
    return all(ch in rest for ch in prefix[1:])


def _is_id(key: str, value: Any) -> bool:
    """Whether a field holds an id (by its key or by its value's shape)."""
    return isinstance(value, str) and (key == "id" or key.endswith("_id") or ID.fullmatch(value) is not None)


def _names_another(name: str) -> bool:
    """Whether an argument's name says it holds a value other than a record's (``new_variant``)."""
    return name.lower().startswith(("new_", "to_", "target_", "other_"))


def _ends_last(items: list[Any]) -> list[Any]:
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


#: Stands for a free-text argument until the call's other values are known.
_PROSE_SLOT: Any = object()


def _distinct_per_stem(args: Mapping[str, Any]) -> bool:
    """Whether the scalar arguments that share a stem all have different values."""
    seen: dict[str, list[Any]] = {}
    for k, v in args.items():
        if isinstance(v, list) or v is _PROSE_SLOT:
            continue
        values = seen.setdefault(key_stem(k), [])
        if v in values:
            return False
        values.append(v)
    return True
