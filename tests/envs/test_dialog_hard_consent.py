"""Dialog's hard-tier itinerary after the search (`agentgym.envs.dialog.itinerary_twists`): the
plan agreed before it is submitted, a mind that changes, a world that moves."""

from __future__ import annotations

import itertools
import json
from dataclasses import replace
from typing import Any

import gymnasium as gym
import pytest
from dialog_hard_seeds import itinerary_seeds

import agentgym  # noqa: F401  (registers the ids)
from agentgym.agents import make_agent
from agentgym.agents.experts.dialog_plan import read_form
from agentgym.envs.dialog import hard_tier
from agentgym.envs.dialog.itinerary import LABELS, PlanGold, candidates
from agentgym.envs.dialog.itinerary_user import FORM_ANSWER, SUBMIT_ANSWER
from agentgym.eval.episode import run_episode

#: Every yes of the itinerary user opens so (`SUBMIT_ANSWER`, `SUBMIT_HEARD`).
YES = SUBMIT_ANSWER.split(".")[0]

DIALOG_ID = "AgentRL/Dialog-v0"
SPLITS = ("train", "test")
SUBMIT = '{"name": "submit_plan", "arguments": {}}'

#: Ways to read a plan to the user: (layout, question), each line a booking's label, place and time.
LAYOUTS = {
    "list": lambda rows: "Here is the plan:\n" + "\n".join(f"- Booking {b}: {n} ({i}), {d} {s}" for b, n, i, d, s in rows),
    "table": lambda rows: "| Booking | Place | When |\n|---|---|---|\n" + "\n".join(
        f"| {b} | {n} | {d} {s} |" for b, n, i, d, s in rows),
    "prose": lambda rows: "I'd book " + ", then ".join(f"{n} on {d} in the {s}" for b, n, i, d, s in rows) + ".",
    "ids": lambda rows: "Plan: " + "; ".join(f"{b} = {i} ({d} {s})" for b, n, i, d, s in rows) + ".",
}
QUESTIONS = ("Shall I book these?", "Does this plan work for you?", "Want me to go ahead?", "Shall I submit it?",
             "Is that okay with you?", "Does that look good?", "Are you happy with this plan?",
             "Should I go ahead and submit?", "Can I confirm this plan?", "Sound good?", "Let me know if this works.",
             "Is this plan alright?", "Would you like me to submit this?", "OK to submit?", "Do you approve?",
             "Any objections before I submit?", "Should I lock it in?", "Good to go?", "Does that suit you?",
             "What do you think of this plan?")


def _seeds(split: str, n: int) -> list[int]:
    return itinerary_seeds(split, n)


def _task(seed: int, split: str) -> Any:
    return hard_tier.generate_task(seed, {"split": split, "difficulty": "hard"})


def _rows(task: Any, plan: tuple[str, ...], gold: PlanGold | None = None) -> list[tuple[str, ...]]:
    g = gold or task.gold
    return [(leg.label, task.world.by_id[i].name, i, leg.day.capitalize(), leg.slot) for leg, i in zip(g.legs, plan)]


def _brute(task: Any, gold: PlanGold, closed: tuple[int, str] | None = None) -> tuple[tuple[float, ...], set]:
    """The best key of the brief's last rule (the ratings in priority order, or their sum in
    tenths) and every plan tying it, by brute force."""
    options = [[p for p in candidates(task.world, leg) if closed is None or (i, p.id) != closed]
               for i, leg in enumerate(gold.legs)]
    valid = [plan for plan in itertools.product(*options)
             if len({p.id for p in plan}) == len(plan) and sum(p.price for p in plan) <= gold.budget
             and (not gold.distinct_areas or len({p.area for p in plan}) == len(plan))]

    def key(plan: tuple[Any, ...]) -> tuple[float, ...]:
        if gold.objective == "total":
            return (sum(round(p.rating * 10) for p in plan) / 10,)
        return tuple(plan[i].rating for i in gold.priority)

    best = max(key(p) for p in valid)
    return best, {tuple(p.id for p in plan) for plan in valid if key(plan) == best}


def _fresh(split: str, seed: int) -> tuple[gym.Env, Any]:
    """An env reset on `seed`, a changed mind already heard (so the next plan read gets a yes)."""
    env = gym.make(DIALOG_ID, split=split, difficulty="hard")
    env.reset(seed=seed)
    task = env.unwrapped.task
    if task.extra["plan"].mind is not None:
        obs, *_ = env.step(LAYOUTS["list"](_rows(task, task.gold.accepted[0])) + "\nShall I submit this plan?")
        assert "changed my mind" in obs
    return env, env.unwrapped.task


