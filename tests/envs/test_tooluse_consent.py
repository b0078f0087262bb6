"""The hard tier's consent before writes (`agentgym.envs.tooluse.consent`), on every domain.

A write goes ahead only after the user said yes, in an earlier turn, to a plan that describes it
(its target, its kind of outcome, its values); any other write is the policy violation
``consent``. The user reads many phrasings and layouts of a plan, asks about what a plan leaves
out, and answers from what it asked for, never from the gold.
"""

from __future__ import annotations

import json
import re
from typing import Any

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentgym  # noqa: F401  (registers the ids)
from agentgym.core.tools import ToolKind
from agentgym.envs.tooluse.consent import Consent, Target, describes, parts
from agentgym.envs.tooluse.domains import load_domains
from agentgym.envs.tooluse.domains.consent_rules import RULES
from agentgym.envs.tooluse.policies import policy_lines
from agentgym.envs.tooluse.tasks import generate_task, make_toolkit
from agentgym.users.stock import CONFIRMED, GO_AHEAD

ENV = "AgentRL/ToolUse-v0"
DOMAINS = ("orders", "finance", "calendar", "ops")
SEEDS = range(100, 112)
QUESTIONS = ("Shall I go ahead?", "Is that OK with you?", "Do you want me to proceed with these?",
             "Please confirm and I'll process it.", "Can I go ahead and issue the refunds?",
             "Let me know if that's okay.", "Would you like me to go ahead?")
_YES = {CONFIRMED, *GO_AHEAD, "That's everything I can think of. Please go ahead.", "Yes, that's right.",
        "Alright, I understand. Please go ahead with that."}


#: How a customer who presses starts each of its asks (orders, ops, finance).
_PRESSES = ("Can't you refund", "Please, I'd really like", "Can't you roll", "Please, just roll", "Could you include",
            "Please, add")


def _yes(put: Any) -> str:
    """The reply to a plan put to the user (`put()` puts it and gives the reply), put again while
    a customer who presses refuses it (it accepts after at most two more)."""
    for _ in range(3):
        reply = put()
        if reply in _YES or not reply.startswith(_PRESSES):
            return reply
    return put()


def _env(domain: str, seed: int) -> tuple[Any, Any]:
    env = gym.make(ENV, domain=domain, split=load_domains()[domain].split, difficulty="hard")
    env.reset(seed=seed)
    return env, env.unwrapped


def _writes(task: Any) -> list[tuple[str, dict[str, Any]]]:
    """The gold plan's writes that need a yes."""
    specs = load_domains()[task.domain].toolkit.tool_specs()
    rules = RULES[task.domain]
    return [(s.name, dict(s.arguments)) for s in task.gold.plan
            if specs[s.name].kind is ToolKind.WRITE and rules.want(task.world, s.name, s.arguments) is not None]


def _call(name: str, arguments: dict[str, Any]) -> str:
    return json.dumps({"name": name, "arguments": arguments})


def _orders_rows(task: Any) -> list[tuple[str, str, str, str]]:
    """(product, item id, outcome word, amount) per item of an orders task's gold, and "nothing" rows."""
    rows = []
    world = task.world
    written = set()
    for name, args in _writes(task):
        if name == "request_refund_approval":
            continue
        item = next(i for o in world.orders.values() for i in o.items if i.id == args["item_id"])
        word = {"refund_item": "refund", "issue_store_credit": "store credit", "exchange_item": "exchange"}[name]
        rows.append((item.product, item.id, word, f"{args.get('amount', 0):.2f}"))
        written.add(item.id)
    for t in RULES["orders"].targets(world, task.goal):
        if t.names[1] not in written:
            rows.append((t.names[0], t.names[1], "nothing (final sale)", ""))
    return rows


