"""RELIABILITY L1 and L2: forged numbers and tampered episodes are rejected, honest runs are not.

Every variant is derived in memory from real runs of the built-in agents (`lb_support`), and
each rejection must name the episode (and step and field) where the forgery is.
"""

from __future__ import annotations

import functools
import hashlib
import random
from typing import Any, Callable

import lb_support as S
import pytest

from agentgym.leaderboard.record_schema import validator
from agentgym.leaderboard.submission import Rejected, SubmissionError, decode_submission
from agentgym.leaderboard.verify import Verified, replay_episode, verify_submission

Records = list[dict[str, Any]]
# A mutation: (records, rng) -> (manifest overrides, expectations about the rejection).
Mutation = Callable[[Records, random.Random], tuple[dict[str, Any], dict[str, Any]]]

N_CASES = 50


def _verify(recs: Records, **manifest: Any) -> Verified:
    return verify_submission(decode_submission(S.body_for(recs, **manifest)), S.REGISTRY, workers=1)


def _runs() -> list[tuple[str, tuple[tuple[str, Any], ...]]]:
    return list(S.AGENTS)


@functools.lru_cache(maxsize=None)
def _honest_values(agent: str, kwargs: tuple[tuple[str, Any], ...]) -> dict[str, float | None]:
    """The point values of an honest run's summary (what an honest manifest claims)."""
    return {k: v["value"] for k, v in _verify(S.records(agent, kwargs)).summary.items()
            if isinstance(v, dict) and "value" in v}


class NotApplicable(Exception):
    """This run has no episode the mutation can apply to; try the next run."""


