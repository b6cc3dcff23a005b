"""Upstream values cannot break a citation: hostile text in every field of several records is
exported as BibTeX and RIS, read back by bibtexparser and rispy, and each record comes back as
exactly one entry with its fields equal to the input.

The documented normalisation (`citations.one_line`): control characters and line breaks become a
space, runs of spaces one, and the ends are stripped. Beyond that, BibTeX values are LaTeX
(decoded here by `_latex_text`, the inverse of `bibtex_escape`) and the BibTeX DOI is
percent-encoded.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

import pytest
import rispy
from bibtexparser.entrypoint import parse_string
from bibtexparser.middlewares import SeparateCoAuthors
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from biomcp.domain.citations import all_citations, expand_pages, format_citation
from biomcp.domain.design import classify_design
from biomcp.domain.export import ExportedRecord, bibtex_entry, derived_note, ris_entry
from biomcp.domain.journals import journal_name
from biomcp.domain.records import (
    AbstractSection,
    Author,
    Journal,
    MeshHeading,
    PubDate,
    PubMedRecord,
)
from tests.support.builders import stored_document

pytestmark = pytest.mark.unit

INJECTION = "}} @article{INJECTED_ENTRY, title = {injected},"

_PIECES = [
    "{", "}", "}}", "{{", "\\", "\\{", "\\}", "\\\\", "@", "@article{X,", "\n@article{X,",
    INJECTION, "%", "&", "$", "#", "_", "~", "^", '"', "'", ",", "=", " and ", "AND", "and",
    "\n", "\r", "\r\n", "\t", "\x00", "\x1b[2J", "\x0b", "\x0c", "\x85", "\u2028", "\u2029",
    "ER  - ", "\nER  - ", "\nTY  - JOUR", "\nTI  - injected", "--", "-", "[", "]", ".", " ",
    "\u00a0", "\u200b", "é", "Ø", "日本語", "😀", "%7B", "\\textbf{x}", "",
]  # fmt: skip

_BREAKS = re.compile(r"[ \x00-\x1f\x7f-\x9f\u2028\u2029]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_LATEX_TOKEN = re.compile(
    r"\\textbackslash\{\}|\\textbraceleft\{\}|\\textbraceright\{\}|\\[{}%&$#_]|[{}]|.", re.S
)
_LATEX_WORDS = {r"\textbackslash{}": "\\", r"\textbraceleft{}": "{", r"\textbraceright{}": "}"}

hostile = st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=4)), max_size=6).map(
    "".join
)
maybe = st.one_of(st.none(), hostile)

authors = st.one_of(
    st.builds(Author, last_name=hostile, fore_name=maybe, initials=maybe),
    st.builds(Author, collective_name=hostile),
)
journals = st.builds(
    Journal,
    title=maybe,
    iso_abbreviation=maybe,
    issn=maybe,
    eissn=maybe,
    volume=maybe,
    issue=maybe,
)
dates = st.one_of(
    st.none(),
    st.builds(PubDate, year=st.integers(1000, 9999), raw=maybe),
    st.builds(PubDate, year=st.integers(1000, 9999), month=st.integers(1, 12)),
)


@st.composite
def records(draw: st.DrawFn, pmid: int) -> PubMedRecord:
    return PubMedRecord(
        pmid=str(pmid),
        title=draw(maybe),
        abstract=tuple(
            draw(st.lists(st.builds(AbstractSection, text=hostile, label=maybe), max_size=2))
        ),
        journal=draw(journals),
        mesh=tuple(
            draw(
                st.lists(
                    st.builds(MeshHeading, descriptor=hostile, major=st.booleans()), max_size=3
                )
            )
        ),
        pdat=draw(dates),
        pmcid=draw(maybe),
        doi=draw(maybe),
        authors=tuple(draw(st.lists(authors, max_size=3))),
        languages=draw(st.sampled_from([(), ("eng",), ("ger",)])),
        pages=draw(maybe),
    )


@st.composite
def exports(draw: st.DrawFn) -> list[PubMedRecord]:
    pmids = draw(st.lists(st.integers(1, 10**9), min_size=1, max_size=4, unique=True))
    return [draw(records(pmid)) for pmid in pmids]


def _exported(record: PubMedRecord) -> ExportedRecord:
    doc = stored_document(record)
    design = doc.evidence.design or classify_design(doc.record)
    return ExportedRecord(
        record=doc.record, evidence=doc.evidence, quality=doc.quality, design=str(design.design)
    )


def _clean(text: str | None) -> str:
    return _BREAKS.sub(" ", text or "").strip()


def _latex_text(value: str) -> str:
    """A BibTeX value as the text it typesets: escapes undone, grouping braces dropped."""

    def token(match: re.Match[str]) -> str:
        tok = match.group()
        if tok in _LATEX_WORDS:
            return _LATEX_WORDS[tok]
        if tok in "{}":
            return ""
        return tok[1:] if len(tok) == 2 and tok[0] == "\\" else tok

    return _LATEX_TOKEN.sub(token, value)


def _title(record: PubMedRecord) -> str:
    """The title a citation prints: a translated `[Title].` unbracketed, no final period."""
    title = _clean(record.title)
    if title.startswith("[") and title.rstrip(".").endswith("]"):
        title = title.rstrip(".")[1:-1]
    return _clean(title.rstrip(". "))


def _journal(record: PubMedRecord) -> str:
    return _clean(
        journal_name(_clean(record.journal.title), _clean(record.journal.iso_abbreviation))
    )


def _abstract(record: PubMedRecord) -> str:
    """The abstract's sections on one line, each `LABEL: text`, or its label or text alone."""
    sections = [(_clean(s.label), _clean(s.text)) for s in record.abstract]
    return _clean(
        " ".join(
            f"{label}: {text}" if label and text else label or text for label, text in sections
        )
    )