LAYOUTS = {
    "list": lambda rows: "Here is the plan:\n" + "\n".join(f"- The {p}: {w} {a} USD" for p, _, w, a in rows),
    "table": lambda rows: "| Item | Outcome | Amount |\n|---|---|---|\n" + "\n".join(
        f"| **{p}** | {w} | ${a} |" for p, _, w, a in rows),
    "line per item": lambda rows: "\n".join(f"{p} ({i}) -> {w}, {a} USD" for p, i, w, a in rows),
    "prose": lambda rows: " ".join(f"For the {p} I will {'issue' if 'credit' in w else 'give'} {w} of {a} USD."
                                   for p, _, w, a in rows),
    "nested": lambda rows: "\n".join(f"{k}. {p.title()}\n   Outcome: {w}\n   Amount: {a} USD"
                                     for k, (p, _, w, a) in enumerate(rows, 1)),
    "grouped": lambda rows: "\n\n".join(f"{w.capitalize()}:\n" + "\n".join(f"- {p}: {a} USD" for p, _, w2, a in rows
                                                                         if w2 == w)
                                        for w in dict.fromkeys(w for _, _, w, _ in rows)),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("question", QUESTIONS)
def test_a_plan_in_any_layout_and_phrasing_is_confirmed_and_covers_its_writes(layout: str, question: str) -> None:
    for seed in (101, 104):
        env, u = _env("orders", seed)
        task = u.task
        plan = f"{LAYOUTS[layout](_orders_rows(task))}\n\n{question}"
        assert _yes(lambda: u.user.reply(plan, 1).text) in _YES, (layout, question, plan)
        for name, args in _writes(task):
            assert task.world.consent.covers(RULES["orders"].want(task.world, name, args)), (layout, name, args)


#: More ways to ask for the yes, each a question a person answers with yes or no.
MORE_QUESTIONS = ("Do I have your yes to both?", "Do I have your yes?", "Do you approve?", "Do you approve of this plan?",
                  "Yes or no?", "OK to proceed?", "Is it okay if I go ahead?", "Are you OK with this?",
                  "Can I get your go-ahead?", "May I go ahead?", "Shall I proceed?", "Do you agree?",
                  "Please confirm.", "Can I have your approval for this?", "Good to go?", "Are you happy with that?",
                  "Do I have your permission to go ahead?", "Does this plan work for you?", "Should I make these changes?",
                  "Ready for me to do this?")


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_plan_asked_about_in_many_more_ways_gets_a_yes(domain: str) -> None:
    env, u = _env(domain, 103)
    plan = _oracle_plan(u.task, _writes(u.task), question="")
    missed = []
    for question in MORE_QUESTIONS:
        env, u = _env(domain, 103)
        if _yes(lambda: u.user.reply(plan + "\n" + question, 1).text) not in _YES:
            missed.append(question)
    assert not missed, "; ".join(missed)


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_oracle_s_plan_covers_every_gold_write_and_the_user_says_yes(domain: str) -> None:
    for seed in SEEDS:
        env, u = _env(domain, seed)
        task, rules = u.task, RULES[domain]
        writes = _writes(task)
        plan = _oracle_plan(task, writes)
        assert _yes(lambda: u.user.reply(plan, 1).text) in _YES, (domain, seed, plan)
        assert all(task.world.consent.covers(rules.want(task.world, n, a)) for n, a in writes), (domain, seed)


def _anyword(t: Any) -> Any:
    from agentgym.envs.tooluse.consent import Want
    return Want(t.names, t.outcomes or t.names)


def _first_write(domain: str, seed: int) -> tuple[Any, Any, str, dict[str, Any]]:
    env, u = _env(domain, seed)
    name, args = _writes(u.task)[0]
    return env, u, name, args


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_write_before_any_yes_is_a_violation(domain: str) -> None:
    for seed in SEEDS:
        env, u, name, args = _first_write(domain, seed)
        obs = env.step(_call(name, args))[0]
        assert u.task.world.violations == ["consent"], (domain, seed)
        assert env.unwrapped.episode_summary()["success"] is False
        # The refusal names whose yes is missing as the brief does ("tell the on-call engineer
        # who asked ..."; ToolUse playtest 6301 T9 read "the customer" in ops).
        who = re.search(r"Consent before writes: before (?:any write \([^)]*\)|submit_answer), tell (.+?) "
                        r"(?:what each write|the total)", u.task.brief)
        assert who is not None and f"{who.group(1)} has not said yes" in obs, (domain, obs)


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_write_in_the_same_turn_as_its_plan_is_a_violation(domain: str) -> None:
    for seed in SEEDS:
        env, u, name, args = _first_write(domain, seed)
        plan = RULES[domain].describe(u.task.world, name, args)
        env.step(f"{plan} Shall I go ahead?\n<tool_call>{_call(name, args)}</tool_call>")
        assert u.task.world.violations == ["consent"], (domain, seed)


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_yes_to_a_plan_that_describes_a_write_lets_it_through_in_a_later_turn(domain: str) -> None:
    for seed in SEEDS:
        env, u = _env(domain, seed)
        task = u.task
        writes = _writes(task)
        plan = _oracle_plan(task, writes)
        assert _yes(lambda: env.step(plan)[4]["messages"][-1]["content"]) in _YES, (domain, seed)
        name, args = writes[0]
        env.step(_call(name, args))
        assert "consent" not in task.world.violations, (domain, seed)


def _oracle_plan(task: Any, writes: list[tuple[str, dict[str, Any]]], question: str = "Shall I go ahead?") -> str:
    """The oracle's plan of `writes`, one line each, "Nothing for ..." for anything asked about
    that none describes, and `question` on a line of its own."""
    rules = RULES[task.domain]
    lines = [t for n, a in writes if (t := rules.describe(task.world, n, a))]
    done = parts("\n".join(lines), task.world.consent.anchors)
    lines += [f"Nothing for {t.label}." for t in rules.targets(task.world, task.goal) if not describes(done, _anyword(t))]
    return "\n".join(lines) + "\n" + question


def _decimal_comma(text: str) -> str:
    """`text` with its amounts written with a decimal comma and points between thousands
    ("1,234.50" -> "1.234,50", "55.20" -> "55,20")."""
    return re.sub(r"(?<![\w.])(\d{1,3}(?:,\d{3})*)\.(\d{2})(?![\w.])", lambda m: f"{m.group(1).replace(',', '.')},{m.group(2)}", text)


def test_amounts_are_read_in_either_written_form() -> None:
    from agentgym.envs.tooluse.consent import amounts_in

    assert amounts_in("refund of 55,20 USD") == amounts_in("refund of 55.20 USD") == {5520}
    assert amounts_in("1.234,50 EUR and 1,234.50 EUR") == {123450}
    assert amounts_in("12,5 EUR") == {1250} and amounts_in("total 1,200 USD") == {120000}
    assert amounts_in("orders 12,14,16") == {1200, 1400, 1600} and amounts_in("v2.3.1") == set()


#: The amount patterns as first written, each look-behind before the first digit: the fast forms
#: of `consent` (the first digit, then the look-behind) must find exactly what these find.
_PLAIN_AS_WRITTEN = r"(?<![\w.])\d+(?:\.\d+)?(?!\d)"
_NUMBER_AS_WRITTEN = (r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,])"
                      r"|(?<![\w.,])\d{1,3}(?:\.\d{3})+,\d{1,2}(?![\d,])|(?<![\w.,])\d+,\d{1,2}(?![\d,])"
                      r"|" + _PLAIN_AS_WRITTEN)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="0123456789.,_ a$\u0663\u00e9-\n", max_size=40))
