"""`biomcp.open_corpus()`: the library facade, in-process, against the fake E-utilities server.

Synchronous calls from plain code and from inside a running event loop (as in Jupyter), the
async variants, filters, checkpoints, errors and closing.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import threading
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from types import NoneType, UnionType
from typing import Any, get_args, get_origin, get_type_hints, is_typeddict

import pytest
from pydantic import ValidationError

import biomcp
from biomcp.entrypoints.library import (
    AsyncCorpus,
    ChunksStored,
    CollectionInspection,
    Corpus,
    CorpusClosedError,
    CorpusOverview,
    Document,
    FoundChunks,
    ProjectList,
    SyncJobStatus,
    open_async_corpus,
    open_corpus,
)
from biomcp.entrypoints.settings import load_settings
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, generate_articles
from biomcp.usecases.errors import InvalidRequestError, NotFoundError
from biomcp.usecases.sync import SyncProgress

pytestmark = pytest.mark.integration

TERM = "hypertension[mh]"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    corpus = FakeCorpus.from_xml_bytes(
        generate_articles(120, start=date(2021, 1, 1), end=date(2022, 6, 30), seed=5)
    )
    with FakeEutilsServer(corpus) as server:
        yield server


@pytest.fixture(scope="module")
def matching(fake: FakeEutilsServer) -> dict[str, datetime]:
    """PMID -> Entrez date of the fake's records that TERM matches."""
    found = {}
    for entry in fake.corpus:
        record = entry.record
        if record is not None and any(h.descriptor == "Hypertension" for h in record.mesh):
            assert record.edat is not None
            found[record.pmid] = record.edat
    assert len(found) >= 5
    return found


def settings_for(fake: FakeEutilsServer, data_dir: Path) -> dict[str, Any]:
    return {
        "biomcp_data_dir": data_dir,
        "biomcp_embeddings": "deterministic",
        "ncbi_eutils_base_url": fake.base_url,
        "ncbi_max_retries": 0,
        "biomcp_sync_batch_size": 10,
    }


@pytest.fixture(scope="module")
def corpus(fake: FakeEutilsServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Corpus]:
    with open_corpus(**settings_for(fake, tmp_path_factory.mktemp("library"))) as opened:
        yield opened


