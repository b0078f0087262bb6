"""agentgym: Gymnasium environments and a benchmark for agentic RL with language-model agents.

Importing the package registers every ``AgentRL/*`` id (string entry points, nothing heavy is
imported), so ``gym.make("AgentRL/Dialog-v0")`` works after ``import agentgym`` and
``gym.make("agentgym:AgentRL/Dialog-v0")`` works without it.
"""

from agentgym.registration import register_envs

__version__ = "0.1.0"
__all__ = ["__version__", "ENV_IDS"]

ENV_IDS: tuple[str, ...] = register_envs()
