"""A question whether something the tools show is so gets no yes from the tool-use user, and no
detail of its own said as if to correct it (`agentgym.envs.tooluse.findings`).

Playtests: ToolUse 9479 T7 asked the on-call engineer to confirm six findings ("Checkout is the
root cause ... Correct?") and heard only "It showed up on shipping."; probes of the same turn got
that line to "Is ledger the root cause?" (which reads as a correction), and "Yes, that's right."
to "The bad deploy is v4.7.5. Is that right?" (a wrong finding, vouched for). CrossTask 9480 T32
put a plan as numbered lines each ending "Yes?" and got "What I told you is right; anything else,
please check with your tools." instead of a yes, and "The earliest start that works for all six
of you is 09:00 UTC. Correct?" got a request to rephrase.
"""

from __future__ import annotations

import gymnasium as gym
import pytest
from playtest_turns import played

from agentgym.envs.tooluse.asking import ASKS_LEAVE
from agentgym.envs.tooluse.findings import asks_finding
from agentgym.envs.tooluse.replies import AS_SAID, RIGHT, UNKNOWN, YES

KNOWS_NO_MORE = UNKNOWN[0]
ALERT = "It showed up on shipping."


def _replies(env: gym.Env, seed: int, turns: list[str], upto: int, messages: list[str]) -> list[str]:
    out = []
    for message in messages:
        env.reset(seed=seed)
        for action in turns[:upto]:
            env.step(action)
        obs, *_ = env.step(message)
        out.append(obs.removeprefix("[user] "))
    return out


@pytest.fixture(scope="module")
def ops_9479() -> tuple[gym.Env, list[str]]:
    """ToolUse 9479 (ops, test, hard), after its six turns of reads: the alert not yet said."""
    return played("tooluse-9479-test.jsonl", 0)


@pytest.mark.parametrize("message", ["Is ledger the root cause?", "Checkout is the root cause, correct?",
                                     "Is checkout the culprit?", "Did ledger fail on its own?"])
def test_a_finding_naming_a_service_is_not_corrected_with_the_alert(ops_9479: tuple[gym.Env, list[str]],
                                                                    message: str) -> None:
    # The alert's service, not said yet, is what the user knows; it is said, then that it knows no more.
    env, turns = ops_9479
    assert _replies(env, 9479, turns, 6, [message]) == [f"{ALERT} {KNOWS_NO_MORE}"]


def test_the_users_own_detail_is_still_checked(ops_9479: tuple[gym.Env, list[str]]) -> None:
    env, turns = ops_9479
    assert _replies(env, 9479, turns, 6, ["Is the alert on ledger?", "Is the alert on shipping?"]) == [ALERT, RIGHT]


def test_findings_said_beside_the_users_own_get_what_it_said(ops_9479: tuple[gym.Env, list[str]]) -> None:
    env, turns = ops_9479
    six_points = turns[6]  # T7: six findings, each "Correct?", the alert's service and the severity among them
    assert "Correct?" in six_points and "root cause" in six_points
    assert _replies(env, 9479, turns, 6, [six_points]) == [f"{ALERT} {AS_SAID}"]
    assert _replies(env, 9479, turns, 6, ["The severity is sev3 per the policy. Correct?"]) == [AS_SAID]


def test_the_plan_after_the_findings_still_gets_its_yes(ops_9479: tuple[gym.Env, list[str]]) -> None:
    env, turns = ops_9479
    env.reset(seed=9479)
    for action in turns[:7]:
        env.step(action)
    obs, *_ = env.step(turns[7])  # T8: the two writes, "Yes?" after each
    assert obs.removeprefix("[user] ") in YES


@pytest.fixture(scope="module")
def calendar_9480() -> tuple[gym.Env, list[str]]:
    """CrossTask 9480 (train, hard), its calendar request before the plan was put (T32)."""
    return played("crosstask-9480-train.jsonl", 0)


def test_plan_lines_each_asking_yes_get_a_yes(calendar_9480: tuple[gym.Env, list[str]]) -> None:
    env, turns = calendar_9480
    kept = turns[31]  # T32: the findings, then "Plan, item by item:" and two lines ending "Yes?"
    assert kept.count("Yes?") == 2
    plans = [kept, "1. Book it at 09:00 UTC. Yes?\n2. Send the invitation. Yes?",
             "Plan, item by item:\n1. Book it at 09:00 UTC.\n2. Then send the invitation, OK?"]
    assert all(reply in YES for reply in _replies(env, 9480, turns, 31, plans))


#: Each kept episode's fixture, its seed and the turns stepped before the question.
_AT = {"ops_9479": (9479, 6), "calendar_9480": (9480, 31)}