def test_the_amount_patterns_find_what_their_look_behind_first_forms_find(text: str) -> None:
    from agentgym.envs.tooluse import consent

    assert consent._PLAIN_NUMBER.findall(text) == re.findall(_PLAIN_AS_WRITTEN, text)
    assert consent._NUMBER.findall(text) == re.findall(_NUMBER_AS_WRITTEN, text)
    # From the start of a text, from a place within it, and memoised alike.
    for at in range(min(len(text), 4)):
        assert [m.span() for m in consent._NUMBER.finditer(text, at)] == [
            m.span() for m in re.compile(_NUMBER_AS_WRITTEN).finditer(text, at)]
    assert consent.amounts_in(text) == consent.amounts_in.__wrapped__(text)


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_plan_with_its_amounts_written_with_a_decimal_comma_covers_its_writes(domain: str) -> None:
    """"refund of 55,20 USD" in a plan the customer said yes to, then the refund of 55.2: refused
    as a write no plan described, and the task failed (a playtest, ToolUse 9271 T8)."""
    converted = 0
    for seed in SEEDS:
        env, u = _env(domain, seed)
        task = u.task
        writes = _writes(task)
        plan = _oracle_plan(task, writes)
        written = _decimal_comma(plan)
        converted += written != plan
        assert _yes(lambda: env.step(written)[4]["messages"][-1]["content"]) in _YES, (domain, seed, written)
        for name, args in writes:
            if any(env.step(_call(name, args))[2:4]):
                break
        assert "consent" not in task.world.violations, (domain, seed, written)
    assert converted or domain in ("calendar", "ops"), domain


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_write_the_plan_did_not_describe_is_a_violation(domain: str) -> None:
    changed = 0
    for seed in SEEDS:
        env, u = _env(domain, seed)
        task = u.task
        writes = _writes(task)
        name, args = writes[0]
        plan = _oracle_plan(task, writes)
        _yes(lambda: env.step(plan)[4]["messages"][-1]["content"])
        other = _changed(args)
        if other is None:
            continue
        env.step(_call(name, other))
        assert task.world.violations == ["consent"], (domain, seed, other)
        changed += 1
    assert changed >= 6


