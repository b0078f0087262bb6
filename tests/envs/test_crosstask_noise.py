"""Noise in CrossTask sessions stays as fair as in each sub-task's own family: typos land only in
the active request, as its own user makes them (never in a value it must copy), and a corrupted
rating or price of a booking's place stays inside the brief's ranges while other sub-tasks'
numbers keep their own.

Figures asserted: over 60 sessions with typos on every message (each compared with the same
session without noise), no place name, id, category, area, amenity, day or time of day of the
booking is ever mistyped, nor the words before a switch phrase and the phrase itself; the
corrupted results of 150 sessions' `get_details` calls hold ratings in 3.0-5.0 and prices in the
domain's range.
"""

from __future__ import annotations

import re

import gymnasium as gym

import agentgym  # noqa: F401  (registers the ids)
from agentgym.agents import make_agent
from agentgym.eval.episode import agent_view

CROSSTASK_ID = "AgentRL/CrossTask-v0"
_SWITCH = re.compile(r"(?:Next thing|Now something different|One more thing): ")


def _kept(value: str, clean: str, noisy: str) -> bool:
    """Whether every whole-word occurrence of `value` in `clean` is in `noisy` too."""
    pattern = re.compile(rf"(?<!\w){re.escape(value)}(?!\w)", re.IGNORECASE)
    return len(pattern.findall(noisy)) >= len(pattern.findall(clean))


def test_typos_land_only_where_the_active_request_carries_something() -> None:
    noisy_env = gym.make(CROSSTASK_ID, split="train", noise="typos=1.0")
    clean_env = gym.make(CROSSTASK_ID, split="train")
    changed = 0
    for seed in range(60):
        agent = make_agent("expert")
        obs, info = noisy_env.reset(seed=seed)
        clean_env.reset(seed=seed)
        segments = clean_env.unwrapped.task.world.segments
        dialog = next(s for s in segments if s.family == "dialog")
        dom = dialog.task.world.domain
        values = [*dom.areas, *dom.amenities, *dom.categories, *(p.name for p in dialog.task.world.places),
                  *(p.id for p in dialog.task.world.places)]
        # Days and times of day are the booking's values; a tool-use request may name a weekday
        # beside the date it means, and its user keeps only the date intact.
        times = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "morning",
                 "afternoon", "evening"]
        agent.reset(obs, agent_view(info))
        done = False
        while not done:
            action = agent.act(obs, agent_view(info))
            obs, _, terminated, truncated, info = noisy_env.step(action)
            _, _, _, _, clean_info = clean_env.step(action)
            done = terminated or truncated
            said = [m["content"] for m in info["messages"] if m["role"] == "user"]
            clean = [m["content"] for m in clean_info["messages"] if m["role"] == "user"]
            world = clean_env.unwrapped.task.world
            booking = world.active < len(segments) and segments[world.active].family in ("dialog", "followup")
            for noisy_text, clean_text in zip(said, clean):
                changed += noisy_text != clean_text
                for v in values + (times if booking and not _SWITCH.search(clean_text) else []):
                    assert _kept(v, clean_text, noisy_text), (seed, v, clean_text, noisy_text)
                head = _SWITCH.search(clean_text)
                if head is not None:  # the closing words and the switch phrase stay as said
                    assert noisy_text[: head.end()] == clean_text[: head.end()], (seed, clean_text, noisy_text)
    noisy_env.close()
    clean_env.close()
    assert changed >= 200


def test_a_corrupted_rating_or_price_of_a_place_stays_in_the_briefs_range() -> None:
    env = gym.make(CROSSTASK_ID, split="test", noise="corruption=1.0")
    seen = 0
    for seed in range(150):
        env.reset(seed=seed)
        dialog = next(s for s in env.unwrapped.task.world.segments if s.family == "dialog")
        world = dialog.task.world
        place = world.places[seed % len(world.places)]
        env.step(f'{{"name": "get_details", "arguments": {{"item_id": "{place.id}"}}}}')
        for event in env.unwrapped.noise_log:
            if event["kind"] != "corruption" or event["target"] != "get_details":
                continue
            path, new = event["detail"]["path"], event["detail"]["to"]
            if path == "rating":
                assert 3.0 <= new <= 5.0, (seed, event)
                seen += 1
            elif path == "price":
                assert world.domain.price_min <= new <= world.domain.price_max, (seed, event)
                seen += 1
    env.close()
    assert seen >= 50
