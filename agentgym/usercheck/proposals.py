"""Proposals: does the Dialog user hear which place a message proposes, as a person would?

A message naming several places proposes the one it recommends ("I'd go with A, though B is
also an option", "Top pick: A. Runner-up: B."), and a place it names only to set it aside is no
proposal ("B is fully booked then, sorry. How about A?"); one naming several with no
recommendation proposes none, and the user asks which one the assistant recommends. The corpus
(``data/proposals/*.jsonl``, parsed strictly, written for this check) holds both styles::

    {"id": "recommend/1", "style": "recommendation", "text": "I'd go with {place}, though {other} is fine too."}
    {"id": "choice/1", "style": "choice", "text": "I found {place} and {other}. Which do you prefer?"}

Each phrasing goes, as the assistant's first message, to a few episodes whose user books places
(every Dialog split and domain; CrossTask sessions that open with a booking), naming two of the
world's places. The verdict reads the user's reply: it judged the recommended place (named it,
accepting it or saying why not), the other one (a wrong reading), or neither (for a choice: it
asked which one).
"""

from __future__ import annotations

import json
import re
import zlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Iterable

from agentgym.core.data import strict
from agentgym.usercheck.summary import TARGETS, Rate

__all__ = ["STYLES", "ProposalPhrasing", "ProposalTrial", "load_proposals", "parse_proposal", "proposal_problems",
           "run_proposals", "proposal_rates", "meets_proposal_targets"]

#: ``recommendation``: proposes the place it recommends; ``choice``: names several, proposes none.
STYLES = ("recommendation", "choice")
#: Phrasings the shipped corpus holds at least, per style.
MIN_PER_STYLE = {"recommendation": 40, "choice": 15}
#: The families whose users judge proposals, and their env ids.
FAMILIES = {"dialog": "AgentRL/Dialog-v0", "crosstask": "AgentRL/CrossTask-v0"}
_MAX_TEXT = 500


@dataclass(frozen=True, slots=True)
class ProposalPhrasing:
    """One message naming two places, `{place}` (the one it recommends, if any) and `{other}`."""

    id: str
    style: str
    text: str

    def message(self, place: str, other: str) -> str:
        return self.text.replace("{place}", place).replace("{other}", other)


def parse_proposal(raw: Any, where: str = "proposal") -> ProposalPhrasing:
    """Parse one record, strictly; ValueError naming what is wrong."""
    d = strict(raw, {"id", "style", "text"}, where)
    for key in ("id", "style", "text"):
        if not isinstance(d[key], str) or not d[key].strip():
            raise ValueError(f"{where}: {key} must be a non-empty string")
    if d["style"] not in STYLES:
        raise ValueError(f"{where}: style must be one of {', '.join(STYLES)}")
    text = d["text"]
    if len(text) > _MAX_TEXT or text.count("{place}") < 1 or text.count("{other}") < 1:
        raise ValueError(f"{where}: text must name {{place}} and {{other}}, in at most {_MAX_TEXT} characters")
    if "{" in text.replace("{place}", "").replace("{other}", ""):
        raise ValueError(f"{where}: only {{place}} and {{other}} are placeholders")
    return ProposalPhrasing(d["id"], d["style"], text)


