"""ESpell: NCBI's answer parsed (`parse_espell`, a real one from ../shared/data/eutils) and the
fake's synthetic suggestions (`testing/eutils/spell.py`)."""

from __future__ import annotations

from collections import Counter

import pytest

from biomcp.adapters.entrez.eutils_xml import parse_espell
from biomcp.ports.entrez import EntrezRequestError, EntrezResponseError
from biomcp.testing.eutils.spell import correct
from tests.conftest import shared_data_path

_HEAD = b'<?xml version="1.0"?>\n<eSpellResult><Database>pubmed</Database>'


def test_the_real_espell_answer_gives_its_corrected_query() -> None:
    xml = shared_data_path("eutils", "biopython", "espell.xml").read_bytes()
    assert parse_espell(xml) == "biopython"


def test_an_empty_corrected_query_means_no_suggestion() -> None:
    xml = _HEAD + b"<Query>asthma</Query><CorrectedQuery></CorrectedQuery>"
    xml += b"<SpelledQuery/><ERROR/></eSpellResult>"
    assert parse_espell(xml) is None
    assert parse_espell(_HEAD + b"<Query>asthma</Query></eSpellResult>") is None


def test_an_error_without_a_correction_is_ncbis_error() -> None:
    xml = _HEAD + b"<Query>x</Query><ERROR>Invalid db name</ERROR></eSpellResult>"
    with pytest.raises(EntrezRequestError, match="Invalid db name"):
        parse_espell(xml)


@pytest.mark.parametrize(
    "body",
    [
        b"<html><head><title>Down</title></head><body/></html>",
        _HEAD + b"<CorrectedQuery>cut sh",
        b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e "boom">]><eSpellResult>&e;</eSpellResult>',
        b'<?xml version="1.0"?><eSearchResult><Count>1</Count></eSearchResult>',
    ],
    ids=["html", "truncated", "entities", "other-root"],
)
def test_what_is_not_an_espell_answer_is_refused(body: bytes) -> None:
    with pytest.raises(EntrezResponseError):
        parse_espell(body)


# --- the fake's speller (synthetic suggestions) ----------------------------------------------

VOCABULARY = Counter({"asthma": 50, "children": 30, "hypertension": 20, "tension": 5})


def test_the_fake_corrects_free_words_from_its_table_and_by_edit_distance() -> None:
    corrected, pieces = correct("asthmaa AND childrn", VOCABULARY)
    assert corrected == "asthma AND children"
    assert [text for text, changed in pieces if changed] == ["asthma", "children"]
    assert correct("hypertensoin", VOCABULARY)[0] == "hypertension"


def test_the_fake_leaves_tagged_known_and_far_words_alone() -> None:
    assert correct("asthmaa[mh] AND children", VOCABULARY)[0] == ""
    assert correct("asthma OR children NOT zzzzzzzz", VOCABULARY)[0] == ""
    assert correct('"childrn asthma"[ti]', VOCABULARY)[0] == ""
