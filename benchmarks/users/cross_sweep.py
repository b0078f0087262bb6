"""Does the CrossTask hard tier's user hear other assistants' messages as it hears the expert's?

    PYTHONPATH=. .venv/bin/python benchmarks/users/cross_sweep.py [--seeds 0:20] [--per-point 8] [--show 3] [--json FILE]

The expert plays hard CrossTask sessions (dev seeds, both splits; never the playtest seeds
5000-5999). At every turn where it sends a message (a question for details, a proposal of a
place, a plan that asks for a yes, "anything else?"), and at turns where other assistants send
one it does not (a question about a come-back or a series when it starts, a report that a move
is half done), the episode is copied and the message replaced by the same content as other
capable assistants write it: `STYLES` (markdown tables, numbered and bulleted lists with bold
labels, prose, terse, two questions in one, a recap of the earlier requests first, ...), each
point getting `--per-point` of them in rotation. The user's reply is read into a class
(`reply_class`); the expert then plays on from the copy and the session's outcome is recorded.

A misfire is a reply whose class differs from the class of the user's reply to the expert's
own wording at that point (for an inserted message: a request to rephrase, a refusal of what
was never proposed, or a reaction as if a booking were made), or a session the expert wins in
its own words and loses after the styled message. Exits 1 when any is found.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable

import gymnasium as gym

import agentgym  # noqa: F401  (registers the ids)
from agentgym.agents import make_agent
from agentgym.agents.turns import calls_of
from agentgym.users.stock import REPHRASE

# ------------------------------------------------------------------------------ the message as data


@dataclass
class Msg:
    """A message's content: its `kind` (ask, open, propose, plan, comeback, report, other), the
    `items` it asks or states, the closing question `ask`, and what a recap may name."""

    kind: str
    items: list[str]
    ask: str = ""
    lead: str = ""
    place: str = ""
    when: str = ""
    recap: list[str] = field(default_factory=list)


_PROPOSE = re.compile(r"^(?:I'd suggest|Yes,) (.+?)(?::| still works:).*?available on (\w+ \w+)", re.S)
_LABELS = (("type", "Type"), ("plan", "Plan"), ("kind", "Kind"), ("style", "Style"), ("area", "Area"), ("budget", "Budget"),
           ("rating", "Minimum rating"), ("amenit", "Amenities"), ("day", "Day and time"), ("email", "Email"),
           ("currency", "Currency"), ("order", "Order"), ("when", "When"), ("long", "Length"))


def parse(text: str, recap: list[str]) -> Msg:
    """The content of one of the expert's messages."""
    if text.startswith("Here is what I'm about to do:"):
        body = text.removeprefix("Here is what I'm about to do:").split(" Shall I go ahead")[0].strip()
        items = [s.strip().rstrip(".") for s in re.split(r"(?<=\.) (?=[a-zI])", body) if s.strip()]
        return Msg("plan", items, "Shall I go ahead?", recap=recap)
    m = _PROPOSE.match(text)
    if m:
        return Msg("propose", [], "Shall I book it?", place=m.group(1), when=m.group(2), recap=recap)
    if "anything else I should know" in text and text.count("?") == 1 and len(text) < 60:
        return Msg("open", [], "Is there anything else I should know?", recap=recap)
    if "?" in text:
        lead, _, asked = text.rpartition(": ") if ": " in text else ("", "", text)
        asked = asked.rstrip("?")
        items = [s.strip() for s in re.split(r",\s*(?:and\s+)?|\s+and\s+(?=which|what|does|do|how)", asked) if s.strip()]
        return Msg("ask", items, lead=lead, recap=recap)
    return Msg("other", [text], recap=recap)


def label(item: str) -> str:
    low = item.lower()
    return next((name for key, name in _LABELS if key in low), q(item))


def q(item: str) -> str:
    """An asked item as its own question."""
    s = item[:1].upper() + item[1:]
    return s if s.endswith("?") else s + "?"


# ------------------------------------------------------------------------------ styles