@pytest.mark.parametrize(("kept", "message"), [
    ("ops_9479", "The root cause is ledger. Is that right?"),
    ("ops_9479", "The bad deploy is v4.7.5. Is that right?"),
    ("ops_9479", "So v4.7.5 is the bad deploy, right?"),
    ("ops_9479", "Was v4.7.3 the cause?"),
    ("calendar_9480", "The earliest start that works for all six of you is 09:00 UTC. Correct?"),
    ("calendar_9480", "The earliest start that works for all six of you is 08:00 UTC. Is that right?"),
    ("calendar_9480", "So 08:00 UTC works for everyone, right?"),
    ("calendar_9480", "Is 08:00 UTC free for everyone?"),
    ("calendar_9480", "Everyone is free at 08:00 UTC. Correct?"),
])
def test_a_finding_asked_about_gets_no_yes(request: pytest.FixtureRequest, kept: str, message: str) -> None:
    # A root cause, a deploy, a free time: what only the tools show gets neither a yes nor a correction.
    env, turns = request.getfixturevalue(kept)
    seed, upto = _AT[kept]
    assert _replies(env, seed, turns, upto, [message]) == [KNOWS_NO_MORE]


def test_the_users_own_meeting_said_back_still_gets_a_yes(calendar_9480: tuple[gym.Env, list[str]]) -> None:
    env, turns = calendar_9480
    assert _replies(env, 9480, turns, 31, ["So it's a 45-minute meeting on 2025-04-30, correct?"]) == [RIGHT]


@pytest.mark.parametrize(("domain", "seed", "message"), [
    ("orders", 5, "The watch is past its return window, correct?"),
    ("orders", 5, "Was the lamp delivered?"),
    ("finance", 7, "Is X-2444 approved?"),
    ("finance", 7, "So 3 expenses are pending, correct?"),
])
def test_every_domain_keeps_to_what_it_knows(domain: str, seed: int, message: str) -> None:
    env = gym.make("AgentRL/ToolUse-v0", domain=domain, difficulty="hard", split="train")
    env.reset(seed=seed)
    obs, *_ = env.step(message)
    assert obs.removeprefix("[user] ") == KNOWS_NO_MORE


def test_an_item_of_the_users_own_said_beside_a_finding() -> None:
    env = gym.make("AgentRL/ToolUse-v0", domain="orders", difficulty="hard", split="train")
    env.reset(seed=5)  # the air purifier is one of the items the customer named
    obs, *_ = env.step("The air purifier is past its return window, correct?")
    assert obs.removeprefix("[user] ") == AS_SAID


@pytest.mark.parametrize("message", [
    "Is ledger the root cause?", "Checkout is the root cause, correct?", "The bad deploy is v4.7.5. Is that right?",
    "Severity: the policy gives sev3. Correct?", "Shipping calls ledger.\nCorrect?",
])
def test_asks_finding_reads_checks_of_findings(message: str) -> None:
    assert asks_finding("ops", message)


@pytest.mark.parametrize("message", [
    # a question with a question word asks for a value, whatever it says beside it
    "Before I look for the earliest slot: how long should the meeting be?",
    "Do you know which service is the root cause?",
    # what may be, leave to act or to look, a plan put for a yes, a wish of the user's
    "Could anyone be dropped if no common hour fits?",
    "Shall I roll back the culprit, checkout, to v4.7.2?",
    "Mind if I look at checkout's logs to see whether it is the root cause?",
    "I'll file an incident naming checkout as the root cause. Is that OK?",
    "So you want the root cause found and rolled back, right?",
    "Is the alert on ledger?",
    "No question here: checkout is the root cause.",
])
def test_asks_finding_leaves_other_questions(message: str) -> None:
    assert not asks_finding("ops", message)


def test_a_write_line_ending_in_a_bare_yes_asks_leave() -> None:
    for message in ("1. Book it on 2025-04-30 at 09:00 UTC. Yes?", "2. Then send the invitation to all. Yes?",
                    "Roll checkout back to v4.7.2, correct?"):
        assert ASKS_LEAVE.search(message), message
    for message in ("Refund policy: 30 days. Is that right?", "The booking is at 09:00. Yes?"):
        assert not ASKS_LEAVE.search(message), message


def test_a_finding_asked_beside_a_whole_plan_asks_no_detail() -> None:
    # ToolUse 9575 T8: "Notifications being the culprit matches what you are seeing on your side,
    # right? And shall I go ahead with both writes: ..." got the alert's service (a detail not said
    # yet) and "please put the whole plan to me"; the plan was whole, and the question asks the
    # user to vouch for a finding, not for the alert. The customer now answers the plan (it presses
    # for the failed deploy it remembers, as it did to the plan put again at T9).
    env, turns = played("tooluse-9575-test.jsonl", 7)
    obs, *_ = env.step(turns[7])
    assert "put the whole plan" not in obs and "roll notifications back to v4.16.9" in obs
