"""Adapters that let RL trainers for language models train on agentgym envs.

One module per trainer, each imported on its own and importing its trainer only when used:

- `agentgym.integrations.trl`: ``environment_factory`` classes for ``trl.GRPOTrainer``.
- `agentgym.integrations.verl`: an agent loop (``AgentLoopBase``) for verl's rollouts.
- `agentgym.integrations.openrlhf`: an agent executor file for OpenRLHF's ``--train.agent_func_path``.
- `agentgym.integrations.skyrl`: a SkyRL-gym ``BaseTextEnv``.

Each trainer's verified version is pinned in ``requirements/integrations-<trainer>.txt`` and
checked when the adapter is used. A dataset row names its episode with a `TaskSpec` (env id,
seed, env arguments); every adapter can also step its episodes on an ``agentgym serve`` server
(``remote_url``) instead of in process. Examples: ``examples/train_<trainer>.py``.
"""

from agentgym.integrations._requirements import PINS
from agentgym.integrations._tasks import EnvSession, TaskSpec, task_specs

__all__ = ["PINS", "EnvSession", "TaskSpec", "task_specs"]
