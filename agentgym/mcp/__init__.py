"""agentgym episodes as MCP servers: any MCP-capable agent harness plays them (``agentgym mcp``).

- `agentgym.mcp.choice`: which episode a session plays, from its URL.
- `agentgym.mcp.episode`: one episode as MCP tools (the env's and ``say``).
- `agentgym.mcp.app`: the Streamable HTTP server (the official ``mcp`` SDK) and its sessions.
- `agentgym.mcp.commands`: the ``agentgym mcp`` command.
"""
