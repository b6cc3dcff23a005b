"""biomcp.usecases."""
