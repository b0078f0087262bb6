"""Environments over HTTP and WebSocket (`create_app`, `serve`) and the `RemoteEnv` client.

Nothing heavy is imported until used: the client needs only the standard library (and
`websockets` for ``transport="ws"``); the server needs FastAPI and uvicorn (``pip install
agentrl-gym[server]``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["RemoteEnv", "RemoteEnvError", "ServerBusy", "ServerConfig", "ServerThread", "create_app", "serve"]

_LAZY = {
    "RemoteEnv": "agentgym.server.client",
    "RemoteEnvError": "agentgym.server.client",
    "ServerBusy": "agentgym.server.client",
    "ServerConfig": "agentgym.server.config",
    "ServerThread": "agentgym.server.serve",
    "serve": "agentgym.server.serve",
    "create_app": "agentgym.server.app",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agentgym.server' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
