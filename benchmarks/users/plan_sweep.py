"""Does the hard tier's itinerary user hear a plan, and a request for its yes, in other words than
the expert's? And does its give-way user hear "nothing meets every need" in other words?

    PYTHONPATH=. .venv/bin/python benchmarks/users/plan_sweep.py [--seeds 0:40] [--json FILE]

The expert plays Dialog hard tasks (dev seeds, both splits) to the turn where it reads the plan
to the user and asks for its yes (an itinerary), or says that no place meets every need (a
give-way task). There the episode is copied, and the expert's message replaced by other
phrasings of the same content: `PLAN_STYLES` (markdown tables, numbered lists, bold labels,
prose, one-liners; days as "Friday", "Fri 12 June", "the 12th", "day 3"; prices as "18 EUR",
"€18", "18 euros"; totals, notes about places set aside, a question before the plan) times
`ASKS` (ways to ask for the yes, one or two questions), combined deterministically; wrong plans
in the same styles (a place twice, a booking missing, a place the agent's own checks ruled
out); and `GIVE_WAY` claims. `ASKS` and `GIVE_WAY` are data, ``plan_sweep.json``. Each reply is
read as a yes, a revision (the changed mind's answer to any first plan), a question for the
missing or doubled bookings, or other. For right plans a yes must record exactly the plan
written; for a place twice or a booking missing the user must ask; a whole plan with a place
ruled out is heard as any plan (the user never checks one: that would leak the gold). For a
sample of replies the expert then goes on from the copy, and the episode's success is the
outcome. The same code, run on the user before and after a change, gives the rates of its
misfires (`--json` keeps every miss); `--strict` exits 1 on a miss.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

import gymnasium as gym

import agentgym  # noqa: F401  (registers the ids)
from agentgym.agents.expert import ExpertAgent
from agentgym.core.data import strict
from agentgym.envs.dialog.hard_user import gives_way
from agentgym.usercheck.summary import Rate

#: The weekdays, in order: a stated date ("Fri 14 June", "the 14th") is drawn from one made-up
#: calendar, as the form names weekdays only.
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


@dataclass(frozen=True, slots=True)
class Item:
    """One booking of a plan as an agent may state it."""

    label: str
    name: str
    id: str
    day: str
    slot: str
    price: int
    category: str
    n: int  # the booking's day of the trip, 1-based

    @property
    def short(self) -> str:
        return self.day[:3].capitalize()

    @property
    def date(self) -> str:
        return f"{self.short} {10 + _DAYS.index(self.day)} June"

    @property
    def nth(self) -> str:
        d = 10 + _DAYS.index(self.day)
        return f"the {d}th"


def _total(items: list[Item]) -> int:
    return sum(i.price for i in items)


def _rows(items: list[Item], f: Callable[[Item], str]) -> str:
    return "\n".join(f(i) for i in items)


#: Ways to state a whole plan; `alt` is a place set aside for the first booking (a note about an
#: alternative considered), or None.
PLAN_STYLES: dict[str, Callable[[list[Item], str | None], str]] = {
    "table": lambda it, alt: "| Booking | Place | Day | Price |\n|---|---|---|---|\n" + _rows(
        it, lambda i: f"| {i.label} | {i.name} | {i.day.capitalize()} {i.slot} | {i.price} EUR |"),
    "table-total": lambda it, alt: "Here's the itinerary:\n\n| # | Venue | When | Cost |\n|---|---|---|---|\n" + _rows(
        it, lambda i: f"| {i.label} | {i.name} ({i.id}) | {i.date}, {i.slot} | €{i.price} |") +
        f"\n| | **Total** | | **€{_total(it)}** |",
    "numbered": lambda it, alt: "Proposed plan:\n" + _rows(
        it, lambda i: f"{'ABCDE'.index(i.label) + 1}. {i.name} – {i.day.capitalize()} {i.slot}, {i.price} EUR"),
    "bold": lambda it, alt: _rows(it, lambda i: f"**{i.label} – {i.category.capitalize()}:** {i.name} "
                                                f"({i.short}, {i.price} EUR)"),
    "bullets-dash": lambda it, alt: "Plan:\n" + _rows(it, lambda i: f"- {i.name} — {i.short} {i.slot} — {i.price} euros"),
    "prose": lambda it, alt: "I'd go with " + ", then ".join(f"{i.name} on {i.day.capitalize()} {i.slot}"
                                                            for i in it) + ".",
    "prose-priced": lambda it, alt: "For booking " + "; for booking ".join(
        f"{i.label} I've picked {i.name} ({i.price} euros)" for i in it) + f". That comes to {_total(it)} euros in total.",
    "terse": lambda it, alt: " / ".join(f"{i.label}: {i.name}" for i in it),
    "terse-arrow": lambda it, alt: "; ".join(f"{i.label} → {i.name} ({i.short})" for i in it),
    "day-n": lambda it, alt: _rows(it, lambda i: f"Day {i.n}: {i.name}, {i.slot} (€{i.price})"),
    "nth": lambda it, alt: "Bookings: " + ", ".join(f"{i.name} on {i.nth}" for i in it) + ".",
    "dated": lambda it, alt: _rows(it, lambda i: f"* {i.date} ({i.slot}): {i.name} — {i.price} EUR"),
    "ids": lambda it, alt: "Booked: " + ", ".join(f"{i.id} ({i.name})" for i in it) + ".",
    "headed": lambda it, alt: "### Your itinerary\n\n" + _rows(
        it, lambda i: f"- **Booking {i.label}** ({i.day.capitalize()}, {i.slot}): {i.name}, {i.price} EUR") +
        f"\n\n**Total:** {_total(it)} EUR",
    "note-full": lambda it, alt: _rows(it, lambda i: f"- Booking {i.label}: {i.name} ({i.short} {i.slot})") + (
        f"\n\n({alt} was full, so I went with {it[0].name} for booking A.)" if alt else ""),
    "note-inline": lambda it, alt: _rows(it, lambda i: f"- {i.label}: {i.name}" + (
        f" (instead of {alt}, which was fully booked)" if alt and i is it[0] else "")),
    "note-instead": lambda it, alt: _rows(it, lambda i: f"- {i.label}: {i.name}" + (
        f" instead of {alt}" if alt and i is it[0] else "")),
    "note-considered": lambda it, alt: (f"I also looked at {alt}, but it had no availability then. " if alt else "") +
        "The plan: " + ", ".join(f"{i.name} ({i.label})" for i in it) + ".",
    "note-over": lambda it, alt: _rows(it, lambda i: f"{i.label}. {i.name}, {i.price} EUR") + (
        f"\nNote: {alt} is rated higher for A but would take the total over budget." if alt else ""),
    "within-budget": lambda it, alt: ", ".join(f"{i.name} for {i.label}" for i in it) +
        f" — {_total(it)} EUR altogether, which doesn't exceed your budget.",
    "intro-chatty": lambda it, alt: "Great news — everything is booked! Here's what I've lined up for you:\n\n" + _rows(
        it, lambda i: f"• {i.day.capitalize()} {i.slot}: {i.name}"),
    "checkmarks": lambda it, alt: _rows(it, lambda i: f"✅ {i.label} — {i.name} — {i.short}"),
    "colon-lines": lambda it, alt: _rows(it, lambda i: f"Booking {i.label}: {i.name}\n  Day: {i.day.capitalize()}\n"
                                                      f"  Price: {i.price} EUR"),
    "one-line-prices": lambda it, alt: ", ".join(f"{i.name} (€{i.price})" for i in it) + f". Total €{_total(it)}.",
    "question-first": lambda it, alt: "Quick check before anything else — here's the plan I put together: " +
        ", ".join(f"{i.name} for booking {i.label}" for i in it) + ".",
    "lowercase": lambda it, alt: "plan: " + ", ".join(f"{i.name.lower()} ({i.short.lower()})" for i in it),
    "question-before": lambda it, alt: "One thing first: do you need a receipt for these? Anyway, here's the plan: " +
        ", ".join(f"{i.name} ({i.label})" for i in it) + ".",
    "caveat": lambda it, alt: _rows(it, lambda i: f"- {i.label}: {i.name}, {i.day.capitalize()}") +
        "\nI couldn't do better on ratings within the budget.",
    "json-ish": lambda it, alt: "```\n" + _rows(it, lambda i: f"{i.label}: {i.name} | {i.day} {i.slot} | {i.price} EUR") +
        "\n```",
}

def _phrasings() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``plan_sweep.json`` beside this script, parsed strictly: the ways to ask for the yes to a
    plan just stated (`asks`) and to say that no place meets every need and ask which may give
    way (`give_way`)."""
    raw = json.loads((Path(__file__).with_name("plan_sweep.json")).read_text("utf-8"))
    d = strict(raw, {"asks", "give_way"}, "plan_sweep.json")
    out = []
    for key in ("asks", "give_way"):
        texts = d[key]
        if not isinstance(texts, list) or not all(isinstance(t, str) and t.strip() for t in texts):
            raise ValueError(f"plan_sweep.json.{key} must be a list of non-empty strings")
        if len(set(texts)) < len(texts):
            raise ValueError(f"plan_sweep.json.{key}: a text repeats")
        out.append(tuple(texts))
    return out[0], out[1]


