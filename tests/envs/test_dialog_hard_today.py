"""Dialog's hard tier names the wanted day from today (`hard_tier.TODAY_RULE`,
`wording.relative_time`): the brief says which day today is, the user counts from it."""

from __future__ import annotations

import json
import re

import gymnasium as gym
import numpy as np
import pytest
from dialog_hard_seeds import single_seed

import agentgym  # noqa: F401  (registers the ids)
from agentgym.agents.experts.booking_words import days_named, today_of
from agentgym.envs.dialog import hard_tier, tasks
from agentgym.envs.dialog.domain import DAYS, SLOTS, load_domains
from agentgym.envs.dialog.typos import slip
from agentgym.envs.dialog.wording import RELATIVE_DAYS, relative_time

DIALOG_ID = "AgentRL/Dialog-v0"
ASK_TIME = "Which day and what time of day would you like?"


def test_each_day_counted_from_each_today_reads_back_as_that_day() -> None:
    for today in DAYS:
        for day in DAYS:
            said = relative_time(day, "evening", today)
            assert not any(d in said.lower() for d in DAYS)
            assert days_named(said, today) == f"I need it {day}, in the evening."


@pytest.mark.parametrize("split", ["train", "test"])
def test_the_brief_says_today_and_only_the_tier_counts_from_it(split: str) -> None:
    seen = set()
    for seed in range(30):
        task = hard_tier.generate_task(seed, {"split": split, "difficulty": "hard"})
        today = task.extra["today"]
        seen.add(today)
        assert today_of(task.brief) == today and f"Today is {today.capitalize()}." in task.brief
        drawn = tasks.generate_task(seed, {"split": split, "difficulty": "medium"})
        assert today_of(drawn.brief) is None and "today" not in drawn.extra
    assert len(seen) > 3


def test_the_user_states_the_time_counted_from_today_and_judges_a_wrong_day() -> None:
    env = gym.make(DIALOG_ID, split="train", difficulty="hard")
    env.reset(seed=single_seed("train", 21))
    task = env.unwrapped.task
    g, today = task.gold, task.extra["today"]
    _, _, _, _, info = env.step(ASK_TIME)
    said = " ".join(m["content"] for m in info["messages"] if m["role"] == "user")
    assert relative_time(g.day, g.slot, today) in said
    assert not re.search(r"\b(" + "|".join(DAYS) + r")\b", said.lower())
    # A booking on the weekday the phrase would be were today another day breaks the time.
    wrong = DAYS[(DAYS.index(g.day) + 1) % len(DAYS)]
    place = next(p for p in task.world.places if p.is_open(wrong, g.slot))
    _, _, _, _, info = env.step(json.dumps(
        {"name": "book", "arguments": {"item_id": place.id, "day": wrong, "slot": g.slot}}))
    said = " ".join(m["content"] for m in info["messages"] if m["role"] == "user")
    assert "won't work" in said and RELATIVE_DAYS[(DAYS.index(g.day) - DAYS.index(today)) % 7] in said


def test_typos_never_land_in_a_day_counted_from_today() -> None:
    domain = load_domains()["cafes"]
    rng = np.random.default_rng(3)
    for phrase in RELATIVE_DAYS:
        text = f"Sounds lovely, I really need it {phrase}, in the {SLOTS[0]}, with my friends."
        for _ in range(20):
            slipped, _ = slip(text, domain, rng)
            assert phrase in slipped
