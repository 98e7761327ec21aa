"""Layer 7 (the only MCP SDK importer): the tools for agents."""
