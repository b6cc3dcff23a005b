"""MeSH lookup (`pubmed_lookup_mesh`): a term or a MeSH UI to its descriptors, through NCBI's
`db=mesh`.

* A MeSH UI (`D009203`, `C000591245`, `Q000188`) is read directly: its numeric uid is computed
  (68009203) and one ESummary asks for it.
* Any other term is searched (ESearch `db=mesh`, where NCBI maps entry terms such as "heart
  attack" to their descriptor), the first `_CANDIDATES` uids are summarized (ESummary v2.0),
  and records whose name or an entry term is the term itself come first, NCBI's order kept
  otherwise. Up to `max_results` come back.

Nothing found is `NotFoundError` (`NOT_FOUND`) with advice, never an empty success. Entry
terms, tree numbers and qualifiers are bounded per record, and the scope note is cut at
`_MAX_SCOPE_NOTE` characters; each record says how many entry terms it has in all.
"""

from __future__ import annotations

from typing import Any

from biomcp.domain.mesh import (
    MeshDescriptor,
    parse_mesh_ui,
    suggested_query,
    ui_to_uid,
)
from biomcp.usecases.errors import InvalidRequestError, NotFoundError
from biomcp.usecases.live.common import LiveContext, check_range, within_deadline

__all__ = ["MAX_MESH_RESULTS", "MAX_MESH_TERM_CHARS", "MeshLookup"]

MAX_MESH_RESULTS = 20
MAX_MESH_TERM_CHARS = 200
_CANDIDATES = 20
_MAX_ENTRY_TERMS = 15
_MAX_TREE_NUMBERS = 30
_MAX_QUALIFIERS = 90
_MAX_SCOPE_NOTE = 1500
_MESH_PAGE = "https://www.ncbi.nlm.nih.gov/mesh/"


class MeshLookup:
    """`lookup_mesh`, the MeSH lookup of the live tools."""

    def __init__(self, context: LiveContext) -> None:
        self.context = context

    @within_deadline
    async def lookup_mesh(self, term: str, *, max_results: int = 5) -> dict[str, Any]:
        """The MeSH records `term` names (a MeSH UI, or words NCBI maps to descriptors).

        Raises:
            InvalidRequestError: an empty or too long term, max_results out of 1..20.
            NotFoundError: no MeSH record matches.
            EntrezError: NCBI failed.
        """
        check_range("maxResults", max_results, 1, MAX_MESH_RESULTS)
        text = " ".join(str(term).split())
        if not text or len(text) > MAX_MESH_TERM_CHARS:
            raise InvalidRequestError(
                f"term must be 1 to {MAX_MESH_TERM_CHARS} characters",
                details={"field": "term"},
            )
        ui = parse_mesh_ui(text)
        answer: dict[str, Any] = {"term": text}
        if ui is not None:
            uids = [ui_to_uid(ui)]
            answer.update(totalFound=None, queryTranslation=None, eSearchUrl=None)
        else:
            found = await self.context.call(
                self.context.entrez.mesh_search(text, retmax=_CANDIDATES)
            )
            uids = list(found.pmids[:_CANDIDATES])
            search_params = [("term", text), ("retstart", "0"), ("retmax", str(_CANDIDATES))]
            answer.update(
                totalFound=found.count,
                queryTranslation=found.query_translation,
                eSearchUrl=self.context.url("esearch", search_params, db="mesh"),
            )
        records = await self.context.call(self.context.entrez.mesh_summaries(uids)) if uids else ()
        if ui is not None:
            records = tuple(r for r in records if r.ui == ui)
        if not records:
            raise _nothing(text, ui)
        ranked = sorted(records, key=lambda r: not r.matches(text))[:max_results]
        answer["eSummaryUrl"] = self.context.url(
            "esummary", [("version", "2.0"), ("id", ",".join(uids))], db="mesh"
        )
        answer["descriptors"] = [_shape(record) for record in ranked]
        return answer


def _shape(record: MeshDescriptor) -> dict[str, Any]:
    note = record.scope_note
    if note is not None and len(note) > _MAX_SCOPE_NOTE:
        note = note[: _MAX_SCOPE_NOTE - 3].rstrip() + "..."
    return {
        "ui": record.ui,
        "name": record.name,
        "recordType": record.record_type,
        "treeNumbers": list(record.tree_numbers[:_MAX_TREE_NUMBERS]),
        "entryTerms": list(record.entry_terms[:_MAX_ENTRY_TERMS]),
        "entryTermCount": len(record.entry_terms),
        "scopeNote": note,
        "allowedQualifiers": [
            {"name": q.name, "abbreviation": q.abbreviation}
            for q in record.qualifiers[:_MAX_QUALIFIERS]
        ],
        "mappedTo": list(record.mapped_to[:_MAX_ENTRY_TERMS]),
        "suggestedQuery": suggested_query(record),
        "url": f"{_MESH_PAGE}{record.uid}",
    }


def _nothing(term: str, ui: str | None) -> NotFoundError:
    if ui is not None:
        return NotFoundError(
            f"MeSH has no record {ui}: check the identifier, or look the heading up by name",
            details={"term": term},
        )
    return NotFoundError(
        f"No MeSH record matches {term!r}. Try a synonym, a broader or more common term, or "
        "the English name of the concept; to search PubMed without MeSH, search the words "
        "in titles and abstracts ([tiab])",
        details={"term": term},
    )