@pytest.mark.parametrize("split", SPLITS)
def test_the_yes_is_understood_over_many_phrasings_and_layouts(split: str) -> None:
    for seed in _seeds(split, 3):
        for (layout, render), question in itertools.product(LAYOUTS.items(), QUESTIONS):
            env, task = _fresh(split, seed)
            plan = task.gold.accepted[-1]
            obs, _, terminated, *_ = env.step(render(_rows(task, plan)) + "\n" + question)
            assert YES in obs and not terminated, (seed, layout, question, obs)
            assert task.extra["plan"].agreed == plan


@pytest.mark.parametrize("split", SPLITS)
def test_no_yes_without_a_question_or_a_whole_plan(split: str) -> None:
    for seed in _seeds(split, 4):
        env, task = _fresh(split, seed)
        rows = _rows(task, task.gold.accepted[0])
        for message in (LAYOUTS["list"](rows) + "\nI've booked these for you.",
                        LAYOUTS["list"](rows[:-1]) + "\nShall I submit this plan?",
                        "Shall I submit the plan?", "Does this plan work for you?"):
            obs, *_ = env.step(message)
            assert YES not in obs and task.extra["plan"].agreed is None, (message, obs)
        obs, *_ = env.step(LAYOUTS["list"](rows[:-1]) + "\nShall I submit this plan?")
        assert f"booking {LABELS[len(rows) - 1]}" in obs


#: Ways to rule out a place named beside the plan (it is no second choice for its booking).
SET_ASIDE = ("{x} was not free on {day}", "{x} is not free on {day}", "{x} was dropped", "{x} was not considered",
             "{x} no longer fits the budget", "{x} lacks what you need", "{x} is taken that {slot}",
             "{x} wasn't available", "instead of {x}, the plan keeps the place above", "{x} is over budget",
             "the higher-rated one ({x}, 6 EUR) would push the total over the budget",
             "the better-rated one ({x}, 6 EUR) would push the total over 10", "{x} would bust the budget",
             "I chose the place above over the better-rated {x}", "I have replaced {x} with the place above",
             "{x} would take the total to 140", "the pricier ones left no room for {x}",
             "{x} has been released")


@pytest.mark.parametrize("split", SPLITS)
def test_a_place_ruled_out_beside_the_plan_is_no_second_choice(split: str) -> None:
    for seed in _seeds(split, 3):
        env, task = _fresh(split, seed)
        plan = task.gold.accepted[-1]
        leg = task.gold.legs[-1]
        other = next(p for p in task.world.places if p.category == leg.needs[0][1] and p.id not in plan)
        for phrase in SET_ASIDE:
            aside = phrase.format(x=other.name, day=leg.day.capitalize(), slot=leg.slot)
            for where in ("before", "after"):
                body = LAYOUTS["list"](_rows(task, plan))
                text = (f"{aside[0].upper()}{aside[1:]}. {body}" if where == "before" else f"{body}\n({aside})")
                env, task = _fresh(split, seed)
                obs, *_ = env.step(text + "\nShall I submit this plan?")
                assert YES in obs and task.extra["plan"].agreed == plan, (seed, phrase, where, obs)
        # Two places for one booking, neither ruled out, are still two: the user asks.
        env, task = _fresh(split, seed)
        rows = _rows(task, plan)
        obs, *_ = env.step(LAYOUTS["list"](rows) + f"\nOr {other.name} for booking {leg.label}. Shall I submit?")
        assert YES not in obs and task.extra["plan"].agreed is None, obs
        assert f"more than one place for booking {leg.label}" in obs and "did not hear" not in obs, obs


#: Places set aside as a group, under a heading or by words said after a list of them ({x}, {y}:
#: two places of the last booking's category that the plan does not take).
ASIDE_GROUPS = ("{body}\n\n## Alternatives ruled out\nHigher-rated ones ({x} 4.6, {y} 4.2) are free too, but each "
                "shares an area with another booking.\n\n## Your call\n{q}",
                "## Proposed plan {body} ## Alternatives ruled out {x} and {y} would break the area rule. ## Your call {q}",
                "{body}\n**Considered, not chosen:**\n- {x}\n- {y}\n\n{q}",
                "{body}\nRuled out: {x}, {y}. {q}",
                "{body}\nI did look hard at {x} and {y}, but either would push the total past the budget. {q}",
                "{body}\n{x}, {y}: same area as booking A. {q}",
                "I've already cancelled {x} and {y}.\n{body}\n{q}")


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("layout", ASIDE_GROUPS)
def test_places_set_aside_as_a_group_are_no_second_choice(split: str, layout: str) -> None:
    for seed in _seeds(split, 3):
        env, task = _fresh(split, seed)
        plan = task.gold.accepted[-1]
        leg = task.gold.legs[-1]
        others = [p for p in task.world.places if p.category == leg.needs[0][1] and p.id not in plan][:2]
        assert len(others) == 2, seed
        text = layout.format(body=LAYOUTS["list"](_rows(task, plan)), x=others[0].name, y=others[1].name,
                             q="Shall I submit this plan?")
        obs, *_ = env.step(text)
        assert YES in obs and task.extra["plan"].agreed == plan, (seed, layout, obs)


