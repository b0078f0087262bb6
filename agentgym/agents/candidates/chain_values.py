"""The values an argument of a tool chain may take (`ArgumentValues`): from the user's words by
what the argument's name says it holds, from what the tools said under its stem, and for an
array from the records of a listing."""

from __future__ import annotations

import re
from typing import Any, Sequence

from agentgym.agents.candidates.chain_memory import AFTER_PREPOSITION, STOP_WORDS, ChainMemory, IndexedRecord
from agentgym.agents.candidates.chain_tools import FORMATTED, FREE_CHOICE, Arg, is_id, names_another
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
    key_stem,
)
from agentgym.users.understanding.words import singular

__all__ = ["ArgumentValues"]

_UNIT_NUMBER = re.compile(r"(\d+(?:\.\d+)?)[\s-]*([a-z]+)")
_FOR_PHRASE = re.compile(r"\bfor (?:the |a |an )?([\w][\w '-]{0,40}?)(?: variant| version| one| instead)?(?=[.?!,;]|$)",
                         re.I)


class ArgumentValues:
    """The values an argument may take outside any one record, most relevant first, from what a
    `ChainMemory` holds: the user's (and for ids the brief's) words, by what the argument's name
    says it holds; the values seen under its stem and kindred ones; words of results' free text;
    and for an array, the sets of values over a listing's records.

    Args:
        memory: the episode's memory.
        values_per_argument: values offered per argument unless asked for more.
    """

    def __init__(self, memory: ChainMemory, values_per_argument: int) -> None:
        self.memory = memory
        self.k = values_per_argument

    def _facts(self) -> dict[str, Any]:
        """What the user's words (and for ids the brief's) hold, by kind; once per step."""
        hit = self.memory.memo.get("facts")
        if hit is not None:
            return hit
        said = self.memory.said()
        years = YEAR.findall(said) or self.memory.years
        months = [f"{y}-{m}" for y, m in MONTH_ISO.findall(said)]
        for mname in MONTH_NAME.findall(said):
            number = MONTHS.index(mname.lower()) + 1
            months += [f"{y}-{number:02d}" for y in dict.fromkeys(years)]
        facts = {
            "date": DATE.findall(said),
            "month": months,
            "time": TIME.findall(said),
            "email": [e.rstrip(".") for e in EMAIL.findall(said)],
            "id": ID.findall(said) + ID.findall(self.memory.brief),
            "quoted": QUOTED.findall(said),
            "name": NAME.findall(re.sub(r"[\"\u201c][^\"\u201d]*[\"\u201d]", "", said)),
            "unit": _UNIT_NUMBER.findall(said.lower()),
            "for": [p.strip() for p in _FOR_PHRASE.findall(said)],
        }
        self.memory.memo["facts"] = facts
        return facts

    def _text_values(self, arg: Arg) -> list[Any]:
        """Values the user's (and for ids the brief's) words give `arg`, by what its name says
        it holds."""
        facts = self._facts()
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
        if arg.kind == "string" and "enum" not in arg.schema and s in FREE_CHOICE:
            out += facts["for"]
        return out

    def _ids_for(self, s: str, ids: list[str]) -> list[str]:
        """The ids of `ids` that can be this stem's: with the prefix of its known ids, else with
        a prefix that abbreviates it (``O-`` an order, ``INC-`` an incident), else any."""
        prefixes = {v.split("-")[0] for v in self.memory.by_stem.get(s, ()) if isinstance(v, str) and ID.fullmatch(v)}
        if prefixes:
            return [i for i in ids if i.split("-")[0] in prefixes]
        short = [i for i in ids if _abbreviates(i.split("-")[0].lower(), s)]
        if short:
            return short
        stems = [a.stem for tool in self.memory.tools for a in tool.args]
        return [i for i in ids if not any(_abbreviates(i.split("-")[0].lower(), t) for t in stems)]

    def mentioned(self, values: Sequence[Any]) -> list[Any]:
        """The values the user's words name (whole words, any case), in the order given."""
        key = ("mentioned", tuple(values))
        hit = self.memory.memo.get(key)
        if hit is None:
            hit = self.memory.memo[key] = self._find_mentioned(values)
        return hit

    def _find_mentioned(self, values: Sequence[Any]) -> list[Any]:
        said = self.memory.said().lower()
        out = []
        for v in values:
            if isinstance(v, str) and v and re.search(r"(?<![\w-])" + re.escape(v.lower()) + r"(?![\w-])", said):
                out.append(v)
            elif isinstance(v, (int, float)) and not isinstance(v, bool) and re.search(
                    r"(?<![\w.])" + re.escape(str(v)) + r"(?![\w.])", said):
                out.append(v)
        return out

    def values(self, arg: Arg, limit: int | None = None) -> list[Any]:
        """Values for one argument outside any record, most relevant first (at most `limit`,
        by default `values_per_argument`)."""
        limit = self.k if limit is None else limit
        key = ("values", id(arg), limit)
        hit = self.memory.memo.get(key)
        if hit is None:
            hit = self.memory.memo[key] = self._values(arg, limit)
        return hit

    def _values(self, arg: Arg, limit: int) -> list[Any]:
        schema, s = arg.schema, arg.stem
        if arg.kind == "array":
            return self._sets(arg)[:limit]
        pool: list[Any] = []
        if "enum" in schema:
            enum = list(schema["enum"])
            named = self.mentioned(enum)
            seen = [v for v in self.memory.by_stem.get(s, ()) if v in enum]
            pool = named or seen or enum
        else:
            text = self._text_values(arg)
            known = self.memory.known(s)
            # What the user's words give for this kind of value, then what tools said, latest first.
            pool = text + known
            if arg.kind == "string" and not text:
                pool += self._named_in_results(s)
                if not known and s in self._lookup_stems() and not arg.words & FORMATTED \
                        and not names_another(arg.name):
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
        known = [v for v in self.memory.by_stem.get(s, ()) if isinstance(v, str)]
        if not known or not all(re.fullmatch(r"[a-z][a-z0-9_-]*", v) for v in known):
            return []
        return [w for w in self.memory.result_named + self.memory.result_words if w not in known]

    def _lookup_stems(self) -> set[str]:
        """The stems tools look things up by: the one required argument of a one-argument tool
        (``get_metrics(service)``). Only these take a thing the user names without capitals."""
        hit = self.memory.memo.get("lookup")
        if hit is None:
            hit = self.memory.memo["lookup"] = {a.stem for t in self.memory.tools for a in t.args
                                          if a.required and sum(b.required for b in t.args) == 1}
        return hit

    def _named_by_user(self) -> list[str]:
        """Lower-case words right after a preposition in the user's words (``failures on
        shipping``): a thing named without capitals, for an argument nothing else fills."""
        vocabulary = self.memory.memo.get("vocabulary")
        if vocabulary is None:
            vocabulary = self.memory.memo["vocabulary"] = {w for tool in self.memory.tools for w in tool.vocabulary}
        out: list[str] = []
        for text in self.memory.user_text:
            for w in AFTER_PREPOSITION.findall(text):
                # "from my order", "a return": words the tools use are not the thing named.
                if w not in STOP_WORDS and w not in out and w[:5] not in vocabulary:
                    out.append(w)
        return out

    def _latest_numbers(self) -> list[Any]:
        last = self.memory.records[-1] if self.memory.records else None
        if last is None or last.step != self.memory.step:
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
        for listing in self.memory.listings[:4]:
            if not any(any(key_stem(k) == s for k in r.own) for r in listing.records):
                continue
            chosen = self.selected(listing.records)
            groups = ([chosen] if chosen is not None else []) + [listing.records]
            bucket = latest if first and len(listing.records) > 1 else others
            first = False
            for group in groups:
                raw = [self._field(r, s) for r in group]
                derived = [r.derived.get(s, self._field(r, s)) for r in group]
                for values in (derived, raw):
                    values = [v for v in values if v is not None and arg.item_fits(v)]
                    if values and all(is_id("", v) for v in values):
                        values = list(dict.fromkeys(values))  # an id once; equal amounts stay
                    if values:
                        bucket.append(values)
        given = [list(value) for _, value in self.memory.arrays if value and all(arg.item_fits(v) for v in value)]
        ids = self._ids_like(s)
        out: list[list[Any]] = []
        for values in latest + given + ([ids] if ids else []) + others:
            if values not in out:
                out.append(values)
        return [v[: int(arg.schema.get("maxItems", 50))] for v in out]

    def _ids_like(self, s: str) -> list[str]:
        """Every id with the prefix of this stem's known ids, brief first, each look-up's first."""
        known = [v for v in self.memory.by_stem.get(s, ()) if isinstance(v, str) and ID.fullmatch(v)]
        if not known:
            return []
        prefix = known[0].split("-")[0] + "-"
        out = [i for i in ID.findall(self.memory.brief) if i.startswith(prefix)]
        for listing in reversed(self.memory.listings):
            first = listing.records[0] if listing.records else None
            if first is not None:
                out += [v for k, v in first.fields.items() if k in first.own and key_stem(k) == s and isinstance(v, str)]
        return list(dict.fromkeys(out))

    def selected(self, records: list[IndexedRecord]) -> list[IndexedRecord] | None:
        """The records the user's words select by a field value (the ``approved`` expenses), or
        None. A field selects when its values split the records and the user names exactly one
        of them; a value some tool takes as an enum argument (a currency to pay in) is the
        user's choice of argument, not a selection. The first such field, in the records' order."""
        said = self.memory.said().lower()
        arguments = {v for tool in self.memory.tools for a in tool.args for v in a.schema.get("enum", ())}
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



def _abbreviates(prefix: str, word: str) -> bool:
    """Whether an id prefix abbreviates a word: its start (``inc`` incident, ``o`` order) or
    its initial and consonants in order (``acc`` account)."""
    if not prefix or not word or prefix[0] != word[0]:
        return False
    if word.startswith(prefix):
        return True
    rest = iter(word[1:])
    return all(ch in rest for ch in prefix[1:])
