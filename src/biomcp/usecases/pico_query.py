"""A PICO question to a PubMed query, with each element looked up in MeSH first.

Each element the tier searches is looked up once, by its first term (its main name; the other
`;`-separated synonyms stay free text), through the same use case as `pubmed_lookup_mesh`.
The lookups run concurrently, within the Entrez client and its rate limiter, and all of them
within `timeout_s`. A record whose name or entry term is the term itself is used as the
element's heading; other matches are only shown as candidates. An element MeSH does not name
is searched as free text; so is one whose lookup failed, with a note saying why.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from biomcp.domain.mesh import MeshDescriptor, parse_mesh_ui, ui_to_uid
from biomcp.domain.pico import PicoQuery, pico_query, searched_elements, split_terms
from biomcp.ports.entrez import EntrezError, EntrezRateLimitError, EntrezTimeoutError
from biomcp.usecases.errors import InvalidRequestError, NotFoundError

__all__ = ["MESH_LOOKUP_TIMEOUT_S", "MeshSource", "PicoSearch", "build_pico_search"]

#: How long all the lookups of one question may take together, in seconds.
MESH_LOOKUP_TIMEOUT_S = 10.0
_CANDIDATES = 5


class MeshSource(Protocol):
    """What looks a term up in MeSH: `LivePubMed.lookup_mesh`, the use case of
    `pubmed_lookup_mesh`."""

    async def lookup_mesh(self, term: str, *, max_results: int = 5) -> dict[str, Any]:
        """The lookup's answer (`descriptors`, each with `ui`, `name`, `entryTerms`...).

        Raises:
            NotFoundError: no MeSH record matches.
            EntrezError: NCBI failed.
        """
        ...


@dataclass(frozen=True, slots=True)
class PicoSearch:
    """The built query, the elements MeSH does not name (`not_in_mesh`: element, term and the
    closest headings NCBI offered), and notes on lookups that failed."""

    query: PicoQuery
    not_in_mesh: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    notes: tuple[str, ...] = ()


async def build_pico_search(
    mesh: MeshSource,
    population: str,
    intervention: str | None = None,
    comparison: str | None = None,
    outcome: str | None = None,
    *,
    tier: str = "A",
    timeout_s: float = MESH_LOOKUP_TIMEOUT_S,
) -> PicoSearch:
    """The PubMed query for a PICO question, its elements looked up in MeSH first.

    Raises:
        InvalidQueryError: a question `pico_query` refuses (checked before any lookup).
    """
    given = {
        "population": population,
        "intervention": intervention,
        "comparison": comparison,
        "outcome": outcome,
    }
    pico_query(population, intervention, comparison, outcome, tier=tier)  # refuse early
    names = searched_elements(tier, given)
    terms = {name: split_terms(given[name])[0] for name in names}
    answers = await asyncio.gather(
        *(_lookup(mesh, terms[name], timeout_s) for name in names), return_exceptions=True
    )
    found: dict[str, Sequence[MeshDescriptor]] = {}
    missing: list[tuple[str, str, tuple[str, ...]]] = []
    failed: dict[str, list[str]] = {}
    for name, answer in zip(names, answers, strict=True):
        if isinstance(answer, NotFoundError):
            missing.append((name, terms[name], ()))
        elif isinstance(answer, BaseException):
            if not isinstance(answer, TimeoutError | EntrezError | InvalidRequestError):
                raise answer
            failed.setdefault(_why(answer), []).append(name)
        else:
            exact, others = _split(answer, terms[name])
            if exact:
                found[name] = exact
            else:
                missing.append((name, terms[name], others))
    built = pico_query(population, intervention, comparison, outcome, tier=tier, mesh=found)
    notes = tuple(
        f"the MeSH lookup of {', '.join(names)} failed ({why}): searched as free text"
        for why, names in failed.items()
    )
    return PicoSearch(built, tuple(missing), notes)


async def _lookup(mesh: MeshSource, term: str, timeout_s: float) -> Mapping[str, Any]:
    return await asyncio.wait_for(mesh.lookup_mesh(term, max_results=_CANDIDATES), timeout_s)


def _split(
    answer: Mapping[str, Any], term: str
) -> tuple[tuple[MeshDescriptor, ...], tuple[str, ...]]:
    """The records `term` names exactly, and the names of the other candidates."""
    records = [_descriptor(item) for item in answer.get("descriptors", ())]
    valid = [record for record in records if record is not None]
    exact = tuple(record for record in valid if record.matches(term))
    others = tuple(record.name for record in valid if not record.matches(term))
    return exact, others


def _descriptor(item: Mapping[str, Any]) -> MeshDescriptor | None:
    ui = parse_mesh_ui(str(item.get("ui", "")))
    name = " ".join(str(item.get("name", "")).split())
    if ui is None or not name:
        return None
    texts = (" ".join(str(term).split()) for term in item.get("entryTerms", ()))
    entry_terms = tuple(text for text in texts if text)
    return MeshDescriptor(ui_to_uid(ui), ui, name, entry_terms=entry_terms)


def _why(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError | EntrezTimeoutError):
        return "no answer in time"
    if isinstance(exc, EntrezRateLimitError):
        return "NCBI's rate limit"
    if isinstance(exc, InvalidRequestError):
        return "the term was refused"
    return "NCBI failed"