@pytest.mark.parametrize("split", SPLITS)
def test_the_place_booked_instead_and_a_place_named_again_in_the_plan_are_kept(split: str) -> None:
    for seed in _seeds(split, 3):
        env, task = _fresh(split, seed)
        plan = task.gold.accepted[-1]
        leg = task.gold.legs[-1]
        chosen = next(p for p in task.world.places if p.id == plan[-1])
        other = next(p for p in task.world.places if p.category == leg.needs[0][1] and p.id not in plan)
        body = LAYOUTS["list"](_rows(task, plan))
        for text in (f"{other.name} was taken, so I have booked {chosen.name} instead.\n{body}",
                     f"{chosen.name} looked full at first, but it was not.\n{body}\n({other.name} is over budget.)",
                     f"Bad luck: {other.name} got snapped up for that slot, so that booking was cancelled, and I've "
                     f"booked {chosen.name} in its place.\n{body}",
                     f"Sorry: someone else grabbed {other.name} for that slot, so I've reworked the plan.\n{body}",
                     f"{body}\n(Booking D is {chosen.name}: {other.name} is gone.)",
                     f"{body}\nWhy not a higher-rated one: the pricier one ({other.name}, 4.9) would leave only "
                     "15 EUR for the rest.",
                     f"{body}\nThe better-rated ones are either booked then ({other.name}) or over budget.",
                     f"{body}\n{other.name} is cancelled; these are held."):
            env, task = _fresh(split, seed)
            obs, *_ = env.step(text + "\nShall I submit this plan?")
            assert YES in obs and task.extra["plan"].agreed == plan, (seed, text, obs)


@pytest.mark.parametrize("split", SPLITS)
def test_a_yes_beside_places_set_aside_names_the_plan_it_heard(split: str) -> None:
    # A plan with a place set aside beside it is agreed as the user heard it, and its yes says
    # which: an aside heard otherwise shows before the agent submits (Dialog playtest 5861 T9).
    for seed in _seeds(split, 3):
        env, task = _fresh(split, seed)
        plan = task.gold.accepted[-1]
        leg = task.gold.legs[-1]
        other = next(p for p in task.world.places if p.category == leg.needs[0][1] and p.id not in plan)
        names = {p.id: p.name for p in task.world.places}
        obs, *_ = env.step(f"{LAYOUTS['list'](_rows(task, plan))} (Pricier ones left no room for {other.name}.) "
                           "OK to submit this one?")
        heard = ", ".join(f"{label} {names[i]}" for label, i in zip(LABELS, plan))
        assert f"works for me: {heard}." in obs and task.extra["plan"].agreed == plan, (seed, obs)
        env, task = _fresh(split, seed)
        obs, *_ = env.step(LAYOUTS["list"](_rows(task, plan)) + "\nShall I submit this plan?")
        assert SUBMIT_ANSWER in obs, obs  # the plan alone: the plain yes


def _book(env: gym.Env, task: Any, plan: tuple[str, ...]) -> None:
    calls = [{"type": "function", "function": {"name": "book", "arguments": {"item_id": i, "day": leg.day,
                                                                             "slot": leg.slot}}}
             for i, leg in zip(plan, task.gold.legs)]
    env.step(json.dumps({"tool_calls": calls}))


@pytest.mark.parametrize("split", SPLITS)
def test_a_submission_without_a_yes_to_that_plan_fails(split: str) -> None:
    for seed in _seeds(split, 6):
        task = _task(seed, split)
        gold = task.extra["plan"].mind.gold if task.extra["plan"].mind else task.gold
        other = next((p for p in itertools.product(*[candidates(task.world, leg) for leg in gold.legs])
                      if tuple(x.id for x in p) != gold.accepted[0] and len({x.id for x in p}) == len(p)), None)
        cases = ["none", "same turn"] + (["another plan"] if other is not None else [])
        for case in cases:
            env, task = _fresh(split, seed)
            plan = task.gold.accepted[0]
            _book(env, task, plan)
            ask = LAYOUTS["list"](_rows(task, plan)) + "\nShall I submit this plan?"
            if case == "same turn":
                # The question and the call in one turn: the call runs, the user never hears it.
                *_, terminated, _, info = env.step(f"{ask}\n<tool_call>{SUBMIT}</tool_call>")
            else:
                if case == "another plan":
                    env.step(LAYOUTS["list"](_rows(task, tuple(x.id for x in other))) + "\nShall I submit this plan?")
                *_, terminated, _, info = env.step(SUBMIT)
            assert terminated, (seed, case)
            summary = info["episode_summary"]
            assert summary["success"] is False and summary["score_details"]["agreed"] is False, (seed, case)


