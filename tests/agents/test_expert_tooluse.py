"""The expert's tool-use strategy: every task solvable from what the agent is shown, and the
careful assistant's habits that make it so under noise (issue 26, item 4).

The figures over 500 seeds per cell are in benchmarks/expert/RESULTS.md; here a sample of seeds
per split and difficulty, and each habit on its own.
"""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import pytest

import agentgym  # noqa: F401
from agentgym.agents import make_agent
from agentgym.agents.experts.briefs import section
from agentgym.agents.experts.casefile import Blocked, CaseFile, Move, Read
from agentgym.agents.experts.tooluse import ToolUseExpert
from agentgym.agents.experts.tooluse_playbooks.calendar import CalendarPlaybook, works
from agentgym.agents.experts.tooluse_playbooks.ops import _wants_rollback
from agentgym.agents.experts.tooluse_playbooks.orders import _variant_asked, _variant_named
from agentgym.agents.experts.votes import vote
from agentgym.agents.experts.words import has_phrase, has_word, near
from agentgym.agents.transcript import transient
from agentgym.agents.turns import Call
from agentgym.eval.episode import agent_view, run_episode

ENV = "AgentRL/ToolUse-v0"
CELLS = [(split, difficulty) for split in ("train", "test") for difficulty in ("easy", "medium", "hard")]


def _play(env: Any, agent: Any, seed: int) -> dict[str, Any]:
    return run_episode(env, agent, seed).episode


# ------------------------------------------------------------------------------ whole episodes
@pytest.mark.parametrize("split,difficulty", CELLS)
def test_the_expert_solves_every_sampled_task_with_noise_off(split: str, difficulty: str) -> None:
    env = gym.make(ENV, split=split, difficulty=difficulty)
    agent = make_agent("expert")
    failed = [seed for seed in range(1000, 1040) if not _play(env, agent, seed)["success"]]
    assert failed == [], f"the expert failed {split}/{difficulty} seeds {failed} with noise off: a task or user fault"


@pytest.mark.parametrize("split", ["train", "test"])
def test_the_expert_meets_its_target_under_medium_noise(split: str) -> None:
    env = gym.make(ENV, split=split, noise="medium")
    agent = make_agent("expert")
    wins = sum(_play(env, agent, seed)["success"] for seed in range(2000, 2090))
    assert wins / 90 >= 0.95


@pytest.mark.parametrize("noise", ["goal_shift=1.0", "ambiguity=1.0", "typos=1.0", "corruption=0.3",
                                   "goal_shift=1.0,ambiguity=1.0,typos=1.0"])
def test_each_fault_the_brief_gives_means_for_is_recovered(noise: str) -> None:
    wins = total = 0
    for split, difficulty in CELLS:
        env = gym.make(ENV, split=split, difficulty=difficulty, noise=noise)
        agent = make_agent("expert")
        for seed in range(3000, 3012):
            wins += _play(env, agent, seed)["success"]
            total += 1
    assert wins / total >= 0.97, f"{noise}: {wins}/{total}"


def test_the_expert_is_ordinary_it_needs_only_messages_tools_and_the_card() -> None:
    """It reads the conversation, the tool schemas and the public card: nothing else of info."""
    assert make_agent("expert").privileged is False
    keep = ("messages", "tools", "task")
    for split, difficulty in CELLS:
        env = gym.make(ENV, split=split, difficulty=difficulty, noise="medium")
        agent = make_agent("expert")
        obs, info = env.reset(seed=7)
        agent.reset(obs, {k: v for k, v in info.items() if k in keep})
        done = False
        while not done:
            obs, _, terminated, truncated, info = env.step(agent.act(obs, {k: v for k, v in agent_view(info).items()
                                                                          if k in keep}))
            done = terminated or truncated
        assert info["episode_summary"]["success"], (split, difficulty)


