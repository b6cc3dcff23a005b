"""The PICO use case over an in-memory MeSH source: one lookup per element, concurrent, and
every failure degrades to free text."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from biomcp.domain.errors import InvalidQueryError
from biomcp.ports.entrez import EntrezUnavailableError
from biomcp.usecases.errors import NotFoundError
from biomcp.usecases.pico_query import build_pico_search

pytestmark = pytest.mark.unit

OBESITY = {"ui": "D009765", "name": "Obesity", "entryTerms": ["Obesities"]}
AGENTS = {"ui": "D019440", "name": "Anti-Obesity Agents", "entryTerms": ["Antiobesity Agents"]}


class FakeMesh:
    """Answers from a table (an exception is raised); with `together`, every lookup waits
    until that many have started, so sequential lookups never finish."""

    def __init__(self, answers: dict[str, Any], *, together: int = 0) -> None:
        self.answers = answers
        self.asked: list[str] = []
        self._together = together
        self._all_started = asyncio.Event()

    async def lookup_mesh(self, term: str, *, max_results: int = 5) -> dict[str, Any]:
        self.asked.append(term)
        if len(self.asked) >= self._together:
            self._all_started.set()
        await self._all_started.wait()
        answer = self.answers.get(term, NotFoundError("no MeSH record"))
        if isinstance(answer, BaseException):
            raise answer
        if answer == "never":
            await asyncio.Event().wait()
        return {"term": term, "descriptors": answer}


def test_each_element_is_looked_up_once_by_its_first_term_and_all_at_once() -> None:
    mesh = FakeMesh({"obesity": [AGENTS, OBESITY]}, together=3)
    found = asyncio.run(
        build_pico_search(
            mesh, "obesity; adiposity", "semaglutide", None, "weight loss", timeout_s=60
        )
    )
    assert sorted(mesh.asked) == ["obesity", "semaglutide", "weight loss"]
    assert found.query.headings == (("population", "Obesity[mh]"),)
    assert found.query.term.splitlines()[0] == (
        "(Obesity[mh] OR obesity[tiab] OR adiposity[tiab] OR Obesities[tiab])"
    )
    assert [(element, term) for element, term, _ in found.not_in_mesh] == [
        ("intervention", "semaglutide"),
        ("outcome", "weight loss"),
    ]
    assert found.notes == ()


def test_candidates_that_do_not_name_the_term_are_offered_not_searched() -> None:
    mesh = FakeMesh({"fat": [AGENTS]})
    found = asyncio.run(build_pico_search(mesh, "fat"))
    assert "[mh]" not in found.query.term.splitlines()[0]
    assert found.not_in_mesh == (("population", "fat", ("Anti-Obesity Agents",)),)


def test_tier_b_looks_up_only_the_elements_it_searches() -> None:
    mesh = FakeMesh({})
    found = asyncio.run(
        build_pico_search(mesh, "obesity", "semaglutide", "placebo", "weight", tier="B")
    )
    assert sorted(mesh.asked) == ["obesity", "semaglutide"]
    assert found.query.unused == ("comparison", "outcome")


def test_failed_and_unanswered_lookups_degrade_to_free_text_with_one_note_per_reason() -> None:
    mesh = FakeMesh(
        {
            "obesity": EntrezUnavailableError("503"),
            "semaglutide": EntrezUnavailableError("503"),
            "weight loss": "never",
        }
    )
    found = asyncio.run(
        build_pico_search(mesh, "obesity", "semaglutide", None, "weight loss", timeout_s=0.2)
    )
    assert found.notes == (
        "the MeSH lookup of population, intervention failed (NCBI failed): searched as free text",
        "the MeSH lookup of outcome failed (no answer in time): searched as free text",
    )
    assert found.query.term.splitlines()[0] == "(obesity[tiab])"
    assert found.query.headings == ()
    assert found.not_in_mesh == ()


def test_a_bad_question_is_refused_before_any_lookup() -> None:
    mesh = FakeMesh({})
    with pytest.raises(InvalidQueryError, match="needs an intervention"):
        asyncio.run(build_pico_search(mesh, "obesity", tier="B"))
    assert mesh.asked == []
