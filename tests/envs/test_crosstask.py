"""AgentRL/CrossTask-v0: sessions of sub-tasks from different families, switches, follow-ups."""

from __future__ import annotations

import json
import re
from typing import Any

import gymnasium as gym
import pytest
from test_tooluse import _everything  # the tool-use "propose everything" candidates
from trivial_policies import DOING_NOTHING, Policy, tally, trivial_policies

import agentgym  # noqa: F401
from agentgym.agents import make_agent
from agentgym.core.render import to_json
from agentgym.envs.crosstask.env import CrossTaskEnv
from agentgym.envs.crosstask.oracle import _SubEnv
from agentgym.envs.crosstask.session import (
    FAMILIES,
    SessionWorld,
    generate_session,
    make_session_toolkit,
    score_session,
)
from agentgym.eval.episode import run_episode

ENV_ID = "AgentRL/CrossTask-v0"


def _split(seed: int) -> str:
    return ("train", "test")[seed % 2]


def _play(env: CrossTaskEnv, policy: Policy, seed: int) -> tuple[dict[str, Any], float, list[dict[str, Any]]]:
    obs, info = env.reset(seed=seed)
    state: dict[str, Any] = {"seed": seed, "segment": None}
    infos = [info]
    while True:
        obs, reward, terminated, truncated, info = env.step(policy(env, obs, info, state))
        infos.append(info)
        if terminated or truncated:
            return info["episode_summary"], reward, infos


# ------------------------------------------------------------------------------ the oracle
def test_the_oracle_solves_300_of_300() -> None:
    envs = {s: gym.make(ENV_ID, split=s) for s in ("train", "test")}
    oracle = make_agent("oracle")
    sizes: dict[int, int] = {}
    for seed in range(300):
        r = run_episode(envs[_split(seed)], oracle, seed)
        assert r.success, (seed, r.episode["subtasks"])
        assert all(s["success"] for s in r.episode["subtasks"])
        sizes[len(r.episode["subtasks"])] = sizes.get(len(r.episode["subtasks"]), 0) + 1
    assert set(sizes) == {2, 3, 4}, sizes


# ------------------------------------------------------------------------------ trivial agents
def _propose_everything(env: Any, obs: str, info: dict[str, Any], state: dict[str, Any]) -> str:
    """At the start of each sub-task, every outcome it could have, in one turn: a booking of every
    place at the wanted time, the gold plan with all its rivals, or the follow-up's move with a
    booking of every other place."""
    seg = env.unwrapped.user.active
    if seg is None or state["segment"] == seg.index:
        return "OK."
    state["segment"] = seg.index
    if seg.family == "dialog":
        g = seg.task.gold
        calls = [{"name": "book", "arguments": {"item_id": p.id, "day": g.day, "slot": g.slot}}
                 for p in seg.task.world.places]
    elif seg.family == "tooluse":
        calls = _everything(_SubEnv(seg.task, None))
    else:
        world = env.unwrapped.user.session.segments[seg.refers_to].task.world
        m = seg.move
        calls = [{"name": "cancel_booking", "arguments": {"booking_id": m.booking}}] + [
            {"name": "book", "arguments": {"item_id": p.id, "day": m.day, "slot": m.slot}} for p in world.places]
    return json.dumps(calls)


TRIVIAL = trivial_policies("test/crosstask/every-tool", _propose_everything)


@pytest.mark.parametrize("name", list(TRIVIAL))
def test_trivial_agents_fail(name: str) -> None:
    envs = {s: CrossTaskEnv(split=s) for s in ("train", "test")}
    n = 200
    successes, total = tally(_play, envs, _split, TRIVIAL[name], n)
    print(f"\n{name}: {successes}/{n} successes, mean score {total / n:.3f}")
    assert successes <= 0.01 * n
    if name in DOING_NOTHING:
        assert successes == 0 and total == 0.0


def test_the_heuristic_lands_between_trivial_and_oracle() -> None:
    heuristic = make_agent("heuristic")
    envs = {s: gym.make(ENV_ID, split=s) for s in ("train", "test")}
    by: dict[str, list[bool]] = {}
    for seed in range(240):
        r = run_episode(envs[_split(seed)], heuristic, seed)
        by.setdefault(r.episode["task"]["difficulty"], []).append(r.success)
    rates = {d: sum(v) / len(v) for d, v in sorted(by.items())}
    overall = sum(sum(v) for v in by.values()) / 240
    print(f"\nheuristic on CrossTask-v0: {rates}, overall {overall:.2f}")
    assert 0.2 <= overall <= 0.9
    assert rates["hard"] < 0.9


