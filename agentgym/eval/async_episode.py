"""The async twin of `runner.play_job`, for agents that wait on I/O (HTTP model servers)."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from agentgym.eval.runner import AgentSpec, AgentTimeout, EpisodeJob, EpisodeState, Slot

__all__ = ["play_job_async"]


async def _act(agent: Any, obs: str, info: dict[str, Any]) -> Any:
    aact = getattr(agent, "aact", None)
    if aact is not None and inspect.iscoroutinefunction(aact):
        return await aact(obs, info)
    return await asyncio.to_thread(agent.act, obs, info)


async def play_job_async(job: EpisodeJob, agent_spec: AgentSpec, timeout_s: float | None = None,
                         slot: Slot | None = None) -> dict[str, Any]:
    """Play one job with an awaited agent, on `slot`'s env and agent instances (each concurrent
    episode needs its own); agent faults and timeouts become the record's error."""
    ep = EpisodeState(job, agent_spec, slot)

    async def episode() -> None:
        areset = getattr(ep.agent, "areset", None)
        if areset is not None and inspect.iscoroutinefunction(areset):
            await areset(ep.obs, ep.view())
        else:
            ep.agent.reset(ep.obs, ep.view())
        while not ep.apply(await _act(ep.agent, ep.obs, ep.view())):
            pass

    try:
        # asyncio.timeout keeps the episode in this task (wait_for would run it in a child task).
        async with asyncio.timeout(timeout_s):
            await episode()
    except TimeoutError:
        try:
            raise AgentTimeout(f"episode exceeded {timeout_s} s")
        except AgentTimeout as exc:
            ep.fail(exc)
    except Exception as exc:  # noqa: BLE001 - agent faults are data here, by design (R3)
        ep.fail(exc)
    return ep.record()
