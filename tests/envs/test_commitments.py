"""Proposals and the final state are judged as the calls they stand for (goal consistency)."""

from __future__ import annotations

import gymnasium as gym

from agentgym.agents import make_agent
from agentgym.core.render import call_text
from agentgym.eval.episode import run_episode

DIALOG = "AgentRL/Dialog-v0"


def _dialog(seed: int = 3) -> tuple[gym.Env, object]:
    env = gym.make(DIALOG, difficulty="easy")
    env.reset(seed=seed)
    return env, env.unwrapped.task


def test_a_message_naming_one_place_is_a_proposal_judged_like_its_booking() -> None:
    env, task = _dialog()
    base = env.unwrapped
    good = next(p for p in task.world.places if p.id in task.gold.items)
    bad = next(p for p in task.world.places if p.id not in task.gold.items
               and base.user.contradictions("book", {"item_id": p.id}))
    env.step(f"Shall I book {good.name}?")
    env.step(f"How about {bad.name}, on {task.gold.day} {task.gold.slot}?")
    env.step(f"I can book {good.name} or {bad.name}.")  # two places: no one proposal
    env.step("Which area do you prefer?")  # no place: no proposal
    _, _, _, _, info = env.step(call_text("book", item_id=good.id, day=task.gold.day, slot=task.gold.slot))
    commitments = info["episode_summary"]["commitments"]
    assert [(c["turn"], c["kind"]) for c in commitments] == [(1, "proposal"), (2, "proposal"), (5, "final")]
    assert commitments[0]["contradicts"] == [] and commitments[1]["contradicts"]
    assert commitments[-1]["contradicts"] == []  # the accepted booking meets everything stated


def test_no_outcome_no_final_commitment() -> None:
    env, _ = _dialog()
    for _ in range(env.unwrapped.episode_max_turns):
        _, _, term, trunc, info = env.step("OK.")
        if term or trunc:
            break
    assert info["episode_summary"]["commitments"] == []


def test_every_family_judges_its_final_state() -> None:
    for env_id in ("AgentRL/Dialog-v0", "AgentRL/ToolUse-v0", "AgentRL/CrossTask-v0"):
        env = gym.make(env_id)
        finals = [c for s in range(10) for c in run_episode(env, make_agent("oracle"), s).episode["commitments"]
                  if c["kind"] == "final"]
        assert len(finals) == 10 and all(c["contradicts"] == [] for c in finals), env_id


def test_a_changed_goal_not_acted_on_breaks_the_final_state() -> None:
    env = gym.make(DIALOG, noise="goal_shift=1")
    for seed in range(20):
        env.reset(seed=seed)
        task = env.unwrapped.task
        g = task.gold
        _, _, term, trunc, info = env.step(call_text("book", item_id=g.items[0], day=g.day, slot=g.slot))
        if not any(e["kind"] == "goal_shift" for e in info["noise"]):
            continue
        while not (term or trunc):
            _, _, term, trunc, info = env.step("OK.")
        final = info["episode_summary"]["commitments"][-1]
        assert final["kind"] == "final" and "time" in final["contradicts"]
        return
    raise AssertionError("no goal shift fired on a booking in 20 episodes")


def test_every_place_of_every_domain_is_found_by_its_name_and_its_id() -> None:
    from agentgym.envs.dialog.commitments import proposed_places
    from agentgym.envs.dialog.domain import load_domains
    from agentgym.envs.dialog.tasks import generate_task

    for domain in load_domains():
        for seed in range(3):
            world = generate_task(seed, {"domain": domain}).world
            for place in world.places:
                assert place in proposed_places(world, f"what about {place.name.lower()}?"), place.name
                assert proposed_places(world, f"book {place.id} please") == [place]
