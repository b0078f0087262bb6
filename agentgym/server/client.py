"""`RemoteEnv`: a `gymnasium.Env` whose episodes run on an agentgym env server.

    env = RemoteEnv("http://127.0.0.1:8100", "AgentRL/Dialog-v0", difficulty="easy")
    env = gym.make("AgentRL/Remote-v0", url="http://127.0.0.1:8100", env_id="AgentRL/Dialog-v0")

Every reset and step is one round trip, over HTTP or (``transport="ws"``) over one WebSocket,
which then also opens and closes the session; the episode is byte-identical to the same episode
in process. ``close()`` closes the session.
"""

from __future__ import annotations

import http.client
import json
import select
import socket
import threading
import urllib.parse
from contextlib import ExitStack
from typing import Any

import gymnasium as gym
from gymnasium.error import ResetNeeded

from agentgym.core.plain_turn import NOT_A_MESSAGE, OVER_CAP_MESSAGE, OVER_CAP_TEXT, TOO_DEEP_MESSAGE
from agentgym.core.protocol import MAX_ACTION_BYTES, ErrorCode, parse_action
from agentgym.server.wire import space_from_spec

__all__ = ["RemoteEnv", "RemoteEnvError", "ServerBusy", "sendable"]

_TRANSPORTS = ("http", "ws")
#: Error codes that mean the request itself was wrong: raised as ValueError, as in process.
_BAD_INPUT = frozenset({"invalid_reset", "invalid_request", "invalid_json", "invalid_env_args", "body_too_large"})


#: Stand-ins for a turn that cannot travel as it is; each fails on the server with the same code.
_STAND_INS: dict[ErrorCode, Any] = {ErrorCode.PARSE_ERROR: NOT_A_MESSAGE, ErrorCode.TOO_DEEP: TOO_DEEP_MESSAGE}


def sendable(action: Any) -> Any:
    """What to send for `action`, so that the server reads the turn as this process would.

    A string over the cap, or a message dict over it, is rejected unread: a stand-in of the
    same kind just over the cap gives the same error. A dict, or anything else, is checked here
    first: JSON would silently carry a tuple as a list (a valid turn on the server, a
    PARSE_ERROR here) and cannot carry a set, bytes or a 100,000-deep value at all. Such a turn
    is sent as a stand-in that fails with the same error code (its message then says less
    about where the problem was); a turn that JSON carries exactly is sent as it is.
    """
    if isinstance(action, str):
        return OVER_CAP_TEXT if len(action) > MAX_ACTION_BYTES else action
    if not isinstance(action, dict):  # the server takes a str or a dict; either way an error here
        return _STAND_INS[ErrorCode.PARSE_ERROR]
    error = parse_action(action).error
    if error is None:
        return action
    if error.code is ErrorCode.TOO_LARGE:
        return OVER_CAP_MESSAGE
    try:
        carried = json.loads(json.dumps(action))
    except (TypeError, ValueError, RecursionError):
        carried = _STAND_INS
    if carried is not _STAND_INS and parse_action(carried).error == error:
        return action
    return _STAND_INS.get(error.code, _STAND_INS[ErrorCode.PARSE_ERROR])


class RemoteEnvError(gym.error.Error):
    """The server refused a request, or the session or the connection is gone.

    Attributes:
        status: the HTTP status (0 over a WebSocket or when no answer came).
        code: the server's error code (``unknown_session``, ``step_timeout`` ...) or a client one
            (``connection_lost``, ``connection_closed``, ``timeout``, ``closed``).
    """

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}" if status == 0 else f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt from the constructor's own arguments, so the error crosses a process pool (an
        # eval worker's failure reaches the parent as itself, not as a broken pool).
        return type(self), (self.status, self.code, self.message)


class ServerBusy(RemoteEnvError):
    """The server holds its session cap; try again after ``retry_after_s`` seconds."""

    def __init__(self, status: int, code: str, message: str, retry_after_s: float) -> None:
        super().__init__(status, code, message)
        self.retry_after_s = retry_after_s

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.status, self.code, self.message, self.retry_after_s)


