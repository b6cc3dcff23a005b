"""Build bio-mcp's MCPB bundle (one-click install in Claude Desktop) and check `server.json`.

    .venv/bin/python scripts/mcpb.py [--out dist/mcpb] [--no-install]

The bundle is the `uv` server type of the MCPB manifest: the project itself (`pyproject.toml`,
`README.md`, `src/biomcp/`) beside `deploy/mcpb/manifest.json` and its launcher. The host runs
`uv run` in the unpacked bundle, which installs the dependencies from PyPI on first start.

Steps: stage the bundle in `OUT/bundle/`; list the tools of a server started from that folder
and write them into the staged manifest; check `server.json` against the MCP Registry's schema;
run the official `mcpb validate` and `mcpb pack`, which writes `OUT/bio-mcp-VERSION.mcpb`.
Two pinned tools are installed once into a cache folder outside the repository
(`~/.cache/bio-mcp`, or `$BIOMCP_TOOL_CACHE`): the `mcpb` command line (npm, in `mcpb/VERSION/`)
and `uv` (PyPI, in `uv/VERSION/`), which the tests use to start the bundle as a host does.
`--no-install` fails instead of installing them. Each run starts from an empty `OUT/bundle/`.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
#: The official MCPB command line (npm package `@anthropic-ai/mcpb`), pinned.
MCPB_CLI_VERSION = "2.1.2"
MCPB_PACKAGE = f"@anthropic-ai/mcpb@{MCPB_CLI_VERSION}"
#: The `uv` that starts the unpacked bundle in the tests (an MCPB host brings its own).
UV_VERSION = "0.13.9"
CACHE = Path(os.environ.get("BIOMCP_TOOL_CACHE", Path.home() / ".cache" / "bio-mcp"))
DEPLOY = ROOT / "deploy" / "mcpb"
#: The MCP Registry's published server.json schema, vendored (its README gives the source).
REGISTRY_SCHEMA = ROOT / "tests" / "fixtures" / "mcp_registry" / "server.schema.json"
#: What of the project goes into the bundle, beside the files of deploy/mcpb.
PROJECT_FILES = ("pyproject.toml", "README.md")
#: Variables that would change what the listing server offers: it starts with none of them.
_ISOLATED = ("BIOMCP_", "MCP_", "NCBI_", "WEAVIATE_", "OPENAI_")


class BuildError(Exception):
    """A step failed; the message says which and why."""


def package_version() -> str:
    """The version written in `src/biomcp/__init__.py` (the one place it is written)."""
    text = (ROOT / "src" / "biomcp" / "__init__.py").read_text(encoding="utf-8")
    found = re.search(r'^__version__ = "([^"]+)"', text, re.MULTILINE)
    if found is None:
        raise BuildError("no __version__ line in src/biomcp/__init__.py")
    return found.group(1)


def mcpb_cli(*, install: bool) -> Path:
    """The pinned `mcpb` executable, installed into the cache folder if missing and allowed."""
    home = CACHE / "mcpb" / MCPB_CLI_VERSION
    if not home.is_dir():
        npm = shutil.which("npm")
        if npm is None:
            raise BuildError("npm is missing: install Node.js with npm to build the bundle")
        command = [npm, "install", "--no-save", "--no-package-lock", MCPB_PACKAGE, "--prefix"]
        _install(home, lambda partial: [[*command, str(partial)]], install=install)
    return home / "node_modules" / ".bin" / "mcpb"


def uv_binary(*, install: bool) -> Path:
    """The pinned `uv` executable, installed into the cache folder if missing and allowed."""
    home = CACHE / "uv" / UV_VERSION
    if not home.is_dir():
        pip = [sys.executable, "-m", "pip", "install", "-q", f"uv=={UV_VERSION}", "--target"]
        _install(home, lambda partial: [[*pip, str(partial)]], install=install)
    return home / "bin" / "uv"


def _install(home: Path, steps: Callable[[Path], list[list[str]]], *, install: bool) -> None:
    """Run the install `steps` into a fresh folder beside `home`, then rename it to `home`:
    an interrupted install leaves no half-installed tool."""
    if not install:
        raise BuildError(f"{home} is not installed (run scripts/mcpb.py without --no-install)")
    partial = Path(tempfile.mkdtemp(prefix=f"{home.name}.", dir=_made(home.parent)))
    for step in steps(partial):
        done = subprocess.run(step, capture_output=True, text=True, check=False)  # noqa: S603
        if done.returncode != 0:
            shutil.rmtree(partial, ignore_errors=True)
            raise BuildError(f"{' '.join(step)} failed:\n{done.stderr[-2000:]}")
    try:
        partial.rename(home)
    except OSError:  # another run installed it meanwhile
        shutil.rmtree(partial, ignore_errors=True)


def _made(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def stage(bundle: Path, version: str) -> dict[str, Any]:
    """Lay the bundle out in `bundle` (emptied first); return its manifest."""
    manifest = json.loads((DEPLOY / "manifest.json").read_text(encoding="utf-8"))
    if manifest["version"] != version:
        raise BuildError(
            f"deploy/mcpb/manifest.json has version {manifest['version']}, the package {version}"
        )
    shutil.rmtree(bundle, ignore_errors=True)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", ".venv", "uv.lock")
    shutil.copytree(DEPLOY, bundle, ignore=skip)
    for name in PROJECT_FILES:
        shutil.copy2(ROOT / name, bundle / name)
    shutil.copytree(ROOT / "src" / "biomcp", bundle / "src" / "biomcp", ignore=skip)
    entry = bundle / manifest["server"]["entry_point"]
    if not entry.is_file():
        raise BuildError(f"the manifest's entry point {entry.relative_to(bundle)} is missing")
    return dict(manifest)


def listing_env(bundle: Path, data_dir: Path) -> dict[str, str]:
    """The environment of a server started from the staged bundle with default settings."""
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(_ISOLATED)}
    env.update(BIOMCP_DATA_DIR=str(data_dir), PYTHONPATH=str(bundle / "src"))
    return env


async def _list_tools(bundle: Path, data_dir: Path) -> list[Any]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    entry = bundle / "server" / "main.py"
    params = StdioServerParameters(
        command=sys.executable, args=[str(entry)], env=listing_env(bundle, data_dir), cwd=data_dir
    )
    with (data_dir / "server.log").open("w", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as client:
            return list((await client.list_tools()).tools)


def live_tools(bundle: Path) -> list[dict[str, str]]:
    """The tools a server started from `bundle` lists, as the manifest declares them."""
    with tempfile.TemporaryDirectory(prefix="biomcp-mcpb-") as scratch:
        data_dir = Path(scratch)
        try:
            tools = asyncio.run(_list_tools(bundle, data_dir))
        except Exception as exc:
            log = (data_dir / "server.log").read_text(encoding="utf-8", errors="replace")
            raise BuildError(
                f"the bundle's server did not list its tools: {exc}\n{log[-3000:]}"
            ) from exc
    return [{"name": tool.name, "description": summary(tool.description or "")} for tool in tools]


def summary(description: str) -> str:
    """A tool description's first sentence, on one line: what a listing shows."""
    text = " ".join(description.split())
    return re.split(r"(?<=[.!?])\s+(?=[A-Z])", text, maxsplit=1)[0]