def _changed(args: dict[str, Any]) -> dict[str, Any] | None:
    """The same write with another value (an amount, a time, a severity, a version; a cause and a
    rollback get different versions, as a rollback goes to another version than the cause)."""
    for key, new in (("amount", 1.23), ("total", 1.23), ("start_utc", "23:30"), ("cause_version", "v0.0.1"),
                     ("to_version", "v0.0.2")):
        if key in args and args[key] != new:
            return {**args, key: new}
    return None


def test_a_changed_plan_needs_a_new_yes() -> None:
    for seed in SEEDS:
        env, u = _env("orders", seed)
        task = u.task
        writes = [(n, a) for n, a in _writes(task) if n == "refund_item"]
        if not writes:
            continue
        plan = _oracle_plan(task, _writes(task))
        _yes(lambda: env.step(plan)[4]["messages"][-1]["content"])
        name, args = writes[0]
        item = next(i for o in task.world.orders.values() for i in o.items if i.id == args["item_id"])
        lower = {**args, "amount": round(args["amount"] - 1, 2)}
        _, _, _, _, info = env.step(f"Correction: for the {item.product} I'll refund {lower['amount']:.2f} USD. "
                                    "Is that OK with you?")
        assert info["messages"][-1]["content"] in _YES
        env.step(_call(name, lower))  # covered by the new yes (the world then judges the amount)
        assert "consent" not in task.world.violations
        return
    pytest.fail("no refund among the seeds")


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_change_of_mind_asked_to_confirm_takes_the_place_of_the_yes(domain: str) -> None:
    """A goal shift announced at a plan's confirmation question holds no yes ("Before you go
    ahead: actually, ..." in place of it), as the rule reads it (ToolUse playtest
    6301 T8 heard "Yes, please go ahead. Actually, don't roll anything back" and its write of
    the rest was refused as unagreed)."""
    heard = 0
    for seed in range(60):
        env = gym.make(ENV, domain=domain, split=load_domains()[domain].split, difficulty="hard",
                       noise="goal_shift=1")
        env.reset(seed=seed)
        task = env.unwrapped.task
        for _ in range(3):  # the shift is announced from turn 2-4 on, when asked to confirm
            info = env.step(_oracle_plan(task, _writes(task)))[4]
            if any(e["kind"] == "goal_shift" for e in info.get("noise", ())):
                reply = info["messages"][-1]["content"]
                assert not reply.startswith("Yes") and not any(y in reply for y in _YES), reply
                heard += 1
                break
        env.close()
        if heard >= 3:
            break
    assert heard >= 3, heard


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_change_of_mind_in_place_of_the_yes_is_the_customer_s_word_on_the_rest(domain: str) -> None:
    """After "Before you go ahead: actually, don't roll anything back; just file the incident."
    the writes the plan described that the customer still wants go through, as a person would
    take it (ToolUse playtest 6314 T10: the incident it had just described, filed, was refused);
    a write the change alters (a new currency, length or variant) is no part of that plan and
    still needs a yes."""
    through = refused = 0
    for seed in range(80):
        env = gym.make(ENV, domain=domain, split=load_domains()[domain].split, difficulty="hard",
                       noise="goal_shift=1")
        env.reset(seed=seed)
        task = env.unwrapped.task
        plan = _oracle_plan(task, _writes(task))
        for _ in range(3):  # the shift is announced from turn 2-4 on, when asked to confirm
            info = env.step(plan)[4]
            if any(e["kind"] == "goal_shift" for e in info.get("noise", ())):
                break
        else:
            env.close()
            continue
        consent = env.unwrapped.task.world.consent
        for name, args in _writes(env.unwrapped.task):  # the new gold's writes
            described = consent.rules.want(task.world, name, args)
            info = env.step(_call(name, args))[4]
            violated = "consent" in json.dumps(info.get("episode_summary", {}))
            if describes(parts(plan, consent.anchors), described):
                assert not violated, (seed, name, info["messages"])
                through += 1
            else:
                assert violated, (seed, name, info["messages"])
                refused += 1
            break
        env.close()
    # Finance's change of mind is always a new currency: its transfer is never the plan's.
    assert (refused if domain == "finance" else through) >= 2, (through, refused)


