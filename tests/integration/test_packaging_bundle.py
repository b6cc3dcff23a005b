"""One-click install: the MCPB bundle (Claude Desktop) and `server.json` (the MCP Registry).

`server.json` is checked against the registry's published schema (vendored) and against this
project: its version, package, command and settings. The manifest's user settings must reach
real settings. `scripts/mcpb.py` then builds the bundle with the official `mcpb` command line;
the packed bundle is unzipped and its launcher started with the environment the manifest gives
it, against the fake E-utilities. This environment's Python stands in for `uv run`, which would
install the dependencies from PyPI first.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, get_args

import jsonschema
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from pydantic import SecretStr
from typer.testing import CliRunner

import biomcp
from biomcp.entrypoints.cli.main import app
from biomcp.entrypoints.settings import Settings
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, generate_articles
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.integration

REGISTRY_SCHEMA = REPO_ROOT / "tests" / "fixtures" / "mcp_registry" / "server.schema.json"
REGISTRY_SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
REGISTRY_SCHEMA_SHA256 = "3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0"
MANIFEST = REPO_ROOT / "deploy" / "mcpb" / "manifest.json"
PLACEHOLDER = re.compile(r"^\$\{user_config\.([A-Za-z0-9_]+)\}$")
KEY = "bundle-key-4242"
EMAIL = "curator@example.org"
_ISOLATED = ("BIOMCP_", "MCP_", "NCBI_", "WEAVIATE_", "OPENAI_")


def _json(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


def _pyproject() -> dict[str, Any]:
    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _secret(variable: str) -> bool:
    annotation = Settings.model_fields[variable.lower()].annotation
    return SecretStr in (get_args(annotation) or (annotation,))


def _registry_errors(document: dict[str, Any]) -> list[str]:
    schema = _json(REGISTRY_SCHEMA)
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())
    return [error.message for error in validator.iter_errors(document)]


# --- server.json -------------------------------------------------------------------------


def test_the_vendored_registry_schema_is_the_published_2025_12_11_file() -> None:
    digest = hashlib.sha256(REGISTRY_SCHEMA.read_bytes()).hexdigest()
    assert digest == REGISTRY_SCHEMA_SHA256
    assert _json(REGISTRY_SCHEMA)["$id"] == REGISTRY_SCHEMA_URL


def test_server_json_is_valid_against_the_registry_schema() -> None:
    server = _json(REPO_ROOT / "server.json")
    assert server["$schema"] == REGISTRY_SCHEMA_URL
    assert _registry_errors(server) == []


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("name",), "bio-mcp"),  # no namespace
        (("description",), "x" * 101),
        (("packages", 0, "version"), "latest"),
        (("packages", 0, "transport", "type"), "carrier-pigeon"),
        (("packages", 0, "environmentVariables", 0, "isSecret"), "yes"),
    ],
)
def test_the_registry_schema_refuses_a_broken_entry(
    path: tuple[str | int, ...], value: Any
) -> None:
    broken = copy.deepcopy(_json(REPO_ROOT / "server.json"))
    target: Any = broken
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    assert _registry_errors(broken)


def test_server_json_describes_this_package_and_its_stdio_command() -> None:
    server = _json(REPO_ROOT / "server.json")
    (package,) = server["packages"]
    assert server["version"] == package["version"] == biomcp.__version__
    assert package["registryType"] == "pypi"
    assert package["identifier"] == _pyproject()["project"]["name"]
    assert package["transport"] == {"type": "stdio"}
    arguments = [argument["value"] for argument in package["packageArguments"]]
    assert arguments == ["serve"]
    assert CliRunner().invoke(app, ["serve", "--help"]).exit_code == 0


def test_server_json_environment_variables_are_settings_with_secrets_marked() -> None:
    (package,) = _json(REPO_ROOT / "server.json")["packages"]
    variables = {entry["name"]: entry for entry in package["environmentVariables"]}
    assert {"NCBI_API_KEY", "NCBI_ADMIN_EMAIL"} <= set(variables)
    for name, entry in variables.items():
        assert name.lower() in Settings.model_fields, name
        assert entry.get("isSecret", False) is _secret(name), name
        assert entry["description"]


def test_uvx_finds_a_command_named_like_the_registry_package() -> None:
    (package,) = _json(REPO_ROOT / "server.json")["packages"]
    assert package["runtimeHint"] == "uvx"
    assert package["identifier"] in _pyproject()["project"]["scripts"]


# --- the MCPB manifest -------------------------------------------------------------------


def test_the_manifest_is_a_uv_bundle_of_this_version() -> None:
    manifest = _json(MANIFEST)
    assert tuple(map(int, manifest["manifest_version"].split("."))) >= (0, 4)
    assert manifest["version"] == biomcp.__version__
    server = manifest["server"]
    assert server["type"] == "uv"
    assert (MANIFEST.parent / server["entry_point"]).is_file()
    assert server["mcp_config"]["args"][-1] == server["entry_point"]
    required = _pyproject()["project"]["requires-python"]
    assert manifest["compatibility"]["runtimes"]["python"] == required


def test_the_manifest_user_config_maps_to_settings() -> None:
    manifest = _json(MANIFEST)
    user_config = manifest["user_config"]
    env = manifest["server"]["mcp_config"]["env"]
    used = set()
    for variable, value in env.items():
        found = PLACEHOLDER.match(value)
        assert found, f"{variable}={value} is not one user_config placeholder"
        used.add(found.group(1))
        option = user_config[found.group(1)]
        assert variable.lower() in Settings.model_fields, variable
        assert option.get("sensitive", False) is _secret(variable), variable
        if not option.get("required", False):
            # Claude Desktop passes an unset optional field as its literal placeholder.
            assert option["default"] == "", variable
    assert used == set(user_config)
    assert {"NCBI_API_KEY", "NCBI_ADMIN_EMAIL"} <= set(env)


# --- the bundle, built and packed with the official command line ---------------------------


@pytest.fixture(scope="module")
def packed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mcpb")
    done = subprocess.run(  # noqa: S603 - the project's own build script
        [sys.executable, str(REPO_ROOT / "scripts" / "mcpb.py"), "--out", str(out), "--no-install"],
        capture_output=True, text=True, timeout=600, check=False, cwd=REPO_ROOT,
    )  # fmt: skip
    if done.returncode != 0 and "is not installed" in done.stderr:
        hint = "run scripts/mcpb.py once (it installs the pinned mcpb command line with npm)"
        if os.environ.get("CI"):
            pytest.fail(f"the mcpb command line is missing but CI is set: {hint}")
        pytest.skip(f"the mcpb command line is missing: {hint}")
    assert done.returncode == 0, done.stdout + done.stderr
    (bundle,) = out.glob("*.mcpb")
    assert bundle.name == f"bio-mcp-{biomcp.__version__}.mcpb"
    return bundle


def _packed_manifest(bundle: Path) -> dict[str, Any]:
    with zipfile.ZipFile(bundle) as archive:
        document: dict[str, Any] = json.loads(archive.read("manifest.json"))
    return document


@pytest.mark.slow
def test_the_bundle_holds_the_project_and_no_build_debris(packed: Path) -> None:
    with zipfile.ZipFile(packed) as archive:
        names = set(archive.namelist())
    assert {"manifest.json", "server/main.py", "pyproject.toml", "README.md"} <= names
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]
    source = REPO_ROOT / "src"
    shipped = {
        path.relative_to(source.parent).as_posix()
        for path in source.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert shipped <= names
    assert "src/biomcp/adapters/embeddings/data/all-MiniLM-L6-v2.tokenizer.json" in names


@pytest.mark.slow
def test_the_bundle_lists_the_tools_a_default_server_offers(packed: Path) -> None:
    manifest = _packed_manifest(packed)
    tools = manifest["tools"]
    # which tools: the same as the started bundle lists (checked below, with uv)
    assert {"rag_search", "pubmed_search_articles"} <= {tool["name"] for tool in tools}
    assert all(tool["description"] and "\n" not in tool["description"] for tool in tools)
    # Everything else is the manifest of the repository.
    del manifest["tools"]
    assert manifest == _json(MANIFEST)


@dataclass(frozen=True)
class Unpacked:
    """The packed bundle unzipped into `root/bundle`, its dependencies installed by `uv`."""

    root: Path
    manifest: dict[str, Any]
    uv_dir: Path

    @property
    def bundle(self) -> Path:
        return self.root / "bundle"


def _build_script() -> Any:
    spec = importlib.util.spec_from_file_location("mcpb_build", REPO_ROOT / "scripts" / "mcpb.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _host_command(unpacked: Unpacked) -> tuple[str, list[str]]:
    """The manifest's command and arguments, `${__dirname}` filled in as a host fills it."""
    config = unpacked.manifest["server"]["mcp_config"]
    args = [arg.replace("${__dirname}", str(unpacked.bundle)) for arg in config["args"]]
    return config["command"], args


