"""Machine checks of the hexagon that import-linter cannot express on its own."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import biomcp.domain

pytestmark = pytest.mark.unit

SRC = Path(__file__).resolve().parents[2] / "src" / "biomcp"


def _imported_top_levels(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("layer", ["domain", "ports"])
def test_core_layers_import_only_the_standard_library_and_biomcp(layer: str) -> None:
    files = sorted((SRC / layer).rglob("*.py"))
    assert files, f"no modules found under {layer}"
    allowed = set(sys.stdlib_module_names) | {"biomcp", "__future__"}
    offenders = {
        f"{path.relative_to(SRC)}: {name}"
        for path in files
        for name in _imported_top_levels(path) - allowed
    }
    assert not offenders, sorted(offenders)


def test_the_domain_public_surface_is_pinned() -> None:
    assert sorted(biomcp.domain.__all__) == sorted(
        [
            "CHUNK_NAMESPACE", "AbstractSection", "Author", "Chunk", "ChunkingConfig",
            "DomainError", "EvidenceClassification", "EvidenceType", "Intent",
            "InvalidConfigError", "InvalidQueryError", "InvalidRecordError", "Journal",
            "JournalTiers", "MeshHeading", "MeshQualifier", "Notice", "NoticeKind", "PubDate",
            "PubMedRecord", "QualityBreakdown", "QualityConfig", "QualityWeights",
            "RerankWeights", "StoredVersion", "UpsertAction", "VersionDecision",
            "WatermarkAudit", "advance_watermark", "chunk_record", "chunk_uuid",
            "chunking_for_window", "claim_spans",
            "classify_evidence", "content_hash", "count_tokens", "decide_version",
            "detect_intent", "has_biomarker", "has_numbers", "has_numeric_result",
            "manual_watermark", "parse_sample_size", "ranked_fusion", "relative_score_fusion",
            "rerank_score", "score_quality",
            "window_start",
        ]
    )  # fmt: skip
    for name in biomcp.domain.__all__:
        assert hasattr(biomcp.domain, name), name
