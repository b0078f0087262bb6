"""Request and response bodies of the env server: strict, closed pydantic models.

Requests reject unknown fields and coerce nothing (``"1"`` is not a seed). Responses are written
by the server itself as JSON (see `agentgym.server.wire`); these models document them in the
OpenAPI schema, and the fuzz test holds every response to it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentgym.core.seeding import MAX_SEED

__all__ = [
    "CreateSession", "EnvInfo", "EnvKwargs", "EnvList", "ErrorBody", "ErrorResponse", "Health", "Issue",
    "MAX_NOISE_CHARS", "MAX_TURNS", "ResetRequest", "ResetResponse", "SessionInfo", "SpaceSpec", "StepRequest",
    "StepResponse", "SESSION_ID_PATTERN",
]

#: Session ids are `secrets.token_urlsafe` strings; anything else cannot name a session.
SESSION_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _Response(BaseModel):
    model_config = ConfigDict(extra="forbid")


#: The longest turn budget a client may ask for: a few times the longest any task draws (the
#: transcript, and so a session's memory, grows with every turn).
MAX_TURNS = 256

#: A noise spec's length at most ("tool_failure=0.2,ambiguity=0.5" is 30).
MAX_NOISE_CHARS = 1000

_NOISE = Field(default=None, min_length=1, max_length=MAX_NOISE_CHARS,
               description="a noise spec or preset, e.g. 'tool_failure=0.2,ambiguity=0.5' or 'light'")


class EnvKwargs(_Request):
    """The env arguments a client may set: the documented ones of every ``AgentRL/*`` env, within
    bounds. Anything else (the env's parts, gym.make's own parameters) is refused, naming the
    field: a client never chooses the code a session runs."""

    difficulty: Literal["easy", "medium", "hard"] | None = Field(
        default=None, description="fix the difficulty (default: drawn per episode)")
    split: Literal["train", "test"] | None = Field(default=None, description="the task split (default: train)")
    domain: str | None = Field(default=None, min_length=1, max_length=64, pattern=r"^[a-z][a-z0-9_]*$",
                               description="fix the domain (default: drawn from the split's)")
    max_turns: int | None = Field(default=None, ge=1, le=MAX_TURNS,
                                  description="the turn budget (default: the task's own)")
    render_mode: Literal["ansi"] | None = Field(default=None, description="'ansi' renders the transcript")
    noise: str | None = _NOISE


class CreateSession(_Request):
    """Open a session on one registered env."""

    env_id: str = Field(min_length=1, max_length=200, description="a registered id, e.g. AgentRL/Dialog-v0 "
                                                                  "(GET /envs lists them)")
    kwargs: EnvKwargs = Field(default_factory=EnvKwargs, description="keyword arguments of gym.make")
    noise: str | None = _NOISE


class ResetRequest(_Request):
    """Start an episode."""

    seed: int | None = Field(default=None, ge=0, le=MAX_SEED, description="the episode seed; none: drawn")
    options: dict[str, Any] | None = Field(default=None, description="reset options of the env")


class StepRequest(_Request):
    """Take one turn."""

    action: str | dict[str, Any] = Field(description="the assistant's turn, or an OpenAI assistant message")


class SpaceSpec(_Response):
    """A text space."""

    type: str
    min_length: int | None = None
    max_length: int | None = None
    charset: str | None = None


class SessionInfo(_Response):
    """A new session and its env's spaces."""

    session_id: str
    env_id: str
    observation_space: SpaceSpec
    action_space: SpaceSpec


class ResetResponse(_Response):
    """What `env.reset` returned."""

    obs: str
    info: dict[str, Any]


class StepResponse(_Response):
    """What `env.step` returned."""

    obs: str
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]


class EnvInfo(_Response):
    """One env the server offers, with its default spaces."""

    id: str
    observation_space: SpaceSpec
    action_space: SpaceSpec


class EnvList(_Response):
    """Every env the server offers."""

    envs: list[EnvInfo]


class Health(_Response):
    """Liveness and load."""

    status: Literal["ok"]
    sessions: int = Field(description="live sessions now")
    max_sessions: int = Field(description="the session cap")
    peak_sessions: int = Field(description="the most sessions ever admitted at once (never above the cap); "
                                           "with several workers, the sum of theirs")
    workers: int = Field(default=1, description="worker processes serving the port; sessions, cap and peak "
                                                "are summed over them")


class Issue(_Response):
    """One problem with a request."""

    loc: list[str | int]
    msg: str


class ErrorBody(_Response):
    code: str = Field(description="stable machine-readable code, e.g. unknown_session, invalid_request")
    message: str = Field(description="what was wrong, for a person")
    issues: list[Issue] | None = Field(default=None, description="validation problems, one per field")


class ErrorResponse(_Response):
    """Every 4xx and 5xx answer. Never a stack trace."""

    error: ErrorBody
