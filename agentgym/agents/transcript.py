"""The one reading of the public transcript that every agent of this package shares.

The env states the task in a brief and renders each tool result as JSON text; the agents (the
heuristic's strategies, the candidate builders, the exploit and defect agents, the expert, the
PPO features) read that text back here:

* words: one stemmer (`agentgym.users.understanding.words`, the simulated users' own), and
  `key_stem`, what a key or argument name refers to;
* patterns: one spelling each of an e-mail address, an ISO date, a month, a clock time, an id, a
  capitalised name, a quoted title, a number and a transient tool failure;
* the brief: its system message (`brief_of`) and the vocabulary a booking brief lists
  (`BriefVocabulary`);
* tool results: each message decoded once (`ToolResult`, paired with the call that made it by
  `answer_calls`), and its records (`result_records`: every dict with its path, the keys and
  indices that lead to it) and values (`result_values`: every scalar with its path);
* the user's words: their messages less the env's error reports (`user_texts`);
* a value against an argument's schema: the env's own compiled check (`value_check`).

Nothing here knows a domain or reads anything an agent may not see.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence, Union

from agentgym.core.tool_spec import compile_checker
from agentgym.users.understanding.words import singular, stem

__all__ = [
    # words
    "item_key", "key_stem",
    # patterns
    "ANY_ID", "DATE", "EMAIL", "FULL_NAME", "ID", "MONTHS", "MONTH_ISO", "MONTH_NAME", "NAME", "NUMBER", "PLACE_ID",
    "QUOTED", "SENTENCE_BREAK", "TIME", "TRANSIENT", "YEAR", "transient",
    # the brief and the user
    "ERROR_PREFIX", "BriefVocabulary", "brief_of", "user_texts",
    # tool schemas and results
    "Path", "ResultList", "ResultRecord", "ToolResult", "answer_calls", "decode_json", "path_key", "result_records",
    "result_values", "tool_results", "value_check",
]

# ================================================================================ words
@functools.lru_cache(maxsize=4096)
def key_stem(key: str) -> str:
    """What a key or argument name refers to: its last word, without ``_id(s)``, stemmed.

    ``from_account``, ``account_id`` -> ``account``; ``person_ids`` -> ``person``;
    ``root_cause_service`` and ``services`` -> one stem; ``free_starts_utc``, ``start_utc`` -> ``utc``.
    """
    k = key.lower()
    for suffix in ("_ids", "_id"):
        if k.endswith(suffix) and len(k) > len(suffix):
            k = k[: -len(suffix)]
            break
    return stem(k.rsplit("_", 1)[-1])


def item_key(key: str) -> str:
    """The key one item of a list under `key` stands under: ``person_ids`` -> ``person_id``,
    ``attendees`` -> ``attendee`` (the last word made singular)."""
    if key.endswith("_ids"):
        return key[:-1]
    head, _, last = key.rpartition("_")
    return f"{head}_{singular(last)}" if head else singular(last)


# ================================================================================ patterns
#: An e-mail address (never ending in the sentence's full stop).
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
#: An ISO date, ``2025-03-14``.
DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
#: An ISO month, ``2025-03`` (year, month), not the start of a date.
MONTH_ISO = re.compile(r"\b(\d{4})-(\d{2})\b(?!-)")
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
#: A month's name, any case.
MONTH_NAME = re.compile(r"\b(" + "|".join(MONTHS) + r")\b", re.I)
#: A year of this century.
YEAR = re.compile(r"\b(20\d{2})\b")
#: A clock time, ``09:30`` (hours 00-23).
TIME = re.compile(r"\b(?:[01]\d|2[0-3]):[0-5]\d\b")
#: An id as the tools hand them out: ``E-101``, ``INC-2041``.
ID = re.compile(r"\b[A-Z]{1,5}-\d{2,}\b")
#: A place's id as the booking tools hand them out: ``cafe_012``.
PLACE_ID = re.compile(r"\b[a-z]+_\d{2,}\b")
#: Either kind of id.
ANY_ID = re.compile(ID.pattern + "|" + PLACE_ID.pattern)
#: A number standing alone (not part of a word, a date or an id).
NUMBER = re.compile(r"(?<![\w.-])\d+(?:\.\d+)?(?![\w-])")
#: A capitalised name of two words or more: ``Dana Whitfield``, ``Harbor View Hotel``.
NAME = re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)+\b")
#: A person's first and last name, exactly two capitalised words.
FULL_NAME = re.compile(r"\b([A-Z][a-z]+ [A-Z][a-z]+)\b")
#: Where a sentence ends and the next begins.
SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+")
#: A title in double quotes, straight or curly.
QUOTED = re.compile(r"[\"\u201c]([^\"\u201d]{1,80})[\"\u201d]")

#: How the env's error reports open (a failed call, an unparseable action).
ERROR_PREFIX = "[error"
#: How a tool failure a retry may clear reads (a server error, a timeout, a rate limit), unlike
#: a refusal of the arguments. A status code is a word of its own, so an id that holds its digits
#: ("no customer 'C-42931'") is no rate limit.
TRANSIENT = re.compile(r"\b(?:503|429)\b|service unavailable|temporarily unavailable|timed out|timeout|rate limit"
                       r"|too many requests|try again|retry after", re.I)


def transient(text: str) -> bool:
    """Whether a tool message's text reports a failure that the same call may not meet again."""
    return text.startswith("[error TOOL_ERROR]") and TRANSIENT.search(text) is not None


