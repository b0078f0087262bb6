"""A pool of env actors spread over a Ray cluster's CPU nodes."""

from __future__ import annotations

import itertools
from typing import Any

from agentgym.rayenv.host import EnvHost

__all__ = ["EnvActorPool", "default_pool"]

_DEFAULT: EnvActorPool | None = None


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError("env actors need Ray: pip install agentrl-gym[ray]") from exc
    return ray


class EnvActorPool:
    """`size` env actors, each hosting many env sessions; a new session goes to the next actor
    in turn. The pool is a list of actor handles, so it can be passed to Ray tasks and actors
    (a trainer's rollout workers), and every copy places sessions on the same actors.

    Args:
        size: actors (default: one per CPU of the cluster, less one for the driver, at least 1).
        num_cpus: the CPUs Ray reserves for each actor.
        resources: custom Ray resources each actor needs (e.g. ``{"env_node": 0.01}`` to place
            the actors on the CPU nodes that offer it).
        spread: spread the actors over the nodes (Ray's ``SPREAD`` strategy) rather than pack them.
        address: the cluster to join when Ray is not initialised yet (None: a local one).
    """

    def __init__(self, size: int | None = None, *, num_cpus: float = 1.0, resources: dict[str, float] | None = None,
                 spread: bool = True, address: str | None = None) -> None:
        ray = _ray()
        if not ray.is_initialized():
            ray.init(address=address, include_dashboard=False, log_to_driver=False, configure_logging=False,
                     ignore_reinit_error=True)
        if size is None:
            size = max(1, int(ray.cluster_resources().get("CPU", 1) // max(num_cpus, 1e-3)) - 1)
        actor = ray.remote(EnvHost).options(num_cpus=num_cpus, resources=resources or {},
                                           scheduling_strategy="SPREAD" if spread else "DEFAULT")
        self.actors: list[Any] = [actor.remote() for _ in range(size)]
        self._turn = itertools.count()

    def __len__(self) -> int:
        return len(self.actors)

    def __getstate__(self) -> dict[str, Any]:
        return {"actors": self.actors}

    def __setstate__(self, state: dict[str, Any]) -> None:
        import random

        self.actors = state["actors"]
        self._turn = itertools.count(random.randrange(len(self.actors)))  # copies start at different actors

    def next_actor(self) -> Any:
        """The actor the next session goes to."""
        return self.actors[next(self._turn) % len(self.actors)]

    def nodes(self) -> list[str]:
        """The node id of each actor (where Ray placed it)."""
        ray = _ray()
        return ray.get([a.__ray_call__.remote(lambda self: ray.get_runtime_context().get_node_id())
                        for a in self.actors])

    def sessions(self) -> int:
        """The sessions the actors hold now."""
        return sum(_ray().get([a.sessions.remote() for a in self.actors]))

    def shutdown(self) -> None:
        """Kill the actors (their sessions go with them)."""
        ray = _ray()
        for actor in self.actors:
            ray.kill(actor)
        self.actors = []


def default_pool() -> EnvActorPool:
    """This process's pool, made on first use with the defaults (Ray started or joined then)."""
    global _DEFAULT
    if _DEFAULT is None or not _DEFAULT.actors:
        _DEFAULT = EnvActorPool()
    return _DEFAULT