_ASKS_BOOK = ("Shall I book it?", "Want me to book it?", "Should I go ahead and reserve it?", "Does that work for you?",
              "Would you like me to book this?", "OK to proceed?", "Let me know if you'd like me to book it.",
              "Shall I lock it in?")
_ASKS_PLAN = ("Shall I go ahead?", "Want me to proceed?", "Please confirm and I'll take care of it.",
              "Does this look right?", "OK to proceed?", "Should I go ahead with this?",
              "Let me know if that works.", "Can I go ahead?")


def _ask(m: Msg, k: int) -> str:
    if m.kind == "propose":
        return _ASKS_BOOK[k % len(_ASKS_BOOK)]
    if m.kind == "plan":
        return _ASKS_PLAN[k % len(_ASKS_PLAN)]
    return m.ask


def _lines(m: Msg, k: int, fmt: Callable[[int, str], str]) -> str:
    """The items as lines, with what comes before and after them."""
    if m.kind == "propose":
        body = [f"{m.place}", f"{m.when}"]
        return "Here's what I found:\n" + "\n".join(fmt(i, x) for i, x in enumerate(body, 1)) + f"\n\n{_ask(m, k)}"
    if m.kind == "plan":
        return "Here's the plan:\n" + "\n".join(fmt(i, x) for i, x in enumerate(m.items, 1)) + f"\n\n{_ask(m, k)}"
    if m.kind == "ask" and len(m.items) > 1:
        return "A few quick questions:\n" + "\n".join(fmt(i, q(x)) for i, x in enumerate(m.items, 1))
    return _prose(m, k)


def _by_kind(forms: dict[str, Callable[[Msg, int], str]]) -> Callable[[Msg, int], str]:
    """A style given as one form per kind of message (any other kind: its text as it is)."""
    return lambda m, k: forms[m.kind](m, k) if m.kind in forms else m.items[0]


_prose = _by_kind({
    "propose": lambda m, k: f"I found {m.place}, which meets all your requirements and is free on {m.when}. "
                            f"{_ask(m, k)}",
    "plan": lambda m, k: "Here's what I'll do: " + "; ".join(m.items) + f". {_ask(m, k)}",
    "ask": lambda m, k: "To get this right, could you tell me " + ", ".join(m.items[:-1]) +
                        (" and " if len(m.items) > 1 else "") + m.items[-1] + "?",
    "open": lambda m, k: "Got it, thanks. Before I search, is there anything else that matters to you?",
})


def _table(m: Msg, k: int) -> str:
    if m.kind == "propose":
        return f"| Place | When |\n|---|---|\n| {m.place} | {m.when} |\n\n{_ask(m, k)}"
    if m.kind == "plan":
        return "| # | Action |\n|---|---|\n" + "\n".join(f"| {i} | {x} |" for i, x in enumerate(m.items, 1)) + \
            f"\n\n{_ask(m, k)}"
    if m.kind == "ask" and len(m.items) > 1:
        return "Please fill in what you can:\n\n| Detail | Your answer |\n|---|---|\n" + \
            "\n".join(f"| {label(x)} | ? |" for x in m.items)
    return _prose(m, k)


def _terse(m: Msg, k: int) -> str:
    if m.kind == "propose":
        return f"{m.place}, {m.when}. Book?"
    if m.kind == "plan":
        return "Plan: " + "; ".join(m.items) + ". OK?"
    if m.kind == "ask":
        return " ".join(f"{label(x)}?" for x in m.items)
    if m.kind == "open":
        return "Anything else?"
    return m.items[0]


def _two(m: Msg, k: int) -> str:
    """Two questions in one message."""
    if m.kind in ("propose", "plan"):
        return f"{_prose(m, k)} Also, is there anything else I should know?"
    if m.kind == "ask" and len(m.items) > 1:
        half = len(m.items) // 2
        return f"{q(', '.join(m.items[:half]))} And {', '.join(m.items[half:])}?"
    if m.kind == "open":
        return "Anything else I should know? And is there anything you'd rather avoid?"
    return m.items[0]


