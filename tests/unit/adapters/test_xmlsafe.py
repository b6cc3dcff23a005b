"""The hardened E-utilities document reader: hostile input, broken answers, NCBI error payloads."""

from __future__ import annotations

import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import cast

import pytest

from biomcp.adapters.entrez.xmlsafe import classify_ncbi_error, parse_document
from biomcp.ports.entrez import (
    EntrezError,
    EntrezRequestError,
    EntrezResponseError,
    EntrezUnavailableError,
)

pytestmark = pytest.mark.unit

CANARY = "TOP-CANARY-4f1c"
ESEARCH = frozenset({"eSearchResult"})
WHAT = "an ESearch <eSearchResult>"


def _parse(xml: bytes | bytearray, roots: frozenset[str] = ESEARCH) -> str:
    """Parse and return the root tag (the tests only care whether and how it fails)."""
    return str(parse_document(xml, expected_roots=roots, what=WHAT).tag)


def _esearch(body: str = "<Count>1</Count>", doctype: str = "") -> bytes:
    return f'<?xml version="1.0"?>\n{doctype}\n<eSearchResult>{body}</eSearchResult>'.encode()


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    secret = tmp_path / "secret.txt"
    secret.write_text(CANARY, encoding="utf-8")
    return secret


def _everything_said(caught: pytest.ExceptionInfo[BaseException]) -> str:
    """The error's message, its repr and every chained cause: nowhere may a secret appear."""
    parts: list[str] = []
    error: BaseException | None = caught.value
    while error is not None:
        parts += [str(error), repr(error)]
        error = error.__cause__ or error.__context__
    return "\n".join(parts)


# --------------------------------------------------------------------------- hostile documents


@pytest.mark.parametrize("kind", ["general", "parameter"])
def test_external_entity_pointing_at_a_local_file_is_refused_and_the_secret_never_surfaces(
    kind: str, secret_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    uri = secret_file.as_uri()
    if kind == "general":
        xml = _esearch(
            "<Count>1</Count><QueryTranslation>&xxe;</QueryTranslation>",
            f'<!DOCTYPE eSearchResult [<!ENTITY xxe SYSTEM "{uri}">]>',
        )
    else:
        xml = _esearch(doctype=f'<!DOCTYPE eSearchResult [<!ENTITY % xxe SYSTEM "{uri}"> %xxe;]>')

    with pytest.raises(EntrezResponseError, match="declares its own entities") as caught:
        _parse(xml)

    assert CANARY not in _everything_said(caught)
    captured = capsys.readouterr()
    assert CANARY not in captured.out + captured.err


def test_external_dtd_named_in_the_doctype_is_never_loaded(secret_file: Path) -> None:
    dtd = secret_file.with_name("evil.dtd")
    dtd.write_text(f'<!ENTITY secret "{CANARY}">', encoding="utf-8")
    xml = _esearch(
        "<Count>1</Count><QueryTranslation>a &secret; b</QueryTranslation>",
        f'<!DOCTYPE eSearchResult SYSTEM "{dtd.as_uri()}">',
    )

    root = parse_document(xml, expected_roots=ESEARCH, what=WHAT)

    assert CANARY not in "".join(cast("Iterable[str]", root.itertext()))


@pytest.mark.parametrize("depth", [3, 9])
def test_billion_laughs_is_refused_quickly_without_expansion(depth: int) -> None:
    entities = ['<!ENTITY lol0 "lol">'] + [
        f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, depth + 1)
    ]
    xml = _esearch(
        f"<Count>1</Count><QueryTranslation>&lol{depth};</QueryTranslation>",
        f"<!DOCTYPE eSearchResult [{''.join(entities)}]>",
    )
    started = time.perf_counter()

    with pytest.raises(EntrezResponseError, match="declares its own entities") as caught:
        _parse(xml)

    assert time.perf_counter() - started < 1.0
    assert "lollollol" not in _everything_said(caught)


