"""`openai`: an agent served by any OpenAI-compatible chat-completions endpoint.

    agentgym eval AgentRL/ToolUse-v0 --agent openai --agent-arg base_url=http://127.0.0.1:8000/v1 \\
        --agent-arg model=Qwen/Qwen2.5-7B-Instruct --backend async --concurrency 16

vLLM, SGLang, llama.cpp's server, Ollama and hosted APIs all speak it. Every turn POSTs the
conversation (`agentgym.agents.chat.Conversation.api_messages`) and the env's tool schemas to
``{base_url}/chat/completions``. The API key is read from the environment variable named by
``api_key_env`` at each request; it is never part of the recorded config. A server that needs
no key gets no ``Authorization`` header.

The action: a reply with structured ``tool_calls`` is returned as the assistant message (a dict,
which the env accepts), passed through untouched, so malformed calls (arguments that are not
JSON, a missing name) are the env's to report as PARSE_ERROR or INVALID_ARGS, against the agent.
A reply without ``tool_calls`` returns its text, which the env parses for tool calls written as
text (``<tool_call>`` JSON and the rest).

Faults: 408, 409, 429 and 5xx answers, timeouts (``timeout_s`` per request), connection errors
and 200 answers that are not a chat completion are transient: tenacity retries them up to
``max_retries`` times, after a wait that doubles from ``backoff_s`` with jitter (from a generator
seeded by ``seed``), or the server's ``Retry-After``, all capped at ``max_backoff_s``. Other
answers (400, 401, 404, 422) are not retried. When a turn cannot be had, `OpenAIAgentError` ends the episode, which the runner records
as an agent error; the run goes on. Every failed attempt is counted in the episode's ``usage``,
beside the tokens the server reported, so nothing that happened is lost from the records.

Concurrency: with ``--backend async`` the harness awaits `aact` for up to ``--concurrency``
episodes at once, so that many requests are in flight. The sync `act` runs the same coroutine on
a private event-loop thread.
"""

from __future__ import annotations

import asyncio
import dataclasses
import email.utils
import math
import os
import random
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Any

import tenacity

from agentgym.agents.base import Agent, settings_from
from agentgym.agents.chat import ChatEpisode, Conversation, EpisodeLocal

__all__ = ["OpenAIAgent", "OpenAIConfig", "OpenAIAgentError"]

#: Statuses worth another try (as the OpenAI SDKs do): timeout, conflict, rate limit, server.
RETRY_STATUSES = frozenset({408, 409, 429})


class OpenAIAgentError(RuntimeError):
    """A turn the server would not give: a non-retryable answer, or retries exhausted."""


