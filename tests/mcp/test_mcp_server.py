"""S14: episodes over MCP (Streamable HTTP, the official SDK's client): a whole episode played
through the tools ends in the same record as the in-process run with the same actions, and the
record is a run's record (`agentgym report` and `view` read it)."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from uvicorn_thread import serving  # noqa: E402

from agentgym.core.protocol import parse_action  # noqa: E402
from agentgym.eval.episode import play_job  # noqa: E402
from agentgym.eval.jobs import AgentSpec, EpisodeJob  # noqa: E402
from agentgym.eval.records import read_records  # noqa: E402
from agentgym.mcp.app import McpLimits, create_mcp_app  # noqa: E402

DIALOG = "AgentRL/Dialog-v0"


@contextmanager
def _mcp_server(out: Path, limits: McpLimits | None = None) -> Iterator[tuple[str, Any]]:
    """The MCP app under uvicorn in a thread on a free loopback port; yield (endpoint URL, app)."""
    app = create_mcp_app(out, limits=limits)
    with serving(app, start_s=30) as base:
        yield f"{base}/mcp", app


def _mcp_call(action: Any) -> tuple[str, dict[str, Any]]:
    """The MCP tool call that plays `action` (a heuristic agent's turn: one call or a message)."""
    parsed = parse_action(action)
    assert parsed.error is None and len(parsed.calls) <= 1
    if parsed.calls:
        return parsed.calls[0].name, dict(parsed.calls[0].arguments or {})
    return "say", {"message": parsed.content}


async def _play_over_mcp(url: str, actions: list[Any]) -> dict[str, Any]:
    from mcp import Client

    async with Client(url) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        opening = (await client.get_prompt("episode")).messages[0].content.text
        results = []
        for action in actions:
            name, arguments = _mcp_call(action)
            assert name in tools
            results.append(await client.call_tool(name, arguments))
        after = await client.call_tool("say", {"message": "one more?"})
    return {"tools": tools, "opening": opening, "results": results, "after": after}


@pytest.mark.parametrize("noise", [None, "medium"])
def test_s14_an_mcp_client_plays_an_episode_to_the_in_process_record(tmp_path: Path, noise: str | None) -> None:
    seed = 11
    here = play_job(EpisodeJob(DIALOG, seed=seed, noise=noise), AgentSpec("heuristic"), None)
    query = f"?seed={seed}" + (f"&noise={noise}" if noise else "")
    with _mcp_server(tmp_path / "run") as (url, app):
        played = asyncio.run(_play_over_mcp(url + query, here["actions"]))
        book = app.state.book
        deadline = time.monotonic() + 10
        while book.episodes and time.monotonic() < deadline:  # the client's DELETE closes the env
            time.sleep(0.02)
        assert not book.episodes
    results = played["results"]
    last = results[-1].structured_content
    assert last["terminated"] or last["truncated"]
    assert not any(r.is_error for r in results) and played["after"].is_error  # nothing after the end
    assert all(not r.structured_content["terminated"] for r in results[:-1])
    assert [r.structured_content["reward"] for r in results] == [s["reward"] for s in here["steps"]]
    assert {"say", "search", "book"} <= set(played["tools"])
    assert played["tools"]["search"].input_schema["properties"]["page"]["maximum"] == 100  # the env's schema
    records = list(read_records(tmp_path / "run" / "records.jsonl", strict=True))
    assert len(records) == 1
    (there,) = records
    print(f"\nS14 ({noise or 'no noise'}): {len(results)} calls over MCP, trajectory "
          f"{there['trajectory_sha256'][:16]} vs in process {here['trajectory_sha256'][:16]}")
    assert there["trajectory_sha256"] == here["trajectory_sha256"]
    assert there["key"] == here["key"] and there["metrics"] == here["metrics"] and there["steps"] == here["steps"]
    assert there["agent"]["name"] == "mcp" and not there["agent"]["privileged"]
    assert played["opening"] and "[user]" in played["opening"]


def test_mcp_records_are_a_run_that_report_and_view_read(tmp_path: Path) -> None:
    from agentgym.cli import main

    here = play_job(EpisodeJob(DIALOG, seed=2), AgentSpec("heuristic"), None)
    with _mcp_server(tmp_path / "run") as (url, _):
        asyncio.run(_play_over_mcp(url + "?seed=2", here["actions"]))
    assert main(["report", str(tmp_path / "run"), "--out", str(tmp_path / "report")]) == 0
    assert (tmp_path / "report" / "report.md").read_text().count("mcp") >= 1
    assert main(["view", str(tmp_path / "run")]) == 0


def test_the_session_url_chooses_the_episode_and_bad_choices_are_refused(tmp_path: Path) -> None:
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    from agentgym.bench.suites import get_suite

    job = get_suite("smoke-v0").jobs()[25]

    async def first_call(url: str) -> Any:
        async with Client(url) as client:
            return await client.call_tool("say", {"message": "hello"})

    async def refused(url: str) -> str:
        async with Client(url) as client:
            with pytest.raises(MCPError) as err:
                await client.list_tools()
            return err.value.message

    with _mcp_server(tmp_path / "run", McpLimits(max_sessions=4)) as (url, app):
        assert asyncio.run(first_call(url + "?suite=smoke-v0&episode=25")).structured_content["terminated"] is False
        assert "unknown suite" in asyncio.run(refused(url + "?suite=/etc/passwd.toml"))
        assert "unknown query parameter" in asyncio.run(refused(url + "?max_turns=1000"))
        assert "integer" in asyncio.run(refused(url + "?seed=abc"))
        assert "unknown env id" in asyncio.run(refused(url + "?env=AgentRL/Remote-v0"))
        assert not app.state.book.episodes
        import httpx

        opening = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
        accept = {"accept": "application/json, text/event-stream"}
        rebound = httpx.post(url, json=opening, headers={**accept, "host": "attacker.example"})
        assert rebound.status_code in (403, 421)  # a web page's request through DNS rebinding
        sessionless = httpx.post(url, json=opening, headers={**accept, "mcp-protocol-version": "2026-07-28"})
        assert sessionless.status_code == 400 and "one session is one episode" in sessionless.text
    assert job.suite == "smoke-v0" and not (tmp_path / "run" / "records.jsonl").exists()


def test_agentgym_mcp_serves_until_interrupted(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    from mcp import Client

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "agentgym.cli", "mcp", "--out", str(tmp_path / "run"), "--port",
                             str(port), "--seed", "4", "--log-level", "warning"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        async def say() -> Any:
            async with Client(f"http://127.0.0.1:{port}/mcp?noise=bogus-kind") as client:
                from mcp.shared.exceptions import MCPError

                with pytest.raises(MCPError, match="cannot make"):
                    await client.list_tools()
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                return await client.call_tool("say", {"message": "hello"})

        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline
                time.sleep(0.1)
        result = asyncio.run(say())
        assert result.content[0].text.startswith("[user]") and not result.is_error
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode in (0, 130) and b"Traceback" not in err, err.decode()[-2000:]  # 130: interrupted
