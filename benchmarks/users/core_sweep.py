"""Does the easy/medium ToolUse customer read other assistants' messages as it reads the expert's?

    .venv/bin/python benchmarks/users/core_sweep.py [--seeds 10] [--variants 40] [--show 3] [--json FILE]

For each domain of ToolUse-v0 (orders, finance, calendar on train; ops on test), difficulty easy
and medium, noise none and medium, dev seeds 0.. (never the playtest seeds 5000-5999; seeds are
taken in order until each domain has `--seeds` of them), the `expert` plays. At each turn where
it sends a MESSAGE (asks for a detail, states its plan and asks to go ahead), that message is
replaced by the same content as other capable assistants write it: layouts (markdown tables,
bullets with bold labels, headings, prose, terse), values in other written forms (amounts with
symbols, dates in words, 2pm, SEV-2, 45 min), the question before the plan, two questions in
one, and ASKS (37 ways of asking to go ahead); variant k of a turn is drawn deterministically
from k. The expert never reports the work done in these episodes (the customer accepts at the
write that completes it), so in place of its plan a report of work done ("done-early", in
DONE_SAYS' layouts) is sent too: the customer must judge it (say what it does not see yet).
The customer's reply is classed:

* ``answer``: it states a detail it had not stated (or, to a question for a detail, the one
  asked), or judges the work reported done (accepts it, or says what it does not see yet);
* ``yes``: a yes to go on;
* ``restatement``: only details it had stated already, to a message that asked no detail;
* ``rephrase``: "could you rephrase that?" or "that's just a list of words";
* ``other``: anything else (an "I don't know", "not quite yet" to a plan ...).

Then the expert plays on (it reads the reply as it reads any) and the episode's outcome is
recorded. Targets: a question for a detail gets ``answer``; a plan that asks to go ahead gets
``yes`` or ``answer`` and succeeds as often as the expert's own wording; a report of work done
gets ``answer`` (its outcome is no target: the expert never said it). Exits 1 when one is missed.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym

sys.path.insert(0, str(Path(__file__).resolve().parent))

from consent_sweep import ASKS as PLAN_ASKS  # noqa: E402
from consent_sweep import clock, date, finish, money, severity  # noqa: E402

import agentgym  # noqa: E402,F401  (registers the ids)
from agentgym.agents import make_agent  # noqa: E402
from agentgym.users.stock import ACCEPT, CONFIRMED, EMPTY, EVERYTHING, GO_AHEAD, KEYWORDS, REPHRASE  # noqa: E402

DOMAINS = {"orders": "train", "finance": "train", "calendar": "train", "ops": "test"}
DIFFICULTIES = ("easy", "medium")
NOISES = ("none", "medium")
PLAN_PREFIX = "Here is what I'm about to do: "
PLAN_ASK = " Shall I go ahead, or is there anything else I should know first?"
_YES = frozenset({*GO_AHEAD, CONFIRMED, EVERYTHING, "Yes, that's right.", "Alright, I understand. Please go ahead with that."})
_REPHRASE = frozenset({REPHRASE, KEYWORDS, EMPTY})
#: What the customer says when the work is not done as asked (typos may land in its words).
_NOT_DONE = re.compile(r"(?:not \w+ \w+|it's not \w+ on my \w+ \w+|hmm,)", re.I)


# ------------------------------------------------------------------------------ what a message says


def kind_of(text: str) -> str:
    """The content of one of the expert's messages: plan, detail (a question for one), done, or
    other (a refusal, "I have done everything I can")."""
    if text.startswith(PLAN_PREFIX):
        return "plan"
    if text.endswith("?") and not text.startswith(("I'm sorry", "Sorry, I")):
        return "detail"
    if re.search(r"\b(?:is|are) (?:done|booked|filed|made|sent|submitted|taken care of)\b|I've submitted", text):
        return "done"
    return "other"


_SLOT_WORDS = (("currency", "currency"), ("long", "duration"), ("minutes", "duration"), ("email", "email"),
               ("order", "order"), ("variant", "variant"))


def slot_of(text: str) -> str:
    low = text.lower()
    return next((slot for word, slot in _SLOT_WORDS if word in low), "")


#: Questions for a detail as other assistants ask them ("{x}" is the thing the expert named).
DETAIL_ASKS: dict[str, tuple[str, ...]] = {
    "currency": (
        "What currency would you like the payment in?", "**Currency:** which one should I use (EUR, USD, GBP, ...)?",
        "Before I go on, I need one detail:\n\n- **Currency** for the payout?", "Currency?",
        "Could you let me know the currency?", "In which currency?",
        "| Detail | Value |\n|---|---|\n| Currency | ? |\n\nWhat should I put there?",
        "Which currency — EUR, USD, GBP or CHF?", "I just need to know which currency to use. Which one?",
        "Got it. One question first: what currency do you want, and is there anything else I should know?",
        "To proceed, please tell me the currency.", "Which currency do you need? (e.g. EUR, USD)"),
    "duration": (
        "How long should I make the meeting?", "**Duration:** how many minutes?",
        "What length should I book: 30, 45, 60 or 90 minutes?",
        "How long do you need: half an hour, 45 minutes, an hour or an hour and a half?", "Meeting length?",
        "How much time should I block?", "Could you tell me the duration of the meeting?", "How many minutes?",
        "- **Length:** ?\n\nHow long should it run?", "Please let me know how long the meeting should be.",
        "Sure! Quick question before I book: how long should it be, and anything else I should know?",
        "What duration should the meeting have (in minutes)?"),
    "email": (
        "What's the email on your account?", "**Email:** which address is your account under?",
        "Could you share your account email?", "Email address?", "Can you give me the e-mail you used for the order?",
        "To look up your order I need your email. What is it?", "Please provide the email address on the account.",
        "Happy to help! First, what email address is the account registered with?",
        "| Needed | |\n|---|---|\n| Account email | ? |\n\nCould you send it?", "Which email do you use with us?",
        "I'll need the email tied to your account, please.", "Could you confirm your email address?"),
}


def detail_variant(text: str, k: int) -> str | None:
    asks = DETAIL_ASKS.get(slot_of(text))
    return asks[k % len(asks)] if asks else None


# ------------------------------------------------------------------------------ plans


_AMOUNT = re.compile(r"\b(\d+\.\d{2}) ([A-Z]{3})\b")
_ISO = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
_CLOCK = re.compile(r"\b(\d{2}:\d{2}) UTC\b")
_SEV = re.compile(r"\bsev([123])\b")
_MIN = re.compile(r"\b(\d{2,3}) minutes\b")


def reform(body: str, k: int) -> str:
    """The plan's values in other written forms (form k)."""
    body = _AMOUNT.sub(lambda m: money(float(m.group(1)), m.group(2), k), body)
    body = _ISO.sub(lambda m: date(m.group(1), k // 2), body)
    body = _CLOCK.sub(lambda m: clock(m.group(1), k // 3), body)
    body = _SEV.sub(lambda m: severity(m.group(0), k), body)
    return _MIN.sub(lambda m: [f"{m.group(1)} minutes", f"{m.group(1)} min", f"{m.group(1)}-minute slot"][k % 3], body)


def _sentences(body: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.;:])\s+(?=[A-Za-z])", body) if s.strip()]


def _bullets(ss: list[str]) -> str:
    return "Here's the plan:\n" + "\n".join(f"- {s}" for s in ss)


def _bold_labels(ss: list[str]) -> str:
    return "\n".join(f"- **{'Finding' if i < len(ss) - 1 else 'Action'}:** {s}" for i, s in enumerate(ss))


def _table(ss: list[str]) -> str:
    return "| # | Details |\n|---|---|\n" + "\n".join(f"| {i} | {s} |" for i, s in enumerate(ss, 1))


def _heading(ss: list[str]) -> str:
    return "### Proposed plan\n\n" + "\n".join(f"* {s}" for s in ss)


def _prose(ss: list[str]) -> str:
    return "Thanks for waiting. I've looked into it. " + " ".join(ss)


def _terse(ss: list[str]) -> str:
    return "Plan: " + " ".join(ss)


def _bold_plan(ss: list[str]) -> str:
    return "**Plan**\n" + " ".join(ss)


def _numbered(ss: list[str]) -> str:
    return "\n".join(f"{i}. {s}" for i, s in enumerate(ss, 1))


PLAN_STYLES = {"bullets": _bullets, "bold-labels": _bold_labels, "table": _table, "heading": _heading,
               "prose": _prose, "terse": _terse, "bold-plan": _bold_plan, "numbered": _numbered}

#: More ways to ask to go ahead than the hard tier's sweep (`consent_sweep.ASKS`) has.
MORE_ASKS = ("{plan}\n\nShall I go ahead? (yes/no)", "{plan}\n\nProceed? (y/n)", "{plan}\n\nIs that OK?",
             "{plan}\n\nOK to proceed?", "{plan}\n\nShould I go ahead and do that?",
             "{plan}\n\nReady for me to make the change?", "{plan}\n\nSound good?", "{plan}\n\nWould that work for you?",
             "{plan}\n\nPlease reply 'yes' to confirm.", "Shall I go ahead with the following?\n\n{plan}",
             "{plan}\n\nShall I go ahead? And is there anything else I should know?",
             "{plan}\n\nDo you want me to go ahead with this?")
ASKS = (*PLAN_ASKS, *MORE_ASKS)


def plan_variant(text: str, k: int) -> str:
    body = text[len(PLAN_PREFIX):].removesuffix(PLAN_ASK).strip()
    styles = list(PLAN_STYLES)
    plan = PLAN_STYLES[styles[k % len(styles)]](_sentences(reform(body, k)))
    return ASKS[(k * 7 + k // len(ASKS)) % len(ASKS)].format(plan=plan)


DONE_SAYS = ("All done! {s}", "✅ {s}", "**Status:** complete. {s}", "I've completed everything: {s} "
             "Anything else I can help with?", "Here's a summary:\n\n- {s}", "{s} Let me know if you need anything else.",
             "| Request | Status |\n|---|---|\n| {s} | Done |", "Done. {s}", "Everything is finished. {s}",
             "Good news: {s} Is there anything else?", "Update: {s}", "{s} You're all set.")


#: What the work comes to, said as done (the expert reports it after the writes; the customer,
#: who accepts at the write that completes the work, is sent these in place of the plan).
CLAIMS = ("Everything you asked for is done.", "Your request has been processed.", "I've taken care of it.",
          "The changes are complete.")


def variant(kind: str, text: str, k: int) -> str | None:
    if kind == "done-early":
        return DONE_SAYS[k % len(DONE_SAYS)].format(s=CLAIMS[k // len(DONE_SAYS) % len(CLAIMS)])
    if kind == "plan":
        return plan_variant(text, k)
    if kind == "detail":
        return detail_variant(text, k)
    if kind == "done":
        return DONE_SAYS[k % len(DONE_SAYS)].format(s=text)
    return None


# ------------------------------------------------------------------------------ playing


def _is_message(action: str) -> bool:
    return not action.lstrip().startswith(("{", "[", "<"))


def play(split: str, diff: str, noise: str, seed: int, at: int = -1, message: str = "", kind: str = "") -> dict[str, Any]:
    """One expert episode; the `at`-th message (from 0) replaced by `message`, of `kind` (the
    replaced message's own by default). Returns its messages (kind, text, reply, class each),
    whether it succeeded, and its end."""
    env = gym.make("AgentRL/ToolUse-v0", difficulty=diff, split=split, noise=noise)
    agent = make_agent("expert")
    obs, info = env.reset(seed=seed)
    agent.reset(obs, info)
    user = env.unwrapped.user
    said: list[dict[str, Any]] = []
    r = 0.0
    for _ in range(60):
        a = agent.act(obs, info)
        sent, said_kind = a, kind_of(a)
        if _is_message(a):
            if len(said) == at:
                sent, said_kind = message, kind or said_kind
            before, shift = list(user.known_constraints()), user.shift_pending()
        obs, r, term, trunc, info = env.step(sent)
        if _is_message(a):
            reply = obs.removeprefix("[user] ").strip()
            said.append({"kind": said_kind, "text": sent, "own": a, "reply": reply,
                         "class": classify(said_kind, reply, before, list(user.known_constraints()),
                                           shift and not user.shift_pending(), user)})
        if term or trunc:
            break
    summary = info.get("episode_summary", {})
    return {"messages": said, "success": bool(summary.get("success", r >= 1.0)), "outcome": summary.get("outcome", "")}


def classify(kind: str, reply: str, before: list[str], after: list[str], shifted: bool, user: Any) -> str:
    first = reply.split("\n")[0]
    if first in _YES or reply in _YES:
        return "yes"
    if reply in _REPHRASE:
        return "rephrase"
    if reply in ACCEPT or _NOT_DONE.match(reply):
        return "answer" if kind.startswith("done") else "other"
    if len(after) > len(before) or shifted:
        return "answer"
    statements = [d.statement for d in user._goal.details if d.id in before]
    if any(_near(s, reply) for s in statements):
        return "answer" if kind == "detail" else "restatement"
    return "other"


def _near(statement: str, reply: str) -> bool:
    """Whether `reply` holds `statement` (typos forgiven: most of its words are there)."""
    words = re.findall(r"\w+", statement.lower())
    got = set(re.findall(r"\w+", reply.lower()))
    return bool(words) and sum(w in got for w in words) >= 0.7 * len(words)


#: The class a reply should have, per kind of message.
TARGET = {"detail": ("answer",), "plan": ("yes", "answer"), "done": ("answer",), "done-early": ("answer",)}


def cases(domain: str, diff: str, noise: str, n: int) -> list[tuple[int, dict[str, Any]]]:
    """The first `n` dev seeds whose task is of `domain`, with the expert's own episode."""
    out, seed = [], 0
    while len(out) < n and seed < n * 12:
        env = gym.make("AgentRL/ToolUse-v0", difficulty=diff, split=DOMAINS[domain], noise=noise)
        env.reset(seed=seed)
        if env.unwrapped._task.domain == domain:
            out.append((seed, play(DOMAINS[domain], diff, noise, seed)))
        seed += 1
    return out


def sweep(domain: str, diff: str, noise: str, seeds: int, variants: int) -> dict[str, Any]:
    rows = []
    base = cases(domain, diff, noise, seeds)
    for seed, own in base:
        for i, m in enumerate(own["messages"]):
            kinds = [m["kind"], "done-early"] if m["kind"] == "plan" else [m["kind"]]
            for kind, k in ((kind, k) for kind in kinds for k in range(variants)):
                text = variant(kind, m["own"], k + seed)
                if text is None:
                    continue
                got = play(DOMAINS[domain], diff, noise, seed, i, text, kind)
                mine = got["messages"][i] if i < len(got["messages"]) else {"reply": "", "class": "other"}
                rows.append({"seed": seed, "kind": kind, "k": k, "message": text, "reply": mine["reply"],
                             "class": mine["class"], "success": got["success"], "own_success": own["success"],
                             "outcome": got["outcome"]})
    return {"domain": domain, "difficulty": diff, "noise": noise, "own": sum(o["success"] for _, o in base),
            "episodes": len(base), "rows": rows}


def report(res: dict[str, Any], show: int) -> list[str]:
    rows, out, bad = res["rows"], [], []
    head = f"{res['domain']:8} {res['difficulty']:6} noise {res['noise']:6}"
    out.append(f"{head} own wording: success {res['own']}/{res['episodes']}")
    for kind in ("detail", "plan", "done", "done-early"):
        rs = [r for r in rows if r["kind"] == kind]
        if not rs:
            continue
        n = len(rs)
        counts = {c: sum(r["class"] == c for r in rs) for c in ("answer", "yes", "restatement", "rephrase", "other")}
        ok = sum(r["success"] for r in rs)
        own = sum(r["own_success"] for r in rs)
        out.append(f"{'':8} {kind:6} n={n:4} " + " ".join(f"{c} {v / n:6.1%}" for c, v in counts.items())
                   + f" | success {ok / n:6.1%} (own {own / n:6.1%})")
        # A report of work not done yet stands in for a plan the expert made: its outcome is no target.
        bad += [r for r in rs if r["class"] not in TARGET[kind]
                or kind != "done-early" and r["own_success"] and not r["success"]]
    for r in bad[:show]:
        out.append(f"  MISS seed {r['seed']} {r['kind']} {r['class']} success={r['success']}: "
                   f"{r['message'][:300]!r} -> {r['reply'][:160]!r}")
    res["misses"] = len(bad)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, default=10, help="dev seeds per domain and cell (default 10)")
    p.add_argument("--variants", type=int, default=40, help="variants per expert message (default 40)")
    p.add_argument("--domains", nargs="+", default=list(DOMAINS), choices=list(DOMAINS))
    p.add_argument("--difficulties", nargs="+", default=list(DIFFICULTIES), choices=list(DIFFICULTIES))
    p.add_argument("--noises", nargs="+", default=list(NOISES), choices=list(NOISES))
    p.add_argument("--show", type=int, default=3, help="misses to print per cell")
    p.add_argument("--json", default=None, help="write every row here")
    args = p.parse_args(argv)
    results, misses = [], 0
    for domain in args.domains:
        for diff in args.difficulties:
            for noise in args.noises:
                res = sweep(domain, diff, noise, args.seeds, args.variants)
                for line in report(res, args.show):
                    print(line, flush=True)
                misses += res["misses"]
                results.append(res)
    return finish(results, misses, args.json)


if __name__ == "__main__":
    sys.exit(main())
