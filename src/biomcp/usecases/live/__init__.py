"""The live PubMed use cases (spec 04 and the later lookups): PubMed itself, asked now.

`LivePubMed` (service.py) is what the tools, the CLI and the library call: a facade over one
job per concern, all sharing one `LiveContext` (common.py: the Entrez client, configuration,
clock, last call, deadline, URLs, argument checks): `search` (with `paging` and ESpell),
`articles` (details, relationships, one citation), `fulltext` (PMC JATS), `identifiers` (the
ID converter), `citematch` (references to PMIDs), `citations` (many at once), `mesh`, and
`resources` (server information, database statistics). Answer shapes are in `shapes`.
"""

from biomcp.usecases.live.articles import CITATION_STYLES, DETAIL_LEVELS, RELATIONSHIP_TYPES
from biomcp.usecases.live.common import ClientStatus, LiveConfig, LiveContext
from biomcp.usecases.live.search import SORT_ORDERS
from biomcp.usecases.live.service import LivePubMed

__all__ = [
    "CITATION_STYLES",
    "DETAIL_LEVELS",
    "RELATIONSHIP_TYPES",
    "SORT_ORDERS",
    "ClientStatus",
    "LiveConfig",
    "LiveContext",
    "LivePubMed",
]
