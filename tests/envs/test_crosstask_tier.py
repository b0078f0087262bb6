"""CrossTask's hard tier (`agentgym.envs.crosstask.tier`): longer sessions whose come-backs to the
booking depend on earlier outcomes.

Default run: tens of seeds a split (the tier's shape, the links, the oracle and the expert with
noise off, the exploit agents); ``-m slow`` plays 300 seeds a split for the expert (noise off
and `medium`) and the exploit agents. The full figures are in benchmarks/RESULTS-crosstask-tier.md.
"""

from __future__ import annotations

import datetime
from typing import Any

import gymnasium as gym
import pytest

import agentgym  # noqa: F401  (registers the ids)
from agentgym.agents import make_agent
from agentgym.agents.exploits import EXPLOITS
from agentgym.core.render import call_text
from agentgym.envs.crosstask.comeback import ComeBack
from agentgym.envs.crosstask.oracle import CrossTaskOracle
from agentgym.envs.crosstask.tier import generate
from agentgym.envs.dialog.domain import DAYS, SLOTS
from agentgym.eval.episode import run_episode

ENV_ID = "AgentRL/CrossTask-v0"
SPLITS = ("train", "test")


@pytest.mark.parametrize("split", SPLITS)
def test_only_an_explicit_hard_draws_the_tier(split: str) -> None:
    for seed in range(40):
        tier = generate(seed, {"split": split, "difficulty": "hard"})
        assert tier.extra.get("tier") == "hard" and 4 <= len(tier.world.segments) <= 6
        assert "Later requests may build on earlier ones" in tier.brief
        assert [s.family for s in tier.world.segments].count("followup") >= 1
        for options in ({"split": split}, {"split": split, "difficulty": "easy"},
                        {"split": split, "difficulty": "medium"}):
            task = generate(seed, options)
            assert "tier" not in task.extra and 2 <= len(task.world.segments) <= 4


def _play(env: Any, policy: Any, seed: int) -> dict[str, Any]:
    obs, info = env.reset(seed=seed)
    while True:
        obs, _, terminated, truncated, info = env.step(policy(env, obs, info))
        if terminated or truncated:
            return info["episode_summary"]


@pytest.mark.parametrize("split", SPLITS)
def test_each_come_back_is_computed_from_the_booking_it_returns_to(split: str) -> None:
    env = gym.make(ENV_ID, split=split, difficulty="hard")
    kinds: set[str] = set()
    for seed in range(30):
        oracle = CrossTaskOracle(env.unwrapped)
        before: dict[int, Any] = {}

        def policy(env: Any, obs: str, info: dict[str, Any], oracle: Any = oracle, before: Any = before) -> str:
            seg = env.unwrapped.user.active
            if seg is not None and seg.ask is not None and seg.index not in before:
                world = env.unwrapped.user.session.segments[seg.refers_to].task.world
                before[seg.index] = (world, world.active_bookings()[0])
            return oracle.act(obs, info)

        summary = _play(env, policy, seed)
        assert summary["success"], (seed, summary["subtasks"])
        for seg in env.unwrapped.user.session.segments:
            if not isinstance(seg.move, ComeBack):
                continue
            world, booked = before[seg.index]
            move = seg.move
            kinds.add(move.ask)
            assert move.booking == booked.id and move.old == (booked.day, booked.slot)
            place = world.by_id[booked.item_id]
            if move.ask == "same_day":
                assert move.place == place.id and move.day == booked.day and move.slot != booked.slot
            elif move.ask == "meeting_day":
                # The weekday of the date the calendar request before it gave.
                calendar = [s for s in env.unwrapped.user.session.segments[: seg.index] if s.domain == "calendar"][-1]
                date = next(e.fields["date"] for e in calendar.task.gold.effects if "date" in e.fields)
                assert date in env.unwrapped.user.user_of(calendar.index).opening()
                weekday = DAYS[datetime.date.fromisoformat(date).weekday()]
                assert (move.place, move.day, move.slot) == (place.id, weekday, booked.slot)
            elif move.ask == "next_open":
                later = [d for d in DAYS[DAYS.index(booked.day) + 1:] if place.is_open(d, booked.slot)]
                assert (move.place, move.day, move.slot) == (place.id, later[0], booked.slot)
            else:
                fits = [p for p in world.places if p.id != place.id and p.category == place.category
                        and p.area == place.area and p.price <= move.limit < place.price
                        and p.is_open(booked.day, booked.slot)]
                best = max(fits, key=lambda p: p.rating)
                assert move.place == best.id and sum(p.rating == best.rating for p in fits) == 1
            # The user states the change relative to the booking, never the new time or place.
            opening = env.unwrapped.user.user_of(seg.index).opening()
            new_place = world.by_id[move.place].name
            assert f"{move.day} {move.slot}" not in opening.lower() and new_place not in opening
    assert kinds == {"same_day", "next_open", "budget"} | ({"meeting_day"} if split == "train" else set())


