"""An ASGI app served by uvicorn in a thread on a free loopback port, for the tests that talk to
one over real HTTP (the leaderboard's service, the MCP server)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def serving(app: Any, *, start_s: float = 20.0) -> Iterator[str]:
    """`app` served on 127.0.0.1 for the block; yields its base URL (``http://127.0.0.1:PORT``).

    Raises:
        AssertionError: the server did not start within `start_s` seconds.
    """
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + start_s
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
