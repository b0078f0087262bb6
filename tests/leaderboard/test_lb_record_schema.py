"""The verifier's schema stage: the committed schema checked whole by jsonschema, refusals that
name the episode, step and field, and a native fast path whose verdicts are the plain ones."""

from __future__ import annotations

import copy
import random
from typing import Any, Callable

import jsonschema
import lb_support as S
import pytest

from agentgym.leaderboard.record_schema import RECORD_SCHEMA, check_record, record_error, validator
from agentgym.leaderboard.record_schema_fast import known_valid
from agentgym.leaderboard.submission import MalformedSubmission


def _honest() -> list[dict[str, Any]]:
    """Records of every family, with and without noise, ended and failed (agent errors too)."""
    return (S.records("heuristic") + S.records("lb_support:FlakyAgent")
            + S.records("heuristic", (), S.MIXED_SUITE.id) + S.records("random", (("seed", 0),), S.MIXED_SUITE.id))


def test_the_validator_is_the_declared_drafts_and_the_schema_is_valid() -> None:
    assert RECORD_SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert type(validator()) is jsonschema.Draft202012Validator
    jsonschema.Draft202012Validator.check_schema(RECORD_SCHEMA)
    assert validator() is validator(), "built once"


def test_honest_records_pass_both_ways() -> None:
    for rec in _honest():
        assert record_error(rec, 1) is None, rec["key"]
        assert known_valid(rec), rec["key"]


def _step_with_calls(recs: list[dict[str, Any]]) -> tuple[dict[str, Any], int]:
    for rec in recs:
        for i, step in enumerate(rec["steps"]):
            if step["calls"]:
                return rec, i
    raise AssertionError("no step with a call")


@pytest.mark.parametrize("edit, field, step, says", [
    (lambda r: r.__setitem__("schema_version", 1), "schema_version", None, "older agentgym: re-run the suite"),
    (lambda r: r.__setitem__("schema_version", "2"), "schema_version", None, "schema_version '2' is not 2"),
    (lambda r: r.__setitem__("bonus", 1), "bonus", None, "unknown fields ['bonus']"),
    (lambda r: r.pop("timing"), "timing", None, "missing fields ['timing']"),
    (lambda r: r["env"].__setitem__("extra", {}), "extra", None, "env: unknown fields ['extra']"),
    (lambda r: r["agent"].__setitem__("privileged", "no"), "privileged", None, "agent.privileged: 'no' is not of type"),
    (lambda r: r.__setitem__("seed", -1), "seed", None, "seed: -1 is less than the minimum of 0"),
    (lambda r: r.__setitem__("trajectory_sha256", "F" * 64), "trajectory_sha256", None, "does not match"),
    (lambda r: r["actions"].insert(0, 42), "actions", 1, "actions[0]: 42 is not of type"),
    (lambda r: r["steps"][2].__setitem__("reward", 5), "reward", 3, "steps[2].reward: 5 is greater than the maximum"),
    (lambda r: r["steps"][1].pop("obs_sha256"), "obs_sha256", 2, "missing fields ['obs_sha256']"),
    (lambda r: r.__setitem__("metrics", {"success": True}), "metrics", None, "metrics: "),
    (lambda r: r.__setitem__("agent_error", "crashed"), "agent_error", None, "agent_error: 'crashed' is not valid"),
])
def test_a_refusal_names_the_episode_step_and_field(edit: Callable[[dict[str, Any]], Any], field: str,
                                                    step: int | None, says: str) -> None:
    rec = S.records("heuristic")[3]
    edit(rec)
    assert not known_valid(rec)
    with pytest.raises(MalformedSubmission) as info:
        check_record(rec, 4)
    err = info.value
    assert (err.code, err.episode, err.step, err.field) == ("bad_record", rec["key"], step, field), str(err)
    assert err.message.startswith("records line 4: ") and says in err.message, err.message


def test_a_call_inside_a_step_is_named_by_its_step() -> None:
    rec, i = _step_with_calls(S.records("heuristic", (), S.MIXED_SUITE.id))
    rec["steps"][i]["calls"][0]["valid"] = "yes"
    err = record_error(rec, 1)
    assert err is not None and (err.step, err.field) == (i + 1, "valid")
    assert f"steps[{i}].calls[0].valid" in err.message


def test_a_huge_value_is_quoted_short() -> None:
    rec = S.records("heuristic")[0]
    rec["suite"] = ["y" * 1_000_000]
    err = record_error(rec, 1)
    assert err is not None and err.field == "suite" and len(err.message) < 500


# ------------------------------------------------------------------ the fast path equals the plain one
#: Values each edit writes somewhere: every JSON type, and the edges of the schema's keywords
#: (integers as floats, bools as numbers, out of range, a pattern's final newline, huge numbers).
_VALUES: tuple[Any, ...] = (None, True, False, 0, 1, -1, 1.0, 2.5, -0.5, 2**70, -(2**70), 1e308, "", "x",
                            "a" * 64, "a" * 64 + "\n", "A" * 64, "\u00e9", [], [1], ["x"], {}, {"x": 1},
                            {"turn": 1}, "easy", "proposal", "read")


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path] if path else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node[:3]):
            out += _paths(v, (*path, i))
    return out


def _edited(base: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    rec = copy.deepcopy(base)
    path = rng.choice(_paths(rec))
    parent = rec
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1]
    what = rng.random()
    if what < 0.1 and isinstance(parent, dict):
        del parent[last]
    elif what < 0.2 and isinstance(parent, dict):
        parent[f"extra_{rng.randrange(3)}"] = rng.choice(_VALUES)
    else:
        parent[last] = copy.deepcopy(rng.choice(_VALUES))
    return rec


def test_the_fast_path_never_says_yes_where_the_plain_validator_says_no() -> None:
    rng = random.Random(18)
    bases = _honest()
    plain_no = fast_no = 0
    for _ in range(600):
        rec = _edited(rng.choice(bases), rng)
        plain, fast = validator().is_valid(rec), known_valid(rec)
        assert plain or not fast, record_error(rec, 1)
        assert (record_error(rec, 1) is None) == plain
        plain_no += not plain
        fast_no += not fast
    # Half the corpus is refusals, and the fast path agrees with nearly all of them (it is the
    # stricter only where a pattern's "$" meets a final newline).
    assert plain_no > 200 and fast_no - plain_no < 12, (plain_no, fast_no)


def test_a_final_newline_is_the_plain_validators_to_judge() -> None:
    rec = S.records("heuristic")[0]
    rec["trajectory_sha256"] += "\n"  # Python's re: "$" matches before it; the native regex: not
    assert not known_valid(rec) and validator().is_valid(rec)
    check_record(rec, 1)  # accepted by the schema; the replay's digest comparison refuses it
