"""agentgym: Gymnasium environments and a benchmark for agentic RL with language-model agents.

Importing the package registers every ``AgentRL/*`` id (string entry points, nothing heavy is
imported), so ``gym.make("AgentRL/Dialog-v0")`` works after ``import agentgym`` and
``gym.make("agentgym:AgentRL/Dialog-v0")`` works without it.
"""

from typing import Any

from agentgym.registration import register_env, register_envs

__version__ = "0.41.0"
__all__ = ["__version__", "ENV_IDS", "make_tool_env", "register_env", "toolenv"]

ENV_IDS: tuple[str, ...] = register_envs()


def __getattr__(name: str) -> Any:
    # The builder of your own envs is imported on first use: `import agentgym` stays light.
    if name in ("make_tool_env", "toolenv"):
        import agentgym.toolenv as toolenv

        return toolenv.make_tool_env if name == "make_tool_env" else toolenv
    raise AttributeError(f"module 'agentgym' has no attribute {name!r}")
