"""``python -m agentgym.baselines.ppo [options]``: the same as ``agentgym train ppo``."""

from agentgym.baselines.ppo.training import main

raise SystemExit(main())