def _pick(recs: Records, rng: random.Random, ok: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    eligible = [r for r in recs if ok(r)]
    if not eligible:
        raise NotApplicable
    return rng.choice(eligible)


def _ended(r: dict[str, Any]) -> bool:
    return bool(r["metrics"])


def _failed(r: dict[str, Any]) -> bool:
    return not r["metrics"].get("success", False)


# ============================================================================ L1: forged numbers
def _forge_metric(name: str, ok: Callable[[dict[str, Any]], bool], edit: Callable[[dict[str, Any]], None]) -> Mutation:
    def mutate(recs: Records, rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
        r = _pick(recs, rng, ok)
        edit(r["metrics"])
        if not validator().is_valid(r):  # e.g. a success written into an agent error's empty metrics
            return {}, {"code": "bad_record", "episode": r["key"], "field": "metrics"}
        return {}, {"code": "replay_mismatch", "episode": r["key"], "step": len(r["steps"]), "field": "metrics."}
    mutate.__name__ = f"forge_{name}"
    return mutate


def _flip_first_call(m: dict[str, Any], key: str, new: Callable[[Any], Any]) -> None:
    m["calls"][0][key] = new(m["calls"][0][key])


def _forge_claim(name: str, delta: float) -> Mutation:
    def mutate(recs: Records, rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
        agent = recs[0]["agent"]
        run = next(r for r in S.AGENTS if S.records(*r)[0]["agent"] == agent)
        honest = _honest_values(*run).get(name)
        if honest is None:
            raise NotApplicable
        return {"claimed": {name: honest + delta}}, {"code": "claim_mismatch", "field": f"claimed.{name}"}
    mutate.__name__ = f"claim_{name}"
    return mutate


def _set(key: str, new: Callable[[Any], Any]) -> Callable[[dict[str, Any]], None]:
    """An edit of a metrics dict: ``m[key] = new(m[key])``."""
    return lambda m: m.__setitem__(key, new(m.get(key)))


def _has(key: str, test: Callable[[Any], bool] = bool) -> Callable[[dict[str, Any]], bool]:
    """Episodes that ended and whose ``metrics[key]`` passes `test`."""
    return lambda r: _ended(r) and test(r["metrics"][key])


FORGERIES: list[Mutation] = [
    _forge_metric("success", _failed, _set("success", lambda v: True)),
    _forge_metric("score", _has("score", lambda v: v < 1), _set("score", lambda v: 1.0)),
    _forge_metric("turns", _has("turns", lambda v: v > 1), _set("turns", lambda v: v - 1)),
    _forge_metric("tool_calls", _ended, _set("tool_calls", lambda v: v + 1)),
    _forge_metric("call_valid", _has("calls"), lambda m: _flip_first_call(m, "valid", lambda v: not v)),
    _forge_metric("contradicts", _has("calls"),
                  lambda m: _flip_first_call(m, "contradicts", lambda v: [] if v else ["price"])),
    _forge_metric("errors", _ended, _set("errors", lambda v: {} if v else {"PARSE_ERROR": 1})),
    _forge_metric("noise_log", _has("noise"), _set("noise", lambda v: [])),
    _forge_metric("outcome", _ended, _set("outcome", lambda v: "truncated" if v != "truncated" else "committed")),
    _forge_metric("gold", _ended, _set("gold", lambda v: {"calls": []})),
    _forge_claim("success", 0.125),
    _forge_claim("score", -0.05),
    _forge_claim("goal_consistency", 0.01),
]


# ============================================================================ L2: tampered episodes
def _step_mutation(name: str, field: str, ok: Callable[[dict[str, Any]], bool],
                   edit: Callable[[dict[str, Any]], None]) -> Mutation:
    def mutate(recs: Records, rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
        r = _pick(recs, rng, lambda r: any(ok(s) for s in r["steps"]))
        j = rng.choice([i for i, s in enumerate(r["steps"]) if ok(s)])
        edit(r["steps"][j])
        return {}, {"code": "replay_mismatch", "episode": r["key"], "step": j + 1, "field": field}
    mutate.__name__ = name
    return mutate


def edited_action(recs: Records, rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    r = _pick(recs, rng, lambda r: len(r["steps"]) >= 1 and r["agent_error"] is None)
    j = rng.randrange(len(r["steps"]))
    r["actions"][j] = '{"name": "lb_no_such_tool", "arguments": {}}'
    return {}, {"code": "replay_mismatch", "episode": r["key"], "step": j + 1}


def injected_reward(recs: Records, rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    r = _pick(recs, rng, lambda r: _ended(r) and _failed(r))
    r["steps"][-1]["reward"] = 1.0
    r["metrics"].update(success=True, score=1.0)  # a consistent forgery: the step is what gives it away
    return {}, {"code": "replay_mismatch", "episode": r["key"], "step": len(r["steps"]), "field": "reward"}


def reordered_steps(recs: Records, rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    r = _pick(recs, rng, lambda r: len(r["steps"]) >= 2)
    j = rng.randrange(len(r["steps"]) - 1)
    r["steps"][j], r["steps"][j + 1] = r["steps"][j + 1], r["steps"][j]
    return {}, {"code": "replay_mismatch", "episode": r["key"], "step": j + 1}


def reordered_turns(recs: Records, rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    # Actions and steps swapped together and renumbered: a consistent-looking but different history.
    r = _pick(recs, rng, lambda r: len(r["steps"]) >= 2 and r["agent_error"] is None
              and len({a if isinstance(a, str) else str(a) for a in r["actions"][:2]}) == 2)
    a, s = r["actions"], r["steps"]
    a[0], a[1] = a[1], a[0]
    s[0], s[1] = s[1], s[0]
    s[0]["turn"], s[1]["turn"] = 1, 2
    return {}, {"code": "replay_mismatch", "episode": r["key"]}


def swapped_seed_fields(recs: Records, rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    a, b = rng.sample([r for r in recs if r["trial"] == 0], 2)
    a["seed"], b["seed"] = b["seed"], a["seed"]
    first = min((a, b), key=lambda r: [x.key for x in S.SUITE.jobs()].index(r["key"]))
    return {}, {"code": "inconsistent_record", "episode": first["key"], "field": "seed"}


#: What an episode's record says happened (as opposed to which episode it is).
_CONTENT = ("task", "actions", "steps", "metrics", "trajectory_sha256", "agent_error")


def swapped_episodes(recs: Records, rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    # Two episodes of different seeds exchange everything but their identity (key, seed, trial).
    a, b = rng.sample(recs, 2)
    while a["seed"] == b["seed"]:
        a, b = rng.sample(recs, 2)
    ca, cb = {k: a[k] for k in _CONTENT}, {k: b[k] for k in _CONTENT}
    a.update(cb)
    b.update(ca)
    return {}, {"code": "replay_mismatch", "step": 0}


def success_copied_over_failure(recs: Records, rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    bad = _pick(recs, rng, _failed)
    good = _pick(recs, rng, lambda r: not _failed(r) and r["seed"] != bad["seed"] and r["env"] == bad["env"])
    for k in _CONTENT:
        bad[k] = good[k]
    return {}, {"code": "replay_mismatch", "episode": bad["key"], "step": 0}


def dropped_failures(recs: Records, rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    failing = [r for r in recs if _failed(r)]
    if not failing:
        raise NotApplicable
    drop = failing if rng.random() < 0.5 else [rng.choice(failing)]
    keys = {r["key"] for r in drop}
    recs[:] = [r for r in recs if r["key"] not in keys]
    first = next(j.key for j in S.SUITE.jobs() if j.key in keys)
    return {}, {"code": "incomplete", "episode": first}


def truncated_episode(recs: Records, rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    r = _pick(recs, rng, lambda r: _ended(r) and len(r["steps"]) >= 2 and r["agent_error"] is None)
    r["steps"].pop()
    r["actions"].pop()
    return {}, {"code": "replay_mismatch", "episode": r["key"], "step": len(r["steps"]), "field": "steps"}


def step_after_end(recs: Records, rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    r = _pick(recs, rng, _ended)
    r["actions"].append("one more thing")
    r["steps"].append({**r["steps"][-1], "turn": len(r["steps"]) + 1})
    return {}, {"code": "replay_mismatch", "episode": r["key"], "step": len(r["steps"]), "field": "steps"}


def forged_digest(recs: Records, rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    r = rng.choice(recs)
    r["trajectory_sha256"] = hashlib.sha256(b"forged").hexdigest()
    return {}, {"code": "replay_mismatch", "episode": r["key"], "step": 0, "field": "trajectory_sha256"}


def hidden_agent_error(recs: Records, rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    r = _pick(recs, rng, lambda r: r["agent_error"] is not None)
    r["agent_error"] = None
    return {}, {"code": "replay_mismatch", "episode": r["key"], "field": "steps"}


def edited_task(recs: Records, rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    r = rng.choice(recs)
    r["task"]["difficulty"] = "easy" if r["task"].get("difficulty") != "easy" else "hard"
    return {}, {"code": "replay_mismatch", "episode": r["key"], "step": 0, "field": "task"}


def edited_env_spec(recs: Records, rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    r = rng.choice(recs)
    r["env"]["spec"]["kwargs"]["max_turns"] = 99
    return {}, {"code": "replay_mismatch", "episode": r["key"], "step": 0, "field": "env.spec"}


TAMPERINGS: list[Mutation] = [
    edited_action,
    _step_mutation("edited_observation", "obs_sha256", lambda s: True,
                   lambda s: s.__setitem__("obs_sha256", hashlib.sha256(b"edited").hexdigest())),
    injected_reward,
    reordered_steps,
    swapped_seed_fields,
    swapped_episodes,
    dropped_failures,
    _step_mutation("edited_errors", "errors", lambda s: True,
                   lambda s: s.__setitem__("errors", [] if s["errors"] else ["PARSE_ERROR"])),
    _step_mutation("edited_calls", "calls", lambda s: bool(s["calls"]),
                   lambda s: s["calls"][0].__setitem__("valid", not s["calls"][0]["valid"])),
    _step_mutation("edited_noise", "noise", lambda s: bool(s["noise"]), lambda s: s.__setitem__("noise", [])),
    success_copied_over_failure,
    truncated_episode,
    step_after_end,
    forged_digest,
    reordered_turns,
    hidden_agent_error,
    edited_task,
    edited_env_spec,
]


def _cases(mutations: list[Mutation]) -> list[tuple[str, Records, dict[str, Any], dict[str, Any]]]:
    """N_CASES variants: mutation i % len over the runs, each on the first run it applies to."""
    runs = _runs()
    cases = []
    for i in range(N_CASES):
        mutate = mutations[i % len(mutations)]
        for attempt in range(len(runs)):
            agent, kwargs = runs[(i + attempt) % len(runs)]
            recs = S.records(agent, kwargs)
            try:
                manifest, expect = mutate(recs, random.Random(i))
            except NotApplicable:
                continue
            cases.append((f"{mutate.__name__}[{agent}]", recs, manifest, expect))
            break
        else:
            raise AssertionError(f"{mutate.__name__} applies to none of the test runs")
    return cases


def _check_rejections(cases: list[tuple[str, Records, dict[str, Any], dict[str, Any]]]) -> dict[str, str]:
    """Verify each case; return {case: problem} for any not rejected as expected."""
    problems: dict[str, str] = {}
    for i, (name, recs, manifest, expect) in enumerate(cases):
        label = f"{i:02d} {name}"
        try:
            _verify(recs, model=f"forger-{i}", **manifest)
        except SubmissionError as exc:
            for k, want in expect.items():
                got = {"code": exc.code, "episode": exc.episode, "step": exc.step, "field": exc.field}[k]
                matches = got is not None and str(got).startswith(want) if k == "field" else got == want
                if not matches:
                    problems[f"{label} {k}"] = f"{got!r}, expected {want!r} ({exc})"
            continue
        problems[label] = "accepted"
    return problems


def test_l1_forged_numbers_all_rejected() -> None:
    cases = _cases(FORGERIES)
    assert len(cases) == N_CASES
    problems = _check_rejections(cases)
    print(f"\nL1: {N_CASES - len(problems)} of {N_CASES} forged submissions rejected at the forged episode")
    assert not problems, problems


def test_l2_tampered_episodes_all_rejected() -> None:
    cases = _cases(TAMPERINGS)
    assert len(cases) == N_CASES
    kinds = {name.split("[")[0] for name, *_ in cases}
    assert {"edited_action", "edited_observation", "injected_reward", "reordered_steps", "swapped_seed_fields",
            "swapped_episodes", "dropped_failures"} <= kinds
    problems = _check_rejections(cases)
    print(f"\nL2: {N_CASES - len(problems)} of {N_CASES} tampered submissions rejected, naming episode and step")
    assert not problems, problems


def test_l1_l2_honest_submissions_never_rejected() -> None:
    runs = _runs()
    rejected = []
    names = ["", "模型 ✓ — ünïcödé", "<b>not bold</b> & 'quotes'", "agent (v2)"]
    descriptions = ["", "Line one.\nLine two.", "模型 ✓ — ünïcödé", "<b>not bold</b> & 'quotes'"]
    for i in range(N_CASES):
        agent, kwargs = runs[i % len(runs)]
        recs = S.records(agent, kwargs)
        rng = random.Random(1000 + i)
        if i % 3 == 0:
            rng.shuffle(recs)  # the order of records is not significant (a resumed or parallel run)
        claimed = {}
        if i % 2 == 0:
            claimed = {k: v for k, v in _honest_values(agent, kwargs).items()
                       if k in ("success", "score", "tool_f1", "goal_consistency")}
        try:
            v = _verify(recs, model=f"honest-{i}", agent=names[i % 4] or agent, description=descriptions[(i + 1) % 4],
                        claimed=claimed)
        except SubmissionError as exc:
            rejected.append(f"{i} {agent}: {exc}")
            continue
        assert v.summary["episodes"] == len(S.SUITE)
    print(f"\nL1/L2: {len(rejected)} of {N_CASES} honest submissions rejected")
    assert not rejected, rejected


def test_replayed_numbers_replace_claimed_ones() -> None:
    # An agent error is a failure: the flaky agent's crashed episodes replay up to their last step.
    recs = S.records("lb_support:FlakyAgent")
    crashed = [r for r in recs if r["agent_error"] is not None]
    assert crashed and all(r["metrics"] == {} for r in crashed)
    v = _verify(recs)
    ok = sum(bool(r["metrics"].get("success")) and r["agent_error"] is None for r in v.records)
    assert v.summary["success"]["value"] == pytest.approx(ok / len(S.SUITE))
    assert [r["key"] for r in v.records] == [j.key for j in S.SUITE.jobs()]
    assert v.reference is False and S.records("oracle")[0]["agent"]["privileged"] is True


def test_replay_episode_matches_every_honest_record() -> None:
    jobs = {j.key: j for j in S.SUITE.jobs()}
    for agent, kwargs in _runs():
        for rec in S.records(agent, kwargs):
            metrics, mismatch = replay_episode(jobs[rec["key"]], rec)
            assert mismatch is None, (agent, mismatch)
            assert metrics == rec["metrics"]


def test_rejection_message_names_episode_and_step() -> None:
    recs = S.records("heuristic")
    target = recs[5]
    target["steps"][0]["obs_sha256"] = "0" * 64
    with pytest.raises(Rejected) as info:
        _verify(recs)
    text = str(info.value)
    assert target["key"] in text and "step 1" in text and "obs_sha256" in text
    assert info.value.to_dict()["episode"] == target["key"]


def test_a_suite_this_server_cannot_make_is_its_fault_not_the_submitters() -> None:
    from agentgym.bench.suites import Suite
    from agentgym.leaderboard.submission import Unverifiable

    ghost = Suite(id="ghost-v0", description="an env this server lacks", envs=("AgentRL/Ghost-v0",), noise=("none",),
                  n_seeds=1, kwargs={"max_turns": 10})
    rec = S.records("heuristic")[0]
    job = ghost.jobs()[0]
    rec.update(key=job.key, suite=ghost.id, env={**rec["env"], "id": job.env_id, "noise": None})
    body = S.body_for([rec], suite=ghost.id)
    with pytest.raises(Unverifiable) as info:
        verify_submission(decode_submission(body), {ghost.id: ghost}, workers=1)
    assert info.value.status == 503 and "AgentRL/Ghost-v0" in str(info.value)


def test_process_pool_replay_agrees_and_names_the_first_episode() -> None:
    recs = S.records("random", (("seed", 0),))
    serial = verify_submission(decode_submission(S.body_for(recs)), S.REGISTRY, workers=1)
    pooled = verify_submission(decode_submission(S.body_for(recs)), S.REGISTRY, workers=2)
    assert pooled.summary == serial.summary and pooled.records == serial.records
    order = [j.key for j in S.SUITE.jobs()]
    in_order = sorted(recs, key=lambda r: order.index(r["key"]))
    early, late = in_order[3], in_order[-1]  # in different worker chunks
    late["steps"][0]["reward"] = 1.0
    early["steps"][1]["obs_sha256"] = "f" * 64
    with pytest.raises(Rejected) as info:
        verify_submission(decode_submission(S.body_for(recs)), S.REGISTRY, workers=2)
    assert (info.value.episode, info.value.step, info.value.field) == (early["key"], 2, "obs_sha256")


def test_schema_check_follows_the_committed_record_schema() -> None:
    # The verifier validates against agentgym/eval/record.schema.json itself, which its own test
    # keeps in sync with the runner; a real record passes it, and so does every honest run here.
    from agentgym.eval.records import SCHEMA_VERSION
    from agentgym.eval.runner import AgentSpec, play_job
    from agentgym.leaderboard.record_schema import RECORD_SCHEMA

    assert validator().schema is RECORD_SCHEMA
    rec = {"schema_version": SCHEMA_VERSION, **play_job(S.SUITE.jobs()[0], AgentSpec("heuristic"))}
    assert validator().is_valid(rec)
    assert not validator().is_valid({**rec, "schema_version": 1})


@pytest.mark.parametrize("edit, field", [
    (lambda r: r.__setitem__("bonus", 1), "bonus"),
    (lambda r: r.pop("trajectory_sha256"), "trajectory_sha256"),
    (lambda r: r.__setitem__("seed", True), "seed"),
    (lambda r: r.__setitem__("agent_error", "crashed"), "agent_error"),
    (lambda r: r["actions"].append(42), "actions"),
    (lambda r: r["steps"].append([]), "steps"),
    (lambda r: r["env"].__setitem__("extra", {}), "extra"),
    (lambda r: r["agent"].__setitem__("privileged", "no"), "privileged"),
    (lambda r: r.__setitem__("schema_version", 1), "schema_version"),
])
def test_records_are_parsed_strictly(edit: Callable[[dict[str, Any]], Any], field: str) -> None:
    from agentgym.leaderboard.submission import MalformedSubmission

    recs = S.records("heuristic")
    edit(recs[2])
    with pytest.raises(MalformedSubmission) as info:
        _verify(recs)
    assert info.value.field == field and info.value.episode == recs[2]["key"]


def test_the_fast_equality_of_record_fields_never_passes_what_canonical_json_tells_apart() -> None:
    from agentgym.eval.records import canonical_json
    from agentgym.leaderboard.verify import _same_json

    values = [1, 1.0, True, 0.0, -0.0, None, "1", [1], (1,), {"a": 1}, {"a": True}, {"a": [1, {"b": 2.5}]},
              {"a": [1, {"b": 2.5}], "c": None}, 10**30, 1e30, [], {}]
    for a in values:
        for b in values:
            if _same_json(a, b):
                assert canonical_json(a) == canonical_json(b), (a, b)
    assert _same_json({"a": [1, {"b": 2.5}]}, {"a": [1, {"b": 2.5}]})
