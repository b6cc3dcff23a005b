"""biomcp.entrypoints."""
