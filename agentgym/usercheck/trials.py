"""Episodes, paired probes and trials: every phrasing sent to users that hold what it asks for.

For each family, a pool of episodes (every split and domain, with no noise and with ambiguity,
which blurs a detail of the opening so the user holds it) is reset once to see what each user
holds. Each phrasing then goes, as the assistant's first message, to a few episodes where the
user holds every concept it asks for (``matched`` trials) and to one where it holds none of them
but holds another (a ``cross`` trial: only a wrong-slot answer can reveal anything). The same
episode with the neutral control message, at the same turn, is the paired control.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

from agentgym import families
from agentgym.usercheck.corpus import Phrasing
from agentgym.usercheck.goals import Holding, read_holding
from agentgym.usercheck.verdict import CONTROL_MESSAGE, Observed, Verdict, judge

__all__ = ["FAMILIES", "NOISE_SETTINGS", "Episode", "Trial", "Settings", "EpisodePool", "plan_trials", "run_trials"]

#: The measured env families and their ids (`agentgym.families`).
FAMILIES: dict[str, str] = {f.name: f.env_id for f in families.FAMILIES}
#: No noise, and ambiguity on every episode (a blurred detail of the opening is held too).
NOISE_SETTINGS: tuple[str | None, ...] = (None, "ambiguity=1.0")
#: Makes an env: ``make(env_id, **kwargs)`` (``gymnasium.make`` by default).
EnvMaker = Callable[..., Any]


@dataclass(frozen=True, slots=True)
class Settings:
    """How many episodes and trials a run takes.

    Attributes:
        pool: seeds per (split, domain, noise) configuration of a family.
        first_seed: the first of those seeds.
        matched: matched trials per phrasing and family.
        cross: cross (wrong-slot) trials per phrasing and family.
        per_concept: at most this many phrasings per (family, concept or style) group, in
            corpus order (None: all); for quick runs.
    """

    pool: int = 200
    first_seed: int = 0
    matched: int = 5
    cross: int = 1
    per_concept: int | None = None


@dataclass(frozen=True, slots=True)
class Episode:
    """One episode of the pool: how to reset it, and what its user holds after reset."""

    config: tuple[str | None, str | None, str | None]  # (split, domain, noise)
    seed: int
    holding: Holding
    key: bytes
    #: `holding.held()` and `holding.stated()`, kept: every phrasing's planning reads them.
    held: frozenset[str]
    stated: frozenset[str]

    @property
    def noise(self) -> str | None:
        return self.config[2]


@dataclass(frozen=True, slots=True)
class Trial:
    """One phrasing sent to one episode's user, and the verdict against its control."""

    family: str
    kind: str  # "matched" or "cross"
    phrasing: Phrasing
    message: str
    episode: Episode
    reply: str
    control_reply: str
    verdict: Verdict

    def to_dict(self) -> dict[str, Any]:
        v, ep = self.verdict, self.episode
        return {
            "family": self.family, "kind": self.kind, "phrasing": self.phrasing.id, "style": self.phrasing.style,
            "asks": list(self.phrasing.asks), "excludes": list(self.phrasing.excludes),
            "sub_family": ep.holding.family, "domain": ep.holding.domain, "split": ep.config[0],
            "noise": ep.noise, "seed": ep.seed, "message": self.message, "reply": self.reply,
            "control_reply": self.control_reply, "held": list(v.held), "revealed": list(v.revealed),
            "n_revealed": v.n_revealed, "answered": list(v.answered), "wrong": list(v.wrong),
            "excluded_revealed": list(v.excluded_revealed), "opportunity": v.opportunity, "reply_kind": v.reply,
        }


def _configs(family: str) -> list[tuple[str | None, str | None]]:
    """(split, domain) of every configuration a family's pool draws from."""
    if family == "crosstask":
        return [("train", None), ("test", None)]
    if family == "dialog":
        from agentgym.envs.dialog.tasks import domains_for
    else:
        from agentgym.envs.tooluse.tasks import domains_for
    return [(split, domain) for split in ("train", "test") for domain in domains_for(split)]


