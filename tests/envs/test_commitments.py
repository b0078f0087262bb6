"""Proposals and the final state are judged as the calls they stand for (goal consistency)."""

from __future__ import annotations

import gymnasium as gym
from reporting import told_done

from agentgym.agents import make_agent
from agentgym.core.render import call_text
from agentgym.envs.dialog.domain import DAYS
from agentgym.eval.episode import run_episode

DIALOG = "AgentRL/Dialog-v0"


def _dialog(seed: int = 3) -> tuple[gym.Env, object]:
    env = gym.make(DIALOG, difficulty="easy")
    env.reset(seed=seed)
    return env, env.unwrapped.task


#: Asks for every requirement at once, so the user states all it holds (nothing is late on easy).
_ASK_ALL = ("Which type do you want, which area, what is your budget, what minimum rating, which amenities, "
            "and which day and time?")


def _stated_breaker(env: gym.Env, task: object) -> object:
    """A place that breaks a constraint the user has stated (after `_ASK_ALL`): the generator
    makes no constraint hold for every place of a world, so one exists."""
    user = env.unwrapped.user
    assert {c.id for c in task.gold.constraints if c.kind != "time"} <= set(user.known_constraints())
    return next(p for p in task.world.places if p.id not in task.gold.items
                and user.contradictions("book", {"item_id": p.id}))


def test_a_message_naming_one_place_is_a_proposal_judged_like_its_booking() -> None:
    env, task = _dialog()
    env.step(_ASK_ALL)
    good = next(p for p in task.world.places if p.id in task.gold.items)
    bad = _stated_breaker(env, task)
    env.step(f"I can book {good.name} or {bad.name}.")  # two places: no one proposal
    env.step("Which area do you prefer?")  # no place: no proposal
    env.step(f"Shall I book {good.name}?")
    env.step(call_text("book", item_id=good.id, day=task.gold.day, slot=task.gold.slot))
    _, _, _, _, info = told_done(env)
    commitments = info["episode_summary"]["commitments"]
    assert [(c["turn"], c["kind"]) for c in commitments] == [(4, "proposal"), (6, "final")]
    assert commitments[0]["contradicts"] == []
    assert commitments[-1]["contradicts"] == []  # the accepted booking meets everything stated


def test_a_proposal_breaking_a_stated_constraint_is_judged_inconsistent() -> None:
    env, task = _dialog()
    env.step(_ASK_ALL)
    bad = _stated_breaker(env, task)
    broken = env.unwrapped.user.contradictions("book", {"item_id": bad.id})
    _, _, terminated, _, info = env.step(f"How about {bad.name}, on {task.gold.day} {task.gold.slot}?")
    assert not terminated and "won't work" in info["messages"][-1]["content"]  # a miss, as a wrong booking is
    assert env.unwrapped._commitments == [{"turn": 2, "kind": "proposal", "contradicts": broken}]


def test_a_proposal_at_another_time_than_the_stated_one_contradicts_the_time() -> None:
    env, task = _dialog()
    env.step(_ASK_ALL)
    good = next(p for p in task.world.places if p.id in task.gold.items)
    day = next(d for d in DAYS if d != task.gold.day)
    _, _, _, _, info = env.step(f"How about {good.name} on {day.capitalize()}?")
    while "episode_summary" not in info:
        _, _, _, _, info = env.step("OK.")
    assert info["episode_summary"]["commitments"][0] == {"turn": 2, "kind": "proposal", "contradicts": ["time"]}


#: Messages that name places in the ways the user tells apart: one name, its id, a name inside
#: a longer one, two names, a keyword list holding a name, a name set aside, none at all.
_FORMS = ("How about {a}?", "Would {a_id} work for you?", "I found {a} and {b}. Which one?", "Shall I book {a} 5?",
          "{a}", "category area price rating amenities time {a} type style budget cost stars day",
          "I'd rather not suggest {a}. Which area do you prefer?", "Okay.", "{a}, {a} or {a}?")


def test_the_judge_counts_exactly_the_proposals_the_user_hears() -> None:
    # One reading: a commitment is recorded exactly when the user judged a proposal (it accepts
    # the place or says it won't work), never for a message it read otherwise.
    env = gym.make(DIALOG)
    heard = counted = 0
    for seed in range(40):
        for form in _FORMS:
            env.reset(seed=seed)
            world = env.unwrapped.task.world
            a, b = world.places[seed % len(world.places)], world.places[(seed + 1) % len(world.places)]
            message = form.format(a=a.name, a_id=a.id, b=b.name)
            _, _, _, _, info = env.step(message)
            reply = info["messages"][-1]["content"]
            judged = any(said in reply for said in ("sounds great", "sounds good", "won't work"))
            recorded = env.unwrapped._commitments
            assert len(recorded) == judged, (message, reply, recorded)
            heard += judged
            counted += bool(recorded)
    assert heard == counted and 80 < heard < 40 * len(_FORMS)


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


def test_every_place_of_every_domain_is_proposed_by_its_name_and_its_id() -> None:
    from agentgym.core.seeding import fast_stream
    from agentgym.envs.dialog.domain import load_domains
    from agentgym.envs.dialog.tasks import generate_task
    from agentgym.envs.dialog.user import DialogUser

    for domain in load_domains():
        for seed in range(3):
            task = generate_task(seed, {"domain": domain})
            user = DialogUser(task, fast_stream(seed, "user"))
            for place in task.world.places:
                for ref in (place.name.lower(), place.id):
                    call = user.proposed_call(f"what about {ref}?")
                    assert call is not None and call[1]["item_id"] == place.id, (domain, ref)