def _recap(m: Msg, k: int) -> str:
    """A recap of the earlier requests before the message."""
    if not m.recap:
        return _own(m, k)
    return "Quick recap so far:\n" + "\n".join(f"- {r}" for r in m.recap) + "\n\n" + _own(m, k)


def _recap_prose(m: Msg, k: int) -> str:
    if not m.recap:
        return _prose(m, k)
    return "So far " + "; ".join(m.recap) + ". " + _prose(m, k)


#: The expert's own wording, rebuilt from the content (with another ask where it varies).
_own = _by_kind({
    "propose": lambda m, k: f"I'd suggest {m.place}: it meets everything you've told me, and it's available on "
                            f"{m.when}. {_ask(m, k)}",
    "plan": lambda m, k: "Here is what I'm about to do: " + ". ".join(m.items) + f". {_ask(m, k)}",
    "ask": lambda m, k: (m.lead + ": " if m.lead else "") + ", ".join(m.items) + "?",
    "open": lambda m, k: m.ask,
})


def _bold(m: Msg, k: int) -> str:
    if m.kind == "propose":
        return f"**Recommendation:** {m.place}\n**Available:** {m.when}\n\n{_ask(m, k)}"
    if m.kind == "plan":
        return "\n".join(f"- **Step {i}:** {x}" for i, x in enumerate(m.items, 1)) + f"\n\n{_ask(m, k)}"
    if m.kind == "ask" and len(m.items) > 1:
        return "To find the right option, I need a few details:\n\n" + \
            "\n".join(f"- **{label(x)}:** {q(x)}" for x in m.items)
    return f"**{_own(m, k)}**"


STYLES: dict[str, Callable[[Msg, int], str]] = {
    "own": _own,
    "numbered": lambda m, k: _lines(m, k, lambda i, x: f"{i}. {x}"),
    "bullets": lambda m, k: _lines(m, k, lambda i, x: f"- {x}"),
    "bold-labels": _bold,
    "star-bullets": lambda m, k: _lines(m, k, lambda i, x: f"* {x}"),
    "dot-bullets": lambda m, k: _lines(m, k, lambda i, x: f"• {x}"),
    "table": _table,
    "prose": _prose,
    "terse": _terse,
    "two-questions": _two,
    "recap": _recap,
    "recap-prose": _recap_prose,
    "heading": lambda m, k: "### Next step\n\n" + _lines(m, k, lambda i, x: f"- {x}"),
    "bold-heading": lambda m, k: "**Next step**\n" + _own(m, k),
    "question-first": lambda m, k: (_ask(m, k) + "\n\n" + _lines(m, k, lambda i, x: f"- {x}").rsplit("\n\n", 1)[0]
                                    if m.kind in ("propose", "plan") else _lines(m, k, lambda i, x: f"{i}) {x}")),
    "chatty": lambda m, k: "Great, thanks for your patience! " + _prose(m, k) + " Looking forward to your reply!",
    "sign-off": lambda m, k: _own(m, k) + "\n\nLet me know!",
    "done-first": lambda m, k: "All done with the last request ✅. " + _own(m, k),
    "lowercase": lambda m, k: _terse(m, k).lower(),
    "emoji": lambda m, k: _lines(m, k, lambda i, x: f"✅ {x}"),
    "step-labels": lambda m, k: _lines(m, k, lambda i, x: f"Step {i}: {x}"),
    "arrow": lambda m, k: _lines(m, k, lambda i, x: f"→ {x}"),
}

# ------------------------------------------------------------------------------ inserted messages