@pytest.mark.parametrize("split", SPLITS)
def test_the_moved_world_has_a_unique_reachable_gold_and_comes_only_at_an_agreed_submission(split: str) -> None:
    checked = 0
    for seed in _seeds(split, 40):
        task = _task(seed, split)
        state = task.extra["plan"]
        if state.move is None:
            continue
        checked += 1
        before = state.mind.gold if state.mind else task.gold
        move = state.move
        assert {p[move.leg] for p in before.accepted} == {move.item_id}
        best, tied = _brute(task, before, closed=(move.leg, move.item_id))
        assert move.gold.best == best and set(move.gold.accepted) == tied
        assert not set(before.accepted) & tied  # the agreed best plan no longer holds
        env, task = _fresh(split, seed)
        plan, agreed_gold = task.gold.accepted[0], task.gold
        _book(env, task, plan)
        env.step(LAYOUTS["list"](_rows(task, plan)) + "\nShall I submit this plan?")
        obs, _, terminated, *_ = env.step(SUBMIT)
        assert not terminated and "was just taken" in obs and "Nothing was submitted" in obs
        # The new gold is the moved world's, with the plan it replaced as its superseded calls,
        # and the cancels of the bookings some plan it accepts does without.
        assert task.gold == move.gold.replacing(agreed_gold, task.world) and task.extra["plan"].agreed is None
        assert replace(task.gold, superseded=()) == move.gold and task.gold.superseded
        leg = task.gold.legs[move.leg]
        assert not task.world.by_id[move.item_id].is_open(leg.day, leg.slot)
        assert all(b.item_id != move.item_id for b in task.world.active_bookings())
    assert checked >= 5


@pytest.mark.parametrize("split", SPLITS)
def test_the_changed_mind_is_stated_once_with_one_reading(split: str) -> None:
    checked = 0
    for seed in _seeds(split, 40):
        task = _task(seed, split)
        mind = task.extra["plan"].mind
        if mind is None:
            continue
        checked += 1
        first = task.gold
        assert not any(mind.revised.meets(task.world.by_id[p[mind.leg]]) for p in first.accepted)
        best, tied = _brute(task, mind.gold)
        assert mind.gold.best == best and set(mind.gold.accepted) == tied
        env = gym.make(DIALOG_ID, split=split, difficulty="hard")
        env.reset(seed=seed)
        task = env.unwrapped.task
        ask = LAYOUTS["list"](_rows(task, first.accepted[0])) + "\nShall I submit this plan?"
        obs, *_ = env.step(ask)
        assert "changed my mind about booking " + LABELS[mind.leg] in obs and YES not in obs
        # The revised line reads as a form line does (the expert's reading), one booking changed.
        line = obs.split("is now: ", 1)[1].split(" Everything else", 1)[0]
        form = read_form(task.brief.replace(task.brief.splitlines()[3 + mind.leg][2:], line))
        assert form is not None
        # Asked again, the user restates the revised line, and the next plan gets a yes.
        assert line in env.step(f"What do you need for booking {LABELS[mind.leg]}?")[0]
        obs, *_ = env.step(ask)
        assert YES in obs
    assert checked >= 5


@pytest.mark.parametrize("split", SPLITS)
def test_the_answer_to_a_plan_never_depends_on_the_gold(split: str) -> None:
    for seed in _seeds(split, 8):
        task = _task(seed, split)
        plans = [task.gold.accepted[0]]
        for p in itertools.product(*[candidates(task.world, leg) for leg in task.gold.legs]):
            ids = tuple(x.id for x in p)
            if ids not in task.gold.accepted:
                plans.append(ids)
                break
        replies = []
        for plan in plans:
            env = gym.make(DIALOG_ID, split=split, difficulty="hard")
            env.reset(seed=seed)
            obs, *_ = env.step(LAYOUTS["table"](_rows(env.unwrapped.task, plan)) + "\nDoes this plan work for you?")
            replies.append(obs)
        assert len(set(replies)) == 1, (seed, replies)


def test_bad_input_never_raises() -> None:
    env = gym.make(DIALOG_ID, split="train", difficulty="hard")
    for seed in _seeds("train", 3):
        env.reset(seed=seed)
        task = env.unwrapped.task
        names = " ".join(p.name for p in task.world.places[:12])
        for bad in ("", "?", "Shall I?", f"{names}. Shall I submit?", "| | |\n|?|", "{{{", "\u0000?",
                    "Booking A: nothing. Shall I submit?" * 50,
                    '{"name": "submit_plan", "arguments": {"plan": 1}}'):
            *_, terminated, truncated, _ = env.step(bad)
            if terminated or truncated:
                env.reset(seed=seed)


@pytest.mark.parametrize("split", SPLITS)
def test_expert_oracle_solve_the_twists_and_submit_first_never_does(split: str) -> None:
    env = gym.make(DIALOG_ID, split=split, difficulty="hard")
    from agentgym.agents.exploits import SubmitFirstAgent

    for seed in _seeds(split, 12):
        for agent, wins in ((make_agent("expert"), True), (make_agent("oracle"), True), (SubmitFirstAgent(), False)):
            ep = run_episode(env, agent, seed=seed).episode
            assert ep["success"] is wins, (seed, agent)
            assert ep["turns"] <= env.unwrapped.task.max_turns


