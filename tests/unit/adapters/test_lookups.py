"""The readers of the PMC ID converter's JSON and ECitMatch's text lines.

The answers here are SYNTHETIC, written after NCBI's documented formats (there is no recorded
answer of either service in ../shared/data/eutils).
"""

from __future__ import annotations

import json

import pytest

from biomcp.adapters.entrez.lookups import parse_ecitmatch, parse_idconv
from biomcp.domain.citematch import CitMatchAnswer
from biomcp.domain.identifiers import IdConversion
from biomcp.ports.entrez import EntrezRequestError, EntrezResponseError, EntrezUnavailableError

pytestmark = pytest.mark.unit


def _json(value: object) -> bytes:
    return json.dumps(value).encode()


def test_idconv_records_found_and_not_found() -> None:
    body = _json(
        {
            "status": "ok",
            "responseDate": "2026-11-25 10:00:00",
            "request": "ids=PMC3531190,PMC0;format=json",
            "records": [
                {"requested-id": "PMC3531190", "pmcid": "PMC3531190", "pmid": 23193287,
                 "doi": "10.1093/nar/gks1195",
                 "versions": [{"pmcid": "PMC3531190.1"}, {"pmcid": "PMC3531190.2"}]},
                {"requested-id": "PMC9", "status": "error",
                 "errmsg": "Identifier not found in PMC"},
                {"requested-id": "PMC8", "status": "error"},
                "not a record",
            ],
        }
    )  # fmt: skip
    assert parse_idconv(body) == (
        IdConversion("PMC3531190", "23193287", "PMC3531190", "10.1093/nar/gks1195",
                     ("PMC3531190.1", "PMC3531190.2")),
        IdConversion("PMC9", error="Identifier not found in PMC"),
        IdConversion("PMC8", error="no match"),
    )  # fmt: skip


def test_idconv_refusing_the_whole_request_is_a_request_error() -> None:
    with pytest.raises(EntrezRequestError, match="Invalid idtype"):
        parse_idconv(_json({"status": "error", "message": "Invalid idtype: foo"}))


def test_idconv_backend_trouble_is_transient() -> None:
    message = "Search Backend failed: The backend is temporarily unavailable"
    with pytest.raises(EntrezUnavailableError):
        parse_idconv(_json({"status": "error", "message": message}))


@pytest.mark.parametrize(
    "body",
    [b"", b'{"status": "ok", "records": [{"requested-id"', b"[]", b'{"status": "ok"}',
     b"<html><head><title>503</title></head></html>"],
)  # fmt: skip
def test_idconv_answers_of_the_wrong_shape_are_response_errors(body: bytes) -> None:
    with pytest.raises(EntrezResponseError):
        parse_idconv(body)


LINES = (
    b"proc natl acad sci u s a|1991|88|3248|mann bj|ref1|2014248\n"
    b"science|1987|235|182|palmenber ac|ref2|NOT_FOUND\n"
    b"j x|2000||||ref3|AMBIGUOUS 11,12\n"
)


def test_ecitmatch_lines_are_read_by_key() -> None:
    assert parse_ecitmatch(LINES, ["ref1", "ref2", "ref3"]) == (
        CitMatchAnswer("ref1", "found", ("2014248",)),
        CitMatchAnswer("ref2", "not_found", (), "NOT_FOUND"),
        CitMatchAnswer("ref3", "ambiguous", ("11", "12"), "AMBIGUOUS 11,12"),
    )


def test_an_ecitmatch_reply_cut_short_is_refused_even_inside_a_pmid() -> None:
    cut = LINES[: LINES.index(b"2014248") + 4]  # "...|ref1|2014" : a wrong, shorter PMID
    with pytest.raises(EntrezResponseError, match="0 of 3"):
        parse_ecitmatch(cut, ["ref1", "ref2", "ref3"])
    with pytest.raises(EntrezResponseError, match="2 of 3"):
        parse_ecitmatch(LINES[:-3], ["ref1", "ref2", "ref3"])


def test_ecitmatch_error_payloads_and_html_pages() -> None:
    error = b"<eCitMatchResult><ERROR>Invalid db name specified: pmc</ERROR></eCitMatchResult>"
    with pytest.raises(EntrezRequestError, match="Invalid db"):
        parse_ecitmatch(error, ["ref1"])
    with pytest.raises(EntrezResponseError):
        parse_ecitmatch(b"<!DOCTYPE html><html><body>busy</body></html>", ["ref1"])


def test_the_converter_address_is_a_setting_beside_the_eutilities_one() -> None:
    from pydantic import ValidationError

    from biomcp.adapters.entrez.client import DEFAULT_IDCONV_URL, EntrezSettings
    from biomcp.entrypoints.backends import entrez_settings
    from biomcp.entrypoints.settings import Settings

    default = Settings(_env_file=None)
    assert default.ncbi_idconv_base_url == DEFAULT_IDCONV_URL
    assert DEFAULT_IDCONV_URL == "https://pmc.ncbi.nlm.nih.gov/tools/idconv/api/v1/articles/"
    local = Settings(_env_file=None, ncbi_idconv_base_url="http://127.0.0.1:8765/idconv/")
    client = entrez_settings(local)
    assert client.idconv_base_url == "http://127.0.0.1:8765/idconv/"  # the slash is kept
    assert EntrezSettings().idconv_base_url == DEFAULT_IDCONV_URL
    with pytest.raises(ValidationError, match="http"):
        Settings(_env_file=None, ncbi_idconv_base_url="ftp://example.org/idconv")
