"""Noise that stays fair in the Dialog env: typos land only where a person's slips would (never in
a stock reply, nor in a name, id or value of the brief's vocabulary), and a corrupted rating or
price stays inside the ranges the brief states.

Figures asserted: over 400 slipped copies of messages that state every kind of need, name
places and their ids, every value stays intact and at least one word around it changed in most;
every stock reply comes back unchanged; over 300 corrupted `get_details` results, every rating
lies in 3.0-5.0 and every price in the domain's range.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from agentgym.core.seeding import fast_stream
from agentgym.envs.dialog.domain import load_domains
from agentgym.envs.dialog.tasks import generate_task
from agentgym.envs.dialog.typos import slip
from agentgym.envs.dialog.user import DialogUser, statement
from agentgym.envs.dialog.wording import stock

DIALOG_ID = "AgentRL/Dialog-v0"
DOMAINS = sorted(load_domains())


@pytest.mark.parametrize("name", DOMAINS)
def test_typos_never_touch_a_value_or_a_name(name: str) -> None:
    dom = load_domains()[name]
    task = generate_task(11, {"domain": name, "difficulty": "hard"})
    place = task.world.places[3]
    messages = [statement(c, dom, v) for c in task.gold.constraints for v in range(3)]
    messages += [f"Thanks! Oh, one more thing: my friend just told me something. Does {place.name} still work?",
                 f"Hmm, {place.name} won't work for me. Please cancel it.",
                 f"Yes, please go ahead and book {place.name} ({place.id})."]
    values = [*dom.categories, *dom.areas, *dom.amenities, place.name, place.id, "Monday", "evening"]
    rng = np.random.default_rng(5)
    changed = 0
    for _ in range(20):
        for text in messages:
            out, changes = slip(text, dom, rng)
            changed += out != text
            for v in values:
                assert (v.lower() in text.lower()) == (v.lower() in out.lower()), (text, out, v)
    assert changed >= 0.8 * 20 * len(messages)


@pytest.mark.parametrize("name", DOMAINS)
def test_a_stock_reply_gets_no_typos(name: str) -> None:
    dom = load_domains()[name]
    task = generate_task(3, {"domain": name, "difficulty": "easy"})
    user = DialogUser(task, fast_stream(3, "user"))
    rng = np.random.default_rng(0)
    for text in stock(dom):
        assert user.perturb_text(text, rng) == (text, [])


@pytest.mark.parametrize("split", ["train", "test"])
def test_a_corrupted_rating_or_price_stays_in_the_briefs_range(split: str) -> None:
    env = gym.make(DIALOG_ID, split=split, noise="corruption=1.0")
    seen = 0
    for seed in range(150):
        obs, info = env.reset(seed=seed)
        world = env.unwrapped.task.world
        dom = world.domain
        place = world.places[seed % len(world.places)]
        env.step(f'{{"name": "get_details", "arguments": {{"item_id": "{place.id}"}}}}')
        for event in env.unwrapped.noise_log:
            if event["kind"] != "corruption":
                continue
            path, new = event["detail"]["path"], event["detail"]["to"]
            if path == "rating":
                assert 3.0 <= new <= 5.0, (seed, event)
                seen += 1
            elif path == "price":
                assert dom.price_min <= new <= dom.price_max, (seed, event)
                seen += 1
    env.close()
    assert seen >= 50