# ================================================================================ the brief
def brief_of(messages: Iterable[Mapping[str, Any]]) -> str:
    """The system message's text (the brief), or ``""``."""
    return next((m.get("content") or "" for m in messages if m.get("role") == "system"), "")


def user_texts(messages: Iterable[Mapping[str, Any]]) -> list[str]:
    """The user's messages, less the env's error reports."""
    return [m.get("content") or "" for m in messages
            if m.get("role") == "user" and not (m.get("content") or "").startswith(ERROR_PREFIX)]


_BRIEF_LIST = re.compile(r"^(Known (\w+)s|Areas|Amenities):\s*(.+?)\.?$", re.M)
_BRIEF_NOUN = re.compile(r"find (?:an? )?(.+?) that meets")
_BRIEF_PRICES = re.compile(r"Prices are in (.+?), from (\d+) to (\d+) in steps of (\d+)")
_BRIEF_RATINGS = re.compile(r"ratings go from (\d+(?:\.\d+)?) to (\d+(?:\.\d+)?)")


@dataclass(frozen=True)
class BriefVocabulary:
    """What a booking brief states of its domain: the noun for a place, the word for its
    category (``""`` when the brief lists none) and the values of each attribute, the price unit
    and range, and the rating range. Where a session brief has several booking sections, the
    last one's lists count."""

    noun: str = "place"
    label: str = ""
    categories: tuple[str, ...] = ()
    areas: tuple[str, ...] = ()
    amenities: tuple[str, ...] = ()
    unit: str = ""
    prices: tuple[int, int] = (0, 10**9)
    ratings: tuple[float, float] = (0.0, 5.0)

    @classmethod
    def of(cls, brief: str) -> BriefVocabulary:
        """The vocabulary `brief` states (every field at its default where it states none)."""
        lists: dict[str, tuple[str, ...]] = {}
        label = ""
        for head, word, values in _BRIEF_LIST.findall(brief):
            key = "areas" if head == "Areas" else "amenities" if head == "Amenities" else "categories"
            if key == "categories":
                label = word
            lists[key] = tuple(v.strip() for v in values.split(",") if v.strip())
        noun = _BRIEF_NOUN.search(brief)
        prices = _BRIEF_PRICES.search(brief)
        ratings = _BRIEF_RATINGS.search(brief)
        return cls(
            noun=noun.group(1) if noun else "place", label=label,
            categories=lists.get("categories", ()), areas=lists.get("areas", ()), amenities=lists.get("amenities", ()),
            unit=prices.group(1) if prices else "",
            prices=(int(prices.group(2)), int(prices.group(3))) if prices else (0, 10**9),
            ratings=(float(ratings.group(1)), float(ratings.group(2))) if ratings else (0.0, 5.0),
        )

    def lists(self) -> dict[str, list[str]]:
        """The three lists by slot name: ``category``, ``area``, ``amenity``."""
        return {"category": list(self.categories), "area": list(self.areas), "amenity": list(self.amenities)}


# ================================================================================ tool schemas
def value_check(schema: Mapping[str, Any]) -> Callable[[Any], bool]:
    """Whether a value fits an argument's JSON schema, by the check the env validates calls with
    (`agentgym.core.tool_spec.compile_checker`): a schema with neither a type nor an enum takes
    any value, one of a type the check does not know (an object) none."""
    if "type" not in schema and "enum" not in schema:
        return lambda value: True
    try:
        check = compile_checker(dict(schema))
    except TypeError:
        return lambda value: False
    return lambda value: check(value) is None


# ================================================================================ tool results
def decode_json(content: Any) -> Any:
    """The JSON value of a message's content, or None when it is not JSON."""
    try:
        return json.loads(content)
    except (json.JSONDecodeError, TypeError):
        return None


#: Where a value sits in a tool result: the keys and list indices that lead to it.
Path = tuple[Union[str, int], ...]