@pytest.mark.parametrize("split", SPLITS)
def test_bookings_of_the_plan_as_it_stood_are_no_wrong_calls_after_it_changed(split: str) -> None:
    # A place taken at the agreed submission (or a changed mind) replaces the gold: the booking
    # made for the agreed plan, right when it was made, fitted no step of the new one and was
    # counted as wrong data (Dialog 7171, 7183). The plan it replaced is the new gold's
    # superseded calls, as a goal shift's is.
    from agentgym.eval.judging import judge_episode

    env = gym.make(DIALOG_ID, split=split, difficulty="hard")
    moved = 0
    for seed in _seeds(split, 16):
        ep = run_episode(env, make_agent("expert"), seed=seed).episode
        state = env.unwrapped.task.extra["plan"]
        if not (state.moved or state.changed):
            assert ep["gold"]["superseded_calls"] == []
            continue
        moved += state.moved
        assert ep["gold"]["superseded_calls"], seed
        verdict = judge_episode({"metrics": ep, "steps": [], "agent_error": None})
        assert verdict.tools.right == verdict.tools.judged, (seed, [c for c in verdict.calls if c.judged and not c.right])
    assert moved >= 2


#: Requests for the yes in words no list of approval phrases holds: a question about nothing on
#: the form ("How does that sound?"), a yes/no question whose subject is the plan ("Is this what
#: you had in mind?"), an imperative addressed to the user ("Please confirm ..."), an offer that
#: waits on its word ("If you're happy with it, I'll submit.").
OPEN_ASKS = ("How does that sound?", "Is everything in order?", "What do you say?", "All good?",
             "Is this what you had in mind?", "Does everything check out?", "Are these acceptable?",
             "Does this meet your needs?", "Please confirm and I'll submit the plan.", "Say the word and I'll book it.",
             "If you're happy with it, I'll submit.", "Please approve the plan so I can submit it.",
             "Review it and let me know.", "Ready when you are - just give me the okay.")


@pytest.mark.parametrize("split", SPLITS)
def test_any_question_beside_a_whole_plan_about_nothing_on_the_form_asks_for_the_yes(split: str) -> None:
    for seed in _seeds(split, 2):
        for question in OPEN_ASKS:
            env, task = _fresh(split, seed)
            plan = task.gold.accepted[-1]
            obs, *_ = env.step(LAYOUTS["table"](_rows(task, plan)) + "\n\n" + question)
            assert YES in obs and task.extra["plan"].agreed == plan, (seed, question, obs)
            # With a booking left out the same words get the question for it, never a yes.
            env, task = _fresh(split, seed)
            rows = _rows(task, plan)
            obs, *_ = env.step(LAYOUTS["table"](rows[:-1]) + "\n\n" + question)
            assert YES not in obs and f"booking {LABELS[len(rows) - 1]}" in obs, (seed, question, obs)


@pytest.mark.parametrize("split", SPLITS)
def test_a_whole_plan_with_a_question_about_the_form_or_no_question_gets_no_yes(split: str) -> None:
    for seed in _seeds(split, 2):
        for tail in ("I've booked these.", "I'll submit it now.", "What is your budget?", "Which booking matters most?",
                     "Is the budget firm?"):
            env, task = _fresh(split, seed)
            obs, *_ = env.step(LAYOUTS["list"](_rows(task, task.gold.accepted[0])) + "\n" + tail)
            assert YES not in obs and task.extra["plan"].agreed is None, (tail, obs)


@pytest.mark.parametrize("split", SPLITS)
def test_a_place_with_no_room_left_beside_the_plan_is_no_second_choice(split: str) -> None:
    for seed in _seeds(split, 2):
        env, task = _fresh(split, seed)
        plan = task.gold.accepted[-1]
        leg = task.gold.legs[0]
        other = next(p for p in task.world.places if p.category == leg.needs[0][1] and p.id not in plan)
        for note in ("{x} was full.", "I also looked at {x}, but it had no availability then.", "{x} is booked up.",
                     "({x} was sold out that {slot}.)"):
            env, task = _fresh(split, seed)
            aside = note.format(x=other.name, slot=leg.slot)
            obs, *_ = env.step(LAYOUTS["list"](_rows(task, plan)) + f"\n{aside}\nShall I submit this plan?")
            assert YES in obs and task.extra["plan"].agreed == plan, (seed, note, obs)