def test_a_customer_who_keeps_one_item_still_gets_the_other_done() -> None:
    """Said in one message with the answer to an open question ("I'd like my money back for the
    jacket. Actually, I'll keep the grinder after all"), the keep is about its own clause."""
    from agentgym.agents.experts.tooluse_playbooks.orders import _kept

    said = ("I'd like my money back for the rain jacket, please. Actually, I'll keep the coffee grinder after all; "
            "please just take care of the other item.")
    assert _kept(said, "coffee grinder") and not _kept(said, "rain jacket")


def test_it_confirms_before_its_first_write_so_a_change_of_mind_comes_first() -> None:
    """A goal shift pending is heard at the confirmation, before anything is final, and every
    write then follows the new goal (no write contradicts what the user said)."""
    for split, difficulty in CELLS:
        env = gym.make(ENV, split=split, difficulty=difficulty, noise="goal_shift=1.0")
        for seed in range(40, 46):
            episode = _play(env, make_agent("expert"), seed)
            assert episode["success"], (split, difficulty, seed)
            shifts = [e for e in episode["noise"] if e["kind"] == "goal_shift"]
            writes = [c for c in episode["calls"] if c["kind"] == "write" and not c["error"]]
            if shifts and writes:
                assert shifts[0]["step"] < writes[0]["turn"]
            assert all(not c["contradicts"] for c in writes)


def test_a_write_whose_call_failed_is_read_back_before_it_is_sent_again() -> None:
    """With writes timing out more often than the careful layers retry, the expert reads back
    with the domain's read-back tool, then sends the write again: no effect is made twice."""
    readbacks = {"create_transfer": "list_transfers", "file_expense_report": "list_reports",
                 "book_meeting": "list_meetings", "send_invitation": "list_meetings", "file_incident": "list_incidents",
                 "refund_item": "get_order", "issue_store_credit": "get_order", "exchange_item": "get_order"}
    noise = {"tool_failure": {"rate": 0.7, "modes": ["timeout"], "tools": sorted(readbacks)}}
    seen = 0
    for split in ("train", "test"):
        env = gym.make(ENV, split=split, difficulty="easy", noise=noise)
        for seed in range(30):
            episode = _play(env, make_agent("expert"), seed)
            calls = episode["calls"]
            for i, c in enumerate(calls):
                if c["kind"] == "write" and c["error"] and i + 1 < len(calls) and calls[i + 1]["name"] != c["name"]:
                    assert calls[i + 1]["name"] == readbacks[c["name"]], (seed, calls[i + 1]["name"])
                    seen += 1
            made = [c for c in calls if c["kind"] == "write" and not c["error"]]
            assert len({json.dumps(c["arguments"], sort_keys=True) for c in made}) == len(made)
    assert seen >= 5


def test_the_tool_use_strategy_starts_on_a_sub_task_of_a_session() -> None:
    """Started mid-session (a cross-task brief with a section per area, the request alone), it
    reads its own area's section of the brief."""
    env = gym.make("AgentRL/CrossTask-v0")
    for seed in range(12):
        obs, info = env.reset(seed=seed)
        segment = info["segment"]
        if segment["family"] != "tooluse":
            continue
        strategy = ToolUseExpert()
        brief = info["messages"][0]["content"]
        request = info["messages"][1]["content"]
        strategy.reset(obs, {"messages": [{"role": "system", "content": brief}, {"role": "user", "content": request}],
                             "tools": info["tools"], "task": {"family": "tooluse", "domain": segment["domain"]}})
        assert strategy.book is not None and "Policies:" in strategy.book.brief
        assert "## Task area" not in strategy.book.brief
        action = strategy.act(obs, {"messages": [{"role": "user", "content": request}]})
        assert action


# ------------------------------------------------------------------------------ the parts
def test_near_reads_a_word_through_one_slip_but_keeps_its_first_letter() -> None:
    for typo in ("mnutes", "minuets", "minnutes", "minuted"):
        assert near(typo, "minutes"), typo
    assert not near("ninutes", "minutes")  # people read a word by its first letter
    assert not near("mutes", "minutes")  # two slips
    assert not near("dan", "don")  # words under four letters are read as they are
    assert has_word("Hi, plese reimbruse Ana", "reimburse") and has_phrase("please rol the culprit bakc", "roll the culprit back")