def test_ncbi_doctype_with_a_remote_dtd_parses_offline() -> None:
    doctype = (
        '<!DOCTYPE eSearchResult PUBLIC "-//NLM//DTD esearch 20060628//EN" '
        '"https://eutils.ncbi.nlm.nih.gov/eutils/dtd/20060628/esearch.dtd">'
    )
    started = time.perf_counter()

    assert _parse(_esearch(doctype=doctype)) == "eSearchResult"
    assert time.perf_counter() - started < 1.0


def test_comments_are_removed_from_the_tree() -> None:
    root = parse_document(
        _esearch("<Count><!-- hidden -->7</Count>"), expected_roots=ESEARCH, what=WHAT
    )

    assert root.findtext("Count") == "7"


# --------------------------------------------------------------------------- broken answers


@pytest.mark.parametrize(
    "page",
    [
        b"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>502 Bad Gateway</title>"
        b"</head><body><p>Try again<br></body></html>",
        b"<html><head><title>502 Bad Gateway</title></head><body/></html>",
        b'<html xmlns="http://www.w3.org/1999/xhtml"><head><title>502 Bad Gateway</title>'
        b"</head><body/></html>",
    ],
    ids=["html", "well-formed-html", "xhtml"],
)
def test_html_page_served_with_status_200_is_a_response_error_naming_its_title(
    page: bytes,
) -> None:
    with pytest.raises(EntrezResponseError, match=r"HTML page, not an ESearch.*502 Bad Gateway"):
        _parse(page)


@pytest.mark.parametrize("cut", [0.3, 0.5, 0.9])
def test_truncated_document_is_a_response_error(cut: float) -> None:
    xml = _esearch("<Count>3</Count><IdList><Id>1</Id><Id>2</Id><Id>3</Id></IdList>")

    with pytest.raises(EntrezResponseError, match=r"not well-formed.*expected an ESearch"):
        _parse(xml[: int(len(xml) * cut)])


@pytest.mark.parametrize("payload", [b"", b" \n\t", b"{}", b"Count: 3", b"\x00\xff"])
def test_empty_or_non_xml_input_is_a_response_error(payload: bytes) -> None:
    with pytest.raises(EntrezResponseError):
        _parse(payload)


def test_unexpected_root_element_is_a_response_error_naming_both() -> None:
    xml = b"<eLinkResult><LinkSet/></eLinkResult>"

    with pytest.raises(EntrezResponseError, match=r"expected an ESearch <eSearchResult>.*eLink"):
        _parse(xml)


def test_bytearray_and_a_leading_newline_are_accepted() -> None:
    assert _parse(bytearray(b"\n" + _esearch())) == "eSearchResult"


def test_undeclared_mathml_prefix_is_bound_on_the_expected_root() -> None:
    xml = _esearch("<Count>1</Count><QueryTranslation><mml:mi>x</mml:mi></QueryTranslation>")

    root = parse_document(xml, expected_roots=ESEARCH, what=WHAT)

    assert root.find("QueryTranslation/{http://www.w3.org/1998/Math/MathML}mi") is not None


def test_parsing_from_several_threads_gives_the_same_trees() -> None:
    xml = _esearch("<Count>2</Count><IdList><Id>1</Id><Id>2</Id></IdList>")

    def ids(raw: bytes) -> list[str | None]:
        root = parse_document(raw, expected_roots=ESEARCH, what=WHAT)
        return [e.text for e in root.iterfind("IdList/Id")]

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(ids, [xml] * 64))

    assert all(result == ["1", "2"] for result in results)


# --------------------------------------------------------------------------- NCBI error payloads


