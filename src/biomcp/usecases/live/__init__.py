"""The live PubMed use cases (spec 04): PubMed itself, asked now.

`LivePubMed` (service.py) is what the tools, the CLI and the library call; the modules beside
it hold what its parts share (common.py: configuration, deadline, URLs, argument checks), the
answer shapes (shapes.py) and the raw record forms (documents.py).
"""

from biomcp.usecases.live.common import ClientStatus, LiveBase, LiveConfig
from biomcp.usecases.live.service import (
    CITATION_STYLES,
    DETAIL_LEVELS,
    RELATIONSHIP_TYPES,
    SORT_ORDERS,
    LivePubMed,
)

__all__ = [
    "CITATION_STYLES",
    "DETAIL_LEVELS",
    "RELATIONSHIP_TYPES",
    "SORT_ORDERS",
    "ClientStatus",
    "LiveBase",
    "LiveConfig",
    "LivePubMed",
]
