"""Shared pieces of the leaderboard tests: a small suite, honest runs made once, submission bodies.

The honest runs are real `agentgym bench` run folders (`run_suite` with the built-in agents,
one process), made once per test session and cached; every forged or tampered variant is
derived from their records in memory.
"""

from __future__ import annotations

import atexit
import contextlib
import copy
import dataclasses
import functools
import hashlib
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator

import agentgym
from agentgym.agents.heuristic import HeuristicAgent
from agentgym.bench.run import RECORDS, run_suite
from agentgym.bench.suites import SUITES, Suite
from agentgym.eval.records import canonical_json
from agentgym.eval.runner import AgentSpec
from agentgym.leaderboard.submission import Manifest, encode_submission

#: The suite the tests submit to: both noise settings of core-v0, few seeds, two trials, short episodes.
SUITE = Suite(id="lbtest-v1", description="Leaderboard tests: Dialog, without noise and with the medium preset.",
              envs=("AgentRL/Dialog-v0",), noise=("none", "medium"), n_seeds=4, trials=2, kwargs={"max_turns": 10})
#: An older version of it: submissions are stored and shown, not ranked.
OLD_SUITE = Suite(id="lbtest-v0", description="The first version of the test suite.", envs=("AgentRL/Dialog-v0",),
                  noise=("none",), n_seeds=4, trials=1, current=False)
#: Every family, for the tests that replay several envs at once.
MIXED_SUITE = Suite(id="lbmixed-v1", description="Leaderboard tests: every family, without noise and with medium.",
                    envs=("AgentRL/Dialog-v0", "AgentRL/ToolUse-v0", "AgentRL/CrossTask-v0"), noise=("none", "medium"),
                    n_seeds=2, trials=1, kwargs={"max_turns": 10})
#: hard-v0's layout (every family, its hard tier, without noise and with medium) on two seeds: a suite
#: whose kwargs choose the tasks, so only a replay with them matches.
HARD_SUITE = dataclasses.replace(SUITES["hard-v0"], id="lbhard-v1", n_seeds=2, trials=1)
REGISTRY = {s.id: s for s in (SUITE, OLD_SUITE, MIXED_SUITE, HARD_SUITE)}

#: (agent, kwargs) of the honest runs.
AGENTS: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = (
    ("heuristic", ()),
    ("oracle", ()),
    ("random", (("seed", 0),)),
    ("random", (("seed", 1),)),
    ("lb_support:FlakyAgent", ()),
)


class FlakyAgent(HeuristicAgent):
    """The heuristic agent, except that it raises on its third turn of every odd seed (an agent error)."""

    name = "flaky"

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        super().reset(obs, info)
        self._turn, self._odd = 0, int(info.get("seed", 0)) % 2 == 1

    def act(self, obs: str, info: dict[str, Any]) -> str:
        self._turn += 1
        if self._odd and self._turn == 3:
            raise RuntimeError("flaky agent: simulated crash")
        return super().act(obs, info)


_ROOT = Path(tempfile.mkdtemp(prefix="agentgym-lb-tests-"))
atexit.register(shutil.rmtree, _ROOT, True)


@functools.lru_cache(maxsize=None)
def run_dir(agent: str, kwargs: tuple[tuple[str, Any], ...] = (), suite_id: str = SUITE.id) -> Path:
    """A bench run folder of `agent` on a test suite (made once per session)."""
    name = (agent + "".join(f"-{k}{v}" for k, v in kwargs)).replace(":", "_")
    out = _ROOT / suite_id / name
    run_suite(REGISTRY[suite_id], AgentSpec(agent, kwargs), out, workers=1, progress=False, timeout_s=None)
    return out


def distinct_runs(n: int) -> list[tuple[str, tuple[tuple[str, Any], ...]]]:
    """`n` honest, unprivileged runs that each play differently (a board holds a run once)."""
    return [("random", (("seed", 100 + i),)) for i in range(n)]


def records(agent: str, kwargs: tuple[tuple[str, Any], ...] = (), suite_id: str = SUITE.id) -> list[dict[str, Any]]:
    """A fresh copy of a run's records (safe to tamper with)."""
    return _records(agent, kwargs, suite_id)


def _records(agent: str, kwargs: tuple[tuple[str, Any], ...], suite_id: str) -> list[dict[str, Any]]:
    return copy.deepcopy(_parsed(agent, kwargs, suite_id))


@functools.lru_cache(maxsize=None)
def _parsed(agent: str, kwargs: tuple[tuple[str, Any], ...], suite_id: str) -> list[dict[str, Any]]:
    raw = (run_dir(agent, kwargs, suite_id) / RECORDS).read_bytes()
    return [json.loads(line) for line in raw.splitlines()]


def records_bytes(recs: list[dict[str, Any]]) -> bytes:
    """Records as a records.jsonl file would hold them."""
    return b"".join(canonical_json(r).encode("ascii") + b"\n" for r in recs)


def manifest_for(raw: bytes, **fields: Any) -> Manifest:
    """A valid manifest for records bytes `raw`; `fields` override the defaults."""
    base: dict[str, Any] = {"agent": "test-agent", "model": "test/model", "revision": "r1", "organisation": "tests",
                            "description": "", "suite": SUITE.id, "package_version": agentgym.__version__,
                            "records_sha256": hashlib.sha256(raw).hexdigest(), "claimed": {}}
    base.update(fields)
    return Manifest(**base)


def body_for(recs: list[dict[str, Any]], **fields: Any) -> bytes:
    """The wire body of records `recs` under a manifest with `fields` (the digest always right)."""
    raw = records_bytes(recs)
    return encode_submission(manifest_for(raw, **fields), raw)


def by_key(recs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["key"]: r for r in recs}


#: Injection payloads (RELIABILITY L5). Each would mark the page's body if it ever ran.
PAYLOADS = (
    "<script>document.body.setAttribute('data-pwned','1');window.__pwned=1</script>",
    "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">",
    "<a href=\"javascript:document.body.setAttribute('data-pwned','1')\">x</a>",
    "javascript:document.body.setAttribute('data-pwned','1')",
    "\"><svg onload=\"document.body.setAttribute('data-pwned','1')\">",
    "'><body onload=document.body.setAttribute('data-pwned','1')>",
    "</td></tr></table><script>document.body.setAttribute('data-pwned','1')</script>",
    "=HYPERLINK(\"http://evil.example\",\"click me\")",
    "x'); DROP TABLE submissions; --",
    "<style>body{display:none}</style>| fake | cells |",
    "<iframe srcdoc=\"<script>parent.__pwned=1</script>\"></iframe>",
    "@SUM(1+1)*cmd|' /C calc'!A0",
)


def payload_fields(i: int) -> dict[str, str]:
    """Manifest text fields that are all payloads (a different one in each field)."""
    p = PAYLOADS
    return {"agent": p[i % len(p)], "model": p[(i + 1) % len(p)] + f" #{i}", "revision": p[(i + 2) % len(p)],
            "organisation": p[(i + 3) % len(p)], "description": "\n".join(p)}


@contextlib.contextmanager
def serving(app: Any) -> Iterator[str]:
    """`app` served on a loopback port for the block; yields its base URL. The helper is imported
    here, not at the top: the board's subprocesses import this module with only its own folder on
    the path."""
    from uvicorn_thread import serving as serve

    with serve(app) as url:
        yield url