#: What an assistant may ask when a come-back or a series starts: (kind, text), with {place} and
#: {when} the booking as it stands and {wanted} what the user asked for.
COMEBACK_ASKS = (
    "Just to confirm: you'd like me to move your booking at {place} ({when}) to {wanted}, right?",
    "Sure! Which booking do you mean: the one at {place} on {when}?",
    "Do your other requirements from before still apply?",
    "**Quick check**\n- Current booking: {place}, {when}\n- Change: {wanted}\n\nIs that right?",
    "Should I cancel the old booking once the new one is made?",
    "| Booking | When |\n|---|---|\n| {place} | {when} |\n\nThis is the one you mean, correct?",
    "Happy to help. Before I look: is it the {place} booking ({when}) you want changed?",
    "Got it. Should I keep everything else the same?",
    "1. Current: **{place}**, {when}\n2. Requested: {wanted}\n\nShall I go ahead and check availability?",
    "Would you like me to cancel it instead, or move it as you described?",
    "Understood. I'll check availability first. Anything else I should keep in mind?",
)
#: A report that a move is half done (the new booking made, the old one still standing).
REPORTS = (
    "Done: I've booked {place} for {when}.",
    "✅ **Booked:** {place}, {when}",
    "I've made the new booking ({place}, {when}). Anything else?",
    "| Place | When | Status |\n|---|---|---|\n| {place} | {when} | booked |",
    "All set: {place} is reserved for {when}. Let me know if you need anything else!",
)

# ------------------------------------------------------------------------------ reading the reply


def reply_class(text: str, switched: bool = False) -> str:
    """The class of a user reply: rephrase, not-asked (a refusal of what it never heard proposed),
    small-talk, yes, switch (the sub-task ended and the next began, `switched`), nothing-more,
    detail (it states something), or empty."""
    t = text.removeprefix("[user] ").strip()
    low = t.lower()
    if not t:
        return "empty"
    if switched:
        return "switch"
    if t == REPHRASE or "not sure what you mean" in low or "rephrase" in low:
        return "rephrase"
    if "that isn't what i asked" in low or "not what i asked" in low or "no, i mean" in low:
        return "not-asked"
    if "back to my request" in low:
        return "small-talk"
    if re.search(r"\b(?:please go ahead|please book it|sounds (?:good|great)|go ahead|yes, that's right|"
                 r"yes, that one|it is\.|that works)\b", low):
        return "yes"
    if "everything i can think of" in low:
        return "nothing-more"
    return "detail"


def _outcome(info: dict[str, Any], r: float) -> bool:
    return bool(info.get("episode_summary", {}).get("success", r >= 1.0))


# ------------------------------------------------------------------------------ playing


@dataclass
class Point:
    """A turn where a message goes to the user: the copy before it, and the expert's message."""

    split: str
    seed: int
    turn: int
    family: str
    msg: Msg
    original: str
    env: Any
    agent: Any
    obs: str
    info: dict[str, Any]
    inserted: bool = False
    reply: str = ""


def _recap_of(env: Any) -> list[str]:
    """What an assistant may recap of the requests that ended: the booking as it stands, and the
    tool-use requests done."""
    session = env.unwrapped._task.world
    out = []
    for s in session.segments[: session.active]:
        if s.family == "tooluse" and s.outcome:
            out.append(f"the {s.domain} request is done")
        elif s.task is not None and s.family == "dialog" and s.agreed is not None:
            place = s.task.world.by_id[s.agreed.item_id].name
            out.append(f"{place} is booked for {s.agreed.day.capitalize()} {s.agreed.slot}")
    return out


def _booking(env: Any) -> tuple[str, str] | None:
    """The session's booking as it stands (its place's name and time), for inserted messages."""
    session = env.unwrapped._task.world
    seg = session.segments[min(session.active, len(session.segments) - 1)]
    ref = seg.refers_to if seg.family == "followup" else None
    if ref is None:
        return None
    world = session.segments[ref].task.world
    active = world.active_bookings()
    if not active:
        return None
    b = active[0]
    return world.by_id[b.item_id].name, f"{b.day.capitalize()} {b.slot}"


