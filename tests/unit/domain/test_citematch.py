"""Citation matching: ECitMatch lines, the fallback queries, comparing and ranking candidates.

The references and candidates here are SYNTHETIC (made up for the rules they exercise), except
the ECitMatch examples `proc natl acad sci u s a|1991|88|3248|mann bj|Art1|` and
`science|1987|235|182|palmenber ac|Art2|`, which are NCBI's documented ones.
"""

from __future__ import annotations

import pytest

from biomcp.domain.citematch import (
    Candidate,
    CitMatchAnswer,
    Reference,
    citmatch_line,
    compare,
    fielded_queries,
    first_page,
    rank,
    read_citmatch_line,
    verdict,
)

pytestmark = pytest.mark.unit

PNAS = Reference(
    "Art1", journal="proc natl acad sci u s a", year="1991", volume="88", first_page="3248",
    first_author="mann bj",
)  # fmt: skip


def _candidate(pmid: str = "2014248", **values: object) -> Candidate:
    defaults: dict[str, object] = {
        "title": "Sequence of a cysteine-rich galactose-specific lectin of Entamoeba histolytica.",
        "journal": "Proc Natl Acad Sci U S A",
        "journal_names": ("Proc Natl Acad Sci U S A",
                          "Proceedings of the National Academy of Sciences"),
        "year": "1991",
        "volume": "88",
        "pages": "3248-52",
        "first_author": "Mann BJ",
    }  # fmt: skip
    defaults.update(values)
    return Candidate(pmid, **defaults)  # type: ignore[arg-type]


# --- ECitMatch lines ------------------------------------------------------------------------


def test_the_bdata_line_has_six_fields_and_a_closing_pipe() -> None:
    assert citmatch_line(PNAS) == "proc natl acad sci u s a|1991|88|3248|mann bj|Art1|"
    sparse = Reference("r2", journal="Science", first_author="Palmenberg AC")
    assert citmatch_line(sparse) == "science||||palmenberg ac|r2|"


def test_pipes_and_line_breaks_inside_pieces_cannot_shift_fields() -> None:
    tricky = Reference("r3", journal="J|Biol\rChem", year="c. 2019 (epub)", first_page="e12-e19")
    assert citmatch_line(tricky) == "j biol chem|2019||e12||r3|"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("proc natl acad sci u s a|1991|88|3248|mann bj|Art1|2014248",
         CitMatchAnswer("Art1", "found", ("2014248",))),
        ("science|1987|235|182|palmenber ac|Art2|3026048\r",
         CitMatchAnswer("Art2", "found", ("3026048",))),
        ("x|2000||||k|NOT_FOUND;INVALID_JOURNAL",
         CitMatchAnswer("k", "not_found", (), "NOT_FOUND;INVALID_JOURNAL")),
        ("x|2000||||k|AMBIGUOUS", CitMatchAnswer("k", "ambiguous", (), "AMBIGUOUS")),
        ("x|2000||||k|AMBIGUOUS 123,456",
         CitMatchAnswer("k", "ambiguous", ("123", "456"), "AMBIGUOUS 123,456")),
    ],
)  # fmt: skip
def test_answer_lines_are_read(line: str, expected: CitMatchAnswer) -> None:
    assert read_citmatch_line(line) == expected


def test_a_line_without_its_seven_fields_is_not_an_answer() -> None:
    assert read_citmatch_line("proc natl acad sci u s a|1991|88|3248|mann") is None
    assert read_citmatch_line("") is None


# --- fallback queries -----------------------------------------------------------------------