# ------------------------------------------------------------------------------ the session
def test_step_infos_carry_the_family_and_the_switches() -> None:
    env = gym.make(ENV_ID)
    oracle = make_agent("oracle")
    obs, info = env.reset(seed=7)
    oracle.bind(env.unwrapped)
    oracle.reset(obs, info)
    assert info["task"]["family"] == "crosstask"
    assert info["segment"] == {"index": 0, **{k: info["segment"][k] for k in ("family", "domain")}}
    seen, switches = [info["segment"]["index"]], []
    while True:
        obs, reward, terminated, truncated, info = env.step(oracle.act(obs, info))
        assert info["segment"]["family"] in ("dialog", "tooluse", "followup")
        seen.append(info["segment"]["index"])
        switches += info["segment_switch"]
        if terminated or truncated:
            break
    subtasks = info["episode_summary"]["subtasks"]
    assert seen == sorted(seen) and seen[-1] == len(subtasks) - 1
    assert [s["ended"]["index"] for s in switches] == list(range(len(subtasks)))
    assert switches[-1]["started"] is None
    assert all(s["ended"]["success"] for s in switches)
    assert reward == 1.0 and info["episode_summary"]["success"]


def _session_with_followup(split: str = "train") -> int:
    for seed in range(500):
        task = generate_session(seed, {"split": split})
        if task.world.segments[-1].family == "followup":
            return seed
    raise AssertionError("no session with a follow-up in 500 seeds")


def test_a_follow_up_needs_the_booking_made_earlier() -> None:
    seed = _session_with_followup()
    env = gym.make(ENV_ID)
    oracle = make_agent("oracle")
    r = run_episode(env, oracle, seed)
    assert r.success and r.episode["subtasks"][-1]["family"] == "followup"
    # The follow-up never names the place: "the cafe we booked earlier".
    user = env.unwrapped.user
    follow = user.session.segments[-1]
    place = user.session.segments[follow.refers_to].task.world.by_id[follow.move.place]
    opening = user.user_of(len(user.session.segments) - 1).opening()
    assert place.name not in opening and place.id not in opening and "we booked earlier" in opening

    # An agent that forgot which place it booked (books another one) fails the follow-up.
    def forgetful(env: Any, obs: str, info: dict[str, Any], state: dict[str, Any]) -> str:
        seg = env.unwrapped.user.active
        if seg is not None and seg.family == "followup":
            world = env.unwrapped.user.session.segments[seg.refers_to].task.world
            other = next(p for p in world.places if p.id != seg.move.place and p.is_open(seg.move.day, seg.move.slot))
            if state.get("cancelled") is None:
                state["cancelled"] = True
                return to_json({"name": "cancel_booking", "arguments": {"booking_id": seg.move.booking}})
            return to_json({"name": "book", "arguments": {"item_id": other.id, "day": seg.move.day,
                                                           "slot": seg.move.slot}})
        if "oracle" not in state:
            state["oracle"] = make_agent("oracle")
            state["oracle"].bind(env.unwrapped)
            state["oracle"].reset(obs, info)
        return state["oracle"].act(obs, info)

    episode, _, _ = _play(CrossTaskEnv(), forgetful, seed)
    assert not episode["success"]
    assert [s["success"] for s in episode["subtasks"]][:-1] == [True] * (len(episode["subtasks"]) - 1)
    assert not episode["subtasks"][-1]["success"]


def _at_followup() -> tuple[Any, Any]:
    """An env played by the oracle up to its first follow-up, and the session's user."""
    env = gym.make(ENV_ID)
    oracle = make_agent("oracle")
    obs, info = env.reset(seed=_session_with_followup())
    oracle.bind(env.unwrapped)
    oracle.reset(obs, info)
    user = env.unwrapped.user
    while user.active.family != "followup":
        obs, _, terminated, _, info = env.step(oracle.act(obs, info))
        assert not terminated
    return env, user


