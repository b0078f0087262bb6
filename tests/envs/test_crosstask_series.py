"""The hard tier's series come-back (`agentgym.envs.crosstask.series`): one booking a day for
several more days, each day's place decided by the rule on the booking as it stands."""

from __future__ import annotations

import datetime
import json
import re
from typing import Any

import gymnasium as gym
import pytest
from crosstask_play import at_comeback
from reporting import told_done

import agentgym  # noqa: F401  (registers the ids)
from agentgym.agents import make_agent
from agentgym.core.render import call_text
from agentgym.envs.crosstask.clarify import asked
from agentgym.envs.crosstask.comeback import ComeBack
from agentgym.envs.crosstask.followup import MoveBooking
from agentgym.envs.crosstask.series import Series
from agentgym.envs.dialog.domain import DAYS
from agentgym.eval.episode import run_episode
from agentgym.eval.metrics import call_matches

ENV_ID = "AgentRL/CrossTask-v0"
SPLITS = ("train", "test")
SEEDS = range(60)


def _series(split: str, count: int) -> list[tuple[int, Any, Any, Any]]:
    """The first `count` seeds of `SEEDS` whose session reaches a series: (seed, env, segment, world)."""
    out = []
    for seed in SEEDS:
        env = gym.make(ENV_ID, split=split, difficulty="hard")
        found = at_comeback(env, seed, "one booking a day")
        if found is not None:
            out.append((seed, env, *found[:2]))
        if len(out) == count:
            break
    return out


def _expected(world: Any, move: Series, segments: list[Any], index: int) -> tuple[list[Any], list[str]]:
    """The bookings the words of `move` ask for, worked out from the world as an assistant would."""
    booked = world.by_id[move.place]
    day, slot = move.old
    start = DAYS.index(day)
    n = re.search(r"each of the next (\d) days after it", move.wanted)
    before = re.search(r"each of the (\d) days before it", move.wanted)
    if n:
        days = list(DAYS[start + 1:start + 1 + int(n.group(1))])
    elif before:
        days = list(DAYS[start - int(before.group(1)):start])
    else:
        assert "up to and including the day of the meeting you set up for me" in move.wanted
        calendar = [s for s in segments[:index] if s.domain == "calendar"][-1]
        date = next(e.fields["date"] for e in calendar.task.gold.effects if "date" in e.fields)
        days = list(DAYS[start + 1:datetime.date.fromisoformat(date).weekday() + 1])
    same_kind = bool(re.search(r"of the same \w+ \([^)]*\) in the same area", move.wanted))
    stays, skipped = [], []
    for d in days:
        if booked.is_open(d, slot):
            stays.append((booked.id, d, slot))
            continue
        fits = [p for p in world.places if p.id != booked.id and p.area == booked.area and p.price <= booked.price
                and (not same_kind or p.category == booked.category) and p.is_open(d, slot)]
        if not fits:
            skipped.append(d)
            continue
        best = max(fits, key=lambda p: p.rating)
        assert sum(p.rating == best.rating for p in fits) == 1  # one reading: a unique best
        stays.append((best.id, d, slot))
    return stays, skipped


@pytest.mark.parametrize("split", SPLITS)
def test_the_gold_is_what_the_words_ask_for_and_unique(split: str) -> None:
    found = _series(split, 12)
    assert len(found) >= 8
    others = skips = 0
    for seed, env, seg, world in found:
        move: Series = seg.move
        stays, skipped = _expected(world, move, env.unwrapped.user.session.segments, seg.index)
        assert list(move.stays) == stays and list(move.skipped) == skipped, seed
        others += any(p != move.place for p, _, _ in move.stays)
        skips += bool(move.skipped)
        # The user never names a day or a place of the series.
        opening = env.unwrapped.user.user_of(seg.index).opening().lower()
        assert not any(d in opening for d in DAYS)
        assert not any(world.by_id[p].name.lower() in opening for p, _, _ in move.stays)
    # Most series decide some day otherwise than "the same place".
    assert others + skips >= len(found) // 2