@pytest.mark.parametrize("split", SPLITS)
def test_the_last_question_beside_the_plan_decides_what_it_asks(split: str) -> None:
    for seed in _seeds(split, 2):
        env, task = _fresh(split, seed)
        plan = task.gold.accepted[-1]
        body = LAYOUTS["list"](_rows(task, plan))
        # A question about something else first, then the plan and a request for the yes: a yes.
        obs, *_ = env.step(f"Quick question first: do you need receipts for these? Anyway:\n{body}\nHow does that sound?")
        assert YES in obs and task.extra["plan"].agreed == plan, (seed, obs)
        # A question about the form after the request: the form is what is left to answer.
        env, task = _fresh(split, seed)
        obs, *_ = env.step(f"{body}\nHow does that sound? Also, what was the budget again?")
        assert YES not in obs and task.extra["plan"].agreed is None, (seed, obs)


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("lead", [
    "So the plan I've reserved is: {plan}.", "Final plan:\n{plan}", "Here is what I'd book: {plan}. That is the plan."])
def test_a_labelled_plan_is_the_plan_whatever_else_the_reasoning_names(split: str, lead: str) -> None:
    """Reasoning that names rival places with no verdict on them ("X and W are tied, so I took the
    cheaper X"), then the plan by booking labels: the labels say which place is each booking's."""
    for seed in _seeds(split, 3):
        env, task = _fresh(split, seed)
        plan = task.gold.accepted[-1]
        rivals = [next(p for p in task.world.places if p.category == leg.needs[0][1] and p.id not in plan)
                  for leg in task.gold.legs]
        reasoning = " ".join(f"For booking {leg.label}, {task.world.by_id[i].name} and {r.name} came closest, and I "
                             f"went with {task.world.by_id[i].name}." for leg, i, r in zip(task.gold.legs, plan, rivals))
        labelled = "; ".join(f"Booking {b}, {n} ({i}), {d} {s}" for b, n, i, d, s in _rows(task, plan))
        obs, *_ = env.step(f"{reasoning} {lead.format(plan=labelled)} Shall I submit this plan?")
        assert YES in obs and task.extra["plan"].agreed == plan, (seed, obs)
        # Two places given one booking by its label are two: the user asks which.
        env, task = _fresh(split, seed)
        leg = task.gold.legs[0]
        obs, *_ = env.step(f"{labelled}. Or Booking {leg.label}: {rivals[0].name}. Shall I submit this plan?")
        assert YES not in obs and f"more than one place for booking {leg.label}" in obs, obs


@pytest.mark.parametrize("split", SPLITS)
def test_a_yes_no_question_about_the_form_gets_the_form(split: str) -> None:
    for seed in _seeds(split, 3):
        env, task = _fresh(split, seed)
        obs, *_ = env.step("First, booking A: you wrote what I see on the form, in the morning. Is that right?")
        assert "My form says" in obs and YES not in obs and "whole plan" not in obs, obs
        obs, *_ = env.step("Shall I go ahead and book bookings A to C?")
        assert "whole plan" in obs, obs
        obs, *_ = env.step("Before I search: is there anything else, or shall I just work from the form as written?")
        assert FORM_ANSWER in obs and YES not in obs, obs


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("lead", ["Just to confirm before I go ahead, if I understood the form correctly:",
                                  "Before I book anything, let me confirm the form:",
                                  "Before we proceed, a quick check of your needs:"])
def test_a_restated_form_asked_to_be_confirmed_before_acting_gets_the_form(split: str, lead: str) -> None:
    # "Just to confirm before I go ahead, ...: Booking A is a warehouse in Old Town on Thursday
    # afternoon; Booking B ... Is that right?" was heard as a plan with no places (Dialog playtest
    # 8902 T1: "Before I say yes I need to hear the whole plan").
    for seed in _seeds(split, 3):
        env, task = _fresh(split, seed)
        legs = "; ".join(f"Booking {leg.label} is a {leg.needs[0][1]}" for leg in task.gold.legs)
        obs, *_ = env.step(f"{lead} {legs}. At most the budget in total, best total rating. Is that right?")
        assert "My form says" in obs and "whole plan" not in obs and YES not in obs, obs
        for leg in task.gold.legs:
            assert f"Booking {leg.label}:" in obs, obs


#: A read-back of the form laid out by label, whose lines name no "booking" (or name other bookings
#: only in the days they quote: "the day after booking B").
READ_BACKS = {
    "table": lambda legs: "| Booking | Plan | Day |\n|---|---|---|\n" + "\n".join(
        f"| {leg.label} | {leg.needs[0][1]} | the day after booking A |" for leg in legs),
    "list": lambda legs: "\n".join(f"- {leg.label}: {leg.needs[0][1]}, the day after booking A" for leg in legs),
    "lines": lambda legs: "\n".join(f"{leg.label}: {leg.needs[0][1]}" for leg in legs),
}


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("layout", READ_BACKS)
def test_a_form_read_back_by_label_gets_every_line_it_lays_out(split: str, layout: str) -> None:
    # A table read back with "Is that right?" got lines A-C restated (the labels its quoted days
    # named), D and E left out (Dialog playtest 9380 T5).
    for seed in _seeds(split, 3):
        env, task = _fresh(split, seed)
        obs, *_ = env.step(f"Reading your form back:\n{READ_BACKS[layout](task.gold.legs)}\n\nIs that right?")
        assert "My form says" in obs and YES not in obs, obs
        for leg in task.gold.legs:
            assert f"Booking {leg.label}:" in obs, (layout, obs)


