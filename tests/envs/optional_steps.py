"""An oracle that leaves out the gold's optional steps (`Step.optional`), for the tests that an
agent that skips them loses nothing: it plays only the steps every agent must make."""

from __future__ import annotations

from typing import Any

from agentgym.agents.oracle import OracleAgent


class SkippingOracle(OracleAgent):
    """The oracle without the gold's optional steps: page 1 of a list then the page that
    matters, a total added up without `sum_amounts`."""

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        task = self._env.task
        task.gold = task.gold.with_plan(tuple(s for s in task.gold.plan if not s.optional))
        super().reset(obs, info)
