"""bio-mcp: trustworthy PubMed evidence for LLM agents.

As a library: `corpus = biomcp.open_corpus()`, then `corpus.sync(...)`, `corpus.search(...)`,
`corpus.get(...)` (see `biomcp.entrypoints.library`). `import biomcp` stays light: the corpus
machinery is imported on first use of `open_corpus` or `Corpus`.
"""

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import Any

try:
    __version__ = version("bio-mcp")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"

__all__ = ["Corpus", "__version__", "open_corpus"]

_LAZY = frozenset({"Corpus", "open_corpus"})


def __getattr__(name: str) -> Any:
    # A dynamic import: the lower layers import `biomcp.__version__`, and a static edge from
    # here to the entry points would make each of them depend on the whole application.
    if name in _LAZY:
        value = getattr(import_module("biomcp.entrypoints.library"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'biomcp' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