#: Terse plans: labels right before the places, a total, a short question; and reasoning before the
#: plan that names a place of a booking's kind (Dialog playtests 6042 T11, 6043 T12).
TERSE = ("{body}. Total {total}. OK?",
         "No other one fits with {other} ({total} left), so: {body}. Total {total}. OK to submit?",
         "{body}. Go?")


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("form", TERSE)
def test_a_terse_plan_with_labels_before_its_places_gets_a_yes(split: str, form: str) -> None:
    for seed in _seeds(split, 3):
        env, task = _fresh(split, seed)
        plan = task.gold.accepted[-1]
        other = next(p for p in task.world.places if p.category == task.gold.legs[0].needs[0][1] and p.id not in plan)
        body = ", ".join(f"{b} {n} ({d} {s})" for b, n, i, d, s in _rows(task, plan))
        total = sum(task.world.by_id[i].price for i in plan)
        obs, *_ = env.step(form.format(body=body, other=other.name, total=total))
        assert YES in obs and task.extra["plan"].agreed == plan, (seed, form, obs)


@pytest.mark.parametrize("split", SPLITS)
def test_a_place_in_a_bracket_after_a_plans_place_is_said_of_it(split: str) -> None:
    """"B desk pm: X (Y rates higher but busts the 80 budget with any A+C)": Y is why X, not a
    second place for B (Dialog playtest 6043 T8)."""
    for seed in _seeds(split, 3):
        env, task = _fresh(split, seed)
        plan = task.gold.accepted[-1]
        leg = task.gold.legs[-1]
        other = next(p for p in task.world.places if p.category == leg.needs[0][1] and p.id not in plan)
        rows = _rows(task, plan)
        lines = [f"{b}: {n} ({d} {s})" for b, n, i, d, s in rows[:-1]]
        b, n, i, d, s = rows[-1]
        lines.append(f"{b} {leg.needs[0][1]} {s}: {n} ({other.name} rates higher but busts the 80 budget with the rest)")
        obs, *_ = env.step("Plan: " + ". ".join(lines) + ". Book it?")
        assert YES in obs and task.extra["plan"].agreed == plan, (seed, obs)


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("verdict", ["beats {w}", "beats {w} (3.2)", "ahead of {w}", "edges out {w}"])
def test_a_list_of_labelled_lines_with_the_places_each_beat_is_the_plan(split: str, verdict: str) -> None:
    """"- A, phone booth, Sunday afternoon: X (...) - beats W (3.2)" under reasoning that names
    rivals: each line's label gives its place, and a place it beats is no second one (Dialog
    playtest 6127 T8)."""
    for seed in _seeds(split, 3):
        env, task = _fresh(split, seed)
        plan = task.gold.accepted[-1]
        rivals = [next(p for p in task.world.places if p.category == leg.needs[0][1] and p.id not in plan)
                  for leg in task.gold.legs]
        reasoning = f"{rivals[0].name} and {rivals[-1].name} were the other close ones. So the best plan is:"
        lines = [f"- {b}, {leg.needs[0][1]}, {d} {s}: {n} - " + verdict.format(w=r.name)
                 for (b, n, i, d, s), leg, r in zip(_rows(task, plan), task.gold.legs, rivals)]
        obs, *_ = env.step("\n".join([reasoning, *lines, "Shall I book these and submit this plan?"]))
        assert YES in obs and task.extra["plan"].agreed == plan, (seed, verdict, obs)


@pytest.mark.parametrize("split", SPLITS)
def test_a_list_of_lines_opening_with_label_and_category_is_the_plan_beside_prose_naming_rivals(split: str) -> None:
    """"- D thai, Tue morning: X" lines under prose that names other places of the bookings'
    categories ("W (A) was just taken ... C and D had to change (V shares Old Town)"): the lines'
    labels give the plan, and the places the prose names are no second ones (Dialog playtest
    6168 T19)."""
    for seed in _seeds(split, 3):
        env, task = _fresh(split, seed)
        plan = task.gold.accepted[-1]
        legs = task.gold.legs
        names = [task.world.by_id[i].name for i in plan]
        rivals = _rivals(task, plan)
        taken, rival = rivals[0], rivals[-1]
        prose = (f"{taken.name} ({legs[0].label}) was just taken. Only {names[0]} is left for {legs[0].label}; with "
                 f"its price, {legs[-2].label} and {legs[-1].label} had to change ({rival.name} shares {rival.area}). "
                 "Revised plan, booked (exactly the budget):")
        lines = [f"- {b} {leg.needs[0][1]}, {d} {s}: {n}" for (b, n, i, d, s), leg in zip(_rows(task, plan), legs)]
        obs, *_ = env.step("\n".join([prose, *lines, "Shall I submit this plan?"]))
        assert YES in obs and task.extra["plan"].agreed == plan, (seed, obs)


