"""Dialog domains as data: each `data/<name>.json` file describes one world's vocabulary.

Files are parsed strictly: an unknown or missing field is an error, never ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from agentgym.core.data import read_json, read_json_file, strict
from agentgym.users.understanding import Lexicon, parse_lexicon

__all__ = ["Domain", "Lexicon", "load_domains", "load_lexicon", "DAYS", "SLOTS"]

DAYS: tuple[str, ...] = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
SLOTS: tuple[str, ...] = ("morning", "afternoon", "evening")
#: The days as assistants shorten them ("Sat morning"). Not "sun": "plenty of sun" names no day.
DAY_SHORT: dict[str, str] = {"mon": "monday", "tue": "tuesday", "tues": "tuesday", "wed": "wednesday",
                             "thu": "thursday", "thur": "thursday", "thurs": "thursday", "fri": "friday",
                             "sat": "saturday"}


@dataclass(frozen=True)
class Domain:
    """The vocabulary of one dialog domain."""

    name: str
    noun: str
    plural: str
    id_prefix: str
    split: str
    size: tuple[int, int]
    name_parts: tuple[tuple[str, ...], tuple[str, ...]]
    category_label: str
    categories: tuple[str, ...]
    category_synonyms: tuple[str, ...]
    areas: tuple[str, ...]
    price_min: int
    price_max: int
    price_step: int
    price_unit: str
    amenities: tuple[str, ...]
    #: How the user says it needs each amenity, after "It needs to" ("have a projector", "be pet
    #: friendly"): each holds the amenity's own words.
    amenity_phrases: dict[str, str]
    booking_noun: str
    #: How the user says when it wants the place, in the domain's own words: three forms, each
    #: with ``{day}`` and ``{slot}`` ("I'd like to check in on {day} {slot}." for a stay).
    time_phrases: tuple[str, ...]

    @property
    def a_noun(self) -> str:
        """The noun with its indefinite article ("a cafe", "an event venue")."""
        return f"{'an' if self.noun[:1].lower() in 'aeiou' else 'a'} {self.noun}"

    def __hash__(self) -> int:
        # A domain keys the per-domain caches looked up on every reset; its name alone is hashed
        # (equal domains have equal names), not every vocabulary tuple.
        return hash(self.name)


def parse_domain(raw: Any, where: str = "domain") -> Domain:
    """Parse one domain file's JSON object, strictly."""
    d = strict(raw, {"name", "noun", "plural", "id_prefix", "split", "size", "name_parts", "category",
                     "areas", "price", "amenities", "amenity_phrases", "booking_noun", "time_phrases"}, where)
    cat = strict(d["category"], {"label", "values", "synonyms"}, f"{where}.category")
    price = strict(d["price"], {"min", "max", "step", "unit"}, f"{where}.price")
    if d["split"] not in ("train", "test"):
        raise ValueError(f"{where}.split must be train or test")
    lo, hi = d["size"]
    if not 1 <= lo <= hi:
        raise ValueError(f"{where}.size must be [min, max] with 1 <= min <= max")
    if price["step"] < 1 or price["max"] <= price["min"] or (price["max"] - price["min"]) % price["step"]:
        raise ValueError(f"{where}.price: max - min must be a positive multiple of step (prices lie on a grid)")
    if len(d["name_parts"]) != 2:
        raise ValueError(f"{where}.name_parts must hold two lists")
    amenity_phrases = d["amenity_phrases"]
    if not isinstance(amenity_phrases, dict) or set(amenity_phrases) != set(d["amenities"]) or not all(
            isinstance(v, str) and k in v for k, v in amenity_phrases.items()):
        raise ValueError(f"{where}.amenity_phrases must give each amenity a phrase holding its words")
    phrases = d["time_phrases"]
    if not isinstance(phrases, list) or len(phrases) != 3 or not all(
            isinstance(f, str) and "{day}" in f and "{slot}" in f for f in phrases):
        raise ValueError(f"{where}.time_phrases must hold three forms, each with {{day}} and {{slot}}")
    return Domain(
        name=d["name"], noun=d["noun"], plural=d["plural"], id_prefix=d["id_prefix"], split=d["split"],
        size=(int(lo), int(hi)),
        name_parts=(tuple(d["name_parts"][0]), tuple(d["name_parts"][1])),
        category_label=cat["label"], categories=tuple(cat["values"]), category_synonyms=tuple(cat["synonyms"]),
        areas=tuple(d["areas"]),
        price_min=int(price["min"]), price_max=int(price["max"]), price_step=int(price["step"]),
        price_unit=price["unit"],
        amenities=tuple(d["amenities"]), amenity_phrases=dict(amenity_phrases), booking_noun=d["booking_noun"],
        time_phrases=tuple(phrases),
    )


def _read(name: str) -> Any:
    """The parsed JSON of this family's ``data/<name>``."""
    return read_json(__package__, name)


@lru_cache(maxsize=None)
def load_domains() -> dict[str, Domain]:
    """Every dialog domain shipped in `data/`, by name, in sorted file order."""
    out: dict[str, Domain] = {}
    for entry in sorted(resources.files(__package__).joinpath("data").iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".json") and entry.name != "lexicon.json":
            dom = parse_domain(read_json_file(entry, entry.name), entry.name)
            out[dom.name] = dom
    return out


@lru_cache(maxsize=None)
def load_lexicon() -> Lexicon:
    """The words the dialog user recognises per slot (``data/lexicon.json``, parsed strictly)."""
    return parse_lexicon(_read("lexicon.json"), "lexicon.json")
