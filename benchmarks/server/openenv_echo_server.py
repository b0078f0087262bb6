"""OpenEnv's echo env served by OpenEnv's own server (openenv-core), for the side-by-side.

Runs in a separate virtual environment with openenv-core installed (a benchmark-only
dependency, never imported by agentgym):

    python3 -m venv /tmp/openenv-venv && /tmp/openenv-venv/bin/pip install openenv-core
    /tmp/openenv-venv/bin/python benchmarks/server/openenv_echo_server.py PORT [MAX_CONCURRENT_ENVS]

The env is OpenEnv's `openenv init` template (an echo env), with its placeholders filled in.
"""

from __future__ import annotations

import sys
from uuid import uuid4

import uvicorn
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field


class EchoAction(Action):
    message: str = Field(..., description="Message to echo back")


class EchoObservation(Observation):
    echoed_message: str = Field(default="", description="The echoed message")
    message_length: int = Field(default=0, description="Length of the echoed message")


class EchoEnvironment(Environment):
    SUPPORTS_CONCURRENT_SESSIONS: bool = True

    def __init__(self) -> None:
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._reset_count = 0

    def reset(self) -> EchoObservation:
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._reset_count += 1
        return EchoObservation(echoed_message="Echo environment ready!", message_length=0, done=False, reward=0.0)

    def step(self, action: EchoAction) -> EchoObservation:  # type: ignore[override]
        self._state.step_count += 1
        message = action.message
        return EchoObservation(echoed_message=message, message_length=len(message), done=False,
                               reward=len(message) * 0.1,
                               metadata={"original_message": message, "step": self._state.step_count})

    @property
    def state(self) -> State:
        return self._state


if __name__ == "__main__":
    # PORT [MAX_CONCURRENT_ENVS]: the capacity grid (bench_capacity.py) raises the cap past its largest count.
    cap = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    app = create_app(EchoEnvironment, EchoAction, EchoObservation, env_name="echo", max_concurrent_envs=cap)
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