def test_a_yes_to_the_move_asks_for_no_part_of_it_again() -> None:
    """At the follow-up, "I'll book the same place at the new time and cancel the old booking: ok to
    proceed?" gets a yes, not the request again ("I still see our booking on ...")."""
    env, user = _at_followup()
    _, _, _, _, info = env.step("I'll book the same place at the new time and cancel the old booking. Ok to proceed?")
    said = info["messages"][-1]["content"]
    assert said.startswith("Yes") and "still see" not in said and "please move" not in said, said


def test_a_yes_to_the_place_before_any_write_says_what_to_do() -> None:
    """"Shall I move <the place> to the new time?" before any write: the yes says what to do, not
    that the user "still sees" the old booking, as though the move had failed (playtests CrossTask
    6024, 6132 T11, 6144 T23)."""
    env, user = _at_followup()
    segment = user.active
    world = env.unwrapped.task.world.segments[segment.refers_to].task.world
    place = world.by_id[user.user_of(segment.index)._move.place]
    _, _, _, _, info = env.step(f"Just to check: you mean {place.name}, the booking we made earlier?")
    said = info["messages"][-1]["content"]
    assert said.startswith("Yes, that one: please book it") and "still see" not in said, said


def test_sub_task_scores_are_taken_when_they_end() -> None:
    # Cancelling the first booking after its sub-task ended does not undo that sub-task.
    for seed in range(200):
        task = generate_session(seed, {"split": "train"})
        if task.world.segments[0].family == "dialog" and len(task.world.segments) >= 2:
            break
    env = CrossTaskEnv()
    oracle = make_agent("oracle")
    obs, info = env.reset(seed=seed)
    oracle.bind(env)
    oracle.reset(obs, info)
    while env.user.active.index == 0:
        obs, *_rest, info = env.step(oracle.act(obs, info))
    booking = env.task.world.segments[0].task.world.active_bookings()[0]
    obs, reward, terminated, truncated, info = env.step(
        to_json({"name": "cancel_booking", "arguments": {"booking_id": booking.id}}))
    assert not env.task.world.segments[0].task.world.active_bookings()
    assert env.task.world.segments[0].score.success


def test_equal_schemas_keys_mean_equal_schemas() -> None:
    # `AgentEnv` caches the schemas' JSON text by `schemas_key`: the key must determine them.
    # Each session lists every sub-toolkit's schemas once, a shared name (`list_policies`) once.
    by_key: dict[Any, str] = {}
    for seed in range(600):
        toolkit = make_session_toolkit(generate_session(seed, {"split": _split(seed)}))
        expected: dict[str, dict[str, Any]] = {}
        for tk in toolkit.toolkits.values():
            for schema in tk.schemas():
                expected.setdefault(schema["function"]["name"], schema)
        text = json.dumps(list(expected.values()))
        assert json.dumps(toolkit.schemas()) == text
        assert by_key.setdefault(toolkit.schemas_key, text) == text, seed
    assert len(by_key) >= 20 and len(set(by_key.values())) == len(by_key)


def test_policies_name_the_task_area_they_answer_for() -> None:
    # `list_policies` is one name for every tool-use area's policies: each result says which area
    # it answers for, as the brief heads it, and where the others' are; read while a request that
    # has none is at hand (a booking), it answers that the booking has none, not with another
    # area's, which playtesters took for the booking's rules (CrossTask 7058, 7073, 7091, 7096).
    env = CrossTaskEnv(split="train")
    booking = tooluse = 0
    for seed in range(40):
        obs, _ = env.reset(seed=seed)
        heads = re.findall(r"^## Task area (\d+: \w+ / \w+)$", obs, re.M)
        obs, *_ = env.step(to_json({"name": "list_policies", "arguments": {}}))
        result = json.loads(obs.split("] ", 1)[1])
        assert result["task_area"] == heads[0], (seed, obs[:200])
        assert "active request" in result["scope"] and "brief lists every area" in result["scope"]
        if "/ dialog" in heads[0] or heads[0].split(": ")[1].startswith("dialog"):
            assert result["policies"] == [] and "no policies of its own" in result["scope"], seed
            booking += 1
        else:
            assert result["policies"], seed
            tooluse += 1
    assert booking >= 5 and tooluse >= 5


