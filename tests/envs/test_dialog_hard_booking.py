"""Dialog's hard tier after a booking (`agentgym.envs.dialog.hard_tier`, `hard_user`): the need
the user remembers only once a place is booked, which rules the booking out, and the second need
it then gives up.
"""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from dialog_hard_seeds import single_seed, single_seeds
from reporting import told_done

import agentgym  # noqa: F401  (registers the ids)
from agentgym.envs.dialog import hard_tier, tasks
from agentgym.envs.dialog.hard_user import GIVE_WAY
from agentgym.envs.dialog.tasks import satisfying_places

DIALOG_ID = "AgentRL/Dialog-v0"
SPLITS = ("train", "test")
CLAIM = "I'm afraid no place meets all of your needs at once. Which need could give way?"
ASK_ALL = ("So I can find the right place: which category, which area, what's your budget, what minimum "
           "rating, any particular amenities, and which day and time of day?")


def _need(task: Any, key: str) -> Any:
    return next(c for c in task.gold.constraints if c.id == task.extra[key])


def _user_text(info: dict[str, Any]) -> str:
    return " ".join(m["content"] for m in info["messages"] if m["role"] == "user")


def _book(env: gym.Env, item: str) -> tuple[Any, ...]:
    g = env.unwrapped.task.gold
    return env.step(json.dumps({"name": "book", "arguments": {"item_id": item, "day": g.day, "slot": g.slot}}))


def _settled(split: str, seed: int) -> tuple[gym.Env, Any, tuple[str, ...]]:
    """An episode where the user has said everything and given up its first flexible need: the
    env, the task and the places that meet every need it has then (the first gold)."""
    env = gym.make(DIALOG_ID, split=split, difficulty="hard")
    env.reset(seed=single_seed(split, seed))
    task = env.unwrapped.task
    env.step(ASK_ALL)
    for _ in range(3):
        env.step(CLAIM)
        if task.extra.get("relaxed"):
            break
    assert task.extra["relaxed"] == task.extra["flexible"]
    g = task.gold
    first = [c for c in g.constraints if c.id != task.extra["after_booking"]]
    return env, task, satisfying_places(task.world, first, g.day, g.slot)


# ------------------------------------------------------------------ the generator
@pytest.mark.parametrize("split", SPLITS)
def test_the_remembered_need_rules_out_every_first_place_and_the_next_need_leaves_a_small_gold(split: str) -> None:
    for seed in single_seeds(split, 60):
        task = hard_tier.generate_task(seed, {"split": split, "difficulty": "hard"})
        g, world = task.gold, task.world
        flexible, after, later = (_need(task, k) for k in hard_tier.NEEDS)
        assert after.kind == "amenity" and after.reveal == "late" and later.kind in GIVE_WAY
        assert len({flexible.id, after.id, later.id}) == 3 and later.kind != "time"
        # Never due by a turn: only a booking brings it.
        lates = [c for c in g.constraints if c.reveal == "late"]
        assert dict(zip((c.id for c in lates), g.late_turns))[after.id] > tasks.DIFFICULTY["hard"]["max_turns"]
        first = [c for c in g.constraints if c.id not in (flexible.id, after.id)]
        first_gold = satisfying_places(world, first, g.day, g.slot)
        assert first_gold and not any(after.value in world.by_id[i].amenities for i in first_gold)
        last = [c for c in g.constraints if c.id not in (flexible.id, later.id)]
        assert 1 <= len(satisfying_places(world, last, g.day, g.slot)) <= tasks.MAX_GOLD
        assert not satisfying_places(world, [c for c in g.constraints if c.id != flexible.id], g.day, g.slot)


def test_the_brief_says_two_needs_come_late_the_second_only_after_a_booking() -> None:
    task = hard_tier.generate_task(single_seed("train", 1), {"split": "train", "difficulty": "hard"})
    assert "two needs come to them later" in task.brief and "the second only once you have booked" in task.brief
    assert "two needs come" not in tasks.generate_task(1, {"split": "train", "difficulty": "medium"}).brief


@pytest.mark.parametrize("split", SPLITS)
def test_as_the_brief_says_the_first_late_need_has_come_when_the_user_gives_way_and_the_second_not(split: str) -> None:
    for seed in range(20, 32):
        env, task, _ = _settled(split, seed)
        first = next(c for c in task.gold.constraints if c.reveal == "late" and c.id != task.extra["after_booking"])
        user = env.unwrapped.user
        assert user._has(first) and not user._has(_need(task, "after_booking"))


# ------------------------------------------------------------------ the user
@pytest.mark.parametrize("split", SPLITS)
def test_a_proposal_or_an_open_question_never_brings_the_remembered_need(split: str) -> None:
    env, task, first = _settled(split, 11)
    after = _need(task, "after_booking")
    _, _, terminated, _, info = env.step(f"Is there anything else I should know? How about {task.world.by_id[first[0]].name}?")
    text = _user_text(info)
    assert not terminated and "Please book it" in text and after.value not in text
    assert not task.extra.get("remembered")


