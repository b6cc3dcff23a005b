"""Start bio-mcp's stdio MCP server: the program an MCPB host runs from the bundle.

The host starts it with `uv run`, which installs the bundle's project (`pyproject.toml`, `src/`)
into a private environment first. The user's settings arrive as environment variables.
"""

import os
import sys

# A host may pass an optional field the user left blank as its literal placeholder.
_UNFILLED = "${user_config."


def _drop_unfilled_placeholders() -> None:
    for name in [name for name, value in os.environ.items() if value.startswith(_UNFILLED)]:
        del os.environ[name]


if __name__ == "__main__":
    _drop_unfilled_placeholders()
    from biomcp.entrypoints.cli.main import main

    sys.argv = ["biomcp", "serve"]
    main()
