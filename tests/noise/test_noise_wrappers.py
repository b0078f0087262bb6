"""Each noise wrapper on its own: what the agent sees, what is logged, what is never touched."""

from __future__ import annotations

import json
import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils import RecordConstructorArgs
from gymnasium.utils.env_checker import check_env
from noise_helpers import LIVE_IDS, ReadProber, events, layer, play, tool_call, tool_contents

from agentgym.core.render import answer_messages, call_text, render_messages
from agentgym.core.tools import ToolKind
from agentgym.noise import (
    FAILURE_MODES,
    KINDS,
    ActionConstraint,
    Ambiguity,
    Corruption,
    Distractors,
    GoalShift,
    Latency,
    ToolFailure,
    Typos,
)
from agentgym.noise.calls import perturbable_leaves
from agentgym.testing import check_agent_env

DIALOG = "AgentRL/Dialog-v0"
ALL_WRAPPERS = (ToolFailure, Corruption, Ambiguity, GoalShift, Distractors, Typos, Latency, ActionConstraint)
EVERY_KIND = "tool_failure=0.3,corruption=0.3,ambiguity=0.5,goal_shift=0.5,distractors=3,typos=0.3,latency=3000"


@pytest.mark.parametrize("cls", ALL_WRAPPERS, ids=lambda c: c.__name__)
def test_every_wrapper_is_a_gymnasium_wrapper_that_records_its_arguments_and_forwards_nothing(cls) -> None:
    assert issubclass(cls, gym.Wrapper) and issubclass(cls, RecordConstructorArgs)
    assert "__getattr__" not in vars(cls)
    env = gym.make(DIALOG)
    kwargs = {ToolFailure: {"rate": 0.25}, Corruption: {"rate": 0.25}, Ambiguity: {"rate": 0.25},
              GoalShift: {"rate": 0.25}, Typos: {"rate": 0.25}, Distractors: {"n": 2}, Latency: {"mean_ms": 10.0},
              ActionConstraint: {"allowed_tools": ["search"], "forbid": ["sunday"]}}[cls]
    wrapped = cls(env, **kwargs)
    recorded = wrapped.spec.additional_wrappers[-1]
    assert recorded.name == cls.__name__ and {k: recorded.kwargs[k] for k in kwargs} == kwargs
    json.loads(wrapped.spec.to_json())  # the recorded arguments are plain JSON
    with pytest.raises(AttributeError):
        wrapped.task  # noqa: B018  (no attribute forwarding: reach the env through .unwrapped)
    wrapped.close()


@pytest.mark.parametrize("cls", ALL_WRAPPERS, ids=lambda c: c.__name__)
def test_a_wrapper_needs_an_agentgym_env_underneath(cls) -> None:
    kwargs = {Distractors: {"n": 1}, Latency: {"mean_ms": 1.0}, ActionConstraint: {}}.get(cls, {"rate": 0.1})
    with pytest.raises(TypeError, match="needs an agentgym AgentEnv"):
        cls(gym.make("CartPole-v1"), **kwargs)