@pytest.mark.parametrize("split", SPLITS)
def test_a_booking_the_user_would_accept_brings_the_need_and_keeping_it_fails(split: str) -> None:
    env, task, first = _settled(split, 12)
    after = _need(task, "after_booking")
    name = task.world.by_id[first[0]].name
    _, _, terminated, _, info = _book(env, first[0])
    text = _user_text(info)
    assert not terminated and f"Does {name} still work?" in text, text
    assert task.extra["remembered"] and hard_tier.flexible_of(task) == task.extra["flexible_after"]
    assert after.id in {c.id for c in task.gold.constraints}
    # Saying it still works gets the truth, at no cost, and the booking kept scores a failure.
    _, _, terminated, _, info = env.step(f"Yes, {name} still works.")
    assert not terminated and "won't work now" in _user_text(info) and "cancel" in _user_text(info)
    assert not tasks.score_task(task, env.unwrapped.toolkit).success


@pytest.mark.parametrize("split", SPLITS)
def test_cancelling_asking_again_and_booking_the_last_gold_succeeds(split: str) -> None:
    env, task, first = _settled(split, 13)
    _book(env, first[0])
    later = _need(task, "flexible_after")
    env.step(json.dumps({"name": "cancel_booking", "arguments": {"booking_id": "B1"}}))
    _, _, _, _, info = env.step(CLAIM)
    assert "If something has to give," in _user_text(info) and task.extra["relaxed"] == later.id
    g = task.gold
    assert later.id not in {c.id for c in g.constraints} and g.items
    assert g.items == satisfying_places(task.world, g.constraints, g.day, g.slot)
    _book(env, g.items[0])
    _, reward, terminated, _, info = told_done(env)
    assert terminated and reward == 1.0, _user_text(info)


def test_giving_up_the_remembered_need_is_refused_and_two_bookings_never_succeed() -> None:
    env, task, first = _settled("train", 14)
    after = _need(task, "after_booking")
    _book(env, first[0])
    phrase = env.unwrapped.task.world.domain.amenity_phrases[after.value]
    _, _, _, _, info = env.step(f"Could you do without the {after.value}?")
    assert f"No, it really needs to {phrase}." in _user_text(info)
    # The last gold booked beside the first booking: the user asks for the other one to go.
    env.step(CLAIM)
    g = task.gold
    _, reward, terminated, _, info = _book(env, g.items[0])
    assert not (terminated and reward == 1.0) and "cancel" in _user_text(info)
    assert not tasks.score_task(task, env.unwrapped.toolkit).success


def test_a_booking_that_breaks_a_need_brings_nothing() -> None:
    env, task, first = _settled("test", 15)
    g = task.gold
    broken = next(p.id for p in task.world.places if p.id not in first and p.is_open(g.day, g.slot))
    _, _, terminated, _, info = _book(env, broken)
    assert "won't work" in _user_text(info) and not task.extra.get("remembered")


def test_bad_input_after_the_booking_never_raises() -> None:
    rng = np.random.default_rng(7)
    env, task, first = _settled("train", 16)
    _book(env, first[0])
    words = ["", "???", "cancel", "B1", "{", "give way", "nothing fits", task.world.by_id[first[0]].name, "\x00"]
    for _ in range(15):
        message = " ".join(rng.choice(words, size=int(rng.integers(1, 5))))
        _, _, terminated, truncated, _ = env.step(message)
        if terminated or truncated:
            break


def test_a_booking_before_the_first_need_gives_way_brings_only_the_late_need() -> None:
    # A place meeting every need but the late one (the first flexible need included), booked
    # before any claim: the late need arrives and rules it out; the remembered one waits.
    for seed in single_seeds("train", 100):
        task = hard_tier.generate_task(seed, {"split": "train", "difficulty": "hard"})
        g = task.gold
        had = [c for c in g.constraints if c.reveal != "late"]
        fits = satisfying_places(task.world, had, g.day, g.slot)
        if fits:
            break
    else:
        raise AssertionError("no seed with a place meeting every need but the late ones")
    env = gym.make(DIALOG_ID, split="train", difficulty="hard")
    env.reset(seed=seed)
    task = env.unwrapped.task
    env.step(ASK_ALL)
    _, _, terminated, _, info = _book(env, fits[0])
    late = next(c for c in task.gold.constraints if c.reveal == "late" and c.id != task.extra["after_booking"])
    assert not terminated and "still work?" in _user_text(info)
    assert late.id in env.unwrapped.user._arrived and not task.extra.get("remembered")
