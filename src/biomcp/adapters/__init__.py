"""biomcp.adapters."""