@dataclass(frozen=True, slots=True)
class ToolResult:
    """One tool message, decoded once: the tool's name, the text, the JSON value (None when the
    text is not JSON: an error report, a corrupted result), whether it reports an error, and the
    call that made it when known (`answer_calls`)."""

    name: str
    text: str
    data: Any
    failed: bool
    call: tuple[str, dict[str, Any]] | None = None

    @classmethod
    def of(cls, message: Mapping[str, Any], call: tuple[str, dict[str, Any]] | None = None) -> ToolResult:
        """A tool message (``role`` ``tool``) as a `ToolResult`."""
        text = message.get("content") or ""
        return cls(message.get("name", "") or "", text, decode_json(text), text.startswith(ERROR_PREFIX), call)


def tool_results(messages: Iterable[Mapping[str, Any]]) -> list[ToolResult]:
    """The tool messages among `messages`, each decoded."""
    return [ToolResult.of(m) for m in messages if m.get("role") == "tool"]


def answer_calls(pending: list[tuple[str, dict[str, Any]]], messages: Iterable[Mapping[str, Any]]) -> list[ToolResult]:
    """The tool messages among `messages`, each paired with the first call of `pending` (the
    agent's calls awaiting results, as ``(name, arguments)``) of its tool's name, which it takes
    off `pending`."""
    out = []
    for m in messages:
        if m.get("role") != "tool":
            continue
        name = m.get("name", "")
        i = next((j for j, (n, _) in enumerate(pending) if n == name), None)
        out.append(ToolResult.of(m, pending.pop(i) if i is not None else None))
    return out


#: A scalar a record holds as a field (a null is no value), and one a list holds as an item.
_Scalar = (str, int, float, bool)
_Item = (str, int, float)
#: How deep into a result records are read, and how many items of a list.
MAX_DEPTH = 4
MAX_ITEMS = 64


@dataclass(slots=True)
class ResultRecord:
    """A dict in a tool result: where it sits, its own scalar fields, and its parents' (the
    fields of the dicts around it, nearest first, that it does not have itself)."""

    path: Path
    own: dict[str, Any]
    inherited: dict[str, Any] = field(default_factory=dict)

    @property
    def list_key(self) -> str:
        """The key of the list (or dict) it sits under: the last key of its path (``""``: none)."""
        return next((p for p in reversed(self.path) if isinstance(p, str)), "")

    @property
    def index(self) -> int:
        """Its index in the list it is an item of (-1: not a list item)."""
        return self.path[-1] if self.path and isinstance(self.path[-1], int) else -1


@dataclass(slots=True)
class ResultList:
    """A list in a tool result: where it sits, the records among its items (in order) and its
    scalar items (a list's first `MAX_ITEMS` items only)."""

    path: Path
    records: list[ResultRecord]
    scalars: list[Any]

    @property
    def key(self) -> str:
        """The key it sits under (``""``: none)."""
        return next((p for p in reversed(self.path) if isinstance(p, str)), "")


def result_records(data: Any) -> list[ResultRecord | ResultList]:
    """The records and lists of a decoded tool result, down to `MAX_DEPTH`: a dict before what
    it holds, a list after its items (so a list's records are complete when it comes)."""
    out: list[ResultRecord | ResultList] = []
    _read(data, (), {}, out)
    return out


def _read(node: Any, path: Path, parent: dict[str, Any], out: list[ResultRecord | ResultList]) -> ResultRecord | None:
    if len(path) > MAX_DEPTH:
        return None
    if isinstance(node, list):
        items = node[:MAX_ITEMS]
        recs = [r for i, x in enumerate(items) if (r := _read(x, (*path, i), parent, out)) is not None]
        out.append(ResultList(path, recs, [x for x in items if isinstance(x, _Item) and not isinstance(x, bool)]))
        return None
    if not isinstance(node, dict):
        return None
    own = {k: v for k, v in node.items() if isinstance(v, _Scalar)}
    rec = ResultRecord(path, own, {k: v for k, v in parent.items() if k not in own})
    out.append(rec)
    fields = {**rec.inherited, **own}
    for k, v in node.items():
        if isinstance(v, (list, dict)):
            _read(v, (*path, k), fields, out)
    return rec


def result_values(data: Any) -> list[tuple[Path, Any]]:
    """Every scalar of a decoded tool result with its path, in the order the text writes them
    (a list's first `MAX_ITEMS` items only)."""
    out: list[tuple[Path, Any]] = []
    stack: list[tuple[Path, Any]] = [((), data)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            stack += reversed([((*path, str(k)), v) for k, v in node.items()])
        elif isinstance(node, list):
            stack += reversed([((*path, i), v) for i, v in enumerate(node[:MAX_ITEMS])])
        elif isinstance(node, _Scalar):
            out.append((path, node))
    return out


def path_key(path: Sequence[str | int]) -> str | None:
    """The key a value at `path` stands under: its last key, made singular once per list it is
    an item of below that key (``("attendees", 0)`` -> ``attendee``); None under no key."""
    key: str | None = None
    for p in path:
        key = p if isinstance(p, str) else item_key(key) if key else None
    return key
