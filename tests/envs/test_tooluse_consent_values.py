"""The hard tier's customer asks for the values a plan leaves out before it says yes
(`agentgym.envs.tooluse.consent.unvalued`).

"Shall I file the incident and do the rollback?" gives every outcome asked about, but none of
the values the writes carry; a yes to it would grant nothing (each write is then refused as a
violation of the consent rule), so the customer asks for the kinds of value its request's writes
carry, from its own request and never from the gold. An offer put as more ("Should I also roll
it back?") of something the customer asked for is its request, not more than it.
"""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import pytest

import agentgym  # noqa: F401  (registers the ids)
from agentgym.envs.tooluse.consent import VALUE_KINDS, Consent, Need, Target, unvalued
from agentgym.envs.tooluse.domains import load_domains
from agentgym.envs.tooluse.domains.consent_rules import RULES
from agentgym.envs.tooluse.replies import ONLY_ASKED, WITH_VALUES, YES

ENV = "AgentRL/ToolUse-v0"
SEEDS = range(100, 110)
_ASKS = WITH_VALUES.split("{", 1)[0]

#: Per domain, a plan that gives each outcome asked about and names no value its writes carry,
#: from the targets the customer asked about (`{items}`: an orders task's products).
_BARE = {
    "ops": ("Shall I file the incident and do the rollback?", "I'll file the incident and roll the culprit back. OK?",
            "Can I go ahead with the incident and the rollback?"),
    "calendar": ("Shall I book the meeting and send the invitation?", "I'll book the meeting. Is that OK with you?"),
    "finance": ("Shall I file the expense report and make the payment?", "I'll submit the total. Shall I go ahead?"),
    "orders": ("Shall I refund {items}?", "I'll issue store credit for {items}. Is that OK with you?"),
}


def _env(domain: str, seed: int) -> tuple[Any, Any]:
    env = gym.make(ENV, domain=domain, split=load_domains()[domain].split, difficulty="hard")
    env.reset(seed=seed)
    return env, env.unwrapped


def _say(env: Any, message: str) -> str:
    return env.step(message)[4]["messages"][-1]["content"]


def _bare(domain: str, u: Any, template: str) -> str:
    items = [t.label.removeprefix("the ") for t in RULES[domain].targets(u.task.world, u.task.goal)]
    return template.format(items=" and ".join(f"the {i}" for i in items))


@pytest.mark.parametrize("domain", sorted(_BARE))
def test_a_plan_without_the_values_of_its_writes_gets_a_request_for_them_not_a_yes(domain: str) -> None:
    asked = 0
    for seed in SEEDS:
        for template in _BARE[domain]:
            env, u = _env(domain, seed)
            targets = RULES[domain].targets(u.task.world, u.task.goal)
            message = _bare(domain, u, template)
            if domain in ("calendar", "finance") and not all(any(w in message.lower() for w in t.names)
                                                             for t in targets):
                continue  # the plan leaves a target out: the customer asks about that first
            reply = _say(env, message)
            if reply.startswith(("Can't you", "Please, ", "Could you include")):
                continue  # a customer who presses answers the plan's refusal first
            assert reply.startswith(_ASKS), (domain, seed, message, reply)
            assert reply not in YES and not u.task.world.consent.plans, (domain, seed, message)
            asked += 1
    assert asked >= 8, domain


@pytest.mark.parametrize("domain", sorted(_BARE))
def test_the_request_for_values_comes_from_the_request_never_the_gold(domain: str) -> None:
    for seed in SEEDS:
        env, u = _env(domain, seed)
        reply = _say(env, _bare(domain, u, _BARE[domain][0]))
        if not reply.startswith(_ASKS):
            continue
        gold = {str(v) for s in u.task.gold.plan for v in s.arguments.values() if isinstance(v, (str, int, float))}
        assert not any(len(g) > 2 and g.lower() in reply.lower() for g in gold), (domain, seed, reply)


