"""The MCP SDK's internals that bio-mcp relies on, named in this module only.

The SDK's public API does not cover four things the server needs: declaring a tool's input
schema itself (`MCPServer._tool_input_schema`), telling whether the SDK registered a tool or a
prompt, reaching the low-level server (to run stdio on a watched stream, to set the
instructions), and building an `MCPServer` without its Rich logging handler. Everything else
imports the functions below. `PRIVATE_NAMES` lists each internal by owner and name; a test
checks them all, so an SDK upgrade that removes one fails by name, not somewhere deep.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver import server as _sdk_server

__all__ = [
    "PRIVATE_NAMES",
    "lowlevel",
    "missing_private_names",
    "prompt_registered",
    "sdk_logging_left_alone",
    "set_instructions",
    "tool_registered",
]

#: (owner, name) of every SDK internal used here; an owner is a class or a module.
PRIVATE_NAMES: Final[tuple[tuple[Any, str], ...]] = (
    (MCPServer, "_tool_input_schema"),  # overridden by BioMcpServer
    (_sdk_server, "configure_logging"),  # what MCPServer.__init__ calls
)
#: Attributes an `MCPServer` instance sets in its `__init__` and this module reads.
INSTANCE_NAMES: Final = ("_tool_manager", "_prompt_manager", "_lowlevel_server")


def missing_private_names(server: MCPServer[Any] | None = None) -> list[str]:
    """The SDK internals this module relies on that the installed SDK lacks (empty when all
    are there); with `server`, its instance attributes are checked too."""
    missing = [
        f"{getattr(owner, '__name__', owner)}.{name}"
        for owner, name in PRIVATE_NAMES
        if not hasattr(owner, name)
    ]
    if server is not None:
        missing += [f"MCPServer().{name}" for name in INSTANCE_NAMES if not hasattr(server, name)]
    return missing


@contextmanager
def sdk_logging_left_alone() -> Iterator[None]:
    """`MCPServer.__init__` configures logging with a Rich handler: importing Rich costs about
    0.2 s of every start, for a handler `logs.configure_logging` replaces once the server is
    built. Within this block, the SDK's `configure_logging` does nothing."""
    # (the name the SDK's server module calls, imported there from its logging utilities)
    original = _sdk_server.configure_logging  # type: ignore[attr-defined]
    _sdk_server.configure_logging = lambda *args, **kwargs: None  # type: ignore[attr-defined]
    try:
        yield
    finally:
        _sdk_server.configure_logging = original  # type: ignore[attr-defined]


def tool_registered(server: MCPServer[Any], name: str) -> bool:
    """Whether the SDK's own registry (not bio-mcp's specs) holds the tool `name`."""
    return server._tool_manager.get_tool(name) is not None


def prompt_registered(server: MCPServer[Any], name: str) -> bool:
    """Whether the prompt `name` is registered."""
    return server._prompt_manager.get_prompt(name) is not None


def lowlevel(server: MCPServer[Any]) -> Any:
    """The low-level server under `server` (what `run_stdio_async` runs)."""
    return server._lowlevel_server


def set_instructions(server: MCPServer[Any], text: str) -> None:
    """The instructions `initialize` answers with."""
    server._lowlevel_server.instructions = text