def test_a_come_back_whose_upstream_failed_is_not_offered() -> None:
    env = gym.make(ENV_ID, split="test", difficulty="hard")
    checked = 0
    for seed in range(40):
        oracle = CrossTaskOracle(env.unwrapped)
        segments = generate(seed, {"split": "test", "difficulty": "hard"}).world.segments
        comebacks = [s.index for s in segments if s.ask is not None]
        if len(comebacks) < 2:
            continue

        def policy(env: Any, obs: str, info: dict[str, Any], oracle: Any = oracle, first: int = comebacks[0]) -> str:
            seg = env.unwrapped.user.active
            if seg is not None and seg.index == first:
                # Book the old place again at its old time: the wrong time, twice, and the user gives up.
                b = env.unwrapped.user.session.segments[seg.refers_to].task.world.active_bookings()[0]
                return call_text("book", item_id=b.item_id, day=b.day, slot=b.slot)
            return oracle.act(obs, info)

        summary = _play(env, policy, seed)
        subs = summary["subtasks"]
        assert subs[comebacks[0]]["outcome"] == "gave_up"
        assert all(subs[i]["outcome"] == "not_offered" and not subs[i]["offered"] for i in comebacks[1:])
        assert [s["success"] for s in subs if s["offered"]].count(False) == 1
        checked += 1
    assert checked >= 10


def test_asked_again_the_user_repeats_the_change_in_its_own_words() -> None:
    env = gym.make(ENV_ID, split="test", difficulty="hard")
    for seed in range(10):
        oracle = CrossTaskOracle(env.unwrapped)
        asked: list[str] = []

        def policy(env: Any, obs: str, info: dict[str, Any], oracle: Any = oracle, asked: list = asked) -> str:
            seg = env.unwrapped.user.active
            if seg is not None and isinstance(seg.move, ComeBack) and not asked:
                asked.append(seg.move.wanted)
                return "Which day and time of day would you like?"
            if asked and len(asked) == 1:
                asked.append(obs)
            return oracle.act(obs, info)

        summary = _play(env, policy, seed)
        assert summary["success"], seed
        if asked:
            wanted, reply = asked
            assert wanted in reply and not any(f"{d.capitalize()} {s}" in reply for d in DAYS for s in SLOTS)


@pytest.mark.parametrize("split", SPLITS)
def test_the_oracle_and_the_expert_solve_every_session(split: str) -> None:
    env = gym.make(ENV_ID, split=split, difficulty="hard")
    for agent in ("oracle", "expert"):
        for seed in range(5000, 5030):
            r = run_episode(env, make_agent(agent), seed)
            assert r.success, (agent, seed, r.episode["subtasks"])


def _wins(agent: str, split: str, noise: str | None, seeds: range) -> int:
    env = gym.make(ENV_ID, split=split, difficulty="hard", **({"noise": noise} if noise else {}))
    make = EXPLOITS.get(agent) or (lambda: make_agent(agent))
    return sum(run_episode(env, make(), seed).success for seed in seeds)


@pytest.mark.parametrize("split", SPLITS)
def test_random_and_the_exploit_agents_never_succeed(split: str) -> None:
    for agent in ("random", *EXPLOITS):
        assert _wins(agent, split, None, range(20)) == 0, agent


@pytest.mark.slow
@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("noise", [None, "medium"])
def test_the_expert_solves_at_least_98_percent_of_300(split: str, noise: str | None) -> None:
    assert _wins("expert", split, noise, range(300)) >= (294 if noise is None else 285)


@pytest.mark.slow
@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("noise", [None, "medium"])
def test_random_and_the_exploits_stay_under_one_percent_of_300(split: str, noise: str | None) -> None:
    for agent in ("random", *EXPLOITS):
        assert _wins(agent, split, noise, range(300)) <= 3, agent
