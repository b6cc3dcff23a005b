"""bio-mcp: trustworthy PubMed evidence for LLM agents."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("bio-mcp")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"

__all__ = ["__version__"]