@pytest.mark.parametrize(("cls", "kwargs", "message"), [
    (ToolFailure, {"rate": 1.5}, "rate must be a number in"),
    (ToolFailure, {"rate": 0.1, "modes": []}, "modes must be a non-empty list"),
    (ToolFailure, {"rate": 0.1, "modes": ["boom"]}, "unknown ToolFailure modes"),
    (ToolFailure, {"rate": 0.1, "tools": "search"}, "tools must be a non-empty list"),
    (Corruption, {"rate": float("nan")}, "rate must be a number in"),
    (Typos, {"rate": True}, "rate must be a number in"),
    (Distractors, {"n": -1}, "n must be an integer in"),
    (Distractors, {"n": 2.0}, "n must be an integer in"),
    (Latency, {"mean_ms": float("inf")}, "mean_ms must be a finite number"),
    (ActionConstraint, {"forbid": ["("]}, "not a valid regular expression"),
    (ActionConstraint, {"allowed_tools": "search"}, "must be a list of strings"),
])
def test_wrapper_arguments_are_checked(cls, kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        cls(gym.make(DIALOG), **kwargs)


@pytest.mark.parametrize("env_id", LIVE_IDS)
def test_check_env_and_the_agentgym_conformance_checks_pass_with_every_kind_on(env_id: str) -> None:
    env = gym.make(env_id, noise=EVERY_KIND)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*is different from the unwrapped version.*")
        check_env(env, skip_render_check=False)
    check_agent_env(gym.make(env_id, noise=EVERY_KIND), seeds=(0, 1), n_garbage=50)
    env.close()


# ------------------------------------------------------------------------------ tool failure
def test_tool_failure_is_realistic_marked_injected_and_not_the_agents_error() -> None:
    env = gym.make(DIALOG, noise="tool_failure=1")
    env.reset(seed=3)
    seen = set()
    for _ in range(30):
        _, _, term, trunc, info = env.step(call_text("search"))
        (record,) = info["calls"]
        assert record["valid"] and record["injected"] and record["error"] == "TOOL_ERROR"
        assert info["errors"] == []  # not counted against the agent
        ((name, content),) = tool_contents(info)
        assert "inject" not in content.lower() and "noise" not in content.lower()  # the agent is not told
        mode = next(m for m, text in FAILURE_MODES.items() if content == f"[error TOOL_ERROR] {text.format(tool=name)}")
        (event,) = events(info, "tool_failure")
        assert event["detail"]["mode"] == mode and event["target"] == "search" and event["step"] == info["turn"]
        seen.add(mode)
        if term or trunc:
            break
    assert seen == set(FAILURE_MODES)
    assert info["episode_summary"]["errors"] == {}


def test_tool_failure_only_hits_the_listed_tools_and_a_retry_can_succeed() -> None:
    env = gym.make(DIALOG, noise={"tool_failure": {"rate": 0.5, "tools": ["get_details"]}})
    env.reset(seed=5)
    ok = failed = 0
    item = env.unwrapped.task.world.places[0].id
    for i in range(14):
        _, _, _, _, info = env.step(call_text("search") if i % 2 else call_text("get_details", item_id=item))
        (record,) = info["calls"]
        if record["name"] == "search":
            assert not record["injected"]
        else:
            failed += record["injected"]
            ok += record["error"] is None
    assert ok and failed  # the same call fails, then succeeds on a retry


def test_a_failure_on_the_last_turn_is_marked_unrecoverable() -> None:
    env = gym.make(DIALOG, noise="tool_failure=1", max_turns=3)
    env.reset(seed=1)
    flags = [events(env.step(call_text("search"))[4], "tool_failure")[0]["detail"]["recoverable"] for _ in range(3)]
    assert flags == [True, True, False]


# ------------------------------------------------------------------------------ corruption
@pytest.mark.parametrize("env_id", LIVE_IDS)
def test_corruption_changes_one_leaf_of_read_results_and_never_the_world(env_id: str) -> None:
    env, clean = gym.make(env_id, noise="corruption=1"), gym.make(env_id)
    corrupted = 0
    for seed in range(200):  # the prober replays its calls, and a call is corrupted once an episode
        if corrupted >= 20:
            break
        env.reset(seed=seed)
        clean.reset(seed=seed)
        prober = ReadProber(env, seed)
        world_before = pickle.dumps(env.unwrapped.task.world)
        info: dict = {}
        for _ in range(10):
            action = prober.act(info)
            *_, info = env.step(action)
            *_, clean_info = clean.step(action)
            evs = events(info, "corruption")
            for (name, got), (_, want), record in zip(tool_contents(info), tool_contents(clean_info), info["calls"]):
                if got == want:
                    continue
                (event,) = [e for e in evs if e["target"] == name]
                assert record["kind"] == ToolKind.READ.value
                g, w = json.loads(got), json.loads(want)
                diffs = [p for p in perturbable_leaves(w, record.get("arguments")) if _at(g, p) != _at(w, p)]
                assert len(diffs) == 1, (got, want)  # exactly one leaf changed
                assert event["detail"]["from"] == _at(w, diffs[0]) and event["detail"]["to"] == _at(g, diffs[0])
                corrupted += 1
            if info.get("episode_summary"):
                break
        assert pickle.dumps(env.unwrapped.task.world) == world_before
    assert corrupted >= 20


def _at(value, path):
    for k in path:
        value = value[k]
    return value


def test_corruption_kinds_are_checkable() -> None:
    from agentgym.noise.calls import _perturb

    class Rng:
        def __init__(self, u):
            self.u = u

        def random(self):
            return self.u

    assert _perturb(True, Rng(0.2)) == (False, "flipped")
    new, how = _perturb("cafe_012", Rng(0.2))
    assert new == "cafe_2012" and how == "id that does not resolve"  # ids of a kind share a width
    assert _perturb("2025-02-04", Rng(0.2))[0] == "2025-02-06"  # a few days, inside its month
    assert _perturb("2025-02-27", Rng(0.2))[0] == "2025-02-25"
    price, _ = _perturb(40, Rng(0.9))
    assert price != 40 and 24 <= price <= 56 and isinstance(price, int)
    rating, _ = _perturb(4.5, Rng(0.9))
    assert rating != 4.5 and rating == round(rating, 1)
    assert _perturb(0, Rng(0.9))[0] == 1
    # A value another record holds is taken first: a mix-up, in range by construction.
    assert _perturb(3.2, Rng(0.9), siblings=[4.1, 3.8]) == (3.8, "mixed up with another record's value")


def test_corrupted_numbers_stay_inside_their_range() -> None:
    from agentgym.noise.calls import _perturb

    rng = np.random.default_rng(7)
    for _ in range(5000):
        old = round(float(rng.uniform(3.0, 5.0)), 1)
        new, _ = _perturb(old, rng, bounds=(3.0, 5.0))  # a family's stated range: ratings 3.0-5.0
        assert 3.0 <= new <= 5.0 and new != old and isinstance(new, float)
        share = round(float(rng.uniform(0, 100)), 1)
        new, _ = _perturb(share, rng, bounds=(0.0, 100.0))
        assert 0.0 <= new <= 100.0 and new != share
        count = int(rng.integers(0, 60))
        new, _ = _perturb(count, rng)
        assert new >= 0 and new != count and isinstance(new, int)


@pytest.mark.parametrize("env_id", LIVE_IDS)
def test_corrupted_values_are_ones_the_data_could_hold(env_id: str) -> None:
    """Over many read results: a corrupted leaf with records beside it takes a value one of them
    holds; a share stays a share, a count or amount stays non-negative, a date stays in its month,
    and no value changes type."""
    env = gym.make(env_id, noise="corruption=1")
    seen = 0
    for seed in range(600):  # the prober replays its calls, and a call is corrupted once an episode
        if seen >= 100:
            break
        env.reset(seed=seed)
        prober = ReadProber(env, seed)
        info: dict = {}
        for _ in range(10):
            *_, info = env.step(prober.act(info))
            for e in events(info, "corruption"):
                old, new, path = e["detail"]["from"], e["detail"]["to"], e["detail"]["path"]
                seen += 1
                assert type(old) is type(new) and old != new, e
                if e["detail"]["how"].startswith("mixed up"):
                    continue
                if isinstance(old, (int, float)) and not isinstance(old, bool):
                    assert new >= 0 or old < 0, e
                    if path.endswith("_pct"):
                        assert 0 <= new <= 100, e
                elif isinstance(old, str) and old[:4].isdigit() and len(old) == 10:
                    assert new[:7] == old[:7], e
            if info.get("episode_summary"):
                break
    assert seen >= 100


@pytest.mark.parametrize("env_id", LIVE_IDS)
def test_a_call_is_corrupted_once_an_episode_so_a_re_read_settles_it(env_id: str) -> None:
    """At rate 1, a read repeated with equal arguments comes back wrong the first time and true
    every time after (a flipped availability or a mixed-up price never repeats), while another
    call is still corrupted; a new episode starts afresh."""
    env, clean = gym.make(env_id, noise="corruption=1"), gym.make(env_id)
    checked = 0
    for seed in range(40):
        if checked >= 3:
            break
        for _ in range(2):  # the same episode twice: the second starts afresh
            env.reset(seed=seed)
            clean.reset(seed=seed)
            prober = ReadProber(env, seed)
            info: dict = {}
            for _ in range(12):
                action = prober.act(info)
                *_, info = env.step(action)
                *_, clean_info = clean.step(action)
                (got,), (want,) = tool_contents(info)[:1] or [("", "")], tool_contents(clean_info)[:1] or [("", "")]
                if got != want:
                    # The same call again, twice: both true.
                    again = [env.step(action)[4] for _ in range(2)]
                    truth = [clean.step(action)[4] for _ in range(2)]
                    assert [tool_contents(i) for i in again] == [tool_contents(i) for i in truth]
                    assert not any(events(i, "corruption") for i in again)
                    checked += 1
                    break
                if info.get("episode_summary"):
                    break
    assert checked >= 3


def test_write_results_are_never_corrupted() -> None:
    env = gym.make(DIALOG, noise="corruption=1")
    env.reset(seed=2)
    gold = env.unwrapped.task.gold
    *_, info = env.step(call_text("book", item_id=gold.items[0], day=gold.day, slot=gold.slot))
    assert not events(info, "corruption")
    *_, info = env.step("It's booked.")  # the user waits to hear it
    assert info["episode_summary"]["success"]


# ------------------------------------------------------------------------------ latency
def test_latency_charges_simulated_time_and_ends_an_episode_over_budget() -> None:
    env = gym.make(DIALOG, noise="latency=60000")
    env.reset(seed=4)
    elapsed = []
    for _ in range(30):
        _, _, term, trunc, info = env.step(call_text("search"))
        elapsed.append(info["elapsed_ms"])
        if term or trunc:
            break
    assert trunc and not term and info["episode_summary"]["outcome"] == "time_budget"
    assert elapsed == sorted(elapsed) and elapsed[-1] > env.unwrapped.task.time_budget_ms
    (event,) = info["episode_summary"]["noise"]  # only the charge that passed the budget is a fault
    assert event["kind"] == "latency" and event["detail"]["recoverable"] is False
    assert event["detail"]["elapsed_ms"] == elapsed[-1]


def test_latency_never_sleeps() -> None:
    import time

    env = gym.make(DIALOG, noise="latency=100000")
    env.reset(seed=4)
    t = time.perf_counter()
    env.step(call_text("search"))
    assert time.perf_counter() - t < 0.5


# ------------------------------------------------------------------------------ distractors
@pytest.mark.parametrize("env_id", LIVE_IDS)
def test_distractors_look_like_real_tools_and_do_not_help(env_id: str) -> None:
    env = gym.make(env_id, noise="distractors=4")
    _, info = env.reset(seed=1)
    base = env.unwrapped
    real = {t["function"]["name"] for t in base.toolkit.schemas()}
    names = [t["function"]["name"] for t in info["tools"]]
    decoys = [n for n in names if n not in real]
    (event,) = events(info, "distractors")
    assert len(decoys) == 4 and event["detail"]["added"] == decoys and event["target"] == "tools"
    for decoy in decoys:
        clone_of = max((r for r in real if r in decoy), key=len)  # the name is derived from a real one
        schema = next(t["function"] for t in info["tools"] if t["function"]["name"] == decoy)
        assert schema["parameters"] == base.toolkit.spec(clone_of).parameters  # derived schema
        assert schema["description"].startswith(base.toolkit.spec(clone_of).description)
    # Call each decoy with the arguments its real twin would take: it runs, is flagged, does nothing.
    world = pickle.dumps(base.task.world)
    for decoy in decoys:
        spec = layer(env, Distractors).extra_tools[decoy].spec
        args = {k: v["enum"][0] if "enum" in v else None for k, v in spec.parameters["properties"].items()
                if k in spec.parameters.get("required", ())}
        args = {k: (v if v is not None else _value_for(spec.parameters["properties"][k])) for k, v in args.items()}
        _, _, term, trunc, info = env.step(tool_call(decoy, args))
        (record,) = info["calls"]
        assert record["distractor"] is True and record["valid"], record
        assert events(info, "distractors")[0]["target"] == decoy
        if term or trunc:
            break
    assert pickle.dumps(base.task.world) == world


def _value_for(schema: dict):
    t = schema.get("type")
    t = [x for x in t if x != "null"][0] if isinstance(t, list) else t
    return {"string": "x1", "integer": 1, "number": 1.0, "boolean": True, "array": []}[t]


def test_distractors_vary_per_episode_and_replay_per_seed() -> None:
    env = gym.make(DIALOG, noise="distractors=2")
    sets = [tuple(t["function"]["name"] for t in env.reset(seed=s)[1]["tools"]) for s in range(8)]
    assert len(set(sets)) > 1
    assert sets[3] == tuple(t["function"]["name"] for t in env.reset(seed=3)[1]["tools"])


def test_write_decoys_record_nothing() -> None:
    env = gym.make(DIALOG, noise="distractors=10")
    _, info = env.reset(seed=0)
    gold = env.unwrapped.task.gold
    write_decoys = [n for n in layer(env, Distractors).extra_tools if n.startswith(("book_", "quick_book"))]
    assert write_decoys
    *_, info = env.step(call_text(write_decoys[0], item_id=gold.items[0], day=gold.day, slot=gold.slot))
    assert json.loads(tool_contents(info)[0][1])["status"] == "pending"
    assert env.unwrapped.task.world.active_bookings() == []


# ------------------------------------------------------------------------------ action constraint
def test_action_constraint_refuses_clearly_logs_and_counts_against_the_agent() -> None:
    env = ActionConstraint(gym.make(DIALOG, noise="tool_failure=1"), allowed_tools=["search", "book", "get_details"],
                           forbid=[r'"day": "sunday"'])
    env.reset(seed=2)
    *_, info = env.step(call_text("cancel_booking", booking_id="B1"))
    (record,) = info["calls"]
    assert record["error"] == "BLOCKED" and record["injected"] is False and info["errors"] == ["BLOCKED"]
    ((_, content),) = tool_contents(info)
    assert content.startswith("[error BLOCKED] cancel_booking is not allowed") and "search" in content
    (event,) = info["noise"]  # refused before the (always failing) tool failure hook
    assert event["kind"] == "action_constraint" and event["detail"]["reason"] == "not_allowed"

    *_, info = env.step(call_text("book", item_id="x", day="sunday", slot="evening"))
    assert info["calls"][0]["error"] == "BLOCKED" and events(info, "action_constraint")[0]["detail"]["reason"] == "forbidden"
    *_, info = env.step(call_text("book", item_id="x", day="monday", slot="evening"))
    assert info["calls"][0]["injected"]  # allowed: it reaches the tool failure hook


# ------------------------------------------------------------------------------ typos
@pytest.mark.parametrize("env_id", LIVE_IDS)
def test_typos_change_what_the_agent_reads_never_the_env(env_id: str) -> None:
    env = gym.make(env_id, noise="typos=1", render_mode="ansi")
    clean = gym.make(env_id, render_mode="ansi")
    obs, info = env.reset(seed=9)
    clean_obs, clean_info = clean.reset(seed=9)
    assert obs != clean_obs and obs == render_messages(info["messages"])
    assert events(info, "typos") and events(info, "typos")[0]["step"] == 0
    typos_logged = 0
    for i in range(6):
        obs, _, term, trunc, info = env.step("What else should I know?")
        clean_obs, *_, clean_info = clean.step("What else should I know?")
        typos_logged += len(events(info, "typos"))
        answer = answer_messages(info["messages"])
        assert obs == render_messages(answer)
        # A typo names the message it changed by its place among those the observation renders.
        assert all(answer[e["detail"]["message"]]["role"] == "user" for e in events(info, "typos"))
        if obs != clean_obs:
            assert events(info, "typos")
        if term or trunc:
            break
    assert typos_logged
    # The env's own transcript keeps the clean text: the user said what it said.
    assert env.unwrapped.render() == clean.unwrapped.render()


def test_typos_appear_in_the_episode_log_in_step_order() -> None:
    env = gym.make(DIALOG, noise="typos=0.6,tool_failure=0.5", max_turns=8)
    env.reset(seed=1)
    per_step = []
    for i in range(8):
        _, _, term, trunc, info = env.step(call_text("search") if i % 2 else "What else should I know?")
        per_step += info["noise"]
        if term or trunc:
            break
    log = info["episode_summary"]["noise"]
    assert {e["kind"] for e in log} == {"typos", "tool_failure"}
    steps = [e["step"] for e in log]
    assert steps == sorted(steps)
    assert sorted(map(json.dumps, log)) == sorted(map(json.dumps, per_step))


def test_typos_leave_env_error_reports_alone() -> None:
    env = gym.make(DIALOG, noise="typos=1")
    env.reset(seed=1)
    *_, info = env.step('{"name": "search", "arguments": ')
    assert info["messages"][1]["content"].startswith("[error ") and not events(info, "typos")


# ------------------------------------------------------------------------------ family side
def test_ambiguity_blurs_the_opening_and_the_user_answers_when_asked() -> None:
    env, clean = gym.make(DIALOG, noise="ambiguity=1"), gym.make(DIALOG)
    blurred = 0
    for seed in range(20):
        _, info = env.reset(seed=seed)
        _, clean_info = clean.reset(seed=seed)
        evs = events(info, "ambiguity")
        assert bool(evs) == (info["messages"][1] != clean_info["messages"][1])
        if evs:
            blurred += 1
            assert evs[0]["detail"]["recoverable"] is True
            assert evs[0]["target"] in [c.id for c in env.unwrapped.task.gold.constraints]
    assert blurred >= 10


def test_goal_shift_changes_the_gold_when_announced() -> None:
    env = gym.make(DIALOG, noise="goal_shift=1")
    shifted = 0
    for seed in range(20):
        env.reset(seed=seed)
        before = env.unwrapped.task.gold
        for action, (_, _, term, trunc, info) in play(env, seed, lambda i, _: "OK.", 8):
            evs = events(info, "goal_shift")
            if evs:
                shifted += 1
                after = env.unwrapped.task.gold
                assert (after.day, after.slot) == tuple(evs[0]["detail"]["to"]) != (before.day, before.slot)
                assert "recoverable" in evs[0]["detail"]
                break
    assert shifted >= 10


@pytest.mark.parametrize("env_id", LIVE_IDS)
def test_goal_shift_is_announced_logged_and_moves_the_gold_in_every_family(env_id: str) -> None:
    env = gym.make(env_id, noise="goal_shift=1")
    shifted = 0
    for seed in range(30):
        env.reset(seed=seed)
        before = json.dumps(env.unwrapped.task.gold.to_dict(), sort_keys=True, default=str)
        for _, (_, _, _, _, info) in play(env, seed, lambda i, _: "OK.", 8):
            evs = events(info, "goal_shift")
            if not evs:
                continue
            shifted += 1
            (event,) = evs
            gold = env.unwrapped.task.gold.to_dict()
            assert json.dumps(gold, sort_keys=True, default=str) != before
            assert set(event["detail"]) >= {"from", "to", "recoverable"} and event["detail"]["from"] != event["detail"]["to"]
            # The target is a constraint or detail the user now states, with its new value.
            assert event["target"] in env.unwrapped.user.known_constraints()
            said = json.dumps(info["messages"]).lower()
            to = event["detail"]["to"]
            assert all(str(v).lower() in said for v in (to if isinstance(to, list) else [to])) or to in (True, False,
                                                                                                      "keep")
            subs = gold.get("segments")
            superseded = [c for g in ([x["gold"] for x in subs] if subs else [gold])
                          for c in g.get("superseded_calls", ())]
            assert superseded, "the old plan is kept for the metrics"
            break
    assert shifted >= 10, shifted


@pytest.mark.parametrize("domain", ["finance", "calendar", "orders", "ops"])
def test_a_tooluse_goal_shift_changes_one_parameter_and_the_solver_gives_the_new_gold(domain: str) -> None:
    from agentgym.envs.tooluse.domains import load_domains

    env = gym.make("AgentRL/ToolUse-v0", noise="goal_shift=1", split="test" if domain == "ops" else "train")
    spec = load_domains()[domain]
    shifted = 0
    for seed in range(60):
        env.reset(seed=seed, options={"domain": domain})
        task = env.unwrapped.task
        options = {(s.detail, json.dumps(s.new)): s for s in spec.shifts(task.world, task.goal.job)}
        old_plan = [s.to_dict() for s in task.gold.plan]
        for _ in range(6):
            *_, info = env.step("OK.")
            evs = events(info, "goal_shift")
            if evs:
                (event,) = evs
                planned = options[(event["target"], json.dumps(event["detail"]["to"]))]
                gold = env.unwrapped.task.gold
                assert gold.effects == planned.gold.effects and gold.plan == planned.gold.plan
                assert list(gold.superseded)[:len(old_plan)] == old_plan
                assert planned.announce in info["messages"][-1]["content"]
                shifted += 1
                break
    assert shifted >= 15, shifted


def test_wrappers_compose_in_the_canonical_order_whatever_the_spelling() -> None:
    a = gym.make(DIALOG, noise="typos=0.2,latency=10,tool_failure=0.1")
    b = gym.make(DIALOG, noise={"tool_failure": 0.1, "typos": 0.2, "latency": 10})
    assert str(a) == str(b)
    assert [w.name for w in a.spec.additional_wrappers] == [KINDS[k].wrapper.__name__
                                                            for k in ("latency", "tool_failure", "typos")]


def test_each_kind_is_applied_once() -> None:
    from agentgym.noise import apply_noise

    env = gym.make(DIALOG, noise="medium")
    with pytest.raises(ValueError, match="already has a Typos wrapper"):
        apply_noise(env, "typos=0.2")
