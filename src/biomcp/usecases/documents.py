"""GetDocument: reading one stored document (`rag.get` and the paper resource)."""

from __future__ import annotations

from typing import Any

from biomcp.ports.documents import DocumentStore
from biomcp.usecases.errors import NotFoundError
from biomcp.usecases.payloads import document_payload, parse_doc_id

__all__ = ["GetDocument"]


class GetDocument:
    """`rag.get` and `resource://pubmed/paper/{pmid}`: one payload for both."""

    def __init__(self, metadata: DocumentStore) -> None:
        self._metadata = metadata

    async def run(self, doc_id: str) -> dict[str, Any]:
        """The stored document `doc_id` (`pmid:<digits>` or bare digits).

        Raises:
            InvalidRequestError: a malformed id.
            NotFoundError: the PMID is not in the corpus.
        """
        pmid = parse_doc_id(doc_id)
        doc = await self._metadata.get_document(pmid)
        if doc is None:
            raise NotFoundError(
                f"pmid:{pmid} is not in the corpus: sync a query that covers it "
                "(pubmed_sync_delta), or read it live from PubMed",
                details={"doc_id": f"pmid:{pmid}"},
            )
        return document_payload(doc)
