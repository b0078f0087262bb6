"""A small OpenAI-compatible chat-completions server for the agent tests (FastAPI, 127.0.0.1).

It answers from a script of replies, then from a seeded chaos policy, and counts what it did:

- ``{"text": "..."}``: a plain reply; ``{"tool_calls": [...]}``: a reply with structured calls
  (``arguments`` may be any string, malformed JSON included); ``{"raw": "..."}``: a 200 whose
  body is not a chat completion;
- ``{"status": 429, "retry_after": "0"}``, ``{"status": 500}``: an error answer;
- ``{"hang": seconds}``: answer (a plain reply) only after `seconds`, past the client's timeout.

`FakeOpenAIServer.served` counts answers by kind (``ok``, ``429``, ``500``, ``timeout``,
``invalid_response``), so a test can check that an agent's records account for every one.
"""

from __future__ import annotations

import asyncio
import json
import random
import socket
import threading
import time
from collections import Counter, deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response

__all__ = ["FakeOpenAIServer", "serve"]


class FakeOpenAIServer:
    """The server's behaviour and its books.

    Args:
        chaos: once the script is empty, the share of requests answered with a fault
            (429, 500, a hang, an invalid body or malformed tool-call arguments, in equal parts);
            0 answers every request well.
        seed: the seed of the chaos and of the replies' content.
        hang_s: how long a hang lasts.
    """

    def __init__(self, chaos: float = 0.0, seed: int = 0, hang_s: float = 2.0) -> None:
        self.script: deque[dict[str, Any]] = deque()
        self.chaos, self.hang_s = chaos, hang_s
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self.served: Counter[str] = Counter()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._in_flight = 0
        self._last_seen = time.monotonic()
        self.app = self._build()

    def wait_idle(self, quiet_s: float = 0.5, timeout_s: float = 15.0) -> bool:
        """Wait until no request is being answered and none has come for `quiet_s` (at most
        `timeout_s`): a request a client gave up on may still reach the server, or be answered,
        after the run that sent it ended (a loaded machine), and the books count it then.
        Returns whether the server went quiet in time."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._lock:
                idle = self._in_flight == 0 and time.monotonic() - self._last_seen >= quiet_s
            if idle:
                return True
            time.sleep(0.05)
        return False

    def push(self, *replies: dict[str, Any]) -> None:
        """Queue replies, answered in order before the chaos policy takes over."""
        self.script.extend(replies)

    # ------------------------------------------------------------------ behaviour
    def _next(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            if self.script:
                return self.script.popleft()
            draw = self._rng.random()
            kinds = ("429", "500", "hang", "raw", "bad_args")
            if draw < self.chaos:
                kind = kinds[min(int(draw / self.chaos * len(kinds)), len(kinds) - 1)]
                if kind == "429":
                    return {"status": 429, "retry_after": "0"}
                if kind == "500":
                    return {"status": 500}
                if kind == "hang":
                    return {"hang": self.hang_s}
                if kind == "raw":
                    return {"raw": '{"choices": [{"message": '}
                return {"tool_calls": [self._call(body, '{"query": "unterminated')]}
            if self._rng.random() < 0.5 and body.get("tools"):
                return {"tool_calls": [self._call(body, json.dumps({"query": "x"}))]}
            return {"text": self._rng.choice(["Which date works for you?", "Done.", "<tool_call>{\"name\": "])}

    def _call(self, body: dict[str, Any], arguments: str) -> dict[str, Any]:
        tools = body.get("tools") or [{"function": {"name": "missing"}}]
        name = self._rng.choice(tools)["function"]["name"]
        return {"id": f"call_{self._rng.randrange(10**9)}", "type": "function",
                "function": {"name": name, "arguments": arguments}}

    def _count(self, kind: str) -> None:
        with self._lock:
            self.served[kind] += 1

    # ------------------------------------------------------------------ the app
    def _build(self) -> FastAPI:
        app = FastAPI()

        @app.post("/v1/chat/completions")
        async def chat(request: Request) -> Response:
            with self._lock:
                self._in_flight += 1
                self._last_seen = time.monotonic()
            try:
                return await answer(request)
            finally:
                with self._lock:
                    self._in_flight -= 1
                    self._last_seen = time.monotonic()

        async def answer(request: Request) -> Response:
            body = await request.json()
            with self._lock:
                self.requests.append(body)
                self.headers.append(dict(request.headers))
            reply = self._next(body)
            if "status" in reply:
                self._count(str(reply["status"]))
                headers = {"Retry-After": reply["retry_after"]} if "retry_after" in reply else {}
                return JSONResponse({"error": {"message": "scripted fault"}}, status_code=reply["status"],
                                    headers=headers)
            if "raw" in reply:
                self._count("invalid_response")
                return PlainTextResponse(reply["raw"])
            if "hang" in reply:  # past the client's timeout: it has given up by the time this answers
                self._count("timeout")
                await asyncio.sleep(reply["hang"])
                return JSONResponse({"error": {"message": "too late"}}, status_code=504)
            self._count("ok")
            message: dict[str, Any] = {"role": "assistant", "content": reply.get("text")}
            if "tool_calls" in reply:
                message["tool_calls"] = reply["tool_calls"]
            prompt = sum(len(str(m.get("content") or "")) for m in body.get("messages", [])) // 4 + 1
            return JSONResponse({
                "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": body.get("model"),
                "choices": [{"index": 0, "message": message,
                             "finish_reason": "tool_calls" if "tool_calls" in reply else "stop"}],
                "usage": {"prompt_tokens": prompt, "completion_tokens": 7, "total_tokens": prompt + 7},
            })

        return app


@contextmanager
def serve(server: FakeOpenAIServer) -> Iterator[str]:
    """Run `server` on 127.0.0.1 (a free port) in a thread; yields the base URL (``.../v1``)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(server.app, log_level="warning", lifespan="off", timeout_graceful_shutdown=1)
    uv = uvicorn.Server(config)
    thread = threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not uv.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the fake OpenAI server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        uv.should_exit = True
        thread.join(timeout=5)
        sock.close()