@pytest.mark.parametrize("split", SPLITS)
def test_the_oracle_and_the_expert_solve_the_series(split: str) -> None:
    env = gym.make(ENV_ID, split=split, difficulty="hard")
    seeds = [seed for seed, *_ in _series(split, 8)]
    for agent in ("oracle", "expert"):
        for seed in seeds:
            assert run_episode(env, make_agent(agent), seed).success, (agent, seed)


def _book(p: str, d: str, s: str) -> str:
    return call_text("book", item_id=p, day=d, slot=s)


@pytest.mark.parametrize("split", SPLITS)
def test_the_same_place_every_open_day_is_not_enough(split: str) -> None:
    # The shortcut "book the booked place on each day it is open" misses the days it is closed.
    tried = 0
    for _, env, seg, world in _series(split, 12):
        move: Series = seg.move
        if all(p == move.place for p, _, _ in move.stays):
            continue
        slot = move.old[1]
        place = world.by_id[move.place]
        span = {d for _, d, _ in move.stays} | set(move.skipped)
        for d in sorted(span, key=DAYS.index):
            if place.is_open(d, slot):
                env.step(_book(move.place, d, slot))
        if seg.outcome is None:
            obs, *_ = env.step("That's all booked.")
            assert "I'd like" in obs  # the request again, never which day is missing
        assert seg.outcome != "accepted"
        tried += 1
    assert tried


def test_the_thanks_claims_only_the_days_that_have_a_place() -> None:
    # CrossTask playtests 5883-5885: "that's every day booked" where some days rightly got none.
    skipping = 0
    for _, env, seg, _ in [*_series("train", 5), *_series("test", 5)]:
        move: Series = seg.move
        env.step(json.dumps([json.loads(_book(*stay)) for stay in move.stays]))
        obs, *_ = told_done(env)
        assert seg.outcome == "accepted", obs
        claim = "every day that has a place booked" if move.skipped else "every day booked"
        assert f"Perfect, that's {claim}, thanks!" in obs, obs
        skipping += bool(move.skipped)
    assert skipping


@pytest.mark.parametrize("split", SPLITS)
def test_cancelling_the_kept_booking_or_an_extra_one_fails(split: str) -> None:
    for _, env, seg, world in _series(split, 6):
        move: Series = seg.move
        # Every stay, but the kept booking cancelled: the rule keeps it.
        obs, *_ = env.step(call_text("cancel_booking", booking_id=move.booking))
        assert "keep every booking" in obs
        for p, d, s in move.stays:
            env.step(_book(p, d, s))
        assert seg.outcome is None
    for _, env, seg, world in _series(split, 6):
        move = seg.move
        wrong = next((p.id, d, move.old[1]) for d in DAYS for p in world.places
                     if p.is_open(d, move.old[1]) and (p.id, d, move.old[1]) not in move.stays
                     and (p.id, d) != (move.place, move.old[0]))
        env.step(_book(*wrong))
        env.step(_book(*wrong))
        # Two bookings the user did not ask for: it gives up on the series.
        assert seg.outcome == "gave_up"


def test_the_series_user_answers_questions_without_naming_a_place() -> None:
    for _, env, seg, world in _series("train", 4):
        move: Series = seg.move
        obs, *_ = env.step("Should I keep the booking we have? Do your other needs still apply, e.g. the area?")
        reply = obs.lower()
        assert "yes, keep the booking" in reply and "for the booking we have, yes" in reply
        assert not any(world.by_id[p].name.lower() in reply for p, _, _ in move.stays)
        assert not any(d in reply for d in DAYS if d != move.old[0])
        assert seg.outcome is None


@pytest.mark.parametrize("ask", ["Please confirm this plan of bookings and I will book each one.",
                                 "That's the plan for the days you asked about. Does that work for you?",
                                 "Shall I go ahead and book them?",
                                 "That is what the plan above does. OK to do what I described?"])  # playtest 9645 T44
