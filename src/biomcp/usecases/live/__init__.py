"""The live PubMed use cases (spec 04 and issue 18): PubMed itself, asked now.

`LivePubMed` (service.py: article details, relationships, one citation) is what the tools, the
CLI and the library call. It is composed of one mixin per job: `search` (with `paging` and
ESpell), `fulltext` (PMC JATS), `identifiers` (the ID converter), `citematch` (references to
PMIDs), `citations` (many at once), `mesh`, and `resources` (server information, database
statistics). What they share is in `common` (configuration, deadline, URLs, argument checks);
answer shapes in `shapes`, raw record forms in `documents`.
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