def test_known_constraints_follow_the_sub_users() -> None:
    # The session user caches its prefixed list; it must change whenever a sub-user's does.
    env = CrossTaskEnv(split="train")
    oracle = make_agent("oracle")
    for seed in range(30):
        obs, info = env.reset(seed=seed)
        oracle.bind(env)
        oracle.reset(obs, info)
        while True:
            user = env.user
            expected = [f"{i}:{c}" for i, u in user.users.items() for c in u.known_constraints()]
            assert user.known_constraints() == expected
            obs, _, terminated, truncated, info = env.step(oracle.act(obs, info))
            if terminated or truncated:
                break


# ------------------------------------------------------------------------------ the generator
def test_the_generator_over_2000_seeds() -> None:
    counts = {2: 0, 3: 0, 4: 0}
    for seed in range(2000):
        split = _split(seed)
        task = generate_session(seed, {"split": split})
        session: SessionWorld = task.world
        segs = session.segments
        counts[len(segs)] += 1
        fresh = [s for s in segs if s.family != "followup"]
        assert sum(s.family == "dialog" for s in fresh) == 1
        assert len({(s.family, s.domain) for s in fresh}) == len(fresh)
        assert len({s.family for s in fresh}) == 2  # always more than one family
        for s in fresh:
            assert s.task.split == split and s.domain in FAMILIES[s.family].domains(split)
            gold = s.task.gold.to_dict()
            assert gold.get("calls"), (seed, s)  # never empty criteria
        if segs[-1].family == "followup":
            assert segs[segs[-1].refers_to].family == "dialog" and segs[-1].refers_to < len(segs) - 1
        # Doing nothing scores 0.
        assert score_session(task, None).score == 0.0
        assert not score_session(task, None).success
    assert all(counts.values()), counts


def test_splits_are_disjoint() -> None:
    domains = {split: set() for split in ("train", "test")}
    for seed in range(300):
        for split in domains:
            for s in generate_session(seed, {"split": split}).world.segments:
                domains[split].add((s.family if s.family != "followup" else "dialog", s.domain))
    assert domains["train"] and domains["test"]
    assert not domains["train"] & domains["test"]


def test_domain_option_is_refused() -> None:
    with pytest.raises(ValueError, match="domain"):
        CrossTaskEnv().reset(seed=0, options={"domain": "cafes"})


def test_the_follow_up_user_understands_questions_and_never_names_the_place() -> None:
    from agentgym.core.seeding import fast_stream
    from agentgym.envs.crosstask.followup import FollowUpUser, plan_move
    from agentgym.envs.dialog.tasks import Booking
    from agentgym.envs.dialog.tasks import generate_task as dialog_task
    from agentgym.envs.dialog.user import REPHRASE

    task = dialog_task(3, {"domain": "cafes"})
    world, gold = task.world, task.gold
    world.bookings["B1"] = Booking("B1", gold.items[0], gold.day, gold.slot)
    move = plan_move(world, world.bookings["B1"], fast_stream(3, "test/move"))
    assert move is not None
    user = FollowUpUser(world, move)
    when = f"{move.day.capitalize()} {move.slot}"
    place = world.by_id[move.place]
    assert user.reply("When should I move it to?", 1).text == f"To {when}, please."
    assert REPHRASE in user.reply("qwxzv plmkq", 2).text
    assert "Yes, that one" in user.reply(f"Do you mean {place.name}?", 3).text
    other = next(p for p in world.places if p.id != place.id)
    assert "same cafe as before" in user.reply(f"Is it {other.name}?", 4).text
    for text in ("Which area was it in?", "Anything else?", "OK.", "Shall I go ahead?"):
        assert place.name not in user.reply(text, 5).text


# ------------------------------------------------------------------------------ the follow-up holds together
def _move_world(seed: int = 3) -> tuple[Any, Any]:
    from agentgym.core.seeding import fast_stream
    from agentgym.envs.crosstask.followup import plan_move
    from agentgym.envs.dialog.tasks import Booking
    from agentgym.envs.dialog.tasks import generate_task as dialog_task

    task = dialog_task(seed, {"domain": "cafes"})
    world, gold = task.world, task.gold
    world.bookings["B1"] = Booking("B1", gold.items[0], gold.day, gold.slot)
    move = plan_move(world, world.bookings["B1"], fast_stream(seed, "test/move"))
    assert move is not None
    return world, move