@pytest.mark.parametrize(
    ("xml", "roots", "message"),
    [
        (
            b"<eSearchResult><ERROR>Invalid db name specified: fleegle</ERROR></eSearchResult>",
            ESEARCH,
            "Invalid db name specified: fleegle",
        ),
        (
            b"<eSearchResult><IdList/><TranslationSet/>"
            b"<ERROR>Empty term and query_key - nothing todo</ERROR></eSearchResult>",
            ESEARCH,
            "Empty term and query_key - nothing todo",
        ),
        (
            b"<eInfoResult>\n  <ERROR>Can not retrieve DbInfo for db=fleegle</ERROR>\n"
            b"</eInfoResult>",
            frozenset({"eInfoResult"}),
            "Can not retrieve DbInfo for db=fleegle",
        ),
        (
            b"<eFetchResult><ERROR>Cannot retrieve history data.</ERROR></eFetchResult>",
            frozenset({"eFetchResult"}),
            "Cannot retrieve history data.",
        ),
        (
            b"<eSummaryResult><ERROR>Invalid uid abc at position=0</ERROR></eSummaryResult>",
            frozenset({"eSummaryResult"}),
            "Invalid uid abc at position=0",
        ),
        (b"<ERROR>Invalid id list</ERROR>", ESEARCH, "Invalid id list"),
        (
            b"<eFetchResult><ERROR>ID list is empty! Possibly it has no correct IDs.</ERROR>"
            b"</eFetchResult>",
            ESEARCH,  # an unexpected root that carries NCBI's error: the error wins
            "ID list is empty! Possibly it has no correct IDs.",
        ),
    ],
    ids=["esearch", "esearch-empty-siblings", "einfo", "efetch", "esummary", "root", "other"],
)
def test_ncbi_error_payload_is_a_request_error_with_ncbi_text(
    xml: bytes, roots: frozenset[str], message: str
) -> None:
    with pytest.raises(EntrezRequestError) as caught:
        _parse(xml, roots)

    assert str(caught.value) == f"NCBI error: {message}"


def test_backend_failure_payload_is_an_unavailable_error() -> None:
    xml = b"<eSearchResult><ERROR>Search Backend failed: read timeout</ERROR></eSearchResult>"

    with pytest.raises(EntrezUnavailableError, match="Search Backend failed"):
        _parse(xml)


def test_error_beside_real_content_is_left_to_the_caller() -> None:
    xml = _esearch("<Count>0</Count><ERROR>Some complaint</ERROR>")

    assert _parse(xml) == "eSearchResult"


def test_empty_error_element_beside_content_is_not_an_error() -> None:
    xml = b"<eSpellResult><Query>x</Query><ERROR/></eSpellResult>"

    assert _parse(xml, frozenset({"eSpellResult"})) == "eSpellResult"


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("Search Backend failed: Database is not available", EntrezUnavailableError),
        ("search backend FAILED", EntrezUnavailableError),
        ("The service is temporarily unavailable", EntrezUnavailableError),
        ("Unable to obtain query #1", EntrezUnavailableError),
        ("Backend is busy", EntrezUnavailableError),
        ("Query timeout", EntrezUnavailableError),
        ("Please TRY AGAIN later", EntrezUnavailableError),
        ("Invalid db name specified: fleegle", EntrezRequestError),
        ("Invalid id list", EntrezRequestError),
        ("Empty result - nothing to do", EntrezRequestError),
        ("Neither query_key nor id specified", EntrezRequestError),
        ("Can not retrieve DbInfo for db=fleegle", EntrezRequestError),
        # PubMed's real answer to retstart past the cap names the backend but will never pass.
        (
            "Search Backend failed: Exception:\n'retstart' cannot be larger than 9998. For "
            "PubMed, ESearch can only retrieve the first 9,999 records matching the query.",
            EntrezRequestError,
        ),
        ("", EntrezRequestError),
    ],
)
def test_classify_ncbi_error_tells_transient_from_permanent(
    message: str, expected: type[EntrezError]
) -> None:
    error = classify_ncbi_error(message)

    assert type(error) is expected
    assert str(error) == "NCBI error: " + (" ".join(message.split()) or "(empty ERROR element)")