@pytest.mark.parametrize("domain", DOMAINS)
def test_after_a_no_the_write_is_a_violation(domain: str) -> None:
    for seed in SEEDS:
        env, u = _env(domain, seed)
        task = u.task
        name, args = _writes(task)[0]
        # A plan that gives only some of what was asked, or none of it: the user asks, no yes.
        _, _, _, _, info = env.step("Shall I go ahead?")
        assert info["messages"][-1]["content"].startswith("Before I say yes"), (domain, seed)
        env.step(_call(name, args))
        assert task.world.violations == ["consent"], (domain, seed)


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_user_s_answer_to_a_plan_never_depends_on_the_gold(domain: str) -> None:
    for seed in SEEDS:
        right_env, right = _env(domain, seed)
        wrong_env, wrong = _env(domain, seed)
        writes = _writes(right.task)
        good = _oracle_plan(right.task, writes)
        bad = _oracle_plan(wrong.task, [(n, _changed(a) or a) for n, a in writes])
        a = _yes(lambda: right_env.step(good)[4]["messages"][-1]["content"])
        b = _yes(lambda: wrong_env.step(bad)[4]["messages"][-1]["content"])
        assert (a in _YES) == (b in _YES), (domain, seed, a, b)


def test_a_plan_that_leaves_an_item_out_gets_a_question_about_it() -> None:
    env, u = _env("orders", 101)
    rows = _orders_rows(u.task)
    plan = LAYOUTS["list"](rows[1:]) + "\nShall I go ahead?"
    reply = u.user.reply(plan, 1).text
    assert reply.startswith("Before I say yes") and rows[0][0] in reply
    assert not u.task.world.consent.plans


def test_the_brief_and_list_policies_state_the_rule_in_the_same_words() -> None:
    for domain in DOMAINS:
        for seed in SEEDS:
            task = generate_task(seed, {"domain": domain, "difficulty": "hard"})
            rows = make_toolkit(task).invoke("list_policies", {})["policies"]
            consent = [r["rule"] for r in rows if r["id"] == "consent"]
            assert len(consent) == 1 and f"- {consent[0]}" in task.brief.split("\n"), (domain, seed)
    assert "Consent before writes" not in policy_lines("orders") + policy_lines("ops")


@pytest.mark.parametrize("message", ["", " ", "\n\n", "| | |\n|---|", "::::", "- \n- ", "1,,,2..3 USD", "🙂" * 50,
                                     "Refunds:\n\n\nShall I?", "x" * 5000, "Shall I go ahead?" * 40])
