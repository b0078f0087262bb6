"""Training baselines: the thin PPO over candidate actions (`agentgym.baselines.ppo`)."""