@dataclass
class EpisodePool:
    """The episodes of one family and the envs that play them (one env per configuration)."""

    family: str
    make: EnvMaker
    settings: Settings
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    episodes: list[Episode] = field(default_factory=list)
    _envs: dict[tuple[str | None, str | None, str | None], Any] = field(default_factory=dict)
    _controls: dict[bytes, Observed] = field(default_factory=dict)

    def __post_init__(self) -> None:
        s = self.settings
        for split, domain in _configs(self.family):
            for noise in NOISE_SETTINGS:
                config = (split, domain, noise)
                env = self.env(config)
                for seed in range(s.first_seed, s.first_seed + s.pool):
                    env.reset(seed=seed)
                    key = f"{self.family}|{split}|{domain}|{noise}|{seed}".encode()
                    h = read_holding(env)
                    self.episodes.append(Episode(config, seed, h, key, h.held(), h.stated()))

    def env(self, config: tuple[str | None, str | None, str | None]) -> Any:
        """The env of one configuration (made on first use)."""
        env = self._envs.get(config)
        if env is None:
            split, domain, noise = config
            kwargs: dict[str, Any] = {"split": split, **self.env_kwargs}
            if domain is not None:
                kwargs["domain"] = domain
            if noise is not None:
                kwargs["noise"] = noise
            env = self._envs[config] = self.make(FAMILIES[self.family], **kwargs)
        return env

    def play(self, episode: Episode, message: str) -> Observed:
        """Reset `episode` and send `message` as the assistant's first turn."""
        env = self.env(episode.config)
        env.reset(seed=episode.seed)
        _, _, _, _, info = env.step(message)
        text = " ".join(m["content"] for m in info["messages"] if m.get("role") == "user")
        return Observed(text, tuple(env.unwrapped.user.known_constraints()))

    def control(self, episode: Episode) -> Observed:
        """The episode's reply to the neutral control message (played once)."""
        seen = self._controls.get(episode.key)
        if seen is None:
            seen = self._controls[episode.key] = self.play(episode, CONTROL_MESSAGE)
        return seen

    def close(self) -> None:
        for env in self._envs.values():
            env.close()
        self._envs.clear()


def _eligible(p: Phrasing, e: Episode) -> int:
    """How well episode `e` serves phrasing `p` as a matched trial: 1 plus the number of asked
    (or excluded) concepts its user holds, 0 when it cannot serve."""
    held = e.held
    if not held or not p.applies_to(e.holding.family, e.holding.domain):
        return 0
    if p.is_open:
        return 1
    if not set(p.excludes) <= held:
        return 0
    asked_held = [c for c in p.asks if c in held]
    if p.asks:
        # Every asked concept is held, or already stated where no task holds it back (a ToolUse
        # request states most details itself); a phrasing that asks must find one held, while
        # a negative is served by the concepts it excludes.
        if any(c not in held and c not in e.stated for c in p.asks) or not (asked_held or p.negative):
            return 0
    return 1 + len(asked_held) + len(p.excludes)


def _cross(p: Phrasing, e: Episode) -> bool:
    """Whether `e`'s user holds none of the concepts `p` asks for but holds another (a wrong
    answer is the only way to reveal anything)."""
    if p.negative or p.is_open or not p.applies_to(e.holding.family, e.holding.domain):
        return False
    return bool(e.held) and not e.held & set(p.asks)


def _spread(p: Phrasing, episodes: Iterable[Episode]) -> list[Episode]:
    """`episodes` in an order drawn from the phrasing's id: phrasings spread over the pool."""
    start = zlib.crc32(p.id.encode())
    return sorted(episodes, key=lambda e: zlib.crc32(e.key, start))


def _limited(corpus: Iterable[Phrasing], per_group: int | None) -> list[Phrasing]:
    if per_group is None:
        return list(corpus)
    taken: dict[tuple[str, str], int] = {}
    out = []
    for p in corpus:
        group = (p.family, p.asks[0] if len(p.asks) == 1 and not p.negative else p.style)
        if taken.get(group, 0) < per_group:
            taken[group] = taken.get(group, 0) + 1
            out.append(p)
    return out


def plan_trials(pool: EpisodePool, corpus: Iterable[Phrasing]) -> Iterator[tuple[str, Phrasing, Episode]]:
    """(kind, phrasing, episode) of every trial of `pool`'s family, in corpus order."""
    s = pool.settings
    for p in _limited(corpus, s.per_concept):
        score = {e.key: n for e in pool.episodes if (n := _eligible(p, e))}
        # The episodes that hold the most of what the phrasing names first, spread within (a
        # stable sort keeps the spread order among equals).
        ranked = sorted(_spread(p, [e for e in pool.episodes if e.key in score]), key=lambda e: -score[e.key])
        for e in ranked[: s.matched]:
            yield "matched", p, e
        if s.cross:
            for e in _spread(p, [e for e in pool.episodes if _cross(p, e)])[: s.cross]:
                yield "cross", p, e


def run_trials(family: str, corpus: Iterable[Phrasing], settings: Settings, make: EnvMaker | None = None,
               env_kwargs: dict[str, Any] | None = None) -> list[Trial]:
    """Every trial of `corpus` on `family`'s users."""
    if make is None:
        import gymnasium as gym

        import agentgym  # noqa: F401  (registers the ids)

        make = gym.make
    pool = EpisodePool(family, make, settings, dict(env_kwargs or {}))
    trials = []
    try:
        for kind, p, e in plan_trials(pool, corpus):
            message = p.message(e.holding.noun)
            probe = pool.play(e, message)
            control = pool.control(e)
            verdict = judge(e.holding, probe, control, message, p.asks, p.excludes)
            trials.append(Trial(family, kind, p, message, e, probe.text, control.text, verdict))
    finally:
        pool.close()
    return trials
