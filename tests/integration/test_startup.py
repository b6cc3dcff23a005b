"""A server answers at once: nothing heavy is imported by `import biomcp` or by building the
MCP server, and the model loads in the background (`Services.warm_up`)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from biomcp.entrypoints.services import build_services
from biomcp.entrypoints.settings import Settings

pytestmark = pytest.mark.integration

HEAVY = (
    "torch",
    "onnxruntime",
    "onnx",
    "tokenizers",
    "faiss",
    "tantivy",
    "sqlalchemy",
    "httpx",
    "lxml",
    "rich",  # the SDK would import it to log through; the server logs its own way
)

PROBE = """
import json, sys
{body}
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))
"""


def _loaded_after(body: str, tmp_path: Path) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BIOMCP_", "MCP_"))}
    env["BIOMCP_DATA_DIR"] = str(tmp_path)
    done = subprocess.run(  # noqa: S603 - this interpreter, our own snippet
        [sys.executable, "-c", PROBE.format(body=body, heavy=HEAVY)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    )
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def test_import_biomcp_loads_nothing_heavy(tmp_path: Path) -> None:
    assert _loaded_after("import biomcp", tmp_path) == []


def test_building_the_mcp_server_opens_no_store_and_no_model(tmp_path: Path) -> None:
    """What `biomcp serve` does before it answers `initialize` and `tools/list`."""
    body = (
        "from biomcp.entrypoints.services import build_services\n"
        "from biomcp.entrypoints.mcp.server import build_server\n"
        "build_server(build_services())\n"
    )
    assert _loaded_after(body, tmp_path) == []
    assert not (tmp_path / "vectors").exists()  # and nothing was created on disk


@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_warm_up_loads_the_model_and_tolerates_an_empty_corpus(
    tmp_path: Path, precision: str
) -> None:
    """The warm-up loads the graph queries run on (fp32); the int8 one waits for a sync."""
    settings = Settings(
        biomcp_data_dir=tmp_path, biomcp_embeddings="onnx", biomcp_onnx_precision=precision
    )
    services = build_services(settings)

    async def scenario() -> tuple[bool, str, bool]:
        try:
            await services.warm_up()  # no corpus yet: logged, not raised
            embedder = services.embedder
            inner: Any = getattr(embedder, "inner", embedder)  # the ONNX adapter's own fields
            return bool(inner.loaded), inner.precision, inner.int8 is not None
        finally:
            await services.aclose()

    assert asyncio.run(scenario()) == (True, precision, False)


def test_a_warm_up_begun_before_the_event_loop_is_the_one_awaited(tmp_path: Path) -> None:
    """`biomcp serve` begins the warm-up in a thread when the first message arrives, before its
    event loop runs; the loop's warm-up then waits for that one instead of building again, and
    the model's fused graph is kept in the data folder for the next start."""
    from biomcp.adapters.embeddings.onnx_graphs import FUSED_NAME

    settings = Settings(biomcp_data_dir=tmp_path, biomcp_embeddings="onnx")
    services = build_services(settings)
    services.begin_warm_up()
    begun = services._building
    services.begin_warm_up()  # once only
    assert begun is not None
    assert services._building is begun

    async def scenario() -> bool:
        try:
            await services.warm_up()
            assert begun.done()
            embedder = services.embedder
            inner: Any = getattr(embedder, "inner", embedder)
            return bool(inner.loaded)
        finally:
            await services.aclose()

    assert asyncio.run(scenario())
    assert (tmp_path / "cache" / "models" / FUSED_NAME).is_file()


def test_the_warm_up_logs_one_ready_line_or_a_warning_that_names_the_doctor(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """What a client's server log shows: on an empty corpus the warm-up is no failure (one
    INFO line says what the server runs on, no secret in it); a model that cannot load is a
    WARNING pointing at `biomcp doctor`."""
    caplog.set_level("INFO", logger="biomcp.services")
    secret = "s3cr3t-key-for-the-log-test"  # noqa: S105 - a test value

    def warm(**values: Any) -> list[Any]:
        caplog.clear()
        settings = Settings(biomcp_data_dir=tmp_path, ncbi_api_key=secret, **values)
        services = build_services(settings)

        async def scenario() -> None:
            try:
                await services.warm_up()
            finally:
                await services.aclose()

        asyncio.run(scenario())
        return [r for r in caplog.records if r.name == "biomcp.services"]

    records = warm(biomcp_embeddings="deterministic")
    assert [r.levelname for r in records] == ["INFO"]
    line = records[0].getMessage()
    assert line.startswith("ready: 0 records, 0 chunks (sqlite + embedded vectors, data folder ")
    assert "embeddings deterministic-v1, word hashing" in line
    assert secret not in caplog.text

    broken = tmp_path / "not-a-model.onnx"
    broken.write_bytes(b"not an onnx model")
    records = warm(biomcp_embeddings="onnx", biomcp_onnx_model_path=broken)
    assert [r.levelname for r in records] == ["WARNING"]
    assert "biomcp doctor" in records[0].getMessage()
    assert "EmbeddingUnavailableError" in records[0].getMessage()
