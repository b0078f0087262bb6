"""Episodes over MCP's Streamable HTTP transport, with the official ``mcp`` SDK.

One MCP session is one episode. The session's URL chooses it (``/mcp?env=AgentRL/Dialog-v0&seed=3
&noise=medium``, or ``?suite=core-v0&episode=17``; the server's defaults fill the rest), and the
episode is reset at the session's first request after ``initialize``. Its tools are the env's
tools (their JSON schemas as ``info["tools"]`` gives them) and ``say``, which speaks to the
user; the prompt ``episode`` holds the reset's observation (the brief and the user's first
message). Every call is one env step and returns the step's observation text as the env gave
it; once the episode ends its record is appended to the run folder's ``records.jsonl``, which
``agentgym report`` and ``agentgym view`` read as any run's.

The SDK's session manager holds the sessions: its cap (``max_sessions``, 503 past it), its idle
timeout and its body limit. A session it closes (the client's DELETE, the idle timeout) takes
its env with it. The 2026 single-exchange era has no sessions, so it is refused (HTTP 400) and
a client that probes it falls back to the session handshake.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgym.mcp.choice import EpisodeChoice
from agentgym.mcp.episode import SAY, McpEpisode, StepResult

__all__ = ["EpisodeBook", "McpLimits", "create_mcp_app"]

log = logging.getLogger("agentgym.mcp")

#: The path of the MCP endpoint.
MCP_PATH = "/mcp"
_PROMPT = "episode"
_SESSION_HEADER = "mcp-session-id"
_INVALID_PARAMS = -32602


@dataclass(frozen=True)
class McpLimits:
    """The MCP server's limits.

    Args:
        max_sessions: live sessions (episodes) at most; one more is refused with 503.
        idle_timeout_s: seconds a session may go without a request before it is closed.
        max_body_bytes: request bodies over this many bytes get 413.
    """

    max_sessions: int = 4096
    idle_timeout_s: float = 300.0
    max_body_bytes: int = 1 << 20


class EpisodeBook:
    """The episodes of the live MCP sessions, and the records file they end in.

    Args:
        out: the run folder (its ``records.jsonl`` gets one record per finished episode).
        default: the episode a session plays when its URL chooses nothing.
    """

    def __init__(self, out: str | Path, default: EpisodeChoice) -> None:
        from agentgym.eval.records import RecordWriter
        from agentgym.eval.runs import RECORDS_FILE

        self.records_path = Path(out) / RECORDS_FILE
        self.writer = RecordWriter(self.records_path)
        self.default = default
        self.episodes: dict[str, McpEpisode] = {}
        self.finished = 0

    def episode(self, ctx: Any) -> McpEpisode:
        """The episode of the session `ctx` belongs to, made and reset at its first request.

        Raises:
            MCPError: the session's URL chooses no episode this server can play.
        """
        from mcp.shared.exceptions import MCPError

        request = ctx.request
        session_id = request.headers.get(_SESSION_HEADER) if request is not None else None
        if not session_id:
            raise MCPError(_INVALID_PARAMS, "an episode needs a Streamable HTTP session (initialize first)")
        found = self.episodes.get(session_id)
        if found is not None:
            return found
        try:
            job = self.default.with_query(dict(request.query_params)).job()
        except ValueError as exc:
            raise MCPError(_INVALID_PARAMS, str(exc)) from None
        import gymnasium as gym

        params = ctx.session.client_params
        info = params.client_info if params is not None else None
        client = {"name": info.name, "version": info.version} if info is not None else {}
        try:
            env = gym.make(job.env_id, **job.make_kwargs())
        except (ValueError, TypeError) as exc:  # a noise spec or a make argument the env refuses
            raise MCPError(_INVALID_PARAMS, f"cannot make {job.env_id}: {exc}") from None
        try:
            episode = McpEpisode(job, env, client)
        except Exception:
            env.close()
            raise
        self.episodes[session_id] = episode
        return episode

    def stepped(self, session_id: str, result: StepResult) -> None:
        """After a call: write the record of an episode that just ended."""
        episode = self.episodes.get(session_id)
        if episode is not None and episode.record is not None and not getattr(episode, "written", False):
            episode.written = True  # type: ignore[attr-defined]
            self.writer.write(episode.record)
            self.finished += 1

    def discard(self, session_id: str) -> None:
        """The session is gone: close its env (an unfinished episode leaves no record)."""
        episode = self.episodes.pop(session_id, None)
        if episode is not None:
            episode.state.env.close()

    def close(self) -> None:
        for session_id in list(self.episodes):
            self.discard(session_id)
        self.writer.close()


def _server(book: EpisodeBook) -> Any:
    """The SDK's low-level server with the episode's tools, the prompt and the calls."""
    import mcp.types as types
    from mcp.server.lowlevel import Server

    async def list_tools(ctx: Any, params: Any) -> Any:
        episode = book.episode(ctx)
        return types.ListToolsResult(tools=[types.Tool(name=name, description=text, input_schema=schema)
                                            for name, text, schema in episode.tool_specs()])

    async def call_tool(ctx: Any, params: Any) -> Any:
        episode = book.episode(ctx)
        result = episode.call(params.name, params.arguments)
        book.stepped(ctx.request.headers[_SESSION_HEADER], result)
        return types.CallToolResult(content=[types.TextContent(text=result.text)],
                                    structured_content=result.structured(), is_error=result.error)

    async def list_prompts(ctx: Any, params: Any) -> Any:
        return types.ListPromptsResult(prompts=[types.Prompt(
            name=_PROMPT, description="The episode's opening: the brief and the user's first message.")])

    async def get_prompt(ctx: Any, params: Any) -> Any:
        from mcp.shared.exceptions import MCPError

        if params.name != _PROMPT:
            raise MCPError(_INVALID_PARAMS, f"unknown prompt {params.name!r}; the one prompt is {_PROMPT!r}")
        episode = book.episode(ctx)
        return types.GetPromptResult(description="The episode's opening", messages=[
            types.PromptMessage(role="user", content=types.TextContent(text=episode.observation))])

    return Server("agentgym", instructions=(
        f"One session is one agentgym episode. Read the prompt {_PROMPT!r} first (the brief and the user's "
        f"first message), then act with the tools: each call is one turn, and {SAY!r} speaks to the user. "
        "A result's structured part says when the episode has ended."),
        on_list_tools=list_tools, on_call_tool=call_tool, on_list_prompts=list_prompts, on_get_prompt=get_prompt)


def _manager(server: Any, book: EpisodeBook, limits: McpLimits, host: str) -> Any:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings

    security = None
    if host in ("127.0.0.1", "localhost", "::1"):
        # As the SDK's own app does on loopback: a web page's requests (DNS rebinding) are refused.
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"])

    class Manager(StreamableHTTPSessionManager):
        async def _discard_session(self, session_id: str, transport: Any) -> None:
            # However a session ends (DELETE, idle timeout, a crash), its env goes with it.
            book.discard(session_id)
            await super()._discard_session(session_id, transport)

    return Manager(server, json_response=True, security_settings=security, session_idle_timeout=limits.idle_timeout_s,
                   max_request_body_size=limits.max_body_bytes, max_sessions=limits.max_sessions)


class _SessionsOnly:
    """Refuses the single-exchange era (a protocol version with no handshake): it has no sessions,
    and a session is an episode. A client that probes it falls back to ``initialize``."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

            version = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"mcp-protocol-version"), None)
            if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
                import json

                body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {
                    "code": -32600, "message": "this server speaks the session handshake only: one session is one "
                                               f"episode (versions {', '.join(HANDSHAKE_PROTOCOL_VERSIONS)})"}}).encode()
                await send({"type": "http.response.start", "status": 400,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def create_mcp_app(out: str | Path, default: EpisodeChoice | None = None, limits: McpLimits | None = None,
                   host: str = "127.0.0.1") -> Any:
    """The MCP server as an ASGI app (Starlette), its endpoint at ``/mcp``.

    Args:
        out: the run folder the episodes' records go to.
        default: the episode of a session whose URL chooses none (default: Dialog-v0, seed 0).
        limits: the sessions' limits (default: `McpLimits()`).
        host: the address it will serve on; on loopback, requests naming another host or origin
            are refused (DNS rebinding).

    Returns:
        The app; its ``state.book`` is the `EpisodeBook`.
    """
    from starlette.applications import Starlette
    from starlette.routing import Route

    book = EpisodeBook(out, default or EpisodeChoice())
    manager = _manager(_server(book), book, limits or McpLimits(), host)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        async with manager.run():
            try:
                yield
            finally:
                book.close()

    app = Starlette(routes=[Route(MCP_PATH, endpoint=_SessionsOnly(manager.handle_request))], lifespan=lifespan)
    app.state.book = book
    return app
