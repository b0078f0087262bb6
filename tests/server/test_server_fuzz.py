"""S5: an API fuzz generated from the committed OpenAPI schema (schemathesis on hypothesis).

Every operation gets at least 200 cases, valid and invalid, over a real loopback server; every
answer must be a documented status with a body matching its schema, invalid input must be
refused with a 4xx, and no answer may be a 5xx. Valid cases are steered onto live sessions and
served env ids, so reset and step run for real and not only 404 on random ids.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

schemathesis = pytest.importorskip("schemathesis")

import requests  # noqa: E402  (schemathesis's own HTTP client)
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.generation.modes import GenerationMode  # noqa: E402
from schemathesis.specs.openapi.checks import (  # noqa: E402
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from server_support import health, running  # noqa: E402

from agentgym.server.app import default_env_ids  # noqa: E402

CASES_PER_OPERATION = 200
OPENAPI = Path(__file__).resolve().parents[2] / "agentgym" / "server" / "openapi.json"
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance,
          response_headers_conformance, negative_data_rejection]
FUZZED = ["POST /sessions", "POST /sessions/{session_id}/reset", "POST /sessions/{session_id}/step",
          "DELETE /sessions/{session_id}"]


class Fuzz:
    """A server, the schema's strategies, a few live sessions to aim valid cases at, and tallies."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.http = requests.Session()
        schema = schemathesis.openapi.from_dict(json.loads(OPENAPI.read_text()))
        self.operations = {op.label: op for op in (r.ok() for r in schema.get_all_operations())}
        self.cases: Counter[str] = Counter()
        self.statuses: Counter[tuple[str, int]] = Counter()
        self.live: list[str] = []
        self.env_ids = list(default_env_ids())

    def strategy(self, label: str, mode: GenerationMode) -> Any:
        return self.operations[label].as_strategy(generation_mode=mode)

    def live_session(self, index: int) -> str:
        while len(self.live) < 3:
            env_id = self.env_ids[len(self.live) % len(self.env_ids)]
            r = self.http.post(f"{self.url}/sessions", json={"env_id": env_id})
            sid = r.json()["session_id"]
            self.http.post(f"{self.url}/sessions/{sid}/reset", json={"seed": len(self.live)})
            self.live.append(sid)
        return self.live[index % len(self.live)]

    def run(self, label: str, case: Any) -> None:
        response = case.call(base_url=self.url, session=self.http)
        self.cases[label] += 1
        self.statuses[(label, response.status_code)] += 1
        case.validate_response(response, checks=CHECKS)
        if label == "POST /sessions" and response.status_code == 201:
            self.http.delete(f"{self.url}/sessions/{response.json()['session_id']}")
        if label == "DELETE /sessions/{session_id}" and response.status_code == 204:
            self.live = [s for s in self.live if s != case.path_parameters["session_id"]]


@pytest.fixture(scope="module")
def fuzz() -> Any:
    with running(max_sessions=64, max_body_bytes=64 * 1024) as server:
        f = Fuzz(server.url)
        yield f
        report = {label: f.cases[label] for label in f.operations}
        errors = sum(n for (_, status), n in f.statuses.items() if status >= 500)
        print(f"\nS5: cases per operation {report}; 5xx answers: {errors}")
        tallies = sorted(f.statuses.items())
        print("    statuses: " + ", ".join(f"{label} -> {status}: {n}" for (label, status), n in tallies))
        assert health(server.url)["peak_sessions"] <= 64


@pytest.mark.parametrize("label", FUZZED)
def test_s5_api_fuzz_from_the_openapi_schema(fuzz: Fuzz, label: str) -> None:
    modes = [GenerationMode.POSITIVE, GenerationMode.NEGATIVE]
    strategies = {mode: fuzz.strategy(label, mode) for mode in modes}
    # The read-only operations have no input to vary (each has one case): they run after each case
    # of the first operation, on whatever state it left, and must still answer by their schema.
    gets = [(name, fuzz.operations[name].Case()) for name in ("GET /health", "GET /envs")] if label == FUZZED[0] else []

    @settings(max_examples=CASES_PER_OPERATION, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def one(data: st.DataObject) -> None:
        mode = data.draw(st.sampled_from(modes), label="mode")
        case = data.draw(strategies[mode], label=label)
        # Aim most valid cases at something real (invalid ones stay as generated, so they must fail).
        if mode is GenerationMode.POSITIVE and data.draw(st.integers(0, 9), label="aim") < 7:
            if "session_id" in (case.path_parameters or {}):
                case.path_parameters["session_id"] = fuzz.live_session(data.draw(st.integers(0, 2), label="which"))
            elif label == "POST /sessions" and isinstance(case.body, dict):
                case.body["env_id"] = data.draw(st.sampled_from(fuzz.env_ids), label="env_id")
        fuzz.run(label, case)
        for name, get in gets:
            fuzz.run(name, get)

    one()
    assert fuzz.cases[label] >= CASES_PER_OPERATION
    assert not [k for k in fuzz.statuses if k[0] == label and k[1] >= 500]


def test_s5_read_only_operations_had_their_cases(fuzz: Fuzz) -> None:
    # Runs after the four above (file order): the GETs rode along with the first one's cases.
    for name in ("GET /health", "GET /envs"):
        assert fuzz.cases[name] >= CASES_PER_OPERATION, fuzz.cases
    assert not [k for k in fuzz.statuses if k[1] >= 500]
