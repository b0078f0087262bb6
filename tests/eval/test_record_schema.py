"""The committed JSON Schema of records stays in sync with what the runner writes."""

from __future__ import annotations

import json
import math
import re
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from agentgym.eval.records import SCHEMA_VERSION, canonical_json, read_records
from agentgym.eval.runner import AgentSpec, EpisodeJob, run_jobs

SCHEMA = json.loads(resources.files("agentgym.eval").joinpath("record.schema.json").read_text("utf-8"))
HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    out = tmp_path_factory.mktemp("schema") / "records.jsonl"
    jobs = [EpisodeJob(env_id, seed=s, noise=noise, kwargs=(("split", "test"),))
            for env_id in ("AgentRL/Dialog-v0", "AgentRL/ToolUse-v0", "AgentRL/CrossTask-v0")
            for noise in (None, "medium") for s in range(3)]
    for agent in ("heuristic", "random", "oracle"):
        run_jobs(jobs, AgentSpec(agent), out.with_name(f"{agent}.jsonl"), workers=1, progress=False)
    import sys
    sys.path.insert(0, str(HERE))
    try:
        run_jobs(jobs[:4], AgentSpec("fake_agents:RaisingAgent"), out.with_name("raising.jsonl"), workers=1,
                 progress=False)
    finally:
        sys.path.remove(str(HERE))
    return [r for name in ("heuristic", "random", "oracle", "raising")
            for r in read_records(out.with_name(f"{name}.jsonl"))]


def test_every_record_validates(records: list[dict[str, Any]]) -> None:
    validator = jsonschema.Draft202012Validator(SCHEMA)
    for rec in records:
        errors = sorted(validator.iter_errors(rec), key=lambda e: list(e.path))
        assert not errors, f"{rec['key']}: {errors[0].message} at {list(errors[0].path)}"
    assert any(r["agent_error"] for r in records) and any(r["metrics"] for r in records)


def test_schema_lists_exactly_the_fields_written(records: list[dict[str, Any]]) -> None:
    written = set().union(*(r.keys() for r in records))
    assert written == set(SCHEMA["required"]) == set(SCHEMA["properties"])
    episode = SCHEMA["$defs"]["episode"]
    written_episode = set().union(*(r["metrics"].keys() for r in records if r["metrics"]))
    assert set(episode["required"]) <= written_episode <= set(episode["properties"])
    step = SCHEMA["$defs"]["step"]
    written_step = set().union(*(s.keys() for r in records for s in r["steps"]))
    assert set(step["required"]) <= written_step == set(step["properties"])  # medium noise charges time
    event = SCHEMA["$defs"]["noise_event"]
    events = [e for r in records if r["metrics"] for e in r["metrics"]["noise"]]
    assert events and set(event["required"]) <= set().union(*(e.keys() for e in events)) <= set(event["properties"])


def test_records_of_an_older_schema_are_refused_in_one_line(tmp_path: Path) -> None:
    old = tmp_path / "records.jsonl"
    old.write_text(json.dumps({"schema_version": 1, "key": "k"}) + "\n", "ascii")
    with pytest.raises(ValueError) as err:
        list(read_records(old))
    message = str(err.value)
    assert "\n" not in message and "schema-1 record" in message and "re-run" in message
    newer = tmp_path / "newer.jsonl"
    newer.write_text(json.dumps({"schema_version": SCHEMA_VERSION + 1}) + "\n", "ascii")
    with pytest.raises(ValueError, match=f"not a schema-{SCHEMA_VERSION} record"):
        list(read_records(newer))


def test_schema_version_matches_the_writer() -> None:
    assert SCHEMA["properties"]["schema_version"]["const"] == SCHEMA_VERSION
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_canonical_json_is_the_encoders_text() -> None:
    """`canonical_json` (one C encoder kept for every call) writes what `json.dumps` with the
    record options writes, and refuses what it refuses."""
    def dumps(obj: object) -> str:
        return json.dumps(obj, ensure_ascii=True, sort_keys=True, allow_nan=False, separators=(",", ":"))

    class Text(str):
        pass

    for obj in ("caf\u00e9 \ud800", Text("x"), 0, -1.5, 2.5e-7, 1e300, True, None, [], {},
                {"b": [1, 1.0, True, None, {"z": "\u2603", "a": []}], "a": {"1": 2}}, {1: "int key"}, (1, 2)):
        assert canonical_json(obj) == dumps(obj)
    for bad in (math.nan, {"a": math.inf}, {(1,): 2}, object()):
        with pytest.raises((ValueError, TypeError)) as got:
            canonical_json(bad)
        with pytest.raises(got.type, match=re.escape(str(got.value))):
            dumps(bad)