ASKS, GIVE_WAY = _phrasings()


@dataclass(slots=True)
class Trial:
    kind: str  # "right", "twice", "missing", "ruled-out", "give-way"
    style: str
    ask: str
    seed: int
    split: str
    message: str
    reply: str
    heard: str  # "yes", "revision", "asks", "other", or for give-way "gives", "before", "look-again", "other"
    agreed_right: bool | None = None
    outcome: bool | None = None

    @property
    def ok(self) -> bool:
        if self.kind == "right":
            return (self.heard == "yes" and bool(self.agreed_right)) or self.heard == "revision"
        if self.kind == "give-way":
            return self.heard in ("gives", "before", "look-again")
        if self.kind == "ruled-out":  # the user never checks a plan (that would leak the gold): heard
            return self.heard in ("yes", "revision")
        return self.heard == "asks"


def _heard_plan(reply: str) -> str:
    if reply.startswith("Yes, that plan works"):
        return "yes"
    if "changed my mind about booking" in reply:
        return "revision"
    if reply.startswith("Before I say yes I need to hear") or reply.startswith("I heard more than one place"):
        return "asks"
    return "other"


def _heard_give(reply: str) -> str:
    if "If something has to give" in reply or "As I said" in reply:
        return "gives"
    if "Before I give anything up" in reply or "just remembered" in reply:
        return "before"
    if reply.startswith("Really?"):
        return "look-again"
    return "other"