def _write(world: Any, name: str, **arguments: Any) -> list[Any]:
    """Run one dialog write on `world`, as the toolkit does, and return its events."""
    from agentgym.envs.dialog.tools import DialogToolkit

    tk = DialogToolkit(world)
    tk.invoke(name, arguments)
    return tk.drain_events()


@pytest.mark.parametrize("order", ["book first", "cancel first", "one turn"])
def test_the_follow_up_accepts_either_order_and_answers_every_write(order: str) -> None:
    from agentgym.envs.crosstask.followup import FollowUpUser, score_move

    world, move = _move_world()
    user = FollowUpUser(world, move)
    book = ("book", {"item_id": move.place, "day": move.day, "slot": move.slot})
    cancel = ("cancel_booking", {"booking_id": move.booking})
    writes = [book, cancel] if order == "book first" else [cancel, book]
    if order == "one turn":
        events = [e for name, args in writes for e in _write(world, name, **args)]
        said = user.react(events, 1)
        assert said is not None and said.end == "accepted"
        return
    first = user.react(_write(world, *writes[0][:1], **writes[0][1]), 1)
    # A right step of the move: the user waits to hear from the assistant, and hints at nothing.
    assert first is None and not score_move(world, move).success
    missing = "cancel the old one" if order == "book first" else "book the same cafe"
    # A message now gets the state of things, never the request as if nothing had happened.
    status = user.reply("Done: I've taken care of it.", 2)
    assert missing in status.text and status.end is None
    second = user.react(_write(world, *writes[1][:1], **writes[1][1]), 3)
    assert second is not None and second.end == "accepted" and score_move(world, move).success


def test_the_follow_up_user_gives_the_stock_replies_and_its_request_to_an_empty_message() -> None:
    from agentgym.envs.crosstask.followup import FollowUpUser
    from agentgym.users.stock import KEYWORDS, REPHRASE

    world, move = _move_world()
    user = FollowUpUser(world, move)
    assert user.reply("   ", 1).text.startswith("I still see our booking")
    assert user.reply("area location where price budget cost rating stars time day date when", 1).text == KEYWORDS
    assert user.reply("zzz qqq", 1).text == REPHRASE
    assert user.known_constraints() == ["place", "time"]


def test_the_follow_up_ends_when_and_only_when_the_move_is_done() -> None:
    from agentgym.envs.crosstask.followup import FollowUpUser, score_move

    world, move = _move_world(5)
    user = FollowUpUser(world, move)
    other = next(p for p in world.places if p.id != move.place and p.is_open(move.day, move.slot))
    # A wrong place costs patience and is named; the extra booking must go before the move is done.
    said = user.react(_write(world, "book", item_id=other.id, day=move.day, slot=move.slot), 1)
    assert said is not None and said.end is None and world.by_id[move.place].name in said.text
    # The right steps of the move get no word: the wrong booking was named when it was made.
    assert user.react(_write(world, "cancel_booking", booking_id=move.booking), 2) is None
    assert user.react(_write(world, "book", item_id=move.place, day=move.day, slot=move.slot), 3) is None
    assert not score_move(world, move).success
    said = user.reply("Done, it's moved.", 4)
    assert said.end is None and other.name in said.text  # "please cancel it"
    extra = next(b for b in world.active_bookings() if b.item_id == other.id)
    said = user.react(_write(world, "cancel_booking", booking_id=extra.id), 5)
    assert said is not None and said.end == "accepted" and score_move(world, move).success


def test_the_follow_up_gives_up_after_its_patience_of_wrong_bookings() -> None:
    from agentgym.envs.crosstask.followup import FollowUpUser

    world, move = _move_world(7)
    user = FollowUpUser(world, move)
    others = [p for p in world.places if p.id != move.place and p.is_open(move.day, move.slot)]
    ends = [user.react(_write(world, "book", item_id=p.id, day=move.day, slot=move.slot), t).end
            for t, p in enumerate(others[:FollowUpUser.PATIENCE], 1)]
    assert ends == [None] * (FollowUpUser.PATIENCE - 1) + ["gave_up"]