def test_votes_settle_value_by_value_and_a_disagreement_takes_two_more_reads() -> None:
    a = {"items": [{"price": 10.0, "final_sale": False}, {"price": 20.0, "final_sale": False}], "day": "2025-01-02"}
    b = {"items": [{"price": 10.0, "final_sale": True}, {"price": 20.0, "final_sale": False}], "day": "2025-01-02"}
    c = {"items": [{"price": 10.0, "final_sale": False}, {"price": 20.0, "final_sale": False}], "day": "2025-01-05"}
    assert vote([a, a], 2).settled and not vote([a, a], 2).disputed
    split = vote([a, b], 2)
    assert not split.settled and split.disputed
    assert not vote([a, b, a], 2).settled  # 2 against 1: not yet
    settled = vote([a, b, c, a], 2)  # each reply wrong in one place: value by value, a wins
    assert settled.settled and settled.value == a


def test_the_case_file_reads_twice_in_one_turn_and_never_trusts_one_wrong_reply() -> None:
    case = CaseFile()
    read = Read("get_order", {"order_id": "O-1"}, copies=2)
    with pytest.raises(Move) as move:
        case.get(read)
    assert [c.name for c in move.value.calls] == ["get_order", "get_order"]
    call = Call("get_order", {"order_id": "O-1"})
    case.record(call, json.dumps({"delivered_on": "2025-03-01"}), False, False)
    case.record(call, json.dumps({"delivered_on": "2025-03-04"}), False, False)
    with pytest.raises(Move) as move:
        case.get(read)
    assert len(move.value.calls) == 2  # a disagreement: two more, at once
    case.record(call, json.dumps({"delivered_on": "2025-03-01"}), False, False)
    case.record(call, json.dumps({"delivered_on": "2025-03-01"}), False, False)
    assert case.get(read) == [{"delivered_on": "2025-03-01"}]


def test_the_case_file_reads_again_what_an_unresolved_id_came_from() -> None:
    case = CaseFile()
    case.record(Call("list_accounts", {}), json.dumps({"accounts": [{"account_id": "ACC-14314"}]}), False, False)
    assert case.read("list_accounts")["accounts"][0]["account_id"] == "ACC-14314"
    assert case.forget_quoting("ACC-14314", frozenset({"list_accounts"}))
    with pytest.raises(Move):
        case.read("list_accounts")
    # The same wrong id read again is not taken either, and the read is taken from then on only
    # when two reads agree.
    case.record(Call("list_accounts", {}), json.dumps({"accounts": [{"account_id": "ACC-14314"}]}), False, False)
    with pytest.raises(Move) as move:
        case.read("list_accounts")
    assert len(move.value.calls) == 2
    for _ in range(2):
        case.record(Call("list_accounts", {}), json.dumps({"accounts": [{"account_id": "ACC-4314"}]}), False, False)
    assert case.read("list_accounts")["accounts"][0]["account_id"] == "ACC-4314"


def test_the_case_file_reads_back_a_failed_write_and_never_resends_a_refused_one() -> None:
    case = CaseFile()
    args = {"from_account": "ACC-1", "amount": 10.0}
    readback = Call("list_transfers", {"employee_id": "E-1"})
    case.record(Call("create_transfer", args), "[error TOOL_ERROR] create_transfer: the request timed out after 30 s",
                True, True)
    with pytest.raises(Move) as move:
        case.write("create_transfer", args, readback, lambda back: None)
    assert move.value.calls == [readback]
    case.record(readback, json.dumps({"transfers": []}), False, False)
    with pytest.raises(Move) as move:
        case.write("create_transfer", args, readback, lambda back: None)
    assert move.value.calls == [Call("create_transfer", args)]
    case.record(Call("create_transfer", args), "[error TOOL_ERROR] no account with id 'ACC-1'", False, True)
    with pytest.raises(Blocked):
        case.write("create_transfer", args, readback, lambda back: None)


