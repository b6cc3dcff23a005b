"""Ports: the protocols use cases depend on. Standard library and biomcp only."""

from biomcp.ports.clock import Clock

__all__ = ["Clock"]