def check_server_json(version: str) -> dict[str, Any]:
    """`server.json`, checked against the registry's schema and the package's version."""
    import jsonschema

    document: dict[str, Any] = json.loads((ROOT / "server.json").read_text(encoding="utf-8"))
    schema = json.loads(REGISTRY_SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())
    problems = [
        f"{'/'.join(map(str, error.absolute_path)) or '(top)'}: {error.message}"
        for error in validator.iter_errors(document)
    ]
    versions = {document.get("version"), *(p.get("version") for p in document.get("packages", []))}
    if versions != {version}:
        problems.append(
            f"versions {sorted(map(str, versions))} differ from the package's {version}"
        )
    if problems:
        raise BuildError("server.json is not valid:\n  " + "\n  ".join(problems))
    return document


def mcpb(cli: Path, *args: str) -> str:
    """Run `mcpb ARGS`; its output, or BuildError with it."""
    done = subprocess.run(  # noqa: S603 - the pinned mcpb command line
        [str(cli), *args], capture_output=True, text=True, check=False, cwd=ROOT
    )
    if done.returncode != 0:
        raise BuildError(f"mcpb {args[0]} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return done.stdout


def build(out: Path, *, install: bool) -> Path:
    """Stage, list, check, validate and pack; the path of the `.mcpb` file."""
    started = time.monotonic()
    version = package_version()
    cli = mcpb_cli(install=install)
    uv_binary(install=install)
    bundle = out / "bundle"
    manifest = stage(bundle, version)
    manifest["tools"] = live_tools(bundle)
    (bundle / "manifest.json").write_text(
        json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    registry = check_server_json(version)
    mcpb(cli, "validate", str(bundle / "manifest.json"))
    packed = out / f"{manifest['name']}-{version}.mcpb"
    packed.unlink(missing_ok=True)
    mcpb(cli, "pack", str(bundle), str(packed))
    digest = hashlib.sha256(packed.read_bytes()).hexdigest()
    print(
        f"== mcpb: {packed} ({packed.stat().st_size // 1024} KiB, sha256 {digest}), "
        f"{len(manifest['tools'])} tools; server.json {registry['name']} {version} valid; "
        f"mcpb {MCPB_CLI_VERSION} and uv {UV_VERSION} in {CACHE}; "
        f"{time.monotonic() - started:.1f} s"
    )
    return packed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=ROOT / "dist" / "mcpb")
    parser.add_argument(
        "--no-install", action="store_true", help="fail if the mcpb command line is missing"
    )
    args = parser.parse_args(argv)
    try:
        build(args.out.resolve(), install=not args.no_install)
    except BuildError as exc:
        print(f"mcpb.py: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