def test_after_the_request_the_whole_plan_with_its_values_gets_a_yes_and_covers_its_writes() -> None:
    env, u = _env("ops", 102)
    assert _say(env, "Shall I file the incident and do the rollback?").startswith(_ASKS)
    writes = [(s.name, dict(s.arguments)) for s in u.task.gold.plan if s.name in ("file_incident", "rollback")]
    plan = "\n".join(RULES["ops"].describe(u.task.world, n, a) for n, a in writes)
    assert _say(env, plan + "\nShall I go ahead?") in YES
    for name, args in writes:
        args = {k: ("summary" if isinstance(v, dict) else v) for k, v in args.items()}
        env.step(json.dumps({"name": name, "arguments": args}))
    assert "consent" not in u.task.world.violations


def test_a_write_after_the_request_for_values_is_still_a_violation() -> None:
    env, u = _env("ops", 102)
    _say(env, "Shall I file the incident and do the rollback?")
    step = next(s for s in u.task.gold.plan if s.name == "file_incident")
    args = {k: ("summary" if isinstance(v, dict) else v) for k, v in step.arguments.items()}
    env.step(json.dumps({"name": "file_incident", "arguments": args}))
    assert u.task.world.violations == ["consent"]


@pytest.mark.parametrize("message, left", [
    ("I'll file a sev2 incident naming auth v3.11.4 as the cause, then roll auth back to v3.11.2. OK?", 0),
    ("I'll file a SEV-2 incident naming auth 3.11.4 as the cause and roll auth back to 3.11.2. OK?", 0),
    ("Incident: auth, **v3.11.4**, severity 2.\nRollback: auth to `v3.11.2`.\nGo ahead?", 0),
    ("The culprit is auth v3.11.4. Shall I file the incident and do the rollback?", 3),
    ("I'll file a sev2 incident for auth and roll it back to v3.11.2. OK?", 2),
    ("I'll file a sev1 incident naming auth v3.11.4 as the cause. OK?", 0),  # the rollback: `missing`
])
def test_ops_plans_are_read_for_a_severity_and_two_versions(message: str, left: int) -> None:
    incident = Target("the incident", ("incident",), needs=(Need(("incident",), "severity", "S"),
                                                            Need(("incident",), "version", "V1")))
    rollback = Target("the rollback", ("roll", "revert"), needs=(Need(("roll", "revert"), "version", "V2"),))
    assert len(unvalued(message, Consent(RULES["ops"], ()), [incident, rollback])) == left, message


@pytest.mark.parametrize("kind, text, found", [
    ("version", "roll back to v1.7.9.", True), ("version", "error rate 12.5%", False),
    ("severity", "sev-2", True), ("severity", "severity 1", True), ("severity", "several", False),
    ("amount", "refund usd 45.00", True), ("amount", "refund it", False),
    ("date", "on 2025-04-08", True), ("date", "on april 8", True), ("date", "on 8 apr", True),
    ("date", "on tuesday", False), ("time", "at 05:00 utc", True), ("time", "at 3 pm", True),
    ("time", "in the morning", False),
])
def test_value_kinds(kind: str, text: str, found: bool) -> None:
    assert bool(VALUE_KINDS[kind](text)) is found


def test_a_plan_that_refuses_an_item_its_money_is_asked_no_amount() -> None:
    _env_, u = _env("orders", 101)
    targets = RULES["orders"].targets(u.task.world, u.task.goal)
    first = targets[0].label
    refusal = f"{first.capitalize()} is final sale, so I can't refund it."
    assert unvalued(refusal, u.task.world.consent, targets[:1]) == []
    assert unvalued(f"I'll refund {first}.", u.task.world.consent, targets[:1]) == [f"the amount for {first}"]
    assert unvalued(f"I'll refund {first}: 45.00 USD.", u.task.world.consent, targets[:1]) == []


def test_an_offer_of_what_the_customer_asked_for_is_not_more_than_it() -> None:
    env, u = _env("ops", 102)
    assert "roll" in u.task.goal.request.lower()
    reply = _say(env, "I'll file a sev2 incident naming auth v3.11.4 as the cause. Should I also roll it back?")
    assert reply != ONLY_ASKED
    env, u = _env("ops", 102)
    assert _say(env, "I'll file a sev2 incident naming auth v3.11.4 as the cause. Should I also page the owning "
                     "team?") == ONLY_ASKED