@pytest.fixture(scope="module")
def synced(corpus: Corpus, matching: dict[str, datetime]) -> Corpus:
    seen: list[SyncProgress] = []
    report = corpus.sync("htn_v1", TERM, progress=seen.append)
    assert report.inserted == len(matching)
    assert (report.updated, report.skipped) == (0, 0)
    assert report.pmids_processed == len(matching)
    assert report.max_edat_seen == max(matching.values())
    assert report.checkpoint_advanced
    # Progress: once after enumeration, then after every batch of 10.
    assert seen[0].processed == 0
    assert seen[-1].processed == seen[-1].total == len(matching)
    assert len(seen) == 1 + -(-len(matching) // 10)
    assert [p.processed for p in seen] == sorted(p.processed for p in seen)
    return corpus


def iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def test_open_corpus_is_exported_lazily_from_the_package() -> None:
    assert biomcp.open_corpus is open_corpus
    assert biomcp.Corpus is Corpus
    assert "open_corpus" in biomcp.__all__
    assert isinstance(biomcp.__version__, str)


def test_sync_search_get_and_checkpoint(synced: Corpus, matching: dict[str, datetime]) -> None:
    hits = synced.search("hypertension blood pressure", top_k=5)
    assert 1 <= len(hits) <= 5
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert {h.doc_id.removeprefix("pmid:") for h in hits} <= set(matching)
    assert hits[0].as_payload()["doc_id"] == hits[0].doc_id

    doc = synced.get(hits[0].doc_id)
    assert doc["doc_id"] == hits[0].doc_id
    assert doc["version"] == 1
    pmid = hits[0].doc_id.removeprefix("pmid:")
    assert synced.get(int(pmid)) == synced.get(pmid) == doc
    assert doc["edat"] == iso(matching[pmid])

    assert synced.checkpoint("htn_v1").as_payload() == {
        "query_key": "htn_v1",
        "last_edat": iso(max(matching.values())),
    }
    assert synced.checkpoint("unknown").as_payload() == {"query_key": "unknown", "last_edat": None}
    [listed] = [c.as_payload() for c in synced.checkpoints() if c.query_key == "htn_v1"]
    assert listed["covers_from"] is None  # synced over the whole history
    assert listed["last_scan_at"] is not None
    overview = synced.overview()  # the corpus_overview tool's answer
    assert overview["records"] == len(matching)
    assert overview["chunks"] >= len(matching)
    [query] = [q for q in overview["queries"] if q["query_key"] == "htn_v1"]
    assert (query["term"], query["last_sync"]) == (TERM, "succeeded")
    assert query["last_edat"] == iso(max(matching.values()))


def test_replay_stores_and_embeds_nothing(synced: Corpus) -> None:
    report = synced.sync("htn_v1")  # a saved query: the term it was last synced with
    assert report.term == TERM
    assert report.inserted == report.updated == 0
    assert report.texts_embedded == 0
    assert report.chunks_written == 0
    assert not report.checkpoint_advanced


def test_search_filters(synced: Corpus) -> None:
    everything = synced.search("hypertension", top_k=100)
    assert everything
    clinical = synced.search("hypertension", top_k=100, evidence_type="clinical")
    assert clinical
    assert {h.evidence_type for h in clinical} == {"clinical"}
    assert len(clinical) < len(everything)
    strong = synced.search("hypertension", top_k=100, min_quality=8)
    assert strong
    assert all(h.quality is not None and h.quality >= 8 for h in strong)
    assert len(strong) < len(everything)
    assert synced.search("hypertension", year_min=2030) == []
    one = everything[0].doc_id
    assert {h.doc_id for h in synced.search("hypertension", doc_ids=[one])} == {one}
    unbiased = synced.search("hypertension", top_k=100, quality_bias=False)
    assert all(h.score == h.fused for h in unbiased)


def test_the_old_filter_names_still_work_with_a_deprecation_warning(synced: Corpus) -> None:
    old: Any = synced  # the old names are not in the signatures any more
    new = synced.search("hypertension", top_k=100, evidence_type="clinical", study_design="rct")
    assert new, "the seed should give clinical trials"
    renamed = "'evidence_types' is deprecated, use 'evidence_type'"
    with pytest.warns(DeprecationWarning, match=renamed):
        hits = old.search("hypertension", top_k=100, evidence_types="clinical", study_design="rct")
    assert [h.chunk_id for h in hits] == [h.chunk_id for h in new]

    async def awaited() -> list[str]:
        with pytest.warns(DeprecationWarning, match="'study_designs' is deprecated"):
            found = await old.aio.search(
                "hypertension", top_k=100, evidence_type="clinical", study_designs="rct"
            )
        return [h.chunk_id for h in found]

    assert asyncio.run(awaited()) == [h.chunk_id for h in new]
    now, before = io.StringIO(), io.StringIO()
    synced.export(now, format="pmids", query_key="htn_v1", study_design="rct")
    with pytest.warns(DeprecationWarning, match="'study_designs' is deprecated"):
        old.export(before, format="pmids", query_key="htn_v1", study_designs="rct")
    assert before.getvalue() == now.getvalue() != ""
    with pytest.raises(TypeError, match="got both 'evidence_types' and 'evidence_type'"):
        old.search("hypertension", evidence_type="rct", evidence_types="rct")


def test_set_checkpoint_moves_back_with_an_audit(
    synced: Corpus, matching: dict[str, datetime]
) -> None:
    key = "htn_manual"
    first = synced.set_checkpoint(key, "2022-01-01T00:00:00Z").as_payload()
    assert first == {
        "ok": True,
        "query_key": key,
        "previous_edat": None,
        "last_edat": "2022-01-01T00:00:00Z",
        "moved_backward": False,
    }
    back = synced.set_checkpoint(
        key, datetime(2021, 6, 1, tzinfo=UTC), reason="backfill", actor="notebook"
    ).as_payload()
    assert back["previous_edat"] == "2022-01-01T00:00:00Z"
    assert back["moved_backward"] is True
    assert synced.checkpoint(key).as_payload()["last_edat"] == "2021-06-01T00:00:00Z"
    # The sync after a backfill re-reads the period (overlap 0) and stores nothing new.
    report = synced.sync(key, TERM, overlap_days=0)
    later = [p for p, edat in matching.items() if edat >= datetime(2021, 6, 1, tzinfo=UTC)]
    assert report.pmids_processed == report.skipped == len(later)
    assert report.inserted == 0


def test_errors_are_the_typed_ones(synced: Corpus) -> None:
    with pytest.raises(NotFoundError, match="pmid:99999999 is not in the corpus"):
        synced.get("99999999")
    with pytest.raises(InvalidRequestError, match="not a document id"):
        synced.get("doi:10.1/x")
    with pytest.raises(InvalidRequestError, match=r"top_k must be in 1\.\.100"):
        synced.search("hypertension", top_k=0)
    with pytest.raises(InvalidRequestError, match="unknown evidence type anecdotal"):
        synced.search("hypertension", evidence_type="anecdotal")
    with pytest.raises(InvalidRequestError, match="year_min 2024 is after year_max 2020"):
        synced.search("hypertension", year_min=2024, year_max=2020)
    with pytest.raises(InvalidRequestError, match="in the future"):
        synced.set_checkpoint("htn_v1", "2999-01-01")


def test_sync_calls_work_inside_a_running_event_loop(synced: Corpus) -> None:
    """As in Jupyter: the cell's code runs while an event loop is running in the thread."""

    async def cell() -> tuple[list[str], list[str], str, str | None]:
        asyncio.get_running_loop()  # the premise: a loop is running here
        blocking = [h.doc_id for h in synced.search("hypertension", top_k=3)]
        awaited = [h.doc_id for h in await synced.aio.search("hypertension", top_k=3)]
        doc = await synced.aio.get(blocking[0])
        checkpoint = await synced.aio.checkpoint("htn_v1")
        return blocking, awaited, doc["doc_id"], checkpoint.as_payload()["last_edat"]

    blocking, awaited, doc_id, last_edat = asyncio.run(cell())
    assert blocking == awaited
    assert doc_id == blocking[0]
    assert last_edat == synced.checkpoint("htn_v1").as_payload()["last_edat"]


def test_async_variants_from_several_loops_and_threads(synced: Corpus) -> None:
    async def replay() -> int:
        report = await synced.aio.sync("htn_v1", TERM)
        return report.inserted

    assert asyncio.run(replay()) == 0
    results: list[int] = []
    thread = threading.Thread(target=lambda: results.append(len(synced.search("hypertension"))))
    thread.start()
    thread.join(timeout=60)
    assert results
    assert results[0] > 0


def test_the_old_async_names_still_answer_with_a_deprecation_warning(synced: Corpus) -> None:
    async def old_spellings() -> list[object]:
        with pytest.warns(DeprecationWarning, match=r"corpus\.aio\.search"):
            hits = await synced.asearch("hypertension", top_k=3)
        with pytest.warns(DeprecationWarning, match=r"corpus\.aio\.get"):
            doc = await synced.aget(hits[0].doc_id)
        with pytest.warns(DeprecationWarning, match=r"corpus\.aio\.checkpoint"):
            mark = await synced.acheckpoint("htn_v1")
        with pytest.warns(DeprecationWarning, match=r"corpus\.aio\.sync"):
            report = await synced.sync_async("htn_v1")
        with pytest.warns(DeprecationWarning, match=r"corpus\.aio\.sync_status"):
            status = await synced.async_status(report.job_id)
        return [[h.doc_id for h in hits], doc, mark, report.inserted, status["status"]]

    hits = synced.search("hypertension", top_k=3)
    doc = synced.get(hits[0].doc_id)
    assert asyncio.run(old_spellings()) == [
        [h.doc_id for h in hits],
        doc,
        synced.checkpoint("htn_v1"),
        0,
        "succeeded",
    ]


def test_the_old_async_writes_and_close_still_work_with_a_deprecation_warning(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    opened = open_corpus(**settings_for(fake, tmp_path))

    async def old_spellings() -> None:
        with pytest.warns(DeprecationWarning, match=r"corpus\.aio\.set_checkpoint"):
            moved = await opened.aset_checkpoint("k", "2022-01-01T00:00:00Z")
        assert moved.as_payload()["last_edat"] == "2022-01-01T00:00:00Z"
        opened.create_project("lib/old")
        with pytest.warns(DeprecationWarning, match=r"corpus\.aio\.store_chunks"):
            stored = await opened.astore_chunks("lib/old", [{"id": "a", "text": "Amlodipine"}])
        assert stored["chunks_written"] == 1
        with pytest.warns(DeprecationWarning, match=r"corpus\.aio\.close"):
            await opened.aclose()

    asyncio.run(old_spellings())
    assert opened.closed


def test_an_async_corpus_answers_coroutines_from_any_loop(
    fake: FakeEutilsServer, matching: dict[str, datetime], tmp_path: Path
) -> None:
    opened = open_async_corpus(**settings_for(fake, tmp_path))
    assert isinstance(opened, AsyncCorpus)
    assert "AsyncCorpus open" in repr(opened)

    async def first() -> int:
        report = await opened.sync("htn_async", TERM)
        return report.inserted

    async def second() -> tuple[list[str], str | None]:
        async with opened:
            hits = await opened.search("hypertension", top_k=3)
            mark = await opened.checkpoint("htn_async")
        return [h.doc_id for h in hits], mark.as_payload()["last_edat"]

    assert asyncio.run(first()) == len(matching)
    doc_ids, last_edat = asyncio.run(second())
    assert doc_ids
    assert last_edat == iso(max(matching.values()))
    assert opened.closed
    with pytest.raises(CorpusClosedError):
        asyncio.run(opened.get(doc_ids[0]))


def test_progress_callbacks_may_not_reenter_the_corpus(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    errors: list[BaseException] = []
    with open_corpus(**settings_for(fake, tmp_path)) as fresh:

        def progress(_: SyncProgress) -> None:
            try:
                fresh.checkpoint("k")
            except RuntimeError as exc:
                errors.append(exc)

        fresh.sync("k", TERM, progress=progress)
    assert errors
    assert "own loop" in str(errors[0])


def test_close_releases_the_loop_and_refuses_further_calls(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    opened = open_corpus(**settings_for(fake, tmp_path))
    assert opened.checkpoint("k").last_edat is None
    loop_thread = opened.aio._loop._runner.thread
    assert loop_thread.is_alive()
    assert loop_thread in threading.enumerate()
    opened.close()
    opened.close()  # idempotent
    assert opened.closed
    assert not loop_thread.is_alive()
    with pytest.raises(CorpusClosedError):
        opened.search("hypertension")
    with pytest.raises(CorpusClosedError):
        opened.pubmed.mesh("asthma")

    async def use_async() -> None:
        async with open_corpus(**settings_for(fake, tmp_path)) as again:
            assert (await again.aio.checkpoint("k")).last_edat is None
        assert again.closed

    asyncio.run(use_async())


def test_settings_and_overrides(fake: FakeEutilsServer, tmp_path: Path) -> None:
    base = load_settings(biomcp_data_dir=tmp_path, ncbi_eutils_base_url=fake.base_url)
    with open_corpus(base, biomcp_embeddings="deterministic") as opened:
        assert opened.settings.biomcp_embeddings == "deterministic"
        assert opened.settings.biomcp_data_dir == tmp_path
        assert opened.settings.ncbi_eutils_base_url == fake.base_url
        assert "deterministic" in repr(opened)
    with pytest.raises(TypeError, match="unknown settings biomcp_embedings"):
        open_corpus(biomcp_embedings="deterministic")
    with pytest.raises(ValidationError, match="biomcp_vector_backend"):
        open_corpus(base, biomcp_vector_backend="nope")
    with pytest.raises(ValidationError, match="biomcp_search_alpha"):
        open_corpus(biomcp_data_dir=tmp_path, biomcp_search_alpha=3)


def test_a_misspelt_environment_variable_is_named_in_a_warning(
    fake: FakeEutilsServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BIOMCP_EMBEDDER", "deterministic")
    with pytest.warns(UserWarning, match="BIOMCP_EMBEDDER .* did you mean BIOMCP_EMBEDDINGS"):
        opened = open_corpus(**settings_for(fake, tmp_path))
    with opened:
        assert opened.settings.biomcp_embeddings == "deterministic"  # from the override


def test_a_notebook_reads_the_state_of_a_sync_job(synced: Corpus) -> None:
    report = synced.sync("htn_status_v1", TERM)
    status = synced.sync_status(report.job_id)
    assert status["status"] == "succeeded"
    assert status["report"] == report.as_payload()
    assert status["query_key"] == "htn_status_v1"


def test_project_collections_through_the_library(synced: Corpus) -> None:
    corpus = synced
    made = corpus.create_project("lib/notes", hybrid=True).as_payload()
    assert made["collection"].startswith("Proj_lib_notes_")
    items = [
        {"id": "a", "text": "Amlodipine lowers blood pressure", "metadata": {"tags": ["htn"]}},
        {"id": "b", "text": "Statins lower LDL cholesterol", "metadata": {"tags": ["lipids"]}},
    ]
    assert corpus.store_chunks("lib/notes", items)["chunks_written"] == 2
    found = corpus.find_chunks("lib/notes", "blood pressure", filters={"tags": ["htn"]})
    assert [i["id"] for i in found["items"]] == ["a"]
    hybrid = corpus.find_chunks("lib/notes", "cholesterol", hybrid=True)
    assert hybrid["hybrid_enabled"] is True
    assert hybrid["items"][0]["id"] == "b"
    assert corpus.inspect_collection("lib/notes")["size"] == 2
    assert "lib/notes" in [p["id"] for p in corpus.list_projects()["projects"]]
    # Project chunks never reach the PubMed corpus's search.
    corpus_hits = corpus.search("blood pressure hypertension", top_k=10)
    assert corpus_hits
    assert all(h.doc_id.startswith("pmid:") for h in corpus_hits)


def test_forget_query_drops_a_saved_query_and_keeps_the_records(
    synced: Corpus, matching: dict[str, datetime]
) -> None:
    synced.sync("htn_scratch", TERM)
    assert "htn_scratch" in [q["query_key"] for q in synced.overview()["queries"]]

    listed = {c.query_key: c.as_payload() for c in synced.checkpoints()}
    assert listed["htn_scratch"]["records"] == len(matching)
    assert listed["htn_scratch"]["records_tracked"] is True

    assert synced.forget_query("htn_scratch").as_payload() == {
        "ok": True, "query_key": "htn_scratch", "checkpoint": True, "pending": 0, "jobs": 1,
        "records": len(matching), "records_deleted": 0, "chunks_deleted": 0,
        "records_tracked": True,
    }  # fmt: skip

    assert "htn_scratch" not in [q["query_key"] for q in synced.overview()["queries"]]
    assert synced.checkpoint("htn_scratch").last_edat is None
    assert synced.overview()["records"] == len(matching)  # the records stay
    assert "htn_v1" in [q["query_key"] for q in synced.overview()["queries"]]
    with pytest.raises(InvalidRequestError):
        synced.forget_query("  ")
    # htn_v1 holds every record htn_scratch brought: forgetting with records deletes none.
    synced.sync("htn_scratch", TERM)
    gone = synced.forget_query("htn_scratch", records=True).as_payload()
    assert (gone["records"], gone["records_deleted"]) == (len(matching), 0)
    assert synced.overview()["records"] == len(matching)


def test_export_to_a_file_and_to_a_stream(
    synced: Corpus, matching: dict[str, datetime], tmp_path: Path
) -> None:
    target = tmp_path / "htn.csv"
    before = datetime.now(UTC).replace(microsecond=0)
    summary = synced.export(
        target, format="csv", query_key="htn_v1", include_retracted=True
    ).as_payload()
    next_since = datetime.fromisoformat(summary.pop("next_added_since"))
    assert before <= next_since <= datetime.now(UTC)  # when it read the query's records
    assert summary == {
        "format": "csv", "query_key": "htn_v1", "added_since": None, "considered": len(matching),
        "exported": len(matching), "filtered_out": 0, "retracted_left_out": 0,
        "sync_running": False, "new": False,
    }  # fmt: skip
    rows = list(csv.DictReader(io.StringIO(target.read_text(encoding="utf-8"))))
    assert [r["pmid"] for r in rows] == sorted(matching, key=int)
    assert [p.name for p in tmp_path.iterdir()] == ["htn.csv"]  # no scratch file left

    first = synced.export(io.StringIO(), format="pmids", query_key="htn_v1", new=True).as_payload()
    assert (first["new"], first["considered"]) == (True, len(matching))
    again = synced.export(io.StringIO(), format="pmids", query_key="htn_v1", new=True).as_payload()
    assert (again["added_since"], again["considered"]) == (first["next_added_since"], 0)

    stream = io.StringIO()
    summary = synced.export(stream, format="pmids", query_key="htn_v1", year_max=1900).as_payload()
    assert (stream.getvalue(), summary["filtered_out"]) == ("", len(matching))
    with pytest.raises(NotFoundError, match="htn_v1"):
        synced.export(io.StringIO(), query_key="htn_v0")
    with pytest.raises(InvalidRequestError, match="unknown export format"):
        synced.export(io.StringIO(), format="xml")
    trials = [r["pmid"] for r in rows if r["study_design"] == "rct"]
    assert trials, "the seed should give randomized trials"
    synced.export(
        stream, format="jsonl", query_key="htn_v1", study_design="rct", include_retracted=True
    )
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [d["doc_id"] for d in lines] == [f"pmid:{p}" for p in trials]
    assert {d["study_design"] for d in lines} == {"rct"}


def test_prune_records_of_a_query_forgotten_without_them(
    synced: Corpus, matching: dict[str, datetime]
) -> None:
    report = synced.sync("not_htn", "humans[mh] NOT hypertension[mh]")
    assert report.inserted > 0
    synced.forget_query("not_htn")  # its records stay, held by no saved query
    assert synced.overview()["records"] == len(matching) + report.inserted

    assert synced.prune_records(dry_run=True).as_payload() == {
        "ok": True, "dry_run": True, "records": report.inserted, "deleted": 0,
        "chunks_deleted": 0,
    }  # fmt: skip
    pruned = synced.prune_records().as_payload()
    assert (pruned["records"], pruned["deleted"]) == (report.inserted, report.inserted)
    assert pruned["chunks_deleted"] >= report.inserted
    assert synced.overview()["records"] == len(matching)


def typed_dicts_within(hint: Any, value: Any) -> list[tuple[Any, Any]]:
    """The (TypedDict, dict) pairs of `value` that `hint` (`X`, `X | None`, `list[X]`) types."""
    if is_typeddict(hint):
        return [(hint, value)]
    args = get_args(hint)
    if get_origin(hint) is list and isinstance(value, list):
        return [pair for item in value for pair in typed_dicts_within(args[0], item)]
    if get_origin(hint) is UnionType and value is not None:
        return [
            pair for arg in args if arg is not NoneType for pair in typed_dicts_within(arg, value)
        ]
    return []


def assert_keys_declared(value: Any, typed: Any) -> int:
    """Fail unless `value`, and every dict nested in it that `typed` types, has each required
    key of its TypedDict and no key it does not declare; the number of dicts checked."""
    assert type(value) is dict, typed.__name__
    keys = set(value)
    missing = typed.__required_keys__ - keys
    extra = keys - typed.__required_keys__ - typed.__optional_keys__
    assert not missing, f"{typed.__name__} lacks {sorted(missing)}"
    assert not extra, f"{typed.__name__} does not declare {sorted(extra)}"
    hints = get_type_hints(typed)
    return 1 + sum(
        assert_keys_declared(inner, nested)
        for key in keys
        for nested, inner in typed_dicts_within(hints[key], value[key])
    )


def test_the_dict_answers_have_exactly_the_keys_their_typed_dicts_declare(
    synced: Corpus,
) -> None:
    """The `TypedDict` of each dict answer cannot drift from the payload silently."""
    corpus = synced
    report = corpus.sync("htn_typed_v1", TERM)
    [hit] = corpus.search("hypertension blood pressure", top_k=1)
    corpus.create_project("lib/typed", hybrid=True)
    items = [{"id": "a", "text": "Amlodipine lowers blood pressure", "metadata": {"tags": ["x"]}}]
    overview, projects = corpus.overview(), corpus.list_projects()
    # Each answer, its TypedDict and how many dicts it holds that TypedDicts type (itself, the
    # quality scores and breakdown, each saved query, the report, each item, the indexes...).
    answers: list[tuple[Any, Any, int]] = [
        (corpus.get(hit.doc_id), Document, 3),
        (overview, CorpusOverview, 1 + len(overview["queries"])),
        (corpus.sync_status(report.job_id), SyncJobStatus, 2),
        (corpus.store_chunks("lib/typed", items), ChunksStored, 1),
        (corpus.find_chunks("lib/typed", "blood pressure"), FoundChunks, 2),
        (corpus.find_chunks("lib/typed", "blood pressure", hybrid=True), FoundChunks, 2),
        (corpus.inspect_collection("lib/typed", sample=1), CollectionInspection, 2),
        (projects, ProjectList, 1 + len(projects["projects"])),
    ]
    for answer, typed, dicts in answers:
        assert assert_keys_declared(answer, typed) == dicts, typed.__name__
