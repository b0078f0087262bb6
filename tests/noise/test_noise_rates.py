"""Each kind fires at its configured rate (binomial 99% interval over >= 2,000 opportunities), and
every firing is in ``info["noise"]``: checked against evidence the log does not provide (the call
record's ``injected`` flag, or a twin env without noise stepped with the same actions)."""

from __future__ import annotations

import json
import math
import re

import gymnasium as gym
import numpy as np
import pytest
from noise_helpers import (
    LIVE_IDS,
    ReadProber,
    binomial_interval,
    chatter,
    events,
    gold_view,
    require_support,
    supports,
    tool_contents,
    user_texts,
)

from agentgym.noise import FAILURE_MODES
from agentgym.noise.calls import perturbable_leaves

RATE = 0.3
OPPORTUNITIES = 2000
SHIFT_HORIZON = 6
_WORD = re.compile(r"[A-Za-z]{4,}")
FIGURES: list[str] = []


def _check_rate(env_id: str, kind: str, fired: int, n: int) -> None:
    lo, hi = binomial_interval(n, RATE)
    FIGURES.append(f"{env_id} {kind}: {fired}/{n} = {fired / n:.3f} (99% interval {lo}-{hi})")
    print(f"\n{FIGURES[-1]}")
    assert n >= OPPORTUNITIES
    assert lo <= fired <= hi, f"{kind} fired {fired} times in {n} opportunities at rate {RATE}: outside [{lo}, {hi}]"


@pytest.mark.parametrize("env_id", LIVE_IDS)
def test_tool_failure_rate(env_id: str) -> None:
    env = gym.make(env_id, noise=f"tool_failure={RATE}")
    n = fired = 0
    seed = 0
    while n < OPPORTUNITIES:
        _, info = env.reset(seed=seed)
        prober = ReadProber(env, seed)
        done = False
        while not done:
            _, _, term, trunc, info = env.step(prober.act(info))
            done = term or trunc
            valid = [r for r in info["calls"] if r["valid"]]
            injected = [r for r in valid if r["injected"]]
            evs = events(info, "tool_failure")
            # Every injected failure, and nothing else, is in the log, with its tool.
            assert sorted(r["name"] for r in injected) == sorted(e["target"] for e in evs)
            for (name, content), r in zip(tool_contents(info), info["calls"]):
                if r["injected"]:
                    assert content in {f"[error TOOL_ERROR] {t.format(tool=name)}" for t in FAILURE_MODES.values()}
            n += len(valid)
            fired += len(injected)
        seed += 1
    _check_rate(env_id, "tool_failure", fired, n)


@pytest.mark.parametrize("env_id", LIVE_IDS)
def test_corruption_rate(env_id: str) -> None:
    env, clean = gym.make(env_id, noise=f"corruption={RATE}"), gym.make(env_id)
    n = fired = 0
    seed = 0
    while n < OPPORTUNITIES:
        _, info = env.reset(seed=seed)
        clean.reset(seed=seed)
        prober = ReadProber(env, seed)
        done = False
        corrupted: set[str] = set()  # a call corrupted once answers truly from then on
        while not done:
            action = prober.act(info)
            _, _, term, trunc, info = env.step(action)
            *_, clean_info = clean.step(action)
            done = term or trunc
            evs = events(info, "corruption")
            changed = []
            for (name, got), (_, want), r in zip(tool_contents(info), tool_contents(clean_info), clean_info["calls"]):
                key = json.dumps([name, r.get("arguments")], sort_keys=True, default=str)
                if r["valid"] and r["error"] is None and r["kind"] == "read" and key not in corrupted:
                    if any(True for _ in perturbable_leaves(json.loads(want), r.get("arguments"))):
                        n += 1
                if got != want:
                    changed.append(name)
                    assert key not in corrupted, key
                    corrupted.add(key)
            # A result differs from the clean twin's exactly when a corruption is logged for it.
            assert sorted(changed) == sorted(e["target"] for e in evs)
            fired += len(evs)
        seed += 1
    _check_rate(env_id, "corruption", fired, n)


@pytest.mark.parametrize("env_id", LIVE_IDS)
def test_typos_rate(env_id: str) -> None:
    """Typos fire at the rate on the messages where they can matter: a user message the agent
    still has a turn to act on (never in a step that ends the episode) that carries something
    (the family's user perturbs it; a stock reply comes back unchanged). Elsewhere never."""
    env, clean = gym.make(env_id, noise=f"typos={RATE}"), gym.make(env_id)
    probe = np.random.default_rng(0)
    n = fired = 0
    seed = 0

    def compare(info: dict, clean_info: dict, ended: bool) -> None:
        nonlocal n, fired
        got, want = user_texts(info), user_texts(clean_info)
        assert len(got) == len(want)
        user = clean.unwrapped.user
        carries = [bool(_WORD.search(t)) and any(user.perturb_text(t, probe)[0] != t for _ in range(8)) for t in want]
        changed = [g != w for g, w in zip(got, want)]
        assert changed.count(True) == len(events(info, "typos"))  # each changed message, and only those, logged
        assert not any(c and not k for c, k in zip(changed, carries)), "a typo on a message with nothing to read"
        if ended:
            assert not any(changed), "a typo after the outcome was decided"
            return
        n += sum(carries)
        fired += changed.count(True)

    while n < OPPORTUNITIES:
        _, info = env.reset(seed=seed)
        _, clean_info = clean.reset(seed=seed)
        compare(info, clean_info, False)
        for i in range(40):
            _, _, term, trunc, info = env.step(chatter(i))
            *_, clean_info = clean.step(chatter(i))
            compare(info, clean_info, term or trunc)
            if term or trunc:
                break
        seed += 1
    _check_rate(env_id, "typos", fired, n)