def _host_env(unpacked: Unpacked, values: dict[str, str], **extra: str) -> dict[str, str]:
    """The manifest's environment as a host fills it in (a field the user left out stays a
    placeholder, as Claude Desktop passes it), over this one without bio-mcp's variables;
    `uv` on PATH; `extra` last."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.upper().startswith(_ISOLATED) and k != "VIRTUAL_ENV"
    }
    env["PATH"] = f"{unpacked.uv_dir}{os.pathsep}{env.get('PATH', '')}"
    env["UV_PYTHON_DOWNLOADS"] = "never"  # the machine's Python; no download from elsewhere
    for variable, value in unpacked.manifest["server"]["mcp_config"]["env"].items():
        found = PLACEHOLDER.match(value)
        assert found is not None
        env[variable] = values.get(found.group(1), value)
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def unpacked(packed: Path, tmp_path_factory: pytest.TempPathFactory) -> Unpacked:
    """The bundle unzipped, and started once with stdin closed so that `uv run` installs its
    dependencies (from PyPI, then from uv's cache) before the tests time anything."""
    try:
        uv = _build_script().uv_binary(install=False)
    except Exception as exc:  # the script's BuildError: uv is not installed
        if os.environ.get("CI"):
            pytest.fail(f"uv is missing but CI is set: {exc}")
        pytest.skip(f"uv is missing: {exc}")
    root = tmp_path_factory.mktemp("unpacked")
    with zipfile.ZipFile(packed) as archive:
        archive.extractall(root / "bundle")
    unpacked = Unpacked(root, _json(root / "bundle" / "manifest.json"), Path(uv).parent)
    command, args = _host_command(unpacked)
    done = subprocess.run(  # noqa: S603 - the manifest's own command
        [shutil.which(command, path=str(unpacked.uv_dir)) or command, *args],
        env=_host_env(unpacked, {}, BIOMCP_DATA_DIR=str(root / "warm-data")),
        cwd=root, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=900,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "stdin is closed" in done.stderr  # bio-mcp itself started, found no client, left
    return unpacked


def _serve_bundle_once(unpacked: Unpacked, filled: dict[str, str], eutils_url: str) -> list[str]:
    """Start the bundle with the manifest's command, make one live PubMed call; the names of
    the tools it lists."""
    command, args = _host_command(unpacked)
    env = _host_env(
        unpacked,
        filled,
        BIOMCP_DATA_DIR=str(unpacked.root / "data"),
        BIOMCP_EMBEDDINGS="deterministic",
        NCBI_MAX_RETRIES="0",
        NCBI_EUTILS_BASE_URL=eutils_url,
    )
    params = StdioServerParameters(
        command=shutil.which(command, path=env["PATH"]) or command,
        args=args,
        env=env,
        cwd=unpacked.root,
    )

    async def scenario() -> list[str]:
        with (unpacked.root / "server.log").open("w", encoding="utf-8") as errlog:
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as c:
                live = await c.call_tool(
                    "pubmed_search_articles", {"queryTerm": "Journal Article[pt]"}
                )
                assert not live.is_error, live.content
                return [tool.name for tool in (await c.list_tools()).tools]

    return asyncio.run(scenario())


@pytest.mark.slow
@pytest.mark.parametrize(
    ("filled", "has_key", "email"),
    [
        ({"ncbi_api_key": KEY, "ncbi_admin_email": EMAIL}, True, EMAIL),
        # left blank: the manifest's default ("") for one, the host's placeholder for the other
        ({"ncbi_api_key": ""}, False, None),
    ],
    ids=["filled-in", "left-blank"],
)
def test_the_bundle_started_as_its_host_starts_it_uses_the_users_ncbi_settings(
    unpacked: Unpacked, filled: dict[str, str], has_key: bool, email: str | None
) -> None:
    corpus = FakeCorpus.from_xml_bytes(
        generate_articles(5, start=date(2022, 1, 1), end=date(2022, 1, 31), seed=3)
    )
    with FakeEutilsServer(corpus, api_keys={KEY}) as fake:
        listed = _serve_bundle_once(unpacked, filled, fake.base_url)
        requests = [entry for entry in fake.log if entry["endpoint"].startswith("esearch")]
    assert requests, "the live call reached no ESearch"
    assert all(entry["status"] == 200 for entry in requests)
    assert {entry["has_api_key"] for entry in requests} == {has_key}
    assert {entry["params"].get("email") for entry in requests} == {email}
    # the server ran in the environment uv made from the bundle, not in this one
    assert (unpacked.bundle / ".venv").is_dir()
    # and lists what the manifest declares, in the same order
    assert listed == [tool["name"] for tool in unpacked.manifest["tools"]]
