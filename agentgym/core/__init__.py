"""The env contract every family builds on: messages, tool calls and action parsing, spaces,
seeding, tools, tasks, the simulated user's understanding, and the `AgentEnv` base class."""