def _user_reply(info: dict[str, Any]) -> str:
    return " ".join(str(m["content"]) for m in info["messages"] if m.get("role") == "user")


def _items(env: Any, plan_msg: str) -> list[Item]:
    """The plan the expert's read-back names, with each place's price and category."""
    import re

    world = env.unwrapped.task.world
    out = []
    first_day = None
    for label, name, pid, day, slot in re.findall(r"- Booking ([A-E]): (.+?) \((\S+)\), (\w+) (\w+)", plan_msg):
        p = world.by_id[pid]
        d = _DAYS.index(day.lower())
        first_day = d if first_day is None else first_day
        out.append(Item(label, p.name, pid, day.lower(), slot, int(p.price), p.category, (d - first_day) % 7 + 1))
    return out


def _variants(items: list[Item], alt: str | None, ruled: Item | None, k: int,
              every: bool) -> list[tuple[str, str, str, str]]:
    """(kind, style, ask, message) for one plan point, `k` its index: every plan style with two
    of `ASKS` (all with `every`), rotated by `k` so that over the points each style meets every
    ask; wrong plans in every style with one ask each: the last booking given the first's place
    (a place twice), the last booking left out, and the first booking given `ruled`, a place of
    its kind closed at its time (ruled out by the agent's own checks)."""
    out = []
    styles = list(PLAN_STYLES)
    for s, style in enumerate(styles):
        for a in range(len(ASKS) if every else 2):
            ask = ASKS[(k * 2 + s + a * 7) % len(ASKS)]
            out.append(("right", style, ask, PLAN_STYLES[style](items, alt) + "\n\n" + ask))
        ask = ASKS[(k + s) % len(ASKS)]
        twice = [*items[:-1], Item(items[-1].label, items[0].name, items[0].id, items[-1].day, items[-1].slot,
                                   items[0].price, items[0].category, items[-1].n)]
        out.append(("twice", style, ask, PLAN_STYLES[style](twice, None) + "\n\n" + ask))
        out.append(("missing", style, ask, PLAN_STYLES[style](items[:-1], None) + "\n\n" + ask))
        if ruled is not None:
            out.append(("ruled-out", style, ask, PLAN_STYLES[style]([ruled, *items[1:]], None) + "\n\n" + ask))
    return out