def _cited_authors(record: PubMedRecord) -> list[Author]:
    return [a for a in record.authors if _clean(a.last_name) or _clean(a.collective_name)]


def _braces_close_only_at_the_end(entry: str) -> bool:
    """BibTeX's own reading: every brace counts, escaped or not, and the entry's first brace
    closes at its last character."""
    depth = 0
    for i, ch in enumerate(entry):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth == 0 and i > entry.index("{"):
            return i == len(entry) - 1
    return False


def _check_bibtex(record: PubMedRecord, entry_text: str, fields: dict[str, str]) -> None:
    assert _braces_close_only_at_the_end(entry_text)
    text = {k: _latex_text(v) for k, v in fields.items() if k not in ("author", "doi")}
    assert text["pmid"] == record.pmid
    assert text["title"] == _title(record)
    for key, value in (
        ("journal", _journal(record)),
        ("volume", _clean(record.journal.volume)),
        ("number", _clean(record.journal.issue)),
        ("pmcid", _clean(record.pmcid)),
        ("pages", _clean((expand_pages(_clean(record.pages)) or "").replace("-", "--"))),
    ):
        assert text.get(key, "") == value, key
    assert unquote(fields.get("doi", "")) == _clean(record.doi)


def _check_ris(record: PubMedRecord, entry: dict[str, object], item: ExportedRecord) -> None:
    assert entry["type_of_reference"] == "JOUR"
    assert entry["accession_number"] == record.pmid
    assert entry["title"] == _title(record)
    for key, value in (
        ("secondary_title", _journal(record)),
        ("alternate_title1", _clean(record.journal.iso_abbreviation)),
        ("volume", _clean(record.journal.volume)),
        ("number", _clean(record.journal.issue)),
        ("issn", _clean(record.journal.issn) or _clean(record.journal.eissn)),
        ("doi", _clean(record.doi)),
        ("abstract", _abstract(record)),
    ):
        assert entry.get(key, "") == value, key
    cited = _cited_authors(record)
    assert len(entry.get("authors", [])) == len(cited)  # type: ignore[arg-type]
    for author, read in zip(cited, entry.get("authors", []), strict=True):  # type: ignore[call-overload]
        if author.collective_name:
            assert read == _clean(author.collective_name)
        else:
            assert read.startswith(_clean(author.last_name))
    terms = [_clean(f"{h.descriptor}*" if h.is_major else h.descriptor) for h in record.mesh]
    assert entry.get("keywords", []) == terms
    assert entry["notes"] == [derived_note(item)]
    expanded = expand_pages(_clean(record.pages))
    assert (entry.get("start_page") is None) == (expanded is None)
    if expanded is not None:
        assert expanded.startswith(str(entry["start_page"]))


@given(exports())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_hostile_values_in_every_field_read_back_as_one_entry_per_record(
    chosen: list[PubMedRecord],
) -> None:
    items = [_exported(r) for r in chosen]
    bib_entries = [bibtex_entry(i) for i in items]
    library = parse_string("\n\n".join(bib_entries) + "\n", append_middleware=[SeparateCoAuthors()])
    assert not library.failed_blocks
    assert len(library.blocks) == len(chosen)  # nothing outside the entries either
    ris_read = rispy.loads("\n\n".join(ris_entry(i) for i in items) + "\n")
    assert len(ris_read) == len(chosen)
    for record, item, text, entry, ris in zip(
        chosen, items, bib_entries, library.entries, ris_read, strict=True
    ):
        fields = {f.key: f.value for f in entry.fields}
        _check_bibtex(record, text, {k: v for k, v in fields.items() if isinstance(v, str)})
        # BibTeX's `and` splits the authors where RIS has one `AU` line each.
        names = [_latex_text(n) for n in fields.get("author", [])]
        assert names == ris.get("authors", [])
        _check_ris(record, ris, item)
        # The RIS date's free text is the BibTeX month, or the end of its note.
        tail = str(ris.get("date", "")).partition("///")[2]
        if tail:
            month = _latex_text(fields.get("month", ""))
            assert month == tail or _latex_text(fields.get("note", "")).endswith(tail)


