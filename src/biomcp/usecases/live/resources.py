"""The live resources: server information (`pubmed-connect://info`) and database statistics
(`pubmed-connect://stats/pubmed`, EInfo)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from biomcp.ports.metadata import MetadataStore
from biomcp.ports.vectors import VectorStore
from biomcp.usecases.live.common import ClientStatus, LiveContext, within_deadline
from biomcp.usecases.live.shapes import ncbi_timestamp, query_summary
from biomcp.usecases.maintenance import IndexStatus
from biomcp.usecases.payloads import iso_utc
from biomcp.usecases.saved_queries import saved_queries

__all__ = ["ServerResources"]

_USAGE_POLICY = "https://www.ncbi.nlm.nih.gov/books/NBK25497/"
_EUTILITIES = ("ESearch", "EFetch", "ESummary", "ELink", "EInfo", "ESpell", "ECitMatch")


class ServerResources:
    """`server_info` and `database_stats`.

    `metadata` and `vectors` are only read for the corpus summary of `server_info`; `status`
    reports the client's figures.
    """

    def __init__(
        self,
        context: LiveContext,
        *,
        metadata: MetadataStore | None = None,
        vectors: VectorStore | None = None,
        status: Callable[[], ClientStatus] = ClientStatus,
    ) -> None:
        self.context = context
        self._metadata = metadata
        self._vectors = vectors
        self._status = status

    async def server_info(self, *, mcp_spec_version: str) -> dict[str, Any]:
        """`pubmed-connect://info`: identity, NCBI compliance, operational status, the corpus
        summary and the response cache. Never raises for a store that cannot answer: its
        section says why instead."""
        config = self.context.config
        status = self._status()
        rate = config.target_rate
        last_success = status.last_success_at
        last_call = self.context.last_call
        if last_call is not None and last_call[1] is None:
            own = last_call[0]
            last_success = own if last_success is None or own > last_success else last_success
        if last_call is not None and last_call[1] is not None:
            ncbi_status = f"Degraded: the last live call failed ({last_call[1]})"
        elif last_success is not None:
            ncbi_status = "Nominal"
        elif status.requests:
            ncbi_status = f"Degraded: no request has succeeded yet ({status.last_error})"
        else:
            ncbi_status = "Unknown: no NCBI request yet"
        key_text = "with API key" if config.api_key_in_use else "without an API key"
        return {
            "serverName": config.server_name,
            "serverVersion": config.server_version,
            "description": config.description,
            "contactEmail": config.email,
            "mcpSpecVersion": mcp_spec_version,
            "ncbiCompliance": {
                "apiUsageStatus": "NCBI API Key in use"
                if config.api_key_in_use
                else "No NCBI API key: limited to 3 requests/sec (set NCBI_API_KEY for 10)",
                "apiKeyInUse": config.api_key_in_use,
                "toolIdentifier": config.tool,
                "ncbiUsagePolicyUrl": _USAGE_POLICY,
                "currentRateLimitAdherence": (
                    f"Targeting <{rate:g} requests/sec ({key_text}) via request queuing."
                ),
                "targetRequestsPerSecond": rate,
                "requestDelayMs": config.request_delay_ms,
            },
            "supportedEutilities": list(_EUTILITIES),
            "operationalStatus": {
                "lastNcbiConnectivityCheck": iso_utc(last_success),
                "ncbiStatus": ncbi_status,
                "internalQueueLength": status.queue_length,
                "requestsSent": status.requests,
                "retries": status.retries,
                "lastError": status.last_error,
            },
            "documentationUrl": config.documentation_url,
            "corpus": await self._corpus_summary(),
            "responseCache": {
                "enabled": config.cache_ttl_s > 0 and config.cache_max_mb > 0,
                "ttlSeconds": config.cache_ttl_s,
                "maxMb": config.cache_max_mb,
                "covers": ["EFetch", "EInfo"],
            },
        }

    async def _corpus_summary(self) -> dict[str, Any]:
        summary: dict[str, Any] = {"records": None, "chunks": None, "queries": []}
        problems: list[str] = []
        if self._metadata is not None:
            try:
                summary["records"] = await self._metadata.count_documents()
                saved = await saved_queries(self._metadata)
                pending = [len(await self._metadata.pending_pmids(q.query_key)) for q in saved]
                held = await self._metadata.query_record_counts()
            except Exception as exc:  # a status page reports a broken store, it does not fail
                problems.append(f"metadata: {type(exc).__name__}: {exc}")
            else:
                summary["queries"] = [
                    query_summary(
                        q.query_key, q.checkpoint, q.last_job, n, held.get(q.query_key, 0)
                    )
                    for q, n in zip(saved, pending, strict=True)
                ]
        if self._vectors is not None:
            try:
                names = await self._vectors.collections()
                collection = self.context.config.collection
                summary["chunks"] = (
                    await self._vectors.count(collection) if collection in names else 0
                )
                stored = (
                    (await self._vectors.stats(collection)).documents if summary["chunks"] else 0
                )
                if self._metadata is not None:
                    indexed = await self._metadata.count_documents(indexed=True)
                    summary["index"] = IndexStatus(indexed, stored, collection in names).describe()
            except Exception as exc:
                problems.append(f"vectors: {type(exc).__name__}: {exc}")
        if problems:
            summary["problems"] = problems
        return summary

    @within_deadline
    async def database_stats(self, db: str = "pubmed") -> dict[str, Any]:
        """`pubmed-connect://stats/pubmed`: EInfo for `db` (record count, last update, search
        fields, link names).

        Raises:
            EntrezError: NCBI failed.
        """
        info = await self.context.call(self.context.entrez.einfo(db))
        return {
            "databaseName": info.menu_name or info.db_name,
            "menuName": info.menu_name,
            "description": info.description,
            "totalRecordCount": info.count,
            "lastUpdate": ncbi_timestamp(info.last_update),
            "dbBuild": info.build,
            "availableSearchFields": [
                {
                    "name": f.name,
                    "fullName": f.full_name,
                    "description": f.description,
                    "isDate": f.is_date,
                    "isNumerical": f.is_numerical,
                    "termCount": str(f.term_count) if f.term_count is not None else None,
                }
                for f in info.fields
            ],
            "availableLinkNames": [
                {
                    "name": link.name,
                    "menu": link.menu,
                    "description": link.description,
                    "dbTo": link.db_to,
                }
                for link in info.links
            ],
            "eInfoUrl": self.context.url("einfo", [], db=db),
        }
