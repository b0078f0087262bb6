"""The ``agentgym mcp`` subcommand: episodes for any MCP agent harness, over Streamable HTTP."""

from __future__ import annotations

import argparse
from typing import Any

from agentgym.cli_parser import at_least, positive_float, tcp_port

__all__ = ["MCP_PORT", "add_mcp_command", "cmd_mcp"]

#: The default port of ``agentgym mcp`` (the env server's is 8100, the leaderboard's 8200).
MCP_PORT = 8300


def add_mcp_command(sub: Any) -> argparse.ArgumentParser:
    """Add ``mcp`` to the subparsers `sub` of the `agentgym` command; return its parser."""
    p = sub.add_parser(
        "mcp", help="serve episodes over MCP (Streamable HTTP) to any agent harness",
        description="Serve agentgym episodes at http://HOST:PORT/mcp: one MCP session is one episode, its tools "
                    "the env's tools plus `say` (speak to the user), the prompt `episode` its opening. A session's "
                    "URL may choose its episode (?env=ID&seed=N&trial=N&noise=SPEC&split=S&difficulty=D, or "
                    "?suite=ID&episode=N); these options are the defaults. Each finished episode's record is "
                    "appended to OUT/records.jsonl (agentgym report and view read it).")
    p.add_argument("--out", required=True, help="the run folder the records go to (resumed if it exists)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1, this machine only)")
    p.add_argument("--port", type=tcp_port, default=MCP_PORT, help=f"TCP port (default: {MCP_PORT})")
    p.add_argument("--env", dest="env_id", default="AgentRL/Dialog-v0", help="default env id (default: Dialog-v0)")
    p.add_argument("--seed", type=at_least(0), default=0, help="default seed (default: 0)")
    p.add_argument("--noise", default=None, help="default noise preset or spec (default: none)")
    p.add_argument("--split", default=None, help="default task split (default: the env's)")
    p.add_argument("--difficulty", default=None, help="default difficulty (default: the env's mix)")
    p.add_argument("--suite", default=None, help="default suite (with --episode: that suite's episode)")
    p.add_argument("--episode", type=at_least(0), default=0, help="the suite's episode index (default: 0)")
    p.add_argument("--max-sessions", type=at_least(1), default=4096, help="live sessions at most (default: 4096)")
    p.add_argument("--idle-timeout-s", type=positive_float, default=300.0,
                   help="seconds a session may go without a request before it is closed (default: 300)")
    p.add_argument("--log-level", default="info", choices=("critical", "error", "warning", "info", "debug"),
                   help="uvicorn's log level (default: info)")
    p.set_defaults(func=cmd_mcp)
    return p


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    from agentgym.errors import UserError
    from agentgym.mcp.app import McpLimits, create_mcp_app
    from agentgym.mcp.choice import EpisodeChoice
    from agentgym.server.config import ConnectionLimits
    from agentgym.server.gc_policy import tune_for_serving
    from agentgym.server.listening import listen_socket, uvicorn_server

    default = EpisodeChoice(env=args.env_id, seed=args.seed, noise=args.noise, split=args.split,
                            difficulty=args.difficulty, suite=args.suite, episode=args.episode)
    try:
        default.job()  # a bad default is one error now, not one per session
    except ValueError as exc:
        raise UserError(str(exc)) from None
    app = create_mcp_app(args.out, default, McpLimits(max_sessions=args.max_sessions,
                                                      idle_timeout_s=args.idle_timeout_s), host=args.host)
    sock = listen_socket(args.host, args.port)
    tune_for_serving()
    uvicorn_server(app, host=args.host, port=args.port, log_level=args.log_level,
                   limits=ConnectionLimits()).run(sockets=[sock])
    return 0