@given(exports())
@settings(max_examples=100, deadline=None)
def test_text_styles_carry_no_control_character_or_line_break(chosen: list[PubMedRecord]) -> None:
    for record in chosen:
        cites = all_citations(record)
        for style in ("apa", "mla", "vancouver"):
            assert not _CONTROL.search(cites[style]), style
        if _clean(record.doi):
            assert f"doi: {_clean(record.doi)}." in cites["vancouver"]
            assert cites["apa"].endswith(f"https://doi.org/{_clean(record.doi)}")


def _plain(pmid: int, **overrides: object) -> PubMedRecord:
    values: dict[str, object] = {
        "pmid": str(pmid),
        "title": "A trial",
        "journal": Journal(title="The Lancet", volume="390", issue="2"),
        "pdat": PubDate(2021, 3),
        "doi": f"10.1000/x.{pmid}",
        "authors": (Author(last_name="Okafor", fore_name="Grace", initials="G"),),
    }
    values.update(overrides)
    return PubMedRecord(**values)  # type: ignore[arg-type]


def test_a_doi_that_closes_its_entry_adds_no_entry_to_an_export_of_eleven() -> None:
    doi = f"10.1000/evil{INJECTION}"
    chosen = [_plain(pmid) for pmid in range(31000001, 31000011)]
    chosen.insert(5, _plain(31000099, doi=doi))
    text = "\n\n".join(bibtex_entry(_exported(r)) for r in chosen) + "\n"
    library = parse_string(text)
    assert not library.failed_blocks
    assert [e.key for e in library.entries] == [f"Okafor2021_{r.pmid}" for r in chosen]
    assert "INJECTED_ENTRY" not in {e.key for e in library.entries}
    fields = {f.key: f.value for f in library.entries[5].fields}
    assert unquote(fields["doi"]) == doi
    assert fields["pmid"] == "31000099"


def test_a_title_that_ends_its_ris_record_stays_in_its_record() -> None:
    title = "A trial\nER  - \n\nTY  - JOUR\nTI  - Injected"
    text = "\n\n".join(format_citation(r, "ris") for r in (_plain(1, title=title), _plain(2)))
    read = rispy.loads(text)
    assert [r["accession_number"] for r in read] == ["1", "2"]
    assert read[0]["title"] == "A trial ER - TY - JOUR TI - Injected"


def test_braces_that_pair_keep_their_escape_and_a_lone_brace_is_spelled_out() -> None:
    record = _plain(1, title="{braced} b} {c \\x")
    assert r"title = {{\{braced\} b\textbraceright{} \textbraceleft{}c \textbackslash{}x}}" in (
        format_citation(record, "bibtex")
    )


def test_a_name_with_a_comma_or_the_word_and_stays_one_bibtex_author() -> None:
    record = _plain(
        1,
        authors=(
            Author(last_name="Smith and Jones", fore_name="Ann, Jr"),
            Author(last_name="Doe", fore_name="And"),
            Author(collective_name="Trials and Tribulations Group"),
        ),
    )
    library = parse_string(
        format_citation(record, "bibtex"), append_middleware=[SeparateCoAuthors()]
    )
    (entry,) = library.entries
    authors = {f.key: f.value for f in entry.fields}["author"]
    assert [_latex_text(a) for a in authors] == [
        "Smith and Jones, Ann, Jr",
        "Doe, And",
        "Trials and Tribulations Group",
    ]


def test_a_name_that_ends_with_an_escaped_character_keeps_it_before_the_next_author() -> None:
    record = _plain(
        1,
        authors=(
            Author(last_name="{", fore_name="@\n%"),
            Author(last_name="Lee", fore_name="Kim &"),
            Author(last_name="Doe", fore_name="Ann"),
        ),
    )
    library = parse_string(
        format_citation(record, "bibtex"), append_middleware=[SeparateCoAuthors()]
    )
    (entry,) = library.entries
    authors = {f.key: f.value for f in entry.fields}["author"]
    assert [_latex_text(a) for a in authors] == ["{, @ %", "Lee, Kim &", "Doe, Ann"]