def load_proposals(folder: str | Path | None = None) -> tuple[ProposalPhrasing, ...]:
    """Every phrasing of the ``*.jsonl`` files in `folder` (default: the shipped ones); ids unique."""
    if folder is None:
        files = sorted((f for f in resources.files(__package__).joinpath("data", "proposals").iterdir()
                        if f.name.endswith(".jsonl")), key=lambda f: f.name)
    else:
        files = sorted(Path(folder).glob("*.jsonl"))
    out: list[ProposalPhrasing] = []
    seen: set[str] = set()
    for f in files:
        for n, line in enumerate(f.read_text("utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{f.name}:{n}: not JSON ({exc.msg})") from None
            p = parse_proposal(raw, f"{f.name}:{n}")
            if p.id in seen:
                raise ValueError(f"{f.name}:{n}: phrasing id {p.id!r} repeats")
            seen.add(p.id)
            out.append(p)
    return tuple(out)


def proposal_problems(corpus: Iterable[ProposalPhrasing]) -> list[str]:
    """What the shipped proposals lack against their promise (empty when they keep it): at least
    `MIN_PER_STYLE` phrasings of each style, no text twice."""
    corpus = list(corpus)
    problems = [f"proposals: {sum(p.style == s for p in corpus)} {s} phrasings, fewer than {n}"
                for s, n in MIN_PER_STYLE.items() if sum(p.style == s for p in corpus) < n]
    texts = [" ".join(p.text.lower().split()) for p in corpus]
    if len(set(texts)) < len(texts):
        problems.append("proposals: a text repeats")
    return problems


@dataclass(frozen=True, slots=True)
class ProposalTrial:
    """One phrasing sent to one episode's user, and how the reply read."""

    family: str
    phrasing: ProposalPhrasing
    domain: str
    seed: int
    message: str
    reply: str
    #: The user named the recommended place, the other one, or asked which one is meant.
    judged_place: bool
    judged_other: bool
    asked_which: bool

    @property
    def understood(self) -> bool:
        """Recommendation: the recommended place judged alone; choice: no place judged."""
        if self.phrasing.style == "recommendation":
            return self.judged_place and not self.judged_other
        return not (self.judged_place or self.judged_other)

    def to_dict(self) -> dict[str, Any]:
        return {"family": self.family, "phrasing": self.phrasing.id, "style": self.phrasing.style,
                "domain": self.domain, "seed": self.seed, "message": self.message, "reply": self.reply,
                "judged_place": self.judged_place, "judged_other": self.judged_other,
                "asked_which": self.asked_which, "understood": self.understood}


def _dialog_world(env: Any) -> tuple[str, Any] | None:
    """The (domain, world) of the booking the user asks for now, or None when it asks for none."""
    task = env.unwrapped.task
    if task.family == "crosstask":
        seg = task.world.segments[task.world.active]
        task = seg.task if seg.family == "dialog" else None
    return (task.domain, task.world) if task is not None else None


def _configs(family: str) -> list[dict[str, Any]]:
    if family == "crosstask":
        return [{"split": "train"}, {"split": "test"}]
    from agentgym.envs.dialog.tasks import domains_for

    return [{"split": split, "domain": d} for split in ("train", "test") for d in domains_for(split)]


def run_proposals(family: str, corpus: Iterable[ProposalPhrasing], pool: int = 200, first_seed: int = 0,
                  matched: int = 5, make: Callable[..., Any] | None = None) -> list[ProposalTrial]:
    """Every phrasing of `corpus` sent to `matched` episodes of `family` (drawn from `pool` seeds
    per configuration, spread by the phrasing's id), naming two places of the world."""
    if make is None:
        import gymnasium as gym

        import agentgym  # noqa: F401  (registers the ids)

        make = gym.make
    envs = [(config, make(FAMILIES[family], **config)) for config in _configs(family)]
    episodes: list[tuple[int, int, bytes]] = []
    for k, (config, env) in enumerate(envs):
        for seed in range(first_seed, first_seed + pool):
            env.reset(seed=seed)
            if _dialog_world(env) is not None:
                episodes.append((k, seed, f"{family}|{sorted(config.items())}|{seed}".encode()))
    trials = []
    try:
        for p in corpus:
            start = zlib.crc32(p.id.encode())
            for k, seed, key in sorted(episodes, key=lambda e: zlib.crc32(e[2], start))[:matched]:
                env = envs[k][1]
                env.reset(seed=seed)
                got = _dialog_world(env)
                assert got is not None
                domain, world = got
                n = len(world.places)
                i = zlib.crc32(key, start) % n
                place, other = world.places[i], world.places[(i + 1 + start % (n - 1)) % n]
                message = p.message(place.name, other.name)
                _, _, _, _, info = env.step(message)
                reply = " ".join(m["content"] for m in info["messages"] if m.get("role") == "user")
                trials.append(ProposalTrial(family, p, domain, seed, message, reply, *_named(reply, place.name,
                                                                                            other.name),
                                            "which one" in reply.lower()))
    finally:
        for _, env in envs:
            env.close()
    return trials


def _named(reply: str, place: str, other: str) -> tuple[bool, bool]:
    """Whether `reply` names `place`, and `other`, each as a whole name: one name may begin with
    the other ("Stone Plate 5" and "Stone Plate"), so the longer is read first and set aside."""
    found = {}
    for name in sorted((place, other), key=len, reverse=True):
        pattern = re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])")
        found[name] = bool(pattern.search(reply))
        reply = pattern.sub(" ", reply)
    return found[place], found[other]


def _rate(trials: list[ProposalTrial], hit: Callable[[ProposalTrial], bool]) -> Rate:
    return Rate(sum(1 for t in trials if hit(t)), len(trials))


def proposal_rates(trials: Iterable[ProposalTrial]) -> dict[str, dict[str, Rate]]:
    """Per family: recommendations understood, the other place judged, choices that judged no
    place, and choices answered with a question which one."""
    out: dict[str, dict[str, Rate]] = {}
    trials = list(trials)
    for family in dict.fromkeys(t.family for t in trials):
        rec = [t for t in trials if t.family == family and t.phrasing.style == "recommendation"]
        choice = [t for t in trials if t.family == family and t.phrasing.style == "choice"]
        out[family] = {"understood": _rate(rec, lambda t: t.understood),
                       "wrong_place": _rate(rec + choice, lambda t: t.judged_other),
                       "choice_clean": _rate(choice, lambda t: t.understood),
                       "choice_asks": _rate(choice, lambda t: t.asked_which)}
    return out


def meets_proposal_targets(rates: dict[str, dict[str, Rate]]) -> bool:
    """Understood at the overall target, the other place judged at most at the wrong-slot one,
    and choices clean at the overall target, for every family."""
    for r in rates.values():
        if r["understood"].n and r["understood"].value < TARGETS["overall"]:
            return False
        if r["wrong_place"].n and r["wrong_place"].value > TARGETS["wrong"]:
            return False
        if r["choice_clean"].n and r["choice_clean"].value < TARGETS["overall"]:
            return False
    return True