@dataclass(frozen=True)
class OpenAIConfig:
    """The settings of an `OpenAIAgent` (``--agent-arg key=value``)."""

    #: The model name the server knows.
    model: str = ""
    #: The API root, up to and including ``/v1``.
    base_url: str = "https://api.openai.com/v1"
    #: The environment variable holding the API key (unset: no Authorization header).
    api_key_env: str = "OPENAI_API_KEY"
    #: Sampling temperature (None: the server's default).
    temperature: float | None = 0.0
    #: Nucleus sampling mass (None: the server's default).
    top_p: float | None = None
    #: The most tokens per reply (None: the server's default).
    max_tokens: int | None = 512
    #: ``auto``, ``required`` or ``none``; sent only when the env offers tools.
    tool_choice: str = "auto"
    #: Seconds one request may take (connect, send, wait, read).
    timeout_s: float = 60.0
    #: Retries of one turn after a retryable fault.
    max_retries: int = 5
    #: The first retry's wait in seconds; it doubles each retry, times a jitter in [0.5, 1.5).
    backoff_s: float = 1.0
    #: The longest wait between tries, Retry-After included.
    max_backoff_s: float = 30.0
    #: Seed of the backoff jitter.
    seed: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model:
            raise ValueError("the openai agent needs model=NAME (--agent-arg model=NAME)")
        if not isinstance(self.base_url, str) or not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http(s) URL, got {self.base_url!r}")
        if self.tool_choice not in ("auto", "required", "none"):
            raise ValueError(f"tool_choice must be auto, required or none, got {self.tool_choice!r}")
        if not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise ValueError(f"max_retries must be a non-negative int, got {self.max_retries!r}")
        for name in ("timeout_s", "backoff_s", "max_backoff_s"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or value < 0 or (name == "timeout_s" and value == 0):
                raise ValueError(f"{name} must be a positive number, got {value!r}")


@dataclass
class _Episode(ChatEpisode):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0
    retries: int = 0
    missing_usage: int = 0
    truncated: int = 0
    failures: dict[str, int] = field(default_factory=dict)


class _Retryable(Exception):
    """One failed try worth another: `kind` names it in the usage record."""

    def __init__(self, kind: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.kind, self.retry_after = kind, retry_after


class _Backoff(tenacity.wait.wait_base):
    """The wait before a retry: exponential from ``backoff_s`` times a jitter in [0.5, 1.5) drawn
    from the agent's seeded generator, or the server's Retry-After; either capped at ``max_backoff_s``."""

    def __init__(self, settings: OpenAIConfig, jitter: random.Random) -> None:
        self._exponential = tenacity.wait_exponential(multiplier=settings.backoff_s, exp_base=2, max=math.inf)
        self._cap, self._jitter = settings.max_backoff_s, jitter

    def __call__(self, retry_state: tenacity.RetryCallState) -> float:
        fault = retry_state.outcome.exception() if retry_state.outcome is not None else None
        retry_after = getattr(fault, "retry_after", None)
        if retry_after is not None:
            return min(retry_after, self._cap)
        return min(self._exponential(retry_state) * (0.5 + self._jitter.random()), self._cap)


class OpenAIAgent(Agent):
    """A model behind an OpenAI-compatible chat-completions endpoint.

    Args:
        **kwargs: the fields of `OpenAIConfig` (``model`` is required).

    Raises:
        ValueError: an unknown or invalid setting.
    """

    name = "openai"

    def __init__(self, **kwargs: Any) -> None:
        self.settings = settings_from(OpenAIConfig, kwargs, "openai")
        self.url = self.settings.base_url.rstrip("/") + "/chat/completions"
        self._jitter = random.Random(self.settings.seed)
        self._episode: EpisodeLocal[_Episode] = EpisodeLocal("openai_agent_episode")
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_lock = threading.Lock()

    def config(self) -> dict[str, Any]:
        return dataclasses.asdict(self.settings)

    # ------------------------------------------------------------------ the agent protocol
    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self._episode.set(_Episode(Conversation.from_reset(info)))

    def _current(self) -> _Episode:
        episode = self._episode.get()
        if episode is None:
            raise RuntimeError("act() before reset(): the agent has no episode")
        return episode

    async def aact(self, obs: str, info: dict[str, Any]) -> str | dict[str, Any]:
        """The next turn, awaited (the async backend runs many of these at once)."""
        episode = self._current()
        episode.observe(info)
        action = await self._turn(episode)
        episode.took(action)
        return action

    def act(self, obs: str, info: dict[str, Any]) -> str | dict[str, Any]:
        episode = self._current()
        episode.observe(info)
        future = asyncio.run_coroutine_threadsafe(self._turn(episode), self._background_loop())
        try:
            action = future.result()
        except BaseException:
            future.cancel()  # e.g. the runner's per-episode timeout fired in this thread
            raise
        episode.took(action)
        return action

    def usage(self) -> dict[str, Any] | None:
        """The episode's tokens as the server reported them, and what each request went through."""
        episode = self._episode.get()
        if episode is None:
            return None
        return {"prompt_tokens": episode.prompt_tokens, "completion_tokens": episode.completion_tokens,
                "requests": episode.requests, "retries": episode.retries, "failures": dict(episode.failures),
                "missing_usage": episode.missing_usage, "truncated": episode.truncated}

    def close(self) -> None:
        """Stop the event-loop thread of the sync `act` (if it was started)."""
        with self._loop_lock:
            loop, self._loop = self._loop, None
        if loop is not None:
            loop.call_soon_threadsafe(loop.stop)

    # ------------------------------------------------------------------ one turn
    def _body(self, conversation: Conversation) -> dict[str, Any]:
        s = self.settings
        body: dict[str, Any] = {"model": s.model, "messages": conversation.api_messages()}
        if conversation.tools:
            body["tools"] = conversation.tools
            body["tool_choice"] = s.tool_choice
        for key in ("temperature", "top_p", "max_tokens"):
            if getattr(s, key) is not None:
                body[key] = getattr(s, key)
        return body

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self.settings.api_key_env)
        return {"Authorization": f"Bearer {key}"} if key else {}

    async def _turn(self, episode: _Episode) -> str | dict[str, Any]:
        body = self._body(episode.conversation)
        client = self._client()

        def failed(state: tenacity.RetryCallState) -> None:  # every try that raised a _Retryable
            kind = state.outcome.exception().kind  # type: ignore[union-attr]
            episode.failures[kind] = episode.failures.get(kind, 0) + 1

        def waiting(state: tenacity.RetryCallState) -> None:
            episode.retries += 1

        retrying = tenacity.AsyncRetrying(
            stop=tenacity.stop_after_attempt(self.settings.max_retries + 1),
            wait=_Backoff(self.settings, self._jitter),
            retry=tenacity.retry_if_exception_type(_Retryable),
            after=failed, before_sleep=waiting, reraise=True)
        try:
            reply = await retrying(self._post, client, body)
        except _Retryable as last:
            raise OpenAIAgentError(f"no reply from {self.url} after {self.settings.max_retries + 1} tries; "
                                   f"last: {last}") from None
        episode.requests += 1
        return self._action(episode, reply)

    async def _post(self, client: Any, body: dict[str, Any]) -> dict[str, Any]:
        import httpx

        try:
            response = await client.post(self.url, json=body, headers=self._headers(),
                                         timeout=self.settings.timeout_s)
        except httpx.TimeoutException as exc:
            raise _Retryable("timeout", f"no answer within {self.settings.timeout_s} s ({type(exc).__name__})") \
                from exc
        except httpx.TransportError as exc:
            raise _Retryable("connection", f"{type(exc).__name__}: {exc}") from exc
        status = response.status_code
        if status in RETRY_STATUSES or status >= 500:
            raise _Retryable(str(status), f"HTTP {status}: {response.text[:300]}",
                             _retry_after(response.headers.get("retry-after")))
        if status != 200:
            raise OpenAIAgentError(f"HTTP {status} from {self.url}: {response.text[:1000]}")
        try:
            reply = response.json()
            message = reply["choices"][0]["message"]
            if not isinstance(message, dict):
                raise TypeError("message is not an object")
        except (ValueError, KeyError, IndexError, TypeError, RecursionError) as exc:
            raise _Retryable("invalid_response", f"not a chat completion ({exc!r:.200}): {response.text[:300]}") \
                from exc
        return reply

    def _action(self, episode: _Episode, reply: dict[str, Any]) -> str | dict[str, Any]:
        usage = reply.get("usage")
        if isinstance(usage, dict) and isinstance(usage.get("prompt_tokens"), int):
            episode.prompt_tokens += usage["prompt_tokens"]
            completion = usage.get("completion_tokens")
            episode.completion_tokens += completion if isinstance(completion, int) else 0
        else:
            episode.missing_usage += 1
        choice = reply["choices"][0]
        if isinstance(choice, dict) and choice.get("finish_reason") == "length":
            episode.truncated += 1
        message = choice["message"]
        content = message.get("content")
        if message.get("tool_calls"):
            return {"role": "assistant", "content": content, "tool_calls": message["tool_calls"]}
        if content is None or isinstance(content, str):
            return content or ""
        return {"role": "assistant", "content": content}  # not text: the env says so

    # ------------------------------------------------------------------ clients and loops
    def _client(self) -> Any:
        """The HTTP client of the running event loop (a client cannot move between loops)."""
        import httpx

        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = httpx.AsyncClient(
                limits=httpx.Limits(max_connections=None, max_keepalive_connections=64))
        return client

    def _background_loop(self) -> asyncio.AbstractEventLoop:
        with self._loop_lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="openai-agent-loop", daemon=True).start()
                self._loop = loop
            return self._loop


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header: a number of seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
