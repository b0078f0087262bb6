"""agentgym envs as Ray actors, for trainers that already run on Ray (verl, SkyRL).

- `agentgym.rayenv.host`: `EnvHost`, the actor's body: env sessions by id, as the env server's.
- `agentgym.rayenv.pool`: `EnvActorPool`, actors spread over the cluster's CPU nodes.
- `agentgym.rayenv.client`: `RayEnv`, a ``gymnasium.Env`` whose env lives on a pool's actor
  (what `agentgym.server.client.RemoteEnv` is for an env server).
- `agentgym.rayenv.vector`: `RayVectorEnv`, many envs of a pool stepped at once.

Importing this package needs no Ray; making a pool does (``pip install agentrl-gym[ray]``).
"""