class RemoteEnv(gym.Env[str, str]):
    """An agentgym env served by ``agentgym serve``, as a local `gymnasium.Env`.

    Args:
        url: the server, e.g. ``http://127.0.0.1:8100``; None starts (once per process) a loopback
            server in a thread of this process, so ``gym.make("AgentRL/Remote-v0")`` works
            alone (the conformance checks use it).
        env_id: the id to open on the server (default ``AgentRL/Dialog-v0``).
        noise: a noise spec or preset for the remote env (``gym.make(env_id, noise=...)``).
        transport: ``http`` (one request per call) or ``ws`` (one WebSocket for the session,
            lower latency; needs the ``websockets`` package).
        timeout_s: seconds to wait for any one answer.
        **kwargs: keyword arguments of the remote env (``difficulty``, ``split``, ...).

    Raises:
        ServerBusy: the server is at its session cap.
        ValueError: the server rejected the arguments.
        RemoteEnvError: the server does not serve `env_id`, or could not be reached.
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, url: str | None = None, env_id: str = "AgentRL/Dialog-v0", *, noise: str | None = None,
                 transport: str = "http", timeout_s: float = 60.0, **kwargs: Any) -> None:
        if transport not in _TRANSPORTS:
            raise ValueError(f"transport must be one of {_TRANSPORTS}, got {transport!r}")
        if url is None:
            url = _loopback_url()
        self.url = url.rstrip("/")
        self.env_id = env_id
        self.transport = transport
        self.session_id: str | None = None
        self._timeout_s = timeout_s
        self._http = _Connection(self.url, timeout_s)
        self._ws: Any = None
        self._ws_stack = ExitStack()
        #: The session lives on the WebSocket (opened by its first message): closing the socket ends it.
        self._on_socket = False
        body = {"env_id": env_id, "kwargs": kwargs, "noise": noise}
        try:
            info = self._open_on_socket(body) if transport == "ws" else None
            if info is None:
                info = self._request("POST", "/sessions", body)
            self.session_id = info["session_id"]
            self.observation_space = space_from_spec(info["observation_space"])
            self.action_space = space_from_spec(info["action_space"])
            if transport == "ws" and self._ws is None:
                self._ws = self._connect_ws(f"/sessions/{self.session_id}/ws")
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        out = self._call("reset", {"seed": seed, "options": options})
        return out["obs"], out["info"]

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        out = self._call("step", {"action": sendable(action)})
        return out["obs"], out["reward"], out["terminated"], out["truncated"], out["info"]

    def close(self) -> None:
        """Delete the session and drop the connections. Never raises: the server reaps what is left."""
        if self.session_id is not None:
            session_id, self.session_id = self.session_id, None
            try:
                if self._on_socket:
                    self._ws_close()
                else:
                    self._http.request("DELETE", f"/sessions/{session_id}", None)
            except (OSError, http.client.HTTPException, TimeoutError, RemoteEnvError):
                pass  # The server is gone or unreachable; its reaper frees the session.
        self._ws = None
        self._ws_stack.close()
        self._http.close()
        super().close()

    # ------------------------------------------------------------------ transport
    def _call(self, op: str, body: dict[str, Any]) -> dict[str, Any]:
        if self.session_id is None:
            raise RemoteEnvError(0, "closed", "the env is closed")
        if self._ws is None:
            return self._request("POST", f"/sessions/{self.session_id}/{op}", body)
        return self._ws_exchange({"op": op, **body})

    def _ws_exchange(self, message: dict[str, Any]) -> dict[str, Any]:
        from websockets.exceptions import ConnectionClosed

        try:
            self._ws.send(json.dumps(message))
            out = json.loads(self._ws.recv(timeout=self._timeout_s))
        except ConnectionClosed as exc:
            why = f"{exc.rcvd.reason} (code {exc.rcvd.code})" if exc.rcvd is not None else "no close frame"
            raise RemoteEnvError(0, "connection_closed", f"the server closed the session's WebSocket: {why}") from None
        except TimeoutError:
            raise RemoteEnvError(0, "timeout", f"no answer within {self._timeout_s:g} s") from None
        if "error" in out:
            error = out["error"]
            _raise(0, error, str(error.get("retry_after_s")) if "retry_after_s" in error else None)
        return out

    def _request(self, method: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
        try:
            status, retry_after, data = self._http.request(method, path, json.dumps(body).encode())
        except (OSError, http.client.HTTPException) as exc:
            raise RemoteEnvError(0, "connection_lost", f"cannot reach the env server at {self.url} ({method} {path}: "
                                                       f"{exc.__class__.__name__}: {exc})") from None
        try:
            payload = json.loads(data) if data else {}
        except ValueError:
            payload = {}
        if status >= 400:
            error = payload.get("error") if isinstance(payload, dict) else None
            _raise(status, error or {"code": "http_error", "message": data[:200].decode("utf-8", "replace")},
                   retry_after)
        return payload

    def _connect_ws(self, path: str) -> Any:
        from agentgym.server.ws_blocking import BlockingWebSocket

        ws_url = "ws" + self.url[len("http"):] + path
        # No compression (none is offered): messages are small, and deflate costs more than it saves on a LAN.
        return self._ws_stack.enter_context(BlockingWebSocket(ws_url, max_size=None, open_timeout=self._timeout_s))

    def _open_on_socket(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """Open the session over a WebSocket of its own (``/ws``): the session is never without its
        client, and one connection carries it all, so it stays with the worker that accepted it.
        None from a server without that route (the session is then made over HTTP)."""
        from websockets.exceptions import InvalidStatus

        try:
            self._ws = self._connect_ws("/ws")
        except InvalidStatus as exc:
            if exc.response.status_code in (403, 404):  # a server of an earlier version
                return None
            raise RemoteEnvError(exc.response.status_code, "http_error",
                                 f"the server refused the WebSocket at {self.url}/ws") from None
        except (OSError, TimeoutError) as exc:
            raise RemoteEnvError(0, "connection_lost", f"cannot reach the env server at {self.url} (WebSocket /ws: "
                                                       f"{exc.__class__.__name__}: {exc})") from None
        self._on_socket = True
        return self._ws_exchange({"op": "open", **body})

    def _ws_close(self) -> None:
        """End the session over its socket, and wait until the server says it is closed."""
        if self._ws is not None:
            self._ws_exchange({"op": "close"})


class _Connection:
    """One keep-alive HTTP/1.1 connection, reopened when the server has dropped it while idle.

    The standard library's, not httpx (which the board's clients use): every step is a request,
    and httpx writes a request's headers and body apart and builds its request and response
    models anew for each, which costs the client more CPU and more round trip than the step.
    """

    def __init__(self, url: str, timeout_s: float) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"url must be http:// or https:// with a host, got {url!r}")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")
        self._timeout_s = timeout_s
        self._conn: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, body: bytes | None) -> tuple[int, str | None, bytes]:
        conn = self._open()
        try:
            conn.request(method, self._prefix + path, body=body, headers={"Content-Type": "application/json"})
            response = conn.getresponse()
            data = response.read()
        except BaseException:
            self.close()
            raise
        if response.will_close:
            self.close()
        return response.status, response.getheader("Retry-After"), data

    def _open(self) -> http.client.HTTPConnection:
        if self._conn is not None and self._conn.sock is not None:
            # An idle keep-alive socket that reads as ready has been closed by the server.
            if select.select([self._conn.sock], [], [], 0)[0]:
                self.close()
        if self._conn is None:
            cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            self._conn = cls(self._host, self._port, timeout=self._timeout_s)
        if self._conn.sock is None:
            self._conn.connect()
            # Requests are small and answered at once: never wait for Nagle.
            self._conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _raise(status: int, error: dict[str, Any], retry_after: str | None) -> None:
    code, message = str(error.get("code", "error")), str(error.get("message", ""))
    if code == "reset_needed":
        raise ResetNeeded(message)
    if code in _BAD_INPUT:
        raise ValueError(f"the server rejected the request ({code}): {message}")
    if code == "too_many_sessions":
        try:
            wait = float(retry_after or 1)
        except ValueError:
            wait = 1.0
        raise ServerBusy(status, code, message, wait)
    raise RemoteEnvError(status, code, message)


_LOOPBACK: Any = None
#: Envs made at once in several threads must share one loopback server, not start one each.
_LOOPBACK_LOCK = threading.Lock()


def _loopback_url() -> str:
    """The URL of this process's own loopback server, started on first use."""
    global _LOOPBACK
    with _LOOPBACK_LOCK:
        if _LOOPBACK is None:
            from agentgym.server.serve import ServerThread

            _LOOPBACK = ServerThread().start()
        return _LOOPBACK.url
