"""Conformance checks for agentgym-contract environments, shipped so third-party envs can reuse them.

`check_agent_env` (`agentgym.testing.conformance`) runs Gymnasium's `check_env` on the unwrapped
env and then the stricter checks of the agentgym contract (see docs/DESIGN.md, "The environment
contract"), with the actions of `agentgym.testing.probes`, and returns a report of what each metric
gets from the env (`agentgym.testing.readiness`); `trajectory_hash` (`agentgym.testing.replay`)
is the replay fingerprint the leaderboard uses. The package also holds the defect agents that
prove the metrics valid (`agentgym.testing.defects`, `agentgym.testing.validity`): it sits above
the agents and the harness (docs/ARCHITECTURE.md).

What an env needs to be checked (an ``AgentRL/*``-style text env):

- It is a `gymnasium.Env` whose actions and observations are `str`, with spaces that implement
  `sample()` and `contains()` (`agentgym.core.spaces.UnicodeText` does both).
- ``reset(*, seed=None, options=None)`` calls ``super().reset(seed=seed)`` and returns an info
  dict with ``messages`` (OpenAI chat messages), ``tools`` (OpenAI function-tool schemas, possibly
  empty), ``task`` (at least family, domain, difficulty, split and id, never the hidden goal) and
  ``seed`` (the episode seed, also when reset got none; resetting with it replays the episode).
- ``step(action)`` never raises on a bad action, returns a Python ``float`` reward and Python
  ``bool`` flags, raises `gymnasium.error.ResetNeeded` before the first reset and after the
  episode ended, and the episode ends (terminated or truncated) within a turn budget, with
  ``info["episode"]`` holding at least success, score, turns and tool_calls, and the same dict
  under ``info["episode_summary"]`` (Gymnasium's `RecordEpisodeStatistics` then needs a key of
  its own: ``stats_key="episode_stats"``).
- A step's ``info["messages"]`` is a slice of the conversation a chat template accepts: the
  assistant's turn as the env read it first, then the env's answer; every tool message answers
  a call of that turn (its ``tool_call_id`` is the id of one of the turn's ``tool_calls``).
- Everything returned is plain JSON data (str, int, float, bool, None, list, dict): that is what
  `trajectory_hash` serialises, and what records and the leaderboard store.
- For the fresh-process replay, the env is given as a registered id (or an instance whose
  ``spec`` can be serialised with `gymnasium.envs.registration.EnvSpec.to_json`); the child
  process imports `agentgym` and then makes the env from that id or spec.
"""

from agentgym.testing.conformance import CHECKS, HIDDEN_KEYS, REQUIRED_TASK_KEYS, check_agent_env
from agentgym.testing.probes import GARBAGE_ACTIONS, probe_actions
from agentgym.testing.readiness import EnvReport, Finding
from agentgym.testing.replay import TrajectoryHasher, canonical_json, fresh_process_hashes, trajectory_hash

__all__ = [
    "CHECKS",
    "EnvReport",
    "Finding",
    "GARBAGE_ACTIONS",
    "HIDDEN_KEYS",
    "REQUIRED_TASK_KEYS",
    "TrajectoryHasher",
    "canonical_json",
    "check_agent_env",
    "fresh_process_hashes",
    "probe_actions",
    "trajectory_hash",
]
