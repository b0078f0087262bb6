"""The echo env of the side-by-side: the same behaviour as OpenEnv's echo template, as a Gymnasium env.

Each step returns the action as the observation, with reward ``0.1 * len(action)`` and the
message and step count in ``info``; it never ends, like OpenEnv's. Served under `ECHO_ID`.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from agentgym.core.spaces import UnicodeText

ECHO_ID = "Bench/Echo-v0"


class BenchEchoEnv(gym.Env[str, str]):
    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self) -> None:
        self.observation_space = UnicodeText(65536)
        self.action_space = UnicodeText(65536)
        self._steps = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        self._steps = 0
        return "Echo environment ready!", {}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        self._steps += 1
        return action, len(action) * 0.1, False, False, {"original_message": action, "step": self._steps}


def register() -> str:
    if ECHO_ID not in gym.registry:
        gym.register(id=ECHO_ID, entry_point=BenchEchoEnv, disable_env_checker=True)
    return ECHO_ID


if __name__ == "__main__":  # python benchmarks/server/echo_env.py ENV_CALLS PORT: serve echo and Dialog-v0
    import sys

    from agentgym.server.config import ServerConfig
    from agentgym.server.serve import serve

    serve(ServerConfig(max_sessions=64, env_calls=sys.argv[1], workers=1), port=int(sys.argv[2]),
          env_ids=[register(), "AgentRL/Dialog-v0"], log_level="warning")
