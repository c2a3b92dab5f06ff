"""Where the library meets agent frameworks and other programs: session stores for
openai-agents and pydantic-ai backed by session files, and the MCP server that lets an
agent look up its own history. Each module imports its framework only when used (they
are optional extras); everything here works through the layers below, never the CLI.
"""
