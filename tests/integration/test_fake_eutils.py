"""The fake E-utilities server over real HTTP on 127.0.0.1 (FakeEutilsServer + httpx)."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import httpx
import pytest
from lxml import etree

from biomcp.adapters.entrez.pubmed_xml import parse_pubmed_articles
from biomcp.testing.eutils import (
    FakeCorpus,
    FakeEutilsServer,
    generate_articles,
)
from tests.conftest import shared_data_path

pytestmark = pytest.mark.integration

RELATIONS = {
    "pubmed_pubmed": {"30000010": [["30000020", 9000], ["30000030", 8000]]},
    "pubmed_pubmed_citedin": {"30000010": ["30000040", "30000050"]},
    "pubmed_pubmed_refs": {"30000011": ["30000001"]},
}
RETSTART_MESSAGE = (
    "Search Backend failed: Exception:\n'retstart' cannot be larger than 9998. For PubMed, "
    "ESearch can only retrieve the first 9,999 records matching the query. To obtain more than "
    "9,999 PubMed records, consider using EDirect that contains additional logic to batch "
    "PubMed search results automatically so that an arbitrary number can be retrieved. For "
    "details see https://www.ncbi.nlm.nih.gov/books/NBK25499/"
)


def xml(response: httpx.Response) -> etree._Element:
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    return etree.fromstring(response.content, parser)


def ids(root: etree._Element) -> list[str]:
    return [e.text or "" for e in root.iterfind("IdList/Id")]


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def synthetic_server() -> Iterator[FakeEutilsServer]:
    """366 synthetic articles, one per day of 2020 (a leap year), plus a link table."""
    corpus = FakeCorpus.from_xml_bytes(
        generate_articles(366, start=date(2020, 1, 1), end=date(2020, 12, 31), seed=7)
    )
    with FakeEutilsServer(corpus, relations=RELATIONS) as server:
        yield server


@pytest.fixture
def fake(synthetic_server: FakeEutilsServer) -> Iterator[FakeEutilsServer]:
    synthetic_server.faults.clear()
    synthetic_server.clear_log()
    yield synthetic_server
    synthetic_server.faults.clear()


@pytest.fixture
def http(fake: FakeEutilsServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=fake.base_url, timeout=30) as client:
        yield client


@pytest.fixture(scope="module")
def real_files() -> list[Path]:
    folder = shared_data_path("eutils")
    return sorted(folder.rglob("*.xml"))


@pytest.fixture(scope="module")
def real_server(real_files: list[Path]) -> Iterator[FakeEutilsServer]:
    with FakeEutilsServer(FakeCorpus.from_paths(real_files)) as server:
        yield server


@pytest.fixture(scope="module")
def capped_server() -> Iterator[FakeEutilsServer]:
    corpus = FakeCorpus.from_xml_bytes(
        generate_articles(12000, start=date(2021, 1, 1), end=date(2021, 12, 31), seed=3)
    )
    with FakeEutilsServer(corpus) as server:
        yield server


def esearch(client: httpx.Client, term: str, **params: str | int | None) -> etree._Element:
    response = client.get("/esearch.fcgi", params={"db": "pubmed", "term": term, **params})
    assert response.status_code == 200
    return xml(response)


# --------------------------------------------------------------------------- corpus


def test_real_efetch_files_are_served_back_equivalent(
    real_server: FakeEutilsServer, real_files: list[Path]
) -> None:
    expected = {}
    for path in real_files:  # the corpus loads files in this order; the last PMID wins
        data = path.read_bytes()
        if b"<PubmedArticleSet" not in data[:4096]:
            continue  # not an EFetch answer: the corpus skips it too
        expected.update({r.pmid: r for r in parse_pubmed_articles(data).records})
    assert len(expected) >= 20
    assert sorted(real_server.corpus.pmids()) == sorted(expected)
    assert any("not PubmedArticleSet" in p for p in real_server.corpus.problems)

    wanted = list(expected)
    random.Random(1).shuffle(wanted)
    with httpx.Client(base_url=real_server.base_url) as client:
        response = client.get("/efetch.fcgi", params={"db": "pubmed", "id": ",".join(wanted)})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/xml")
    assert response.content.startswith(b'<?xml version="1.0" ?>\n<!DOCTYPE PubmedArticleSet')
    served = parse_pubmed_articles(response.content)
    assert [r.pmid for r in served.records] == wanted
    for record in served.records:
        assert record == expected[record.pmid]


def test_loading_ten_thousand_records_takes_seconds() -> None:
    document = generate_articles(10000, start=date(2020, 1, 1), end=date(2024, 12, 31))
    started = time.perf_counter()
    corpus = FakeCorpus.from_xml_bytes(document)
    elapsed = time.perf_counter() - started
    print(f"\nloaded 10,000 synthetic records in {elapsed:.2f} s")
    assert len(corpus) == 10000
    assert elapsed < 20


def test_duplicates_last_wins_and_foreign_files_are_reported(tmp_path: Path) -> None:
    first = generate_articles(2, start=date(2020, 1, 1), end=date(2020, 1, 2), seed=1)
    second = generate_articles(1, start=date(2022, 5, 5), end=date(2022, 5, 5), seed=2)
    (tmp_path / "a.xml").write_bytes(first)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.xml").write_bytes(second)
    (tmp_path / "sub" / "c.xml").write_bytes(b"<eSearchResult><Count>0</Count></eSearchResult>")
    (tmp_path / "sub" / "d.xml").write_bytes(first[: len(first) // 2])
    corpus = FakeCorpus.from_paths([tmp_path])
    assert corpus.pmids() == ["30000001", "30000000"]
    record = corpus.record("30000000")
    assert record is not None
    assert record.edat is not None
    assert record.edat.date() == date(2022, 5, 5)
    assert len(corpus.problems) == 2
    assert "c.xml: skipped: root is <eSearchResult>" in corpus.problems[0]
    assert "d.xml: skipped" in corpus.problems[1]


# --------------------------------------------------------------------------- ESearch


def test_esearch_edat_window_and_sorting(http: httpx.Client) -> None:
    root = esearch(
        http,
        "humans[mh] OR animals[mh]",
        datetype="edat",
        mindate="2020/03",
        maxdate="2020/03",
        retmax=100,
    )
    assert root.findtext("Count") == "31"  # one article a day
    found = ids(root)
    assert len(found) == 31
    assert found == sorted(found, reverse=True)  # newest Entrez date first
    assert root.findtext("QueryTranslation") == (
        '("humans"[MeSH Terms] OR "animals"[MeSH Terms]) AND 2020/03/01[EDAT] : 2020/03/31[EDAT]'
    )
    day = esearch(
        http,
        "humans[mh] OR animals[mh]",
        datetype="edat",
        mindate="2020/02/29",
        maxdate="2020/02/29",
    )
    assert day.findtext("Count") == "1"
    year = esearch(
        http, "humans[mh] OR animals[mh]", datetype="edat", mindate="2020", maxdate="2020", retmax=0
    )
    assert year.findtext("Count") == "366"
    assert year.findtext("RetMax") == "0"
    assert ids(year) == []


def test_esearch_paging(http: httpx.Client) -> None:
    everything = ids(esearch(http, "humans[mh] OR animals[mh]", retmax=400))
    assert len(everything) == 366
    page = esearch(http, "humans[mh] OR animals[mh]", retstart=100, retmax=25)
    assert page.findtext("RetStart") == "100"
    assert page.findtext("RetMax") == "25"
    assert ids(page) == everything[100:125]
    tail = esearch(http, "humans[mh] OR animals[mh]", retstart=360, retmax=25)
    assert ids(tail) == everything[360:]
    default = esearch(http, "humans[mh] OR animals[mh]")
    assert len(ids(default)) == 20
    counted = esearch(http, "humans[mh] OR animals[mh]", rettype="count")
    assert [child.tag for child in counted] == ["Count"]
    assert counted.findtext("Count") == "366"


def test_esearch_warnings_and_errors(http: httpx.Client) -> None:
    missing = esearch(http, "abcXYZ")
    assert missing.findtext("Count") == "0"
    assert missing.findtext("ErrorList/PhraseNotFound") == "abcXYZ"
    assert missing.findtext("WarningList/OutputMessage") == "No items found."
    assert missing.find("IdList") is not None

    unknown = esearch(http, "asthma[xyz]")
    assert unknown.findtext("ErrorList/FieldNotFound") == "xyz"
    assert unknown.findtext("WarningList/OutputMessage")
    assert int(unknown.findtext("Count") or 0) == int(
        esearch(http, "asthma").findtext("Count") or 0
    )

    for bad in ("(asthma", "asthma AND"):
        error = esearch(http, bad)
        assert error.tag == "eSearchResult"
        assert "Invalid query" in (error.findtext("ERROR") or "")
    wrong_db = xml(http.get("/esearch.fcgi", params={"db": "fleegle", "term": "asthma"}))
    assert wrong_db.findtext("ERROR") == "Invalid db name specified: fleegle"


def test_the_esearch_cap(capped_server: FakeEutilsServer) -> None:
    with httpx.Client(base_url=capped_server.base_url, timeout=60) as client:
        everything = esearch(client, "humans[mh] OR animals[mh]", retmax=10000)
        assert everything.findtext("Count") == "12000"
        first = ids(everything)
        assert len(first) == 9999
        near = esearch(client, "humans[mh] OR animals[mh]", retstart=9990, retmax=100)
        assert near.findtext("Count") == "12000"
        assert ids(near) == first[9990:]
        over = esearch(client, "humans[mh] OR animals[mh]", retstart=9999, retmax=10)
        assert over.tag == "eSearchResult"
        assert over.findtext("ERROR") == RETSTART_MESSAGE
        assert over.find("Count") is None


def test_history_server(http: httpx.Client) -> None:
    search = esearch(http, "asthma[mh]", usehistory="y", retmax=5)
    webenv, key = search.findtext("WebEnv"), search.findtext("QueryKey")
    assert webenv
    assert webenv.startswith("MCID_")
    assert key == "1"
    count = int(search.findtext("Count") or 0)
    assert count > 10
    all_ids = ids(esearch(http, "asthma[mh]", retmax=1000))

    fetched = http.get(
        "/efetch.fcgi",
        params={
            "db": "pubmed",
            "WebEnv": webenv,
            "query_key": key,
            "retstart": 3,
            "retmax": 4,
            "retmode": "xml",
        },
    )
    assert [r.pmid for r in parse_pubmed_articles(fetched.content).records] == all_ids[3:7]
    default = http.get("/efetch.fcgi", params={"db": "pubmed", "WebEnv": webenv, "query_key": 1})
    assert len(parse_pubmed_articles(default.content).records) == min(20, count)

    summary = xml(
        http.get(
            "/esummary.fcgi",
            params={
                "db": "pubmed",
                "WebEnv": webenv,
                "query_key": key,
                "retmax": 3,
                "version": "2.0",
            },
        )
    )
    assert [d.get("uid") for d in summary.iterfind("DocumentSummarySet/DocumentSummary")] == (
        all_ids[:3]
    )

    again = esearch(http, "obesity[mh]", usehistory="y", WebEnv=webenv)
    assert again.findtext("WebEnv") == webenv
    assert again.findtext("QueryKey") == "2"
    fresh = esearch(http, "obesity[mh]", usehistory="y")
    assert fresh.findtext("WebEnv") != webenv
    assert fresh.findtext("QueryKey") == "1"

    lost = xml(http.get("/efetch.fcgi", params={"db": "pubmed", "WebEnv": "nope", "query_key": 1}))
    assert lost.tag == "eFetchResult"
    assert "Unable to obtain query" in (lost.findtext("ERROR") or "")


# --------------------------------------------------------------------------- EFetch


def test_post_efetch_with_300_ids(http: httpx.Client) -> None:
    wanted = [str(30000000 + i) for i in range(300)]
    random.Random(5).shuffle(wanted)
    response = http.post("/efetch.fcgi", data={"db": "pubmed", "id": ",".join(wanted)})
    assert response.status_code == 200
    parsed = parse_pubmed_articles(response.content)
    assert [r.pmid for r in parsed.records] == wanted
    unknown = http.post("/efetch.fcgi", data={"db": "pubmed", "id": "1,30000001,99999999"})
    assert [r.pmid for r in parse_pubmed_articles(unknown.content).records] == ["30000001"]
    repeated = http.get(
        "/efetch.fcgi", params=[("db", "pubmed"), ("id", "30000002"), ("id", "30000001")]
    )
    assert [r.pmid for r in parse_pubmed_articles(repeated.content).records] == [
        "30000002",
        "30000001",
    ]
    empty = xml(http.get("/efetch.fcgi", params={"db": "pubmed"}))
    assert empty.findtext("ERROR") == "Empty id list - nothing todo"
    odd = xml(http.get("/efetch.fcgi", params={"db": "pubmed", "id": "1", "retmode": "json"}))
    assert odd.tag == "eFetchResult"
    assert odd.findtext("ERROR")


def test_medline_text_of_a_real_record(real_server: FakeEutilsServer) -> None:
    with httpx.Client(base_url=real_server.base_url) as client:
        response = client.get(
            "/efetch.fcgi",
            params={"db": "pubmed", "id": "38048813,9997", "rettype": "medline", "retmode": "text"},
        )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    text = response.text
    first, second = text.strip("\n").split("\n\n")
    lines = first.splitlines()
    assert lines[:6] == [
        "PMID- 38048813",
        "OWN - NLM",
        "STAT- MEDLINE",
        "DCOM- 20231206",
        "LR  - 20240726",
        "IS  - 1439-1058 (Electronic)",
    ]
    for expected in (
        "IS  - 0937-2032 (Linking)",
        "VI  - 73",
        "IP  - 12",
        "DP  - 2023 Dec",
        "TI  - [A Broader Scope - Bio-Psycho-Social Medicine In Global Focus].",
        "PG  - 487-488",
        "LID - 10.1055/a-2189-0166 [doi]",
        "FAU - Zipfel, Stephan",
        "AU  - Zipfel S",
        "LA  - ger",
        "PT  - Editorial",
        "DEP - 20231204",
        "TA  - Psychother Psychosom Med Psychol",
        "JT  - Psychotherapie, Psychosomatik, medizinische Psychologie",
        "MH  - Humans",
        "MH  - *Social Medicine",
        "CRDT- 2023/12/04 19:12",
        "AID - 10.1055/a-2189-0166 [doi]",
    ):
        assert expected in lines
    assert lines[lines.index("AU  - Zipfel S") + 1 : lines.index("AU  - Zipfel S") + 3] == [
        "AD  - Abteilung Psychosomatische Medizin und Psychotherapie, Medizinische",
        "      Universitätsklinik Tübingen.",
    ]
    so = first[first.index("SO  - ") :]
    assert " ".join(so[6:].split()) == (
        "Psychother Psychosom Med Psychol. 2023 Dec;73(12):487-488. doi: 10.1055/a-2189-0166. "
        "Epub 2023 Dec 4."
    )
    assert all(len(line) <= 80 for line in lines)
    assert all(line[4:6] == "- " or line.startswith(" " * 6) for line in lines)
    assert second.startswith("PMID- 9997\n")
    assert "MH  - Chromatium/*enzymology" in second.splitlines()
    assert "MH  - *Cytochrome c Group" in second.splitlines()


# --------------------------------------------------------------------------- ESummary


def test_esummary_v2_fields(real_server: FakeEutilsServer) -> None:
    with httpx.Client(base_url=real_server.base_url) as client:
        response = client.get(
            "/esummary.fcgi", params={"db": "pubmed", "id": "38048813,5", "version": "2.0"}
        )
    root = xml(response)
    assert root.tag == "eSummaryResult"
    summary_set = root.find("DocumentSummarySet")
    assert summary_set is not None
    assert summary_set.get("status") == "OK"
    doc, missing = summary_set.findall("DocumentSummary")
    assert doc.get("uid") == "38048813"
    assert doc.findtext("PubDate") == "2023 Dec"
    assert doc.findtext("EPubDate") == "2023 Dec 4"
    assert doc.findtext("Source") == "Psychother Psychosom Med Psychol"
    assert [n.text for n in doc.iterfind("Authors/Author/Name")][:2] == ["Zipfel S", "Stengel A"]
    assert doc.findtext("Authors/Author/AuthType") == "Author"
    assert doc.findtext("LastAuthor") == "Giel K"
    assert (
        doc.findtext("Title") == "[A Broader Scope - Bio-Psycho-Social Medicine In Global Focus]."
    )
    assert (doc.findtext("Volume"), doc.findtext("Issue"), doc.findtext("Pages")) == (
        "73",
        "12",
        "487-488",
    )
    assert doc.findtext("Lang/string") == "ger"
    assert doc.findtext("ESSN") == "1439-1058"
    assert [f.text for f in doc.iterfind("PubType/flag")] == ["Editorial"]
    article_ids = {
        a.findtext("IdType"): a.findtext("Value") for a in doc.iterfind("ArticleIds/ArticleId")
    }
    assert article_ids == {"pubmed": "38048813", "doi": "10.1055/a-2189-0166"}
    history = {
        h.findtext("PubStatus"): h.findtext("Date") for h in doc.iterfind("History/PubMedPubDate")
    }
    assert history["entrez"] == "2023/12/04 19:12"
    assert doc.findtext("FullJournalName") == (
        "Psychotherapie, Psychosomatik, medizinische Psychologie"
    )
    assert doc.findtext("SortPubDate") == "2023/12/01 00:00"
    assert doc.findtext("ELocationID") == "doi: 10.1055/a-2189-0166"
    assert missing.get("uid") == "5"
    assert missing.findtext("error") == "cannot get document summary"


# --------------------------------------------------------------------------- ELink


def _linksets(root: etree._Element) -> list[tuple[list[str], dict[str, list[tuple[str, str]]]]]:
    found = []
    for linkset in root.iterfind("LinkSet"):
        dbs = {
            db.findtext("LinkName") or "": [
                (link.findtext("Id") or "", link.findtext("Score") or "")
                for link in db.iterfind("Link")
            ]
            for db in linkset.iterfind("LinkSetDb")
        }
        found.append(([i.text or "" for i in linkset.iterfind("IdList/Id")], dbs))
    return found


def test_elink_from_the_relation_table(http: httpx.Client) -> None:
    cited = xml(
        http.get(
            "/elink.fcgi",
            params={
                "dbfrom": "pubmed",
                "db": "pubmed",
                "id": "30000010",
                "linkname": "pubmed_pubmed_citedin",
            },
        )
    )
    assert _linksets(cited) == [
        (["30000010"], {"pubmed_pubmed_citedin": [("30000040", ""), ("30000050", "")]})
    ]
    scored = xml(
        http.get(
            "/elink.fcgi", params={"dbfrom": "pubmed", "id": "30000010", "cmd": "neighbor_score"}
        )
    )
    assert _linksets(scored) == [
        (["30000010"], {"pubmed_pubmed": [("30000020", "9000"), ("30000030", "8000")]})
    ]
    unscored = xml(http.get("/elink.fcgi", params={"dbfrom": "pubmed", "id": "30000010"}))
    assert _linksets(unscored)[0][1]["pubmed_pubmed"] == [("30000020", ""), ("30000030", "")]
    refs = xml(
        http.get(
            "/elink.fcgi",
            params={"dbfrom": "pubmed", "id": "30000011", "linkname": "pubmed_pubmed_refs"},
        )
    )
    assert _linksets(refs) == [(["30000011"], {"pubmed_pubmed_refs": [("30000001", "")]})]


def test_elink_computed_similarity(http: httpx.Client, fake: FakeEutilsServer) -> None:
    root = xml(
        http.get(
            "/elink.fcgi",
            params=[
                ("dbfrom", "pubmed"),
                ("db", "pubmed"),
                ("cmd", "neighbor_score"),
                ("id", "30000100"),
                ("id", "30000101"),
                ("id", "99999999"),
            ],
        )
    )
    assert root.tag == "eLinkResult"
    sets = _linksets(root)
    assert [s[0] for s in sets] == [["30000100"], ["30000101"], ["99999999"]]
    for source, (_, dbs) in zip(("30000100", "30000101"), sets[:2], strict=True):
        links = dbs["pubmed_pubmed"]
        assert 0 < len(links) <= 20
        assert source not in [pmid for pmid, _ in links]
        scores = [int(score) for _, score in links]
        assert scores == sorted(scores, reverse=True)
        assert all(pmid in fake.corpus for pmid, _ in links)
    assert sets[2][1] == {}  # unknown source: a LinkSet without LinkSetDb

    combined = xml(http.get("/elink.fcgi", params={"dbfrom": "pubmed", "id": "30000100,30000101"}))
    [(source_ids, dbs)] = _linksets(combined)
    assert source_ids == ["30000100", "30000101"]
    assert dbs["pubmed_pubmed"]


# --------------------------------------------------------------------------- EInfo


def test_einfo(http: httpx.Client, fake: FakeEutilsServer) -> None:
    info = xml(http.get("/einfo.fcgi", params={"db": "pubmed"}))
    assert info.findtext("DbInfo/DbName") == "pubmed"
    assert info.findtext("DbInfo/Count") == str(len(fake.corpus)) == "366"
    assert len(info.findtext("DbInfo/LastUpdate") or "") == len("2025/11/27 06:33")
    names = [f.findtext("Name") for f in info.iterfind("DbInfo/FieldList/Field")]
    assert {"ALL", "UID", "TITL", "TIAB", "MESH", "PTYP", "PDAT", "EDAT", "AUTH", "JOUR"} <= set(
        names
    )
    pdat = next(f for f in info.iterfind("DbInfo/FieldList/Field") if f.findtext("Name") == "PDAT")
    assert pdat.findtext("IsDate") == "Y"
    assert [n.text for n in info.iterfind("DbInfo/LinkList/Link/Name")] == [
        "pubmed_pubmed",
        "pubmed_pubmed_citedin",
        "pubmed_pubmed_refs",
    ]
    dblist = xml(http.get("/einfo.fcgi"))
    assert [n.text for n in dblist.iterfind("DbList/DbName")] == ["pubmed"]
    bad = xml(http.get("/einfo.fcgi", params={"db": "fleegle"}))
    assert bad.findtext("ERROR") == "Can not retrieve DbInfo for db=fleegle"


# --------------------------------------------------------------------------- transport


def test_get_post_and_both_prefixes_answer_alike(http: httpx.Client) -> None:
    params = {"db": "pubmed", "term": "asthma[mh]", "retmax": "50"}
    bodies = [
        http.get("/esearch.fcgi", params=params).content,
        http.post("/esearch.fcgi", data=params).content,
        http.get("/entrez/eutils/esearch.fcgi", params=params).content,
        http.post("/entrez/eutils/esearch.fcgi", data=params).content,
    ]
    assert len(set(bodies)) == 1
    assert int(xml(http.get("/esearch.fcgi", params=params)).findtext("Count") or 0) > 0


def test_request_log(http: httpx.Client, fake: FakeEutilsServer) -> None:
    before = time.time()
    http.get(
        "/esearch.fcgi",
        params={"db": "pubmed", "term": "asthma", "api_key": "s3cret", "tool": "t", "email": "e@x"},
    )
    http.post("/efetch.fcgi", data={"db": "pubmed", "id": "30000001"})
    fake.faults.sequence(["503"])
    http.get("/einfo.fcgi", params={"db": "pubmed"})
    log = fake.log
    assert [e["endpoint"] for e in log] == ["esearch", "efetch", "einfo"]
    assert [e["method"] for e in log] == ["GET", "POST", "GET"]
    assert [e["status"] for e in log] == [200, 200, 503]
    assert [e["fault"] for e in log] == [None, None, "503"]
    assert log[0]["params"]["api_key"] == "***"
    assert log[0]["has_api_key"] is True
    assert log[1]["has_api_key"] is False
    assert log[1]["params"] == {"db": "pubmed", "id": "30000001"}
    assert before <= log[0]["t"] <= log[1]["t"] <= log[2]["t"] <= time.time()
    assert "s3cret" not in str(log)
    over_http = http.get("/_fake/log").json()
    assert over_http == log
    assert http.delete("/_fake/log").status_code == 200
    assert fake.log == []


# --------------------------------------------------------------------------- faults


def test_every_fault_kind(http: httpx.Client, fake: FakeEutilsServer) -> None:
    normal = http.get("/esearch.fcgi", params={"db": "pubmed", "term": "asthma"})
    fake.faults.sequence(
        [
            {"kind": "429", "retry_after": 0.2},
            "500",
            "502",
            "503",
            {"kind": "slow", "delay": 0.3},
            "truncated",
            "html",
            "ncbi_error",
        ]
    )
    answers = []
    for _ in range(9):
        started = time.perf_counter()
        response = http.get("/esearch.fcgi", params={"db": "pubmed", "term": "asthma"})
        answers.append((response, time.perf_counter() - started))

    limited = answers[0][0]
    assert limited.status_code == 429
    assert limited.headers["Retry-After"] == "0.2"
    assert limited.json()["error"] == "API rate limit exceeded"
    assert [a[0].status_code for a in answers[1:4]] == [500, 502, 503]
    slow, waited = answers[4]
    assert slow.status_code == 200
    assert slow.content == normal.content
    assert waited >= 0.3
    truncated = answers[5][0]
    assert truncated.status_code == 200
    assert truncated.content == normal.content[: len(normal.content) // 2]
    with pytest.raises(etree.XMLSyntaxError):
        xml(truncated)
    html = answers[6][0]
    assert html.status_code == 200
    assert html.headers["content-type"].startswith("text/html")
    assert html.text.startswith("<!DOCTYPE html")
    error = answers[7][0]
    assert error.status_code == 200
    root = xml(error)
    assert root.tag == "eSearchResult"
    assert root.findtext("ERROR")
    assert answers[8][0].content == normal.content  # the sequence is used up
    assert [e["fault"] for e in fake.log[1:]] == [
        "429",
        "500",
        "502",
        "503",
        "slow",
        "truncated",
        "html",
        "ncbi_error",
        None,
    ]


def test_fault_sequence_for_one_endpoint(http: httpx.Client, fake: FakeEutilsServer) -> None:
    fake.faults.sequence(["503", "ncbi_error"], endpoint="efetch")
    assert http.get("/einfo.fcgi", params={"db": "pubmed"}).status_code == 200
    assert http.get("/efetch.fcgi", params={"db": "pubmed", "id": "30000001"}).status_code == 503
    assert http.get("/esearch.fcgi", params={"db": "pubmed", "term": "x"}).status_code == 200
    error = xml(http.get("/efetch.fcgi", params={"db": "pubmed", "id": "30000001"}))
    assert error.tag == "eFetchResult"
    assert error.findtext("ERROR")
    ok = http.get("/efetch.fcgi", params={"db": "pubmed", "id": "30000001"})
    assert len(parse_pubmed_articles(ok.content).records) == 1


def test_random_faults_are_seeded(http: httpx.Client, fake: FakeEutilsServer) -> None:
    def run() -> list[int]:
        fake.faults.random(0.5, ["429", "503"], seed=11)
        return [http.get("/einfo.fcgi").status_code for _ in range(30)]

    first, second = run(), run()
    assert first == second
    assert {200, 429, 503} == set(first)
    fake.faults.random(1.0, ["500"], seed=1)
    assert {http.get("/einfo.fcgi").status_code for _ in range(5)} == {500}
    fake.faults.clear()
    assert http.get("/einfo.fcgi").status_code == 200


def test_fault_admin_endpoints(http: httpx.Client, fake: FakeEutilsServer) -> None:
    plan = {"sequence": [{"kind": "429", "retry_after": 1}, "502"], "endpoint": "esearch"}
    assert http.post("/_fake/faults", json=plan).status_code == 200
    assert http.get("/einfo.fcgi").status_code == 200
    limited = http.get("/esearch.fcgi", params={"db": "pubmed", "term": "x"})
    assert limited.status_code == 429
    assert limited.headers["Retry-After"] == "1"
    assert http.get("/_fake/faults").json()["sequence"] == [
        {"kind": "502", "retry_after": 1.0, "delay": 1.0}
    ]
    assert http.delete("/_fake/faults").status_code == 200
    assert http.get("/esearch.fcgi", params={"db": "pubmed", "term": "x"}).status_code == 200

    random_plan = {"probability": 1.0, "kinds": ["html"], "seed": 3}
    assert http.post("/_fake/faults", json=random_plan).status_code == 200
    assert http.get("/einfo.fcgi").headers["content-type"].startswith("text/html")
    http.delete("/_fake/faults")
    assert http.post("/_fake/faults", json={"sequence": ["nope"]}).status_code == 400
    assert http.post("/_fake/faults", json={"bogus": 1}).status_code == 400
    assert http.get("/einfo.fcgi").status_code == 200


def test_withheld_pmids_are_found_by_esearch_and_left_out_by_efetch(
    http: httpx.Client, fake: FakeEutilsServer
) -> None:
    wanted = ["30000003", "30000001", "30000002"]
    term = " OR ".join(f"{p}[uid]" for p in wanted)
    try:
        answer = http.post("/_fake/withhold", json={"pmids": ["30000001", 30000002]})
        assert answer.json() == {"withheld": ["30000001", "30000002"]}
        found = xml(http.get("/esearch.fcgi", params={"db": "pubmed", "term": term}))
        assert sorted(i.text or "" for i in found.iter("Id")) == sorted(wanted)
        fetched = http.post("/efetch.fcgi", data={"db": "pubmed", "id": ",".join(wanted)})
        assert [r.pmid for r in parse_pubmed_articles(fetched.content).records] == ["30000003"]
        assert http.post("/_fake/withhold", json={"pmid": []}).status_code == 400
        assert http.post("/_fake/withhold", json={"pmids": "30000001"}).status_code == 400
        assert fake.state.withheld == {"30000001", "30000002"}

        assert http.post("/_fake/withhold", json={"pmids": []}).json() == {"withheld": []}
        fetched = http.post("/efetch.fcgi", data={"db": "pubmed", "id": ",".join(wanted)})
        assert [r.pmid for r in parse_pubmed_articles(fetched.content).records] == wanted
    finally:
        fake.withhold([])


# --------------------------------------------------------------------------- lifecycle


def test_the_server_stops_cleanly() -> None:
    corpus = FakeCorpus.from_xml_bytes(
        generate_articles(3, start=date(2020, 1, 1), end=date(2020, 1, 3))
    )
    server = FakeEutilsServer(corpus)
    threads = set(threading.enumerate())
    with server, httpx.Client(base_url=server.base_url) as client:
        port = server.port
        assert port > 0
        assert server.base_url == f"http://127.0.0.1:{port}"
        assert client.get("/entrez/eutils/einfo.fcgi").status_code == 200
        assert client.get("/einfo.fcgi").status_code == 200
        names = {t.name for t in set(threading.enumerate()) - threads}
        assert "fake-eutils" in names
        assert any(name.startswith("fake-eutils-worker") for name in names)
    assert set(threading.enumerate()) <= threads
    with pytest.raises(httpx.ConnectError), httpx.Client() as client:
        client.get(f"http://127.0.0.1:{port}/einfo.fcgi")
    with server:  # and it can start again
        assert server.port > 0


def test_async_context_manager() -> None:
    corpus = FakeCorpus.from_xml_bytes(
        generate_articles(5, start=date(2020, 1, 1), end=date(2020, 1, 5))
    )

    async def scenario() -> int:
        async with (
            FakeEutilsServer(corpus) as server,
            httpx.AsyncClient(base_url=server.base_url) as client,
        ):
            response = await client.get("/einfo.fcgi", params={"db": "pubmed"})
            return int(xml(response).findtext("DbInfo/Count") or 0)

    assert asyncio.run(scenario()) == 5


def test_the_fake_eutils_command() -> None:
    command = [
        sys.executable,
        "-c",
        "from biomcp.entrypoints.cli.main import main; main()",
        "fake-eutils",
        "--synthetic",
        "50",
        "--port",
        "0",
    ]
    with subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            assert "50 records" in line, line + (process.stderr.read() if process.stderr else "")
            base_url = line.split()[-1]
            assert base_url.startswith("http://127.0.0.1:")
            with httpx.Client(base_url=base_url, timeout=30) as client:
                root = esearch(client, "humans[mh] OR animals[mh]")
            assert root.findtext("Count") == "50"
        finally:
            process.terminate()
            returncode = process.wait(timeout=30)
    assert returncode == 0


def test_the_command_refuses_a_remote_host() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from biomcp.entrypoints.cli.main import main; main()",
            "fake-eutils",
            "--host",
            "0.0.0.0",  # noqa: S104 - refused, that is the point
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "--allow-remote" in result.stderr
