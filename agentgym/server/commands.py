"""The ``agentgym serve`` subcommand (also ``python -m agentgym.server``)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from agentgym.cli_parser import Parser, tcp_port
from agentgym.errors import run_command
from agentgym.server.config import ServerConfig
from agentgym.server.serve import ENV_SERVER_PORT, LEADERBOARD_PORT

__all__ = ["add_serve_command", "cmd_serve"]


def add_serve_command(sub: Any) -> argparse.ArgumentParser:
    """Add ``serve`` to the subparsers `sub` of the `agentgym` command; return its parser."""
    p = sub.add_parser("serve", help="serve the environments over HTTP and WebSocket",
                       description="Serve every registered AgentRL/* env (or --env ones) with sessions, a "
                                   "session cap, an idle reaper, a body-size limit and a step timeout; "
                                   "Prometheus metrics at GET /metrics.")
    add_serve_arguments(p)
    p.set_defaults(func=cmd_serve)
    return p


def add_serve_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``serve``: where to listen, which envs, and one per `ServerConfig` field."""
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1, this machine only)")
    p.add_argument("--port", type=tcp_port, default=ENV_SERVER_PORT,
                   help=f"TCP port (default: {ENV_SERVER_PORT}; the leaderboard's is {LEADERBOARD_PORT})")
    p.add_argument("--env", action="append", dest="env_ids", metavar="ID",
                   help="serve only this id (repeatable; default: every AgentRL/* id)")
    p.add_argument("--log-level", default="info", choices=("critical", "error", "warning", "info", "debug"),
                   help="uvicorn's log level (default: info)")
    p.add_argument("--print-openapi", action="store_true", help="print the OpenAPI schema and exit")
    for name, kind, default, doc in ServerConfig.options():
        p.add_argument("--" + name.replace("_", "-"), type=kind, default=default, help=f"{doc} (default: {default})")


def cmd_serve(args: argparse.Namespace) -> int:
    """Run the server until interrupted (or print its OpenAPI schema)."""
    from dataclasses import fields

    config = ServerConfig(**{f.name: getattr(args, f.name) for f in fields(ServerConfig)})
    if args.print_openapi:
        from agentgym.server.app import create_app

        print(json.dumps(create_app(config, env_ids=args.env_ids).openapi(), indent=2, sort_keys=True))
        return 0
    from agentgym.server.serve import serve

    serve(config, host=args.host, port=args.port, env_ids=args.env_ids, log_level=args.log_level)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m agentgym.server``: the same options as ``agentgym serve``."""
    parser = Parser(prog="python -m agentgym.server", description="Serve agentgym envs (as `agentgym serve`).")
    add_serve_arguments(parser)
    return run_command(cmd_serve, parser.parse_args(argv), prog="agentgym serve")


if __name__ == "__main__":
    sys.exit(main())
