"""The tool-use family: chains of dependent tool calls over generated worlds, with policies."""