def collect(split: str, seed: int) -> tuple[list[Point], bool]:
    """Play the expert on one session; the points where a message goes (or may go) to the user,
    each with a copy of the env and the expert before it, and whether the session succeeded."""
    env = gym.make("AgentRL/CrossTask-v0", difficulty="hard", split=split)
    agent = make_agent("expert")
    obs, info = env.reset(seed=seed)
    agent.reset(obs, info)
    points: list[Point] = []
    seen_followup: set[int] = set()
    reported: set[int] = set()
    r, turn = 0.0, 0
    for turn in range(400):
        session = env.unwrapped._task.world
        seg = session.segments[min(session.active, len(session.segments) - 1)]
        snap = copy.deepcopy((env, agent, obs, info))
        if seg.family == "followup" and seg.index not in seen_followup and seg.move is not None:
            seen_followup.add(seg.index)
            booked = _booking(env)
            wanted = getattr(seg.move, "wanted", "") or f"{seg.move.day.capitalize()} {seg.move.slot}"
            if booked:
                points.append(Point(split, seed, turn, "comeback", Msg("comeback", [booked[0], booked[1], wanted]),
                                    "", *snap, inserted=True))
        a = agent.act(obs, info)
        if not calls_of(a):
            points.append(Point(split, seed, turn, seg.family, parse(a, _recap_of(env)), a, *snap))
        obs, r, term, trunc, info = env.step(a)
        if term or trunc:
            break
        if seg.family == "followup" and seg.index not in reported and env.unwrapped._task.world.active == seg.index:
            world = session.segments[seg.refers_to].task.world
            new = [b for b in world.active_bookings() if b.id != seg.move.booking]
            if new and len(world.active_bookings()) > 1:
                reported.add(seg.index)
                b = new[-1]
                places = (world.by_id[b.item_id].name, f"{b.day.capitalize()} {b.slot}")
                points.append(Point(split, seed, turn + 1, "report", Msg("report", list(places)), "",
                                    *copy.deepcopy((env, agent, obs, info)), inserted=True))
    return points, _outcome(info, r)


def play_from(p: Point, message: str) -> tuple[str, str, bool]:
    """From a copy of `p`, send `message`, let the expert play on; the class of the user's reply
    to it (`reply_class`), the reply, and whether the session succeeded."""
    env, agent, obs, info = copy.deepcopy((p.env, p.agent, p.obs, p.info))
    obs, r, term, trunc, info = env.step(message)
    reply = obs
    got = reply_class(reply, bool(info.get("segment_switch")) or term or trunc)
    if term or trunc:
        return got, reply, _outcome(info, r)
    if not p.inserted:
        agent.act(p.obs, p.info)  # the expert's own message, which the styled one replaced
    elif p.info.get("segment_switch"):
        # The request came in the step before the inserted message: the expert takes that step
        # now (its results and the request, the reply read before it, as the switch phrase leads).
        said = [m for m in info.get("messages", ()) if m.get("role") == "user"]
        before = p.info.get("messages", ())
        info = {**p.info, "messages": [m for m in before if m.get("role") != "user"] + said +
                [m for m in before if m.get("role") == "user"][-1:]}
    for _ in range(400):
        a = agent.act(obs, info)
        obs, r, term, trunc, info = env.step(a)
        if term or trunc:
            break
    return got, reply, _outcome(info, r)


def variants(p: Point, k: int, n: int) -> list[tuple[str, str]]:
    """(style, text) of `n` restyled messages for point `p` (rotating from `k`)."""
    if p.inserted:
        place, when, *rest = p.msg.items
        pool = COMEBACK_ASKS if p.msg.kind == "comeback" else REPORTS
        return [(f"{p.msg.kind}-{(k + i) % len(pool)}",
                 pool[(k + i) % len(pool)].format(place=place, when=when, wanted=rest[0] if rest else ""))
                for i in range(min(n, len(pool)))]
    names = [s for s in STYLES if s != "own"]
    out = []
    for i in range(n):
        name = names[(k + i) % len(names)]
        text = STYLES[name](p.msg, k + i)
        out.append((name, text))
    return out


#: Reply classes as good as the one to the expert's own wording, per kind of message: a yes to
#: a plan or a proposal (the expert's asks "or anything else?", which a styled one may not).
_AS_GOOD = {"plan": {"yes", "nothing-more", "switch"}, "propose": {"yes"}, "open": {"detail", "nothing-more"}}