def test_a_passing_failure_is_told_from_a_refusal_quoting_an_id() -> None:
    assert transient("[error TOOL_ERROR] get_order: 429 Too Many Requests: rate limit exceeded, retry after 2 s")
    assert transient("[error TOOL_ERROR] book_meeting: the request timed out after 30 s without a response")
    assert not transient("[error TOOL_ERROR] no customer with id 'C-42931'")  # 429 inside an id
    assert not transient("[error TOOL_ERROR] no order with id 'O-50312'")


def test_the_brief_of_a_session_is_read_by_area() -> None:
    brief = ("intro\n\n## Task area 1: dialog / cafes\nPrices are in EUR, from 2 to 8.\n\n"
             "## Task area 2: tooluse / orders\nToday is 2025-10-15.\n- A refund of more than 150.00 USD ...\n")
    assert section(brief, "tooluse", "orders").strip().startswith("Today is 2025-10-15.")
    assert "cafes" not in section(brief, "tooluse", "orders")
    assert section("just one brief", "tooluse", "ops") == "just one brief"


def test_working_hours_are_checked_in_each_attendees_own_time_zone() -> None:
    tokyo = {"utc_offset": "+09:00", "working_hours": "09:00-17:00"}
    new_york = {"utc_offset": "-05:00", "working_hours": "08:00-16:00"}
    assert works(tokyo, "00:00", 60) and not works(tokyo, "07:30", 60)  # 16:30-17:30 local ends too late
    assert works(new_york, "13:00", 30) and not works(new_york, "12:30", 45)  # 07:30 local: too early


def test_what_the_user_says_is_read_through_typos() -> None:
    tools = [{"type": "function", "function": {"name": "book_meeting", "parameters": {"properties": {
        "duration_minutes": {"type": "integer", "enum": [30, 45, 60, 90]}}}}}]
    book = CalendarPlaybook("You act for A B, person id P-1.", 'Meet Ana Lima on 2025-03-04, "Sync".', tools)
    assert book.duration is None
    assert book.hear("Let's do 30 mnutes.") and book.duration == 30
    assert book.hear("Actually, can we make it 45 minuets instead of 30?") and book.duration == 45
    assert not book.hear("It should take 45 minutes.")
    assert _wants_rollback("Actually, don't rol anything back; just file the incident.") is False
    assert _wants_rollback("Also, once the incident is filed, please roll the culprit bakc.") is True
    assert _wants_rollback("No rollback, please; just file the incident.") is False
    assert _wants_rollback("It showed up on cart.") is None
    assert _variant_asked("Could you exchange the rain jacket I ordered on 2025-01-02 for the XL one? It didn't fit.") == "XL"
    assert _variant_asked("can I swap the chef knife from my order for the 10 inch varaint?") == "10 inch"
    assert _variant_named("Actually, could I get the black smart watch instead of the silver one?",
                          "smart watch") == "black"


def test_a_name_that_finds_nobody_is_searched_by_its_words() -> None:
    """A name can reach the agent with a slip in it; the directory search by its words finds
    the one person whose name it is, slip aside."""
    from agentgym.agents.experts.tooluse_playbooks.base import find_named

    case = CaseFile()
    case.record(Call("find_person", {"query": "Depak Hughes"}), "[error TOOL_ERROR] nobody matches 'Depak Hughes'",
                False, False)
    with pytest.raises(Move) as move:
        find_named(case, "find_person", "Depak Hughes")
    assert move.value.calls == [Call("find_person", {"query": "Hughes"})]
    people = {"matches": [{"person_id": "P-1", "name": "Deepak Hughes"}, {"person_id": "P-2", "name": "Ana Hughes"}]}
    case.record(Call("find_person", {"query": "Hughes"}), json.dumps(people), False, False)
    assert find_named(case, "find_person", "Depak Hughes")["person_id"] == "P-1"