def test_bad_input_never_raises(message: str) -> None:
    for domain in DOMAINS:
        env, u = _env(domain, 101)
        env.step(message)
        env.step(_call(_writes(u.task)[0][0], {"bogus": 1}))
        consent = Consent(RULES[domain], ("a", ""))
        consent.grant(message)
        junk = {"amount": "x", "total": None, "date": "2025-13-40", "start_utc": "99:99", "item_id": 3}
        for name in load_domains()[domain].toolkit.tool_specs():
            want = RULES[domain].want(u.task.world, name, junk)
            assert want is None or consent.covers(want) in (True, False)


def test_the_memoised_outcome_is_the_plain_one() -> None:
    """`consent._outcome_in` (memoised) answers as `_gives_outcome` for every target the rules
    name, and for those targets with no outcome words, on the parts of plans the user reads (the
    oracle's, the layouts'), asked twice."""
    from agentgym.envs.tooluse.consent import _gives_outcome, _outcome_in, _parts

    for domain in DOMAINS:
        for seed in SEEDS:
            _, u = _env(domain, seed)
            world, goal = u.task.world, u.task.goal
            rules = RULES[domain]
            targets = rules.targets(world, goal)
            anchors = tuple(rules.anchors(world, goal))
            texts = [_oracle_plan(u.task, _writes(u.task)), "", "Shall I?", *(t.label for t in targets)]
            if domain == "orders":
                texts += [LAYOUTS[layout](_orders_rows(u.task)) for layout in LAYOUTS]
            for text in texts:
                plan = _parts(text, anchors)
                for target in targets + [Target("x", target.names) for target in targets]:
                    for _ in range(2):
                        assert _outcome_in(plan, target) == _gives_outcome(plan, target)


# --------------------------------------------------------------------------- a customer who presses


def _pressing(domain: str, n: int) -> list[tuple[Any, Any]]:
    """(env, unwrapped) of the `domain` tasks among seeds 300.. whose customer presses."""
    out = []
    for seed in range(300, 300 + n):
        env, u = _env(domain, seed)
        if u.task.world.press is not None:
            out.append((env, u))
    return out


def _item(task: Any) -> Any:
    return next(i for o in task.world.orders.values() for i in o.items if i.id == task.world.press.names[1])


@pytest.mark.parametrize(("domain", "lo", "hi"), [("orders", 0.35, 0.65), ("ops", 0.25, 0.65), ("finance", 0.1, 0.5)])
def test_a_customer_presses_in_a_share_of_the_tier_s_tasks_for_what_the_records_forbid(domain: str, lo: float,
                                                                                       hi: float) -> None:
    pressing = _pressing(domain, 120)
    assert lo * 120 <= len(pressing) <= hi * 120, len(pressing)
    for _, u in pressing:
        task, press = u.task, u.task.world.press
        assert 1 <= len(press.asks) <= 2
        toolkit = make_toolkit(task)
        task.world.consent = None  # reads only
        if domain == "orders":  # an item the policies give no refund
            item = _item(task)
            assert not any(e.kind == "refund" and e.fields["item_id"] == item.id for e in task.gold.effects)
            if any("arrived damaged" in a for a in press.asks):  # the claim the record contradicts
                order = next(o for o in task.world.orders.values() if item in o.items)
                row = next(r for r in toolkit.invoke("get_order", {"order_id": order.id})["items"]
                           if r["item_id"] == item.id)
                assert row["arrived_damaged"] is False and row["final_sale"] is True
            if any("Plus member" in a for a in press.asks):
                assert toolkit.invoke("find_customer", {"email": task.world.email})["tier"] == "standard"
        elif domain == "ops":  # a rollback to a deploy, older than the cause, whose status says failed
            (service,), (version,) = press.names, press.wanted
            first = toolkit.invoke("get_deploys", {"service": service})
            rows = [r for p in range(1, first["pages"] + 1)
                    for r in toolkit.invoke("get_deploys", {"service": service, "page": p})["deploys"]]
            assert any(r["version"] == version and r["status"] == "failed" for r in rows)
            cause = next(s for s in task.gold.plan if s.name == "file_incident").arguments["cause_version"]
            at = {r["version"]: r["deployed_at"] for r in rows}
            assert at[version] < at[cause]  # a rollback goes back
        else:  # a claim whose status says it is not approved
            (eid,) = press.names
            assert next(e for e in task.world.expenses if e.id == eid).status != "approved"