def _followup_seeds(split: str, n: int) -> list[int]:
    return [s for s in range(n) if generate_session(s, {"split": split}).world.segments[-1].family == "followup"]


@pytest.mark.parametrize("order", ["book first", "cancel first"])
def test_no_follow_up_loops_and_its_user_agrees_with_the_grader(order: str) -> None:
    # The oracle plays every sub-task but the follow-up, which is played in `order` and then
    # reported done: the user must end it at the write that completes the move, never repeat
    # the request, and the session must end with every sub-task accepted.
    from agentgym.core.render import call_text

    for split in ("train", "test"):
        env = CrossTaskEnv(split=split)
        for seed in _followup_seeds(split, 120):
            obs, info = env.reset(seed=seed)
            oracle = make_agent("oracle")
            oracle.bind(env)
            oracle.reset(obs, info)
            k = 0
            while True:
                seg = env.user.active
                if seg is not None and seg.family == "followup":
                    m = seg.move
                    calls = [call_text("book", item_id=m.place, day=m.day, slot=m.slot),
                             call_text("cancel_booking", booking_id=m.booking)]
                    action = (calls if order == "book first" else calls[::-1])[k] if k < 2 else "Done, it's moved."
                    k += 1
                else:
                    action = oracle.act(obs, info)
                obs, _, terminated, truncated, info = env.step(action)
                if terminated or truncated:
                    break
            assert terminated and k == 3, (split, seed, order)  # the two calls, then the word that it's done
            subs = info["episode_summary"]["subtasks"]
            assert all(s["outcome"] in ("accepted", "committed") and s["success"] for s in subs), (split, seed, subs)


def test_a_failed_booking_costs_only_itself() -> None:
    # The booking sub-task fails (the agent gives the user a booking it rejects until it leaves):
    # the follow-up is not offered, and the session's score is the mean over the sub-tasks offered.
    seed = next(s for s in _followup_seeds("train", 200)
                if len(generate_session(s, {"split": "train"}).world.segments) == 3)
    env = CrossTaskEnv(split="train")
    obs, info = env.reset(seed=seed)
    oracle = make_agent("oracle")
    oracle.bind(env)
    oracle.reset(obs, info)
    while True:
        seg = env.user.active
        if seg is not None and seg.family == "dialog":
            world, gold = seg.task.world, seg.task.gold
            wrong = next(p for p in world.places if p.id not in gold.items and p.is_open(gold.day, gold.slot))
            booked = [b for b in world.active_bookings()]
            action = (call_json("cancel_booking", booking_id=booked[0].id) if booked else
                      call_json("book", item_id=wrong.id, day=gold.day, slot=gold.slot))
        else:
            action = oracle.act(obs, info)
        obs, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    subs = info["episode_summary"]["subtasks"]
    follow = subs[-1]
    assert follow["family"] == "followup" and follow["offered"] is False and follow["outcome"] == "not_offered"
    assert follow["score"] is None and follow["success"] is None
    offered = [s for s in subs if s["offered"]]
    assert [s["success"] for s in offered].count(True) == len(offered) - 1
    assert reward == pytest.approx(sum(s["score"] for s in offered) / len(offered))
    assert not info["episode_summary"]["success"] and terminated
    # No switch announces the follow-up: the session ends after the last sub-task it offered.
    assert all("we booked earlier" not in m["content"] for m in info["messages"] if m["role"] == "user")


def call_json(name: str, **arguments: Any) -> str:
    return to_json({"name": name, "arguments": arguments})


def _play_lines(agent: str, split: str, seeds: range) -> list[tuple[int, list[dict[str, Any]], str]]:
    env = CrossTaskEnv(split=split)
    out = []
    for seed in seeds:
        obs, info = env.reset(seed=seed)
        a = make_agent(agent)
        if hasattr(a, "bind"):
            a.bind(env)
        a.reset(obs, info)
        while True:
            obs, _, terminated, truncated, info = env.step(a.act(obs, info))
            out += [(seed, info["segment_switch"], m["content"]) for m in info["messages"] if m["role"] == "user"]
            if terminated or truncated:
                break
    return out