def _rivals(task: Any, plan: tuple[str, ...]) -> list[Any]:
    """Per booking, a place of its category outside `plan` whose name shares no part with a
    plan's place (so each is named apart)."""
    names = [task.world.by_id[i].name for i in plan]
    return [next(p for p in task.world.places if p.category == leg.needs[0][1] and p.id not in plan
                 and not any(p.name in n or n in p.name for n in names)) for leg in task.gold.legs]


@pytest.mark.parametrize("split", SPLITS)
def test_a_table_whose_rows_open_with_the_labels_is_the_plan_beside_reasons_naming_rivals(split: str) -> None:
    """A table of the plan, each row's first cell "A japanese", then a paragraph of reasons that
    names rivals in words no rule sets aside ("leaves no way to stay within 140", "X (52, 4.8) or
    italian Y push the total to 145+"): the rows give the plan (Dialog playtest 6204 T6)."""
    for seed in _seeds(split, 3):
        env, task = _fresh(split, seed)
        plan = task.gold.accepted[-1]
        rivals = _rivals(task, plan)
        rows = ["| Booking | When | Place (id) | Price |", "|---|---|---|---|"]
        rows += [f"| {b} {leg.needs[0][1]} | {d[:3]} {s} | {n} ({i}) | {task.world.by_id[i].price} |"
                 for (b, n, i, d, s), leg in zip(_rows(task, plan), task.gold.legs)]
        why = (f"Why: the other one ({rivals[0].name}, {rivals[0].price}) leaves no way to stay within the budget; "
               f"the pricier {rivals[-1].name} ({rivals[-1].price}, {rivals[-1].rating}) or {rivals[1].name} "
               "push the total past it in every combination.")
        obs, *_ = env.step("Here is the plan I found:\n\n" + "\n".join(rows) + "\n\n" + why + " Shall I submit this plan?")
        assert YES in obs and task.extra["plan"].agreed == plan, (seed, obs)


@pytest.mark.parametrize("split", SPLITS)
def test_labels_before_a_bracket_and_a_colon_give_the_plan_beside_a_trade_off_naming_rivals(split: str) -> None:
    """"A (warehouse, Thursday morning): X (venue_002), ... B (barn, ...): Y ..." in prose, then a
    trade-off that names rivals ("the ballroom can't be the W; a cheaper alternative with V would
    rate slightly lower"): each label gives its place (Dialog playtest 6249 T12)."""
    for seed in _seeds(split, 3):
        env, task = _fresh(split, seed)
        plan = task.gold.accepted[-1]
        rivals = _rivals(task, plan)
        legs = task.gold.legs
        said = " ".join(f"{b} ({leg.needs[0][1]}, {d} {s}): {n} ({i}), {task.world.by_id[i].price} EUR."
                        for (b, n, i, d, s), leg in zip(_rows(task, plan), legs))
        trade = (f"The trade-off: the {legs[1].needs[0][1]} can't be the {rivals[1].name}; a cheaper alternative with "
                 f"{rivals[-1].name} and {rivals[1].name} would rate slightly lower.")
        obs, *_ = env.step(f"Here is the plan I've booked. {said} {trade} Shall I submit this plan?")
        assert YES in obs and task.extra["plan"].agreed == plan, (seed, obs)


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("heading", ["**Recommendation:**\n{lines}", "Proposed plan:\n{lines}", "**Recommendation:** {inline}"])
def test_a_plan_under_its_heading_below_a_table_of_options_is_the_plan(split: str, heading: str) -> None:
    """A table of options, a row per option labelled by its booking, then the plan under a
    heading that puts it: the labels under the heading give the plan (Dialog playtests 6137 T5,
    6138 T6, 6139 T4 heard several places a booking)."""
    for seed in _seeds(split, 3):
        env, task = _fresh(split, seed)
        plan = task.gold.accepted[-1]
        rows = ["| Booking | Name | Rating |", "|---|---|---|"]
        for leg, i in zip(task.gold.legs, plan):
            rivals = [p for p in task.world.places if p.category == leg.needs[0][1] and p.id != i][:2]
            rows += [f"| {leg.label} | {p.name} | {p.rating} |" for p in [task.world.by_id[i], *rivals]]
        lines = "\n".join(f"- {b} — {n}, {d} {s}" for b, n, i, d, s in _rows(task, plan))
        inline = " · ".join(f"{b} {n}" for b, n, i, d, s in _rows(task, plan))
        body = "\n".join(rows) + "\n\n" + heading.format(lines=lines, inline=inline) + "\n\nShall I submit this plan?"
        obs, *_ = env.step(body)
        assert YES in obs and task.extra["plan"].agreed == plan, (seed, obs)