@pytest.mark.parametrize("env_id", LIVE_IDS)
def test_ambiguity_and_goal_shift_rates(env_id: str) -> None:
    """The two kinds the family carries out, measured in the same episodes (each draws from its
    own stream, so one never moves the other; resets are what these tests spend their time on).

    `always` (every kind at rate 1) shows which tasks can be blurred, and how, and which get a
    goal shift, and at which step it is announced; at RATE, the same stream blurs the same detail
    and announces at the same step. Goal-shift opportunities are the tasks whose shift comes
    within SHIFT_HORIZON steps of a message-only dialog (a cross-task session shifts only in its
    dialog segments).
    """
    kinds = [k for k in ("ambiguity", "goal_shift") if supports(env_id, k)]
    if not kinds:
        require_support(env_id, "ambiguity")
    env = gym.make(env_id, noise={k: RATE for k in kinds})
    always = gym.make(env_id, noise={k: 1 for k in kinds})
    n = dict.fromkeys(kinds, 0)
    fired = dict.fromkeys(kinds, 0)
    seed = 0
    while min(n.values()) < OPPORTUNITIES and seed < 5 * OPPORTUNITIES:
        _, always_info = always.reset(seed=seed)
        blurrable = bool(events(always_info, "ambiguity"))
        start = gold_view(always)
        steps = 0
        announced = False
        while "goal_shift" in kinds and not announced and steps < SHIFT_HORIZON:
            _, _, term, trunc, info = always.step(chatter(steps))
            steps += 1
            announced = bool(events(info, "goal_shift"))
            assert announced == (gold_view(always) != start)  # the gold moves when it is announced
            if term or trunc:
                break
        # Every 10th task with neither is checked to stay clear; the rest are skipped.
        if not (blurrable or announced or seed % 10 == 0):
            seed += 1
            continue
        _, info = env.reset(seed=seed)
        if "ambiguity" in kinds:
            logged = bool(events(info, "ambiguity"))
            assert blurrable or not logged
            if blurrable:
                blurred = user_texts(info) == user_texts(always_info)
                assert blurred == logged  # the opening is blurred exactly when it is logged
                n["ambiguity"] += 1
                fired["ambiguity"] += blurred
        if "goal_shift" in kinds:
            shifts = 0
            for i in range(steps):
                *_, info = env.step(chatter(i))
                shifts += len(events(info, "goal_shift"))
            assert shifts <= int(announced)
            assert bool(shifts) == (gold_view(env) != start)
            n["goal_shift"] += announced
            fired["goal_shift"] += shifts
        seed += 1
    for kind in kinds:
        _check_rate(env_id, kind, fired[kind], n[kind])
    for kind in ("ambiguity", "goal_shift"):
        if kind not in kinds:
            require_support(env_id, kind)


@pytest.mark.parametrize("env_id", LIVE_IDS)
def test_latency_mean_and_charges(env_id: str) -> None:
    """Latency has no rate: each valid call is charged an exponential time with the given mean."""
    mean = 400.0
    env = gym.make(env_id, noise=f"latency={mean}")
    n, total = 0, 0.0
    seed = 0
    while n < OPPORTUNITIES:
        _, info = env.reset(seed=seed)
        prober = ReadProber(env, seed)
        before = 0.0
        done = False
        while not done:
            _, _, term, trunc, info = env.step(prober.act(info))
            done = term or trunc
            calls = sum(r["valid"] for r in info["calls"])
            elapsed = info.get("elapsed_ms", 0.0)
            assert (elapsed > before) == (calls > 0)  # charged for calls, and only for calls
            n += calls
            before = elapsed
        total += before
        assert info["episode_summary"]["elapsed_ms"] == before
        seed += 1
    half_width = 2.576 * mean / math.sqrt(n)  # CLT on the sample mean; an exponential's sd is its mean
    FIGURES.append(f"{env_id} latency: mean {total / n:.1f} ms over {n} calls (99% interval "
                   f"{mean - half_width:.1f}-{mean + half_width:.1f})")
    print(f"\n{FIGURES[-1]}")
    assert abs(total / n - mean) <= half_width