def test_asked_to_approve_a_plan_of_days_the_user_says_go_ahead_and_names_no_place(ask: str) -> None:
    for _, env, seg, world in _series("train", 2):
        move: Series = seg.move
        plan = "; ".join(f"{d}: {world.by_id[p].name}" for p, d, _ in move.stays)
        obs, *_ = env.step(f"Here is my plan, one booking a day: {plan}. {ask}")
        assert "go ahead" in obs and move.wanted not in obs, obs
        assert not any(world.by_id[p].name in obs for p, _, _ in move.stays)
        assert seg.outcome is None


def test_an_abbreviation_does_not_split_a_question() -> None:
    assert asked("Should I pick another place, e.g. one nearby, or cancel it instead?") == {"cancel"}
    assert asked("Do the other needs, i.e. the area and price, still apply?") == {"needs"}


def test_bad_input_in_a_series_never_raises() -> None:
    junk = ["", "   ", "{", '{"name": "book"}', '{"name": "book", "arguments": {"item_id": 7, "day": "funday"}}',
            '{"name": "cancel_booking", "arguments": {"booking_id": "B999"}}', "\x00\ufffd" * 40,
            "keep it? cancel it? " * 200]
    for _, env, seg, _ in _series("test", 3):
        for text in junk:
            obs, _, terminated, truncated, _ = env.step(text)
            assert isinstance(obs, str)
            if terminated or truncated:
                break


@pytest.mark.parametrize("split", SPLITS)
def test_the_gold_checks_each_new_booking_before_it_is_made(split: str) -> None:
    # The session's brief asks to "check a new time or place with the tools before you book it",
    # a come-back's user to "check it's free before you book", a series' to "check each one is
    # free": the gold plan holds that check of each booking a follow-up makes, so an assistant
    # that does as asked is efficient and one that books blind misses steps of the plan.
    seen: dict[str, int] = {}
    for difficulty in ("easy", "hard"):
        env = gym.make(ENV_ID, split=split, difficulty=difficulty)
        for seed in range(10):
            run_episode(env, make_agent("oracle"), seed)  # a follow-up is planned once its booking is made
            for seg in env.unwrapped.user.session.segments:
                move = seg.move
                if not isinstance(move, MoveBooking) or not move.place:
                    continue
                if isinstance(move, ComeBack):
                    opening = env.unwrapped.user.user_of(seg.index).opening()
                    assert re.search(r"check (?:it's|each one is) free before you book", opening), (seed, opening)
                plan = move.plan()
                books = [c["arguments"] for c in plan if c["name"] == "book"]
                checks = [c["arguments"] for c in plan if c["name"] == "check_availability"]
                assert books and all(b in checks for b in books), (seed, plan)
                if isinstance(move, Series):
                    # ... and a day at another place, or with none, is found by checking the booked place.
                    others = [c for c in checks if c not in books]
                    assert all(c["item_id"] == move.place for c in others), (seed, plan)
                    assert {c["day"] for c in others} == {d for p, d, _ in move.stays if p != move.place} | set(
                        move.skipped), (seed, plan)
                else:
                    assert checks == books, (seed, plan)
                kind = type(move).__name__
                seen[kind] = seen.get(kind, 0) + 1
    assert set(seen) == {"MoveBooking", "ComeBack", "Series"}, seen
    # The agents that play by the words check them: the oracle and the expert complete the plans.
    for difficulty in ("easy", "hard"):
        env = gym.make(ENV_ID, split=split, difficulty=difficulty)
        for agent in ("oracle", "expert"):
            for seed in range(4):
                result = run_episode(env, make_agent(agent), seed)
                made = [c for c in result.episode["calls"] if c["name"] == "check_availability" and c["error"] is None]
                wanted = [c for c in result.episode["gold"]["calls"] if c["name"] == "check_availability"]
                assert all(any(call_matches(w["name"], c["arguments"], w) for c in made) for w in wanted), \
                    (agent, difficulty, seed)