def misfire(p: Point, base: str, got: str, text: str) -> bool:
    """Whether the reply `got` to `text` at `p` misses what the expert's own wording got (`base`)."""
    if got in ("rephrase", "not-asked", "empty", "small-talk"):
        return True
    if p.inserted or got == base or got in _AS_GOOD.get(p.msg.kind, ()):
        return False
    # A plan or a proposal that also asks "anything else?" may get a detail.
    return not (got == "detail" and "anything else" in text.lower())


def sweep(seeds: range, per_point: int) -> dict[str, Any]:
    """Every row of the sweep over `seeds` of both splits, `per_point` styles at each point."""
    rows: list[dict[str, Any]] = []
    k = 0
    for split in ("train", "test"):
        for seed in seeds:
            points, won = collect(split, seed)
            for p in points:
                base_reply, base = "", ""
                if not p.inserted:
                    base, base_reply, _ = play_from(p, p.original)
                for style, text in variants(p, k, per_point):
                    got, reply, success = play_from(p, text)
                    rows.append({"split": split, "seed": seed, "turn": p.turn, "family": p.family,
                                 "kind": p.msg.kind, "style": style, "base": base, "class": got,
                                 "misfire": misfire(p, base, got, text), "lost": won and not success,
                                 "message": text, "reply": reply, "original": p.original, "base_reply": base_reply})
                k += 1
    return {"rows": rows}


def report(rows: list[dict[str, Any]], show: int) -> list[str]:
    """Printable lines: per style the misfire rate and the share of sessions still won, then the
    misfire classes (kind, the class the expert's own wording got, the class got) with `show`
    examples each, and the sessions lost."""
    out = []
    by_style: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_style[r["style"].split("-")[0] if r["kind"] in ("comeback", "report") else r["style"]].append(r)
    out.append(f"{'style':16} {'n':>4} {'misfire':>8} {'won':>7}")
    for style, rs in sorted(by_style.items()):
        n = len(rs)
        out.append(f"{style:16} {n:4} {sum(r['misfire'] for r in rs) / n:8.1%} "
                   f"{1 - sum(r['lost'] for r in rs) / n:7.1%}")
    kinds = Counter((r["kind"], r["base"], r["class"]) for r in rows if r["misfire"])
    out.append("misfires by (kind, expected class, got class):")
    for (kind, base, got), c in kinds.most_common():
        out.append(f"  {kind:9} {base or '-':12} -> {got:12} {c}")
        for r in [r for r in rows if r["misfire"] and (r["kind"], r["base"], r["class"]) == (kind, base, got)][:show]:
            out.append(f"    {r['split']} {r['seed']} t{r['turn']} {r['style']}: {r['message'][:160]!r}")
            out.append(f"      -> {r['reply'][:200]!r}   (own: {r['base_reply'][:80]!r})")
    lost = [r for r in rows if r["lost"]]
    out.append(f"sessions lost after a styled message: {len(lost)}/{len(rows)}")
    for r in lost[:show]:
        out.append(f"    {r['split']} {r['seed']} t{r['turn']} {r['style']}: {r['message'][:160]!r} -> {r['reply'][:160]!r}")
    out.append(f"misfires: {sum(r['misfire'] for r in rows)}/{len(rows)}")
    return out


def _seeds(text: str) -> range:
    lo, _, hi = text.partition(":")
    out = range(int(lo), int(hi)) if hi else range(int(lo))
    if any(5000 <= s < 6000 for s in out):
        raise SystemExit("seeds 5000-5999 are kept for playtests")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", default="0:20", help="dev seeds A:B per split (default 0:20)")
    p.add_argument("--per-point", type=int, default=8, help="styles sent at each message point (default 8)")
    p.add_argument("--show", type=int, default=3, help="examples printed per misfire class")
    p.add_argument("--json", default=None, help="write every row here")
    args = p.parse_args(argv)
    result = sweep(_seeds(args.seeds), args.per_point)
    for line in report(result["rows"], args.show):
        print(line, flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1)
    return 1 if any(r["misfire"] or r["lost"] for r in result["rows"]) else 0


if __name__ == "__main__":
    sys.exit(main())