@pytest.mark.parametrize("agent", ["oracle", "heuristic"])
def test_switches_read_naturally_and_agree_with_the_outcome(agent: str) -> None:
    import re

    thanks = re.compile(r"\bthank", re.IGNORECASE)
    for split in ("train", "test"):
        for seed, switches, text in _play_lines(agent, split, range(80)):
            # One thank-you per message at most, and no farewell before the next request.
            assert len(thanks.findall(text)) <= 1, (seed, text)
            ended = [s["ended"] for s in switches]
            if any(s["started"] for s in switches):
                # No farewell before the next request, and no second greeting in it.
                assert "goodbye" not in text.lower(), (seed, text)
                assert not re.search(r": (?:Hi|Hello|Hey)\b", text), (seed, text)
            for e in ended:
                # The user never thanks for a sub-task that failed, nor leaves one it called done.
                if not e["success"]:
                    assert e["outcome"] != "accepted" and not thanks.search(text), (seed, e, text)
                else:
                    assert e["outcome"] in ("accepted", "committed"), (seed, e)


def test_a_terminal_tool_commits_only_its_own_sub_task() -> None:
    # An answer submitted to the finance sub-task while another sub-task is active ends neither:
    # the user is still waiting for the active one, and the session goes on with it.
    for seed in range(300):
        segs = generate_session(seed, {"split": "train"}).world.segments
        later = [s for s in segs[1:] if s.family == "tooluse" and s.domain == "finance"]
        if later:
            break
    env = CrossTaskEnv(split="train")
    env.reset(seed=seed)
    first = env.user.active
    assert first.index == 0 and later[0].index > 0
    _, _, terminated, truncated, info = env.step(call_json("submit_answer", amount=12.5, currency="EUR"))
    assert not terminated and not truncated and env.user.active.index == 0
    assert info["segment_switch"] == []
    assert env.task.world.segments[0].outcome is None


def test_a_write_to_another_sub_task_gets_a_word_from_the_user() -> None:
    # After the booking sub-task, cancelling its booking is no part of what the user asks now.
    seed = next(s for s in range(300) if generate_session(s, {"split": "train"}).world.segments[0].family == "dialog"
                and len(generate_session(s, {"split": "train"}).world.segments) >= 2)
    env = CrossTaskEnv(split="train")
    obs, info = env.reset(seed=seed)
    oracle = make_agent("oracle")
    oracle.bind(env)
    oracle.reset(obs, info)
    while env.user.active.index == 0:
        obs, *_rest, info = env.step(oracle.act(obs, info))
    booking = env.task.world.segments[0].task.world.active_bookings()[0]
    obs, _, terminated, _, info = env.step(call_json("cancel_booking", booking_id=booking.id))
    assert not terminated and "I didn't ask to change it" in obs


def test_the_briefs_task_areas_are_numbered_without_gaps() -> None:
    """A follow-up has no brief of its own: the areas listed are numbered 1, 2, 3, ..., never with
    the gaps that would tell how many come-backs the session holds (a playtest, seed 6053)."""
    import re

    gapped = 0
    for seed in range(30):
        env = gym.make("AgentRL/CrossTask-v0", split="train", difficulty="hard")
        obs, info = env.reset(seed=seed)
        numbers = [int(n) for n in re.findall(r"^## Task area (\d+):", obs, re.M)]
        assert numbers == list(range(1, len(numbers) + 1)), (seed, numbers)
        gapped += len(env.unwrapped.user.session.segments) > len(numbers)
    assert gapped, "no session with a follow-up among the seeds"


def test_policies_asked_during_a_change_to_a_booking_answer_for_the_booking_s_area() -> None:
    """A follow-up (a change to the booking) has no tools of its own: its area is the booking's."""
    checked = 0
    for seed in range(40):
        task = generate_session(seed, {"split": _split(seed), "difficulty": "hard"})
        toolkit = make_session_toolkit(task)
        session = task.world
        for i, seg in enumerate(session.segments):
            if seg.family != "followup":
                continue
            session.active = i
            result = toolkit.invoke("list_policies", {})
            booking = max(j for j in toolkit.toolkits if j < i and session.segments[j].domain == seg.domain)
            assert result["task_area"] == toolkit._area(booking) and result["policies"] == [], (seed, i)
            assert toolkit._area(booking).endswith(f"dialog / {seg.domain}")
            checked += 1
    assert checked >= 10