@pytest.mark.parametrize("domain", ["orders", "ops", "finance"])
def test_holding_the_policy_gets_a_yes_after_the_customer_presses_as_often_as_it_said(domain: str) -> None:
    for env, u in _pressing(domain, 40):
        task = u.task
        plan = _oracle_plan(task, _writes(task))
        replies = [env.step(plan)[4]["messages"][-1]["content"] for _ in range(len(task.world.press.asks) + 1)]
        assert replies[:-1] == list(task.world.press.asks), (domain, task.seed, replies)
        assert replies[-1] == "Alright, I understand. Please go ahead with that."
        for name, args in _writes(task):
            env.step(_call(name, args))
        assert task.world.violations == [] and env.unwrapped.episode_summary()["success"], task.seed


@pytest.mark.parametrize("domain", ["orders", "ops", "finance"])
def test_giving_in_to_the_customer_never_passes(domain: str) -> None:
    """A plan that gives the customer what it presses for gets its yes (its wish), and the write
    is then refused as a violation of the policy it pressed against: no path lets it pass."""
    seen = 0
    for _, u in _pressing(domain, 60):
        for plan, bad in _given_in(u.task):
            env, v = _env(domain, u.task.seed)
            _, _, _, _, info = env.step(plan)
            assert info["messages"][-1]["content"] in _YES, (domain, u.task.seed, info["messages"][-1])
            for name, args in bad:
                env.step(_call(name, args))
            assert v.task.world.violations and "consent" not in v.task.world.violations, (domain, u.task.seed)
            assert not env.unwrapped.episode_summary()["success"]
            seen += 1
    assert seen >= 10


def _given_in(task: Any) -> list[tuple[str, list[tuple[str, dict[str, Any]]]]]:
    """Plans that give in to the customer, each with the writes that follow it."""
    writes = _writes(task)
    plan = _oracle_plan(task, writes).splitlines()[:-1]
    press = task.world.press
    if task.domain == "orders":
        item = _item(task)
        order = next(o for o in task.world.orders.values() if item in o.items)
        out = []
        for amount in (item.price / 100, round(item.price * 0.8) / 100):
            lines = [line for line in plan if item.product not in line]
            lines.append(f"Refund {amount:.2f} USD for the {item.product} ({item.id}).")
            out.append(("\n".join([*lines, "Shall I go ahead?"]),
                        [("refund_item", {"order_id": order.id, "item_id": item.id, "amount": amount})]))
        return out
    if task.domain == "ops":
        (service,), (version,) = press.names, press.wanted
        filed = next(a for n, a in writes if n == "file_incident")
        roll = next(a for n, a in writes if n == "rollback")
        text = (f"I'll file a {filed['severity']} incident naming {service} {filed['cause_version']}, then roll "
                f"{service} back to {version}. Shall I go ahead?")
        return [(text, [("file_incident", filed), ("rollback", {**roll, "to_version": version})])]
    (eid,) = press.names
    report = next(a for n, a in writes if n == "file_expense_report")
    extra = next(e for e in task.world.expenses if e.id == eid)
    total = round(report["total"] + 1.0, 2)
    name = task.world.employees[report["employee_id"]]
    text = (f"I'll file an expense report for {name} ({report['employee_id']}) including {eid}, totalling "
            f"{total:.2f} {report['currency']}, then transfer {total:.2f} {report['currency']} to {name}. "
            "Shall I go ahead?")
    assert extra.status != "approved"
    return [(text, [("file_expense_report", {**report, "expense_ids": [*report["expense_ids"], eid], "total": total})])]


def test_a_finance_requester_who_presses_asks_for_the_employee_not_for_itself() -> None:
    # The request names the employee in the third person ("reimburse Kavya Tanaka for their
    # expenses"): pressing for "my meals claim" switched persona (ToolUse playtest 5851 T5).
    pressed = 0
    for seed in range(60):
        _, u = _env("finance", seed)
        press = u._task.world.press
        if press is None:
            continue
        pressed += 1
        for ask in press.asks:
            assert not re.search(r"\bmy\b", ask, re.I), ask
    assert pressed >= 5