def test_fallback_queries_go_from_every_piece_to_fewer_and_need_two_pieces_each() -> None:
    reference = Reference(
        "r", journal="Nat Prod Rep", year="2021", volume="38", first_page="130-239",
        first_author='Montalbán-López M"', title="New developments in RiPP discovery",
    )  # fmt: skip
    assert fielded_queries(reference) == [
        '"Nat Prod Rep"[ta] AND 2021[dp] AND 38[vi] AND 130[pg] AND "Montalbán-López M"[au]',
        '"Nat Prod Rep"[ta] AND 2021[dp] AND "Montalbán-López M"[au]',
        "new[ti] AND developments[ti] AND ripp[ti] AND discovery[ti] AND "
        '"Montalbán-López M"[au] AND 2021[dp]',
    ]
    titled = Reference("t", journal="Gut", title="The and of (a) study]")
    assert fielded_queries(titled) == ['study[ti] AND "Gut"[ta]']
    assert fielded_queries(Reference("y", year="2020", title="of the")) == []


# --- comparing and ranking ------------------------------------------------------------------


def test_every_given_piece_is_matched_or_contradicted() -> None:
    found = compare(PNAS, _candidate())
    assert found.matched == ("journal", "year", "volume", "firstPage", "firstAuthor")
    assert found.unmatched == ()
    wrong = compare(PNAS, _candidate(year="1992", first_author="Palmenberg AC"))
    assert wrong.matched == ("journal", "volume", "firstPage")
    assert wrong.unmatched == ("year", "firstAuthor")


def test_journal_author_and_title_compare_loosely_but_not_blindly() -> None:
    reference = Reference(
        "r", journal="Proceedings of the National Academy of Sciences.", first_author="Mann, B.",
        title="sequence of a cysteine rich galactose specific lectin",
    )  # fmt: skip
    assert compare(reference, _candidate()).matched == ("journal", "firstAuthor", "title")
    other = Reference("r", journal="Proc Natl Acad Sci", first_author="Mannheim B",
                      title="A lectin of amoebae")  # fmt: skip
    assert compare(other, _candidate()).unmatched == ("journal", "firstAuthor", "title")


def test_a_piece_the_candidate_lacks_is_neither_matched_nor_contradicted() -> None:
    found = compare(PNAS, _candidate(volume=None, pages=None))
    assert "volume" not in found.matched + found.unmatched
    assert "firstPage" not in found.matched + found.unmatched


def test_first_pages_of_ranges_and_electronic_pages() -> None:
    assert first_page("3248-52") == "3248"
    assert first_page("e0021622") == "e0021622"
    assert first_page("S1–S9") == "S1"
    assert first_page("") is None


def test_the_best_candidate_wins_and_equal_ones_are_ambiguous() -> None:
    best = compare(PNAS, _candidate("1"), via="esearch", order=1)
    worse = compare(PNAS, _candidate("2", year="1990"), via="ecitmatch")
    assert [c.candidate.pmid for c in rank([worse, best])] == ["1", "2"]
    assert verdict([worse, best]).status == "matched"
    twin = compare(PNAS, _candidate("3"), via="ecitmatch")
    decided = verdict([best, twin, worse])
    assert decided.status == "ambiguous"
    assert [c.candidate.pmid for c in decided.ranked] == ["3", "1", "2"]  # ECitMatch first


def test_one_matching_piece_is_not_a_match() -> None:
    reference = Reference("r", year="1991", title="completely different words entirely")
    decided = verdict([compare(reference, _candidate())])
    assert decided.status == "not_found"
    assert [c.candidate.pmid for c in decided.ranked] == ["2014248"]
    assert verdict([]).status == "not_found"


def test_a_pmid_found_twice_is_ranked_once() -> None:
    first = compare(PNAS, _candidate("7"), via="ecitmatch")
    again = compare(PNAS, _candidate("7"), via="esearch")
    assert len(rank([again, first])) == 1
    assert rank([again, first])[0].via == "ecitmatch"


def test_references_say_which_pieces_they_give_and_whether_ecitmatch_can_use_them() -> None:
    assert PNAS.given() == ("journal", "year", "volume", "firstPage", "firstAuthor")
    assert PNAS.citmatch_usable
    titled = Reference("t", year="2020", title="words")
    assert titled.given() == ("year", "title")
    assert not titled.citmatch_usable
