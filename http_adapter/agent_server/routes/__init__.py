"""Route groups of the agent server: each module decodes, calls and encodes, nothing more."""
