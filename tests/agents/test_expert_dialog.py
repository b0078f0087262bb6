"""The expert's dialog strategy: a careful assistant that reads only observations.

Figures asserted (sampled here; the full figures are in benchmarks/expert/RESULTS.md): on 20
seeds of every split and difficulty the expert succeeds in every episode with noise off, with
the user never warning, never asked the same thing twice and never seeing a proposal or booking
it has to reject; at least 90% under `medium` noise. Its questions are read by the Dialog user as
asking exactly the slots they name, in every domain and for every set of slots. What it reads of
the user's words (needs, verdicts, requests) is checked on the user's own sentences, with typos.
"""

from __future__ import annotations

import itertools

import gymnasium as gym
import pytest

from agentgym.agents import make_agent
from agentgym.agents.expert import ExpertAgent
from agentgym.agents.experts.booking_words import hear
from agentgym.agents.experts.dialog import DialogExpert, ask_for
from agentgym.agents.transcript import BriefVocabulary
from agentgym.agents.turns import calls_of
from agentgym.envs.dialog.domain import load_domains
from agentgym.envs.dialog.tasks import brief_for
from agentgym.envs.dialog.user import understanding
from agentgym.envs.dialog.wording import WARNING
from agentgym.eval.episode import agent_view, run_episode

DIALOG_ID = "AgentRL/Dialog-v0"
DOMAINS = sorted(load_domains())
CELLS = [(split, difficulty) for split in ("train", "test") for difficulty in ("easy", "medium", "hard")]


def _play(split: str, difficulty: str, seed: int, noise: str | None = None) -> tuple[bool, list[str]]:
    """One episode of the expert: its success and every user message it got."""
    env = gym.make(DIALOG_ID, split=split, difficulty=difficulty, **({"noise": noise} if noise else {}))
    agent = make_agent("expert")
    obs, info = env.reset(seed=seed)
    heard = [m["content"] for m in info["messages"] if m["role"] == "user"]
    agent.reset(obs, agent_view(info))
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(agent.act(obs, agent_view(info)))
        heard += [m["content"] for m in info["messages"] if m["role"] == "user"]
        done = terminated or truncated
    success = bool(info["episode_summary"]["success"])
    env.close()
    return success, heard


def test_the_expert_is_an_ordinary_agent() -> None:
    assert not ExpertAgent.privileged
    assert isinstance(ExpertAgent().make_strategy("dialog"), DialogExpert)


@pytest.mark.parametrize(("split", "difficulty"), CELLS)
def test_with_noise_off_it_succeeds_without_costing_the_user_anything(split: str, difficulty: str) -> None:
    for seed in range(1000, 1020):
        success, heard = _play(split, difficulty, seed)
        said = " ".join(heard)
        assert success, (split, difficulty, seed, heard)
        assert WARNING not in said and "As I said" not in said and "won't work for me" not in said, \
            (split, difficulty, seed, heard)


@pytest.mark.parametrize("split", ["train", "test"])
def test_under_medium_noise_it_still_succeeds(split: str) -> None:
    env = gym.make(DIALOG_ID, split=split, noise="medium")
    wins = [run_episode(env, make_agent("expert"), seed).success for seed in range(2000, 2060)]
    env.close()
    assert sum(wins) >= 0.9 * len(wins)


@pytest.mark.parametrize("name", DOMAINS)
def test_its_questions_ask_exactly_the_slots_they_name(name: str) -> None:
    dom = load_domains()[name]
    vocab = BriefVocabulary.of(brief_for(dom))
    read = understanding(dom).read
    slots = ("category", "area", "price", "rating", "amenity", "time")
    for k in range(1, len(slots) + 1):
        for subset in itertools.combinations(slots, k):
            r = read(ask_for(list(subset), vocab))
            assert set(r.asked) == set(subset) and not r.open and not r.places, (name, subset, r)


@pytest.mark.parametrize("name", DOMAINS)
def test_it_reads_the_brief(name: str) -> None:
    dom = load_domains()[name]
    vocab = BriefVocabulary.of(brief_for(dom))
    assert vocab.noun == dom.noun and vocab.label == dom.category_label
    assert vocab.categories == dom.categories and vocab.areas == dom.areas and vocab.amenities == dom.amenities
    assert vocab.prices == (dom.price_min, dom.price_max) and vocab.ratings == (3.0, 5.0)


def test_it_reads_needs_verdicts_and_requests_in_the_users_words() -> None:
    vocab = BriefVocabulary.of(brief_for(load_domains()["stays"]))
    events = hear("The type should be boutique hotel. It should be in Old Town. It should be rated at least 3.5. "
                  "Nothing above 120 EUR per night, please. I'd like it to include breakfast. "
                  "I'm arriving on Friday, in the evening.", vocab, []).events
    assert events == [("category", "boutique hotel"), ("area", "Old Town"), ("rating", 3.5), ("price", 120),
                      ("amenity", "breakfast"), ("time", ("friday", "evening"))]
    heard = hear("Pine Court sounds good. Actually, I just remembered something: it needs to have a pool. "
                 "Does Pine Court still work?", vocab, ["Pine Court", "Pine Court 2"])
    assert heard.events == [("liked", "Pine Court"), ("amenity", "pool"), ("asks_about", "Pine Court")]
    heard = hear("Then I'm afraid Pine Court 2 won't work now. It should be in Airport. "
                 "Please cancel that booking and book one that fits.", vocab, ["Pine Court", "Pine Court 2"])
    assert heard.events == [("rejected", "Pine Court 2"), ("area", "Airport")] and heard.cancel
    assert hear("Actualyl, can we mkae it Sunday afternoon instead? Pleaes change the booking.", vocab, []).cancel
    assert hear("That's everything I can think of for now.", vocab, []).everything
    # A slip in a value is read through when only one value is that close; never guessed between two.
    assert hear("It should be in Lakesdie.", vocab, []).events == [("area", "Lakeside")]
    assert hear("The type should be hotle.", vocab, []).events == [("category", "hotel")]
    assert hear("The type should be hotsel.", vocab, []).events == []  # "hotel" or "hostel"


def test_a_write_it_could_not_see_is_read_back_before_it_is_sent_again() -> None:
    env = gym.make(DIALOG_ID, split="train", difficulty="easy")
    obs, info = env.reset(seed=4)
    expert = DialogExpert()
    expert.reset(obs, agent_view(info))
    for _ in range(12):
        action = expert.act(obs, agent_view(info))
        calls = calls_of(action)
        if calls and calls[0].name == "book":
            break
        obs, _, _, _, info = env.step(action)
    else:
        pytest.fail("the expert never booked")
    call_id = "call_1"
    timed_out = {"messages": [
        {"role": "assistant", "content": "", "tool_calls": [{"id": call_id, "type": "function",
                                                             "function": {"name": "book", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": call_id, "name": "book",
         "content": "[error TOOL_ERROR] book: the request timed out after 30 s without a response"}]}
    assert [c.name for c in calls_of(expert.act("", timed_out))] == ["list_bookings"]
    none_made = {"messages": [{"role": "tool", "tool_call_id": "call_2", "name": "list_bookings",
                               "content": '{"bookings": []}'}]}
    assert [c.name for c in calls_of(expert.act("", none_made))] == ["book"]
    env.close()