def sweep(seeds: range, splits: tuple[str, ...], full: bool, outcomes: int) -> list[Trial]:
    trials: list[Trial] = []
    k = 0
    for split in splits:
        env = gym.make("AgentRL/Dialog-v0", difficulty="hard", split=split)
        for seed in seeds:
            if 5000 <= seed < 6000:
                raise ValueError("seeds 5000-5999 are kept for playtests")
            obs, info = env.reset(seed=seed)
            agent = ExpertAgent()
            agent.reset(obs, info)
            itinerary = env.unwrapped.task.extra.get("kind") == "itinerary"
            for _ in range(80):
                act = agent.act(obs, info)
                point = act.startswith("Here is the plan") if itinerary else (
                    not act.lstrip().startswith(("{", "[", "<")) and gives_way(act))
                if point:
                    break
                obs, _, term, trunc, info = env.step(act)
                if term or trunc:
                    act = ""
                    break
            if not act:
                continue
            if itinerary:
                items = _items(env, act)
                world = env.unwrapped.task.world
                alt = next((p.name for p in world.places if p.category == items[0].category
                            and p.id not in {i.id for i in items}), None)
                first = items[0]
                closed = next((p for p in world.places if p.category == first.category
                               and not p.is_open(first.day, first.slot)), None)
                ruled = None if closed is None else Item(first.label, closed.name, closed.id, first.day, first.slot,
                                                         int(closed.price), closed.category, first.n)
                cases = _variants(items, alt, ruled, k, full)
            else:
                items = []
                cases = [("give-way", f"g{j}", "", text) for j, text in enumerate(GIVE_WAY)]
            for n, (kind, style, ask, message) in enumerate(cases):
                e2, a2 = copy.deepcopy(env), copy.deepcopy(agent)
                obs2, _, term, trunc, info2 = e2.step(message)
                reply = _user_reply(info2)
                t = Trial(kind, style, ask, seed, split, message, reply,
                          _heard_plan(reply) if itinerary else _heard_give(reply))
                if itinerary and kind == "right" and t.heard == "yes":
                    agreed = e2.unwrapped.task.extra["plan"].agreed
                    t.agreed_right = agreed is not None and list(agreed) == [i.id for i in items]
                if n % max(1, len(cases) // outcomes) == 0 and not (term or trunc) and kind in ("right", "give-way"):
                    t.outcome = _play_on(e2, a2, obs2, info2)
                trials.append(t)
            k += 1
        env.close()
    return trials


def _play_on(env: Any, agent: Any, obs: Any, info: dict[str, Any]) -> bool:
    """Whether the expert, going on from here, ends the episode with success."""
    for _ in range(80):
        obs, _, term, trunc, info = env.step(agent.act(obs, info))
        if term or trunc:
            return bool(info.get("episode_summary", {}).get("success"))
    return False


def report(trials: list[Trial]) -> str:
    lines = []
    for kind in ("right", "twice", "missing", "ruled-out", "give-way"):
        got = [t for t in trials if t.kind == kind]
        if not got:
            continue
        r = Rate(sum(t.ok for t in got), len(got))
        lo, hi = r.ci
        heard = Counter(t.heard for t in got)
        lines.append(f"{kind:9} understood {r.value:6.1%} [{lo:.3f}, {hi:.3f}] n={r.n}  heard: {dict(heard)}")
        played = [t for t in got if t.outcome is not None]
        if played:
            lines.append(f"{'':9} outcome (expert goes on): {sum(t.outcome for t in played)}/{len(played)} succeed")
    by_style = Counter(t.style for t in trials if t.kind == "right" and not t.ok)
    by_ask = Counter(t.ask for t in trials if t.kind == "right" and not t.ok)
    if by_style:
        lines.append("right-plan misses by style: " + ", ".join(f"{s} {n}" for s, n in by_style.most_common()))
    if by_ask:
        lines.append("right-plan misses by ask: " + "; ".join(f"{s!r} {n}" for s, n in by_ask.most_common()))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", default="0:30", help="dev seeds A:B per split (never 5000-5999)")
    p.add_argument("--splits", nargs="+", default=["train", "test"])
    p.add_argument("--all-asks", action="store_true", help="every plan style with every ask at every point")
    p.add_argument("--outcomes", type=int, default=6, help="replies per point played on to the end")
    p.add_argument("--json", default=None, help="write every miss here")
    p.add_argument("--strict", action="store_true", help="exit 1 when a phrasing is misread or an outcome fails")
    args = p.parse_args(argv)
    lo, _, hi = args.seeds.partition(":")
    trials = sweep(range(int(lo), int(hi)), tuple(args.splits), args.all_asks, args.outcomes)
    print(report(trials))
    if args.json:
        misses = [asdict(t) | {"ok": t.ok} for t in trials if not t.ok or t.outcome is False]
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(misses, f, indent=1)
    return 1 if args.strict and any(not t.ok or t.outcome is False for t in trials) else 0


if __name__ == "__main__":
    sys.exit(main())
