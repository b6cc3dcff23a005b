"""The pure evidence domain: records, evidence tiers, quality, chunking, versioning,
watermarks, rerank and query templates. Standard library only; no I/O."""

from biomcp.domain.chunking import (
    CHUNK_NAMESPACE,
    ChunkingConfig,
    chunk_record,
    chunk_uuid,
    chunking_for_window,
)
from biomcp.domain.errors import (
    DomainError,
    InvalidConfigError,
    InvalidQueryError,
    InvalidRecordError,
)
from biomcp.domain.evidence import (
    EvidenceClassification,
    classify_evidence,
    has_biomarker,
    has_numbers,
)
from biomcp.domain.fusion import ranked_fusion, relative_score_fusion
from biomcp.domain.numeric import claim_spans, has_numeric_result
from biomcp.domain.quality import (
    JournalTiers,
    QualityConfig,
    QualityWeights,
    parse_sample_size,
    score_quality,
)
from biomcp.domain.records import (
    AbstractSection,
    Author,
    Chunk,
    EvidenceType,
    Journal,
    MeshHeading,
    MeshQualifier,
    Notice,
    NoticeKind,
    PubDate,
    PubMedRecord,
    QualityBreakdown,
)
from biomcp.domain.rerank import Intent, RerankWeights, detect_intent, rerank_score
from biomcp.domain.tokens import count_tokens
from biomcp.domain.versioning import (
    StoredVersion,
    UpsertAction,
    VersionDecision,
    content_hash,
    decide_version,
)
from biomcp.domain.watermarks import (
    WatermarkAudit,
    advance_watermark,
    manual_watermark,
    window_start,
)

__all__ = [
    "CHUNK_NAMESPACE",
    "AbstractSection",
    "Author",
    "Chunk",
    "ChunkingConfig",
    "DomainError",
    "EvidenceClassification",
    "EvidenceType",
    "Intent",
    "InvalidConfigError",
    "InvalidQueryError",
    "InvalidRecordError",
    "Journal",
    "JournalTiers",
    "MeshHeading",
    "MeshQualifier",
    "Notice",
    "NoticeKind",
    "PubDate",
    "PubMedRecord",
    "QualityBreakdown",
    "QualityConfig",
    "QualityWeights",
    "RerankWeights",
    "StoredVersion",
    "UpsertAction",
    "VersionDecision",
    "WatermarkAudit",
    "advance_watermark",
    "chunk_record",
    "chunk_uuid",
    "chunking_for_window",
    "claim_spans",
    "classify_evidence",
    "content_hash",
    "count_tokens",
    "decide_version",
    "detect_intent",
    "has_biomarker",
    "has_numbers",
    "has_numeric_result",
    "manual_watermark",
    "parse_sample_size",
    "ranked_fusion",
    "relative_score_fusion",
    "rerank_score",
    "score_quality",
    "window_start",
]
