"""The `VectorStore` contract suite: one set of checks every adapter must pass.

Subclass `VectorStoreContract` in a `test_*.py` module and provide two fixtures:

* `store_factory`: an async callable returning a NEW store instance. Within one test every
  call must reach the same backing storage (the same directory, the same server), so a store
  closed and made again sees what the first one wrote. The suite closes every store it makes.
* `dim`: the vector dimension to use (small: 8 to 64).

    class TestMine(VectorStoreContract):
        @pytest.fixture
        def store_factory(self, tmp_path: Path) -> StoreFactory: ...

        @pytest.fixture
        def dim(self) -> int: ...

Each test uses collections of its own (`Contract<hex>`, a valid Weaviate class name too), so
storage shared between tests is fine, and drives the async port with `asyncio.run`. Expected
fusion orders are computed with `biomcp.domain.fusion` from the raw arm scores a store returns,
so the suite checks the semantics without pinning one engine's BM25 numbers.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import uuid
from collections.abc import Awaitable, Callable, Collection, Coroutine, Sequence
from dataclasses import replace
from typing import Any, ClassVar, TypeVar

import pytest

from biomcp.domain.fusion import ranked_fusion, relative_score_fusion
from biomcp.ports.vectors import (
    MAX_SENTENCE_VECTORS,
    ChunkRecord,
    CollectionNotFoundError,
    EmbeddingMismatchError,
    Fusion,
    InvalidVectorError,
    SearchFilters,
    StoreCheck,
    VectorHit,
    VectorStore,
)
from biomcp.usecases.ranking import hybrid_search

__all__ = ["StoreFactory", "VectorStoreContract", "unit_vector"]

T = TypeVar("T")
StoreFactory = Callable[[], Awaitable[VectorStore]]
MODEL = "contract-model-a"
NAMESPACE = uuid.UUID("6f1d1a6e-6b1c-4c44-9d0f-2a3b4c5d6e7f")


def unit_vector(
    dim: int, *, toward: int | None = None, sim: float = 1.0, seed: int = 0
) -> list[float]:
    """A unit vector: with `toward=i`, cosine `sim` to the basis vector e_i (the rest of its
    length along e_(i+1)); otherwise random from `seed`."""
    if toward is not None:
        vector = [0.0] * dim
        vector[toward % dim] = sim
        vector[(toward + 1) % dim] = math.sqrt(max(0.0, 1.0 - sim * sim))
        return vector
    rng = random.Random(seed)
    raw = [rng.gauss(0.0, 1.0) for _ in range(dim)]
    norm = math.sqrt(sum(x * x for x in raw))
    return [x / norm for x in raw]


def chunk(
    doc: str, chunk_id: str, text: str, vector: Sequence[float], **fields: Any
) -> ChunkRecord:
    return ChunkRecord(
        uuid=str(uuid.uuid5(NAMESPACE, f"{doc}:{chunk_id}")),
        doc_id=doc,
        chunk_id=chunk_id,
        text=text,
        vector=list(vector),
        **fields,
    )


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


#: The collections this process named: the only ones a check may drop after it.
_NAMED: set[str] = set()


def _name() -> str:
    name = f"Contract{uuid.uuid4().hex[:12]}"
    _NAMED.add(name)
    return name


def _uuids(hits: Sequence[VectorHit]) -> list[str]:
    return [h.uuid for h in hits]


#: One chunk each, for the keyword-terms check: every store turns text into the same terms.
KEYWORD_TEXTS = {
    "beta": "A β-blocker was given",
    "tnf": "TNF-alpha rose",
    "nfkb": "NF-κB was bound at 5 μg",
    "tumor": "Tumor growth slowed",
    "trial": "A randomised trial in esophageal cancer",
    "bleed": "Haemorrhage after surgery, hour by hour",
    "il6": "Serum IL-6 rose",
    "sepsis": "In 12 sepsis patients il 6 was high",
    "hba1c": "HbA1c fell by half",
    "p": "significant (p<0.05)",
}
#: Queries and the keys of `KEYWORD_TEXTS` each finds by keywords alone.
KEYWORD_CASES = [
    ("beta-blocker", {"beta"}),  # Greek letters meet their spelled-out names
    ("β-blocker", {"beta"}),
    ("TNF-α", {"tnf"}),
    ("TNF-alpha", {"tnf"}),
    ("NF-kappaB", {"nfkb"}),
    ("μg", {"nfkb"}),
    ("mug", set()),  # mu stays a Greek letter: it is mostly a unit's micro
    ("tumour", {"tumor"}),  # British spellings meet American ones
    ("Tumors", {"tumor"}),  # and words meet by their stem
    ("randomized", {"trial"}),
    ("oesophageal", {"trial"}),
    ("haemorrhage", {"bleed"}),
    ("hemorrhages", {"bleed"}),
    ("four", set()),  # a word that only contains "our" is not folded
    ("IL-6", {"il6", "sepsis"}),  # "il" and "6" are two tokens
    ("il 6", {"il6", "sepsis"}),
    ("HbA1c", {"hba1c"}),  # letters and digits stay one token
    ("12", {"sepsis"}),  # numbers are tokens
    ("P<0.05", {"p"}),
    ("THE AND OF", set()),  # stopwords only
    ("", set()),
]


class VectorStoreContract:
    """The checks (module docstring)."""

    pytestmark: ClassVar[list[pytest.MarkDecorator]] = [pytest.mark.contract]

    # --- plumbing ------------------------------------------------------------------------

    def run(
        self,
        store_factory: StoreFactory,
        scenario: Callable[[VectorStore], Coroutine[Any, Any, T]],
        *,
        keep: Collection[str] = (),
    ) -> T:
        """`scenario` on a new store; the collections it made are dropped after it, except
        those in `keep` (a later `run` reads them)."""

        async def main() -> T:
            store = await store_factory()
            before = set(await store.collections())
            try:
                return await scenario(store)
            finally:
                # A shared server (Weaviate in CI) keeps no collection of a finished check:
                # hundreds of them left behind slow every later test down. Collections that
                # other tests (another pytest-xdist worker) made meanwhile are not ours to drop.
                with contextlib.suppress(Exception):
                    made = (set(await store.collections()) - before - set(keep)) & _NAMED
                    for name in made:
                        await store.drop_collection(name)
                await store.aclose()

        return asyncio.run(main())

    async def _filled(self, store: VectorStore, dim: int, chunks: Sequence[ChunkRecord]) -> str:
        name = _name()
        await store.ensure_schema(name, dim=dim, model_id=MODEL)
        report = await store.upsert_chunks(name, chunks)
        assert report.errors == ()
        assert report.upserted == len(chunks)
        return name

    def corpus(self, dim: int) -> list[ChunkRecord]:
        """Six chunks of four documents with varied metadata (one lacking all of it)."""
        lancet = {"year": 2019, "evidence_type": "rct", "quality_total": 8.5}
        cohort = {"year": 2005, "evidence_type": "cohort", "quality_total": 5.0}
        return [
            chunk(
                "pmid:1", "0", "Metformin lowers HbA1c in type 2 diabetes patients",
                unit_vector(dim, toward=0, sim=0.9), journal="The Lancet", section="RESULTS",
                has_numbers=True, pub_types=("Randomized Controlled Trial",),
                metadata={"mesh": "Diabetes"}, **lancet,
                facets={"tags": ("diabetes", "drug"), "citekey": ("smith2019",)},
            ),
            chunk(
                "pmid:1", "1", "Metformin was well tolerated; diarrhoea was the main adverse event",
                unit_vector(dim, toward=2, sim=0.8), journal="The Lancet", **lancet,
                facets={"tags": ("drug",)},
            ),
            chunk(
                "pmid:2", "0", "Statins reduce LDL cholesterol and cardiovascular events",
                unit_vector(dim, toward=4), year=2012, evidence_type="meta_analysis",
                quality_total=9.0, journal="BMJ",
                facets={"tags": ("cardio",), "citekey": ("lee2012",)},
            ),
            chunk(
                "pmid:3", "0",
                "Aspirin increases the risk of gastrointestinal bleeding in 12 of 100 patients",
                unit_vector(dim, toward=6), journal="JAMA", **cohort,
            ),
            chunk(
                "pmid:3", "1", "Metformin use was not associated with bleeding",
                unit_vector(dim, toward=0, sim=0.5), journal="jama", **cohort,
                facets={"tags": ("diabetes",)},
            ),
            chunk("doc-x", "0", "Metformin case report, no metadata", unit_vector(dim, seed=99)),
        ]  # fmt: skip

    # --- schema --------------------------------------------------------------------------

    def test_ensure_schema_creates_and_accepts_the_same_model_again(
        self, store_factory: StoreFactory, dim: int
    ) -> None:
        async def scenario(store: VectorStore) -> None:
            name = _name()
            await store.ensure_schema(name, dim=dim, model_id=MODEL)
            await store.ensure_schema(name, dim=dim, model_id=MODEL)
            assert name in await store.collections()
            stats = await store.stats(name)
            assert (stats.name, stats.count, stats.dim, stats.model_id, stats.documents) == (
                name, 0, dim, MODEL, 0,
            )  # fmt: skip

        self.run(store_factory, scenario)

    def test_another_model_or_dimension_is_refused(
        self, store_factory: StoreFactory, dim: int
    ) -> None:
        async def scenario(store: VectorStore) -> None:
            name = await self._filled(store, dim, self.corpus(dim)[:1])
            with pytest.raises(EmbeddingMismatchError) as info:
                await store.ensure_schema(name, dim=dim, model_id="another-model")
            assert info.value.collection == name
            with pytest.raises(EmbeddingMismatchError):
                await store.ensure_schema(name, dim=dim + 1, model_id=MODEL)
            assert await store.count(name) == 1

        self.run(store_factory, scenario)

    def test_the_migration_flag_drops_the_chunks_and_takes_the_new_model(
        self, store_factory: StoreFactory, dim: int
    ) -> None:
        async def scenario(store: VectorStore) -> None:
            name = await self._filled(store, dim, self.corpus(dim))
            new_dim = dim * 2
            await store.ensure_schema(
                name, dim=new_dim, model_id="model-b", allow_model_change=True
            )
            stats = await store.stats(name)
            assert (stats.count, stats.dim, stats.model_id, stats.documents) == (
                0,
                new_dim,
                "model-b",
                0,
            )
            assert await hybrid_search(store, name, "metformin", None) == []
            fresh = chunk("pmid:9", "0", "metformin again", unit_vector(new_dim, toward=1))
            assert (await store.upsert_chunks(name, [fresh])).upserted == 1
            hits = await hybrid_search(store, name, "metformin", unit_vector(new_dim, toward=1))
            assert _uuids(hits) == [fresh.uuid]

        self.run(store_factory, scenario)

    def test_unknown_collections_raise_collection_not_found(
        self, store_factory: StoreFactory, dim: int
    ) -> None:
        async def scenario(store: VectorStore) -> None:
            name = _name()
            calls: list[Awaitable[object]] = [
                store.upsert_chunks(name, self.corpus(dim)[:1]),
                store.delete_chunks(name, "pmid:1"),
                hybrid_search(store, name, "metformin", unit_vector(dim, seed=1)),
                store.existing_uuids(name, {"x"}),
                store.count(name),
                store.stats(name),
            ]
            for call in calls:
                with pytest.raises(CollectionNotFoundError):
                    await call
            assert name not in await store.collections()

        self.run(store_factory, scenario)

    # --- writes --------------------------------------------------------------------------

    def test_upsert_is_idempotent_by_uuid_and_replaces_the_chunk(
        self, store_factory: StoreFactory, dim: int
    ) -> None:
        async def scenario(store: VectorStore) -> None:
            corpus = self.corpus(dim)
            name = await self._filled(store, dim, corpus)
            again = await store.upsert_chunks(name, corpus)
            assert (again.upserted, again.errors) == (len(corpus), ())
            assert await store.count(name) == len(corpus)
            changed = replace(corpus[2], text="Statins now mention rosuvastatin", year=2020)
            await store.upsert_chunks(name, [changed])
            assert await store.count(name) == len(corpus)
            hits = await hybrid_search(store, name, "rosuvastatin", None)
            assert [(h.uuid, h.text, h.year) for h in hits] == [(changed.uuid, changed.text, 2020)]
            assert await hybrid_search(store, name, "cholesterol", None) == []

        self.run(store_factory, scenario)

    def test_invalid_vectors_are_reported_and_not_stored(
        self, store_factory: StoreFactory, dim: int
    ) -> None:
        async def scenario(store: VectorStore) -> None:
            name = _name()
            await store.ensure_schema(name, dim=dim, model_id=MODEL)
            good = chunk("pmid:1", "0", "fine", unit_vector(dim, seed=1))
            short = chunk("pmid:1", "1", "short", unit_vector(dim - 1, seed=2))
            long = chunk("pmid:1", "2", "long", unit_vector(dim + 1, seed=3))
            scaled = chunk("pmid:1", "3", "scaled", [2 * x for x in unit_vector(dim, seed=4)])
            nan = chunk("pmid:1", "4", "nan", [math.nan, *unit_vector(dim, seed=5)[1:]])
            inf = chunk("pmid:1", "5", "inf", [math.inf, *([0.0] * (dim - 1))])
            zero = chunk("pmid:1", "6", "zero", [0.0] * dim)
            bad = [short, long, scaled, nan, inf, zero]
            report = await store.upsert_chunks(name, [good, *bad])
            assert report.upserted == 1
            assert sorted(e.uuid for e in report.errors) == sorted(c.uuid for c in bad)
            assert all(e.message for e in report.errors)
            assert await store.count(name) == 1
            everything = {c.uuid for c in [good, *bad]}
            assert await store.existing_uuids(name, everything) == {good.uuid}

        self.run(store_factory, scenario)

    def test_delete_removes_a_documents_chunks_except_those_kept(
        self, store_factory: StoreFactory, dim: int
    ) -> None:
        async def scenario(store: VectorStore) -> None:
            doc = [
                chunk("pmid:7", str(i), f"chunk {i} of seven", unit_vector(dim, seed=i))
                for i in range(3)
            ]
            other = chunk("pmid:8", "0", "chunk of eight", unit_vector(dim, seed=10))
            name = await self._filled(store, dim, [*doc, other])
            assert await store.delete_chunks(name, "pmid:7", keep={"0"}) == 2
            assert await store.existing_uuids(name, {c.uuid for c in [*doc, other]}) == {
                doc[0].uuid, other.uuid,
            }  # fmt: skip
            hits = await hybrid_search(store, name, "chunk", unit_vector(dim, seed=1), limit=10)
            assert sorted(_uuids(hits)) == sorted([doc[0].uuid, other.uuid])
            assert await store.delete_chunks(name, "pmid:7", keep={"0"}) == 0
            assert await store.delete_chunks(name, "pmid:unknown") == 0
            assert await store.delete_chunks(name, "pmid:7") == 1
            assert await store.count(name) == 1

        self.run(store_factory, scenario)

    def test_delete_documents_removes_every_chunk_of_each_document_at_once(
        self, store_factory: StoreFactory, dim: int
    ) -> None:
        async def scenario(store: VectorStore) -> None:
            chunks = [
                chunk(
                    f"pmid:{doc}", str(i), f"chunk {i} of {doc}", unit_vector(dim, seed=doc * 7 + i)
                )
                for doc in (11, 12, 13)
                for i in range(2)
            ]
            name = await self._filled(store, dim, chunks)

            gone = await store.delete_documents(name, ["pmid:11", "pmid:13", "pmid:unknown"])

            assert gone == 4
            kept = {c.uuid for c in chunks if c.doc_id == "pmid:12"}
            assert await store.existing_uuids(name, {c.uuid for c in chunks}) == kept
            hits = await hybrid_search(store, name, "chunk", unit_vector(dim, seed=1), limit=10)
            assert set(_uuids(hits)) == kept
            assert await store.delete_documents(name, ["pmid:11"]) == 0
            assert await store.delete_documents(name, []) == 0
            assert await store.count(name) == 2

        self.run(store_factory, scenario)

    def test_counts_stats_and_collections(self, store_factory: StoreFactory, dim: int) -> None:
        async def scenario(store: VectorStore) -> None:
            corpus = self.corpus(dim)
            name = await self._filled(store, dim, corpus)
            empty = _name()
            await store.ensure_schema(empty, dim=dim, model_id=MODEL)
            assert await store.count(name) == 6
            stats = await store.stats(name)
            assert (stats.count, stats.documents, stats.dim, stats.model_id) == (6, 4, dim, MODEL)
            assert await store.count(empty) == 0
            assert {name, empty} <= set(await store.collections())
            assert await store.existing_uuids(name, {corpus[0].uuid, "nope"}) == {corpus[0].uuid}
            assert await store.existing_uuids(name, set()) == set()

        self.run(store_factory, scenario)

    def test_a_dropped_collection_is_gone_and_can_be_made_again(
        self, store_factory: StoreFactory, dim: int
    ) -> None:
        async def scenario(store: VectorStore) -> None:
            corpus = self.corpus(dim)
            name = await self._filled(store, dim, corpus)
            await store.drop_collection(name)
            assert name not in await store.collections()
            with pytest.raises(CollectionNotFoundError):
                await store.count(name)
            await store.drop_collection(name)  # dropping what is gone is a no-op
            await store.ensure_schema(name, dim=dim, model_id=MODEL)
            assert await store.count(name) == 0
            await store.upsert_chunks(name, corpus[:2])
            assert await store.count(name) == 2

        self.run(store_factory, scenario)

    def test_a_sound_collection_verifies_clean_and_a_missing_one_is_not_found(
        self, store_factory: StoreFactory, dim: int
    ) -> None:
        async def scenario(store: VectorStore) -> None:
            name = await self._filled(store, dim, self.corpus(dim))
            await store.delete_chunks(name, "pmid:7")
            assert await store.verify(name) == StoreCheck()
            with pytest.raises(CollectionNotFoundError):
                await store.verify(_name())

        self.run(store_factory, scenario)

    # --- search --------------------------------------------------------------------------

    def test_a_lexical_match_ranks_first_at_alpha_0(
        self, store_factory: StoreFactory, dim: int
    ) -> None:
        async def scenario(store: VectorStore) -> None:
            corpus = self.corpus(dim)
            name = await self._filled(store, dim, corpus)
            hits = await hybrid_search(
                store,
                name,
                "risk of gastrointestinal bleeding",
                unit_vector(dim, toward=0),
                alpha=0.0,
            )
            assert hits[0].uuid == corpus[3].uuid
            assert all(h.bm25 is not None and h.bm25 > 0 for h in hits)
            assert [h.bm25 for h in hits] == sorted((h.bm25 or 0 for h in hits), reverse=True)
            assert {h.uuid for h in hits} == {corpus[3].uuid, corpus[4].uuid}  # "bleeding"

        self.run(store_factory, scenario)

    def test_the_nearest_vector_ranks_first_at_alpha_1(
        self, store_factory: StoreFactory, dim: int
    ) -> None:
        async def scenario(store: VectorStore) -> None:
            corpus = self.corpus(dim)
            name = await self._filled(store, dim, corpus)
            query = unit_vector(dim, toward=0)
            hits = await hybrid_search(
                store, name, "statins cholesterol", query, alpha=1.0, limit=10
            )
            expected = sorted(corpus, key=lambda c: (-dot(query, c.vector), c.uuid))
            assert _uuids(hits) == [c.uuid for c in expected]
            for hit, record in zip(hits, expected, strict=True):
                assert hit.sim == pytest.approx(dot(query, record.vector), abs=1e-5)

        self.run(store_factory, scenario)

    def test_bm25_only_when_no_vector_is_given(self, store_factory: StoreFactory, dim: int) -> None:
        async def scenario(store: VectorStore) -> None:
            corpus = self.corpus(dim)
            name = await self._filled(store, dim, corpus)
            hits = await hybrid_search(store, name, "metformin", None, alpha=0.9, limit=10)
            assert {h.uuid for h in hits} == {c.uuid for c in corpus if "Metformin" in c.text}
            assert all(h.sim is None and h.bm25 is not None for h in hits)
            ordered = sorted(hits, key=lambda h: (-(h.bm25 or 0), h.uuid))
            assert _uuids(hits) == _uuids(ordered)
            assert await hybrid_search(store, name, "the of and", None) == []

        self.run(store_factory, scenario)

    @pytest.mark.parametrize(("query", "matches"), KEYWORD_CASES)
    def test_keyword_terms_are_the_same_in_every_store(
        self, store_factory: StoreFactory, dim: int, query: str, matches: set[str]
    ) -> None:
        """Text and query become terms one way: words, spelling variants folded, stems."""

        async def scenario(store: VectorStore) -> None:
            corpus = [
                chunk(key, "0", text, unit_vector(dim, seed=i))
                for i, (key, text) in enumerate(KEYWORD_TEXTS.items())
            ]
            name = await self._filled(store, dim, corpus)
            hits = await hybrid_search(store, name, query, None, limit=20)
            assert {h.doc_id for h in hits} == matches

        self.run(store_factory, scenario)

    def fusion_corpus(self, dim: int) -> list[ChunkRecord]:
        """Relative-score and ranked fusion order these differently for the query
        ("stent thrombosis", e_0): A is the keyword match and the worst vector, C the best
        vector without the keyword, B and D in between."""
        e0 = {"toward": 0}
        return [
            chunk("doc-a", "0", "stent thrombosis stent thrombosis stent",
                  unit_vector(dim, sim=0.1, **e0)),
            chunk("doc-b", "0", "outcomes after stent placement in a large registry of patients",
                  unit_vector(dim, sim=0.9, **e0)),
            chunk("doc-c", "0", "coronary outcomes in a large registry",
                  unit_vector(dim, sim=0.95, **e0)),
            chunk("doc-d", "0", "late thrombosis", unit_vector(dim, sim=0.2, **e0)),
            chunk("doc-e", "0", "unrelated words about kidneys", unit_vector(dim, toward=3)),
        ]  # fmt: skip

    @pytest.mark.parametrize("alpha", [0.25, 0.5, 0.75])
    def test_fusions_follow_the_domain_functions(
        self, store_factory: StoreFactory, dim: int, alpha: float
    ) -> None:
        async def scenario(store: VectorStore) -> None:
            name = await self._filled(store, dim, self.fusion_corpus(dim))
            text, query = "stent thrombosis", unit_vector(dim, toward=0)
            keyword = await hybrid_search(store, name, text, None, limit=10)
            vector = await hybrid_search(store, name, text, query, alpha=1.0, limit=10)
            kw_arm = [(h.uuid, h.bm25 or 0.0) for h in keyword]
            vec_arm = [(h.uuid, h.sim or 0.0) for h in vector]
            expected = {
                Fusion.RELATIVE_SCORE: relative_score_fusion(vec_arm, kw_arm, alpha),
                Fusion.RANKED: ranked_fusion(vec_arm, kw_arm, alpha),
            }
            assert _first(expected[Fusion.RELATIVE_SCORE]) != _first(expected[Fusion.RANKED])
            for fusion, fused in expected.items():
                hits = await hybrid_search(
                    store, name, text, query, alpha=alpha, fusion=fusion, limit=10
                )
                assert _uuids(hits) == _first(fused), fusion
                for hit, (_, score) in zip(hits, fused, strict=True):
                    assert hit.score == pytest.approx(score, abs=1e-6)
            default = await hybrid_search(store, name, text, query, alpha=alpha, limit=10)
            assert _uuids(default) == _first(expected[Fusion.RELATIVE_SCORE])

        self.run(store_factory, scenario)

    def test_raw_scores_are_present_and_consistent(
        self, store_factory: StoreFactory, dim: int
    ) -> None:
        async def scenario(store: VectorStore) -> None:
            corpus = self.corpus(dim)
            by_uuid = {c.uuid: c for c in corpus}
            name = await self._filled(store, dim, corpus)
            query = unit_vector(dim, seed=7)
            keyword = {
                h.uuid: h.bm25 for h in await hybrid_search(store, name, "metformin bleeding", None)
            }
            hits = await hybrid_search(
                store, name, "metformin bleeding", query, alpha=0.5, limit=10
            )
            assert hits
            assert all(h.bm25 is not None or h.sim is not None for h in hits)
            for hit in hits:
                if hit.sim is not None:
                    assert hit.sim == pytest.approx(dot(query, by_uuid[hit.uuid].vector), abs=1e-5)
                if hit.bm25 is not None:
                    assert hit.bm25 == pytest.approx(keyword[hit.uuid], rel=1e-5)
                record = by_uuid[hit.uuid]
                fields: tuple[str, ...] = ("doc_id", "chunk_id", "text", "year", "journal")
                fields += ("evidence_type", "quality_total", "section", "has_numbers")
                for field in fields:
                    assert getattr(hit, field) == getattr(record, field), field
                assert dict(hit.metadata) == dict(record.metadata)
            assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)

        self.run(store_factory, scenario)

    def test_limit_is_respected(self, store_factory: StoreFactory, dim: int) -> None:
        async def scenario(store: VectorStore) -> None:
            name = await self._filled(store, dim, self.corpus(dim))
            query = unit_vector(dim, seed=3)
            for limit in (1, 2, 5):
                hybrid = await hybrid_search(store, name, "metformin", query, limit=limit)
                keyword = await hybrid_search(store, name, "metformin", None, limit=limit)
                assert (len(hybrid), len(keyword)) == (limit, min(limit, 4))
            assert len(await hybrid_search(store, name, "metformin", query, limit=50)) == 6

        self.run(store_factory, scenario)

    def test_ties_are_broken_by_uuid_deterministically(
        self, store_factory: StoreFactory, dim: int
    ) -> None:
        async def scenario(store: VectorStore) -> None:
            vector = unit_vector(dim, seed=5)
            twins = [chunk(f"twin-{i}", "0", "identical twin text", vector) for i in range(5)]
            name = await self._filled(store, dim, twins)
            expected = sorted(c.uuid for c in twins)
            for alpha, fusion in (
                (0.0, Fusion.RELATIVE_SCORE),
                (1.0, Fusion.RANKED),
                (0.5, Fusion.RANKED),
            ):
                for _ in range(2):
                    hits = await hybrid_search(
                        store, name, "twin", vector, alpha=alpha, fusion=fusion
                    )
                    assert _uuids(hits) == expected

        self.run(store_factory, scenario)

    @pytest.mark.parametrize(
        ("filters", "expected"),
        [
            (SearchFilters(evidence_types=frozenset({"rct", "cohort"})), {0, 1, 3, 4}),
            (SearchFilters(evidence_types=frozenset()), set()),
            (SearchFilters(year_min=2012), {0, 1, 2}),
            (SearchFilters(year_max=2012), {2, 3, 4}),
            (SearchFilters(year_min=2006, year_max=2018), {2}),
            (SearchFilters(min_quality=8.5), {0, 1, 2}),
            (SearchFilters(journals=frozenset({"JAMA"})), {3, 4}),
            (SearchFilters(journals=frozenset({"the lancet", "bmj"})), {0, 1, 2}),
            (SearchFilters(doc_ids=frozenset({"pmid:3", "doc-x"})), {3, 4, 5}),
            (SearchFilters(evidence_types=frozenset({"rct"}), min_quality=9.0), set()),
            (SearchFilters(), {0, 1, 2, 3, 4, 5}),
            (SearchFilters(facets=(("tags", frozenset({"drug"})),)), {0, 1}),
            (SearchFilters(facets=(("tags", frozenset({"diabetes", "cardio"})),)), {0, 2, 4}),
            (
                SearchFilters(
                    facets=(
                        ("tags", frozenset({"diabetes"})),
                        ("citekey", frozenset({"smith2019"})),
                    )
                ),
                {0},
            ),
            (SearchFilters(facets=(("tags", frozenset({"nope"})),)), set()),
            (SearchFilters(facets=(("tags", frozenset()),)), set()),
            (SearchFilters(facets=(("drug", frozenset({"tags"})),)), set()),  # key and value apart
            (
                SearchFilters(
                    doc_ids=frozenset({"pmid:3"}), facets=(("tags", frozenset({"diabetes"})),)
                ),
                {4},
            ),
            (SearchFilters(exclude_facets=(("tags", frozenset({"drug"})),)), {2, 3, 4, 5}),
            (
                SearchFilters(exclude_facets=(("tags", frozenset({"diabetes", "cardio"})),)),
                {1, 3, 5},
            ),
            (  # a key most chunks lack: they all pass
                SearchFilters(exclude_facets=(("citekey", frozenset({"smith2019"})),)),
                {1, 2, 3, 4, 5},
            ),
            (  # dropped under any listed key
                SearchFilters(
                    exclude_facets=(
                        ("tags", frozenset({"cardio"})),
                        ("citekey", frozenset({"smith2019"})),
                    )
                ),
                {1, 3, 4, 5},
            ),
            (SearchFilters(exclude_facets=(("tags", frozenset({"nope"})),)), {0, 1, 2, 3, 4, 5}),
            (SearchFilters(exclude_facets=(("tags", frozenset()),)), {0, 1, 2, 3, 4, 5}),
            (SearchFilters(exclude_facets=(("drug", frozenset({"tags"})),)), {0, 1, 2, 3, 4, 5}),
            (
                SearchFilters(
                    facets=(("citekey", frozenset({"lee2012", "smith2019"})),),
                    exclude_facets=(("tags", frozenset({"drug"})),),
                ),
                {2},
            ),
            (
                SearchFilters(
                    facets=(("tags", frozenset({"diabetes"})),),
                    exclude_facets=(("tags", frozenset({"drug"})),),
                ),
                {4},
            ),
            (
                SearchFilters(
                    facets=(("tags", frozenset({"drug"})),),
                    exclude_facets=(("tags", frozenset({"diabetes"})),),
                ),
                {1},
            ),
            (
                SearchFilters(
                    facets=(("tags", frozenset({"drug"})),),
                    exclude_facets=(("tags", frozenset({"drug"})),),
                ),
                set(),
            ),
            (
                SearchFilters(
                    doc_ids=frozenset({"pmid:1", "pmid:3"}),
                    exclude_facets=(("tags", frozenset({"drug"})),),
                ),
                {3, 4},
            ),
            (
                SearchFilters(
                    evidence_types=frozenset({"cohort"}),
                    exclude_facets=(("tags", frozenset({"diabetes"})),),
                ),
                {3},
            ),
        ],
    )
    def test_filters_apply_to_both_arms(
        self,
        store_factory: StoreFactory,
        dim: int,
        filters: SearchFilters,
        expected: set[int],
    ) -> None:
        async def scenario(store: VectorStore) -> None:
            corpus = self.corpus(dim)
            name = await self._filled(store, dim, corpus)
            want = {corpus[i].uuid for i in expected}
            text = "metformin statins aspirin"  # every chunk holds one of these words
            query = unit_vector(dim, toward=0)
            for alpha in (0.0, 0.5, 1.0):
                hits = await hybrid_search(
                    store, name, text, query, alpha=alpha, limit=20, filters=filters
                )
                assert {h.uuid for h in hits} == want, alpha
            no_vector = await hybrid_search(store, name, text, None, limit=20, filters=filters)
            assert {h.uuid for h in no_vector} == want

        self.run(store_factory, scenario)

    def test_excluding_full_text_keeps_abstracts_with_and_without_a_source_facet(
        self, store_factory: StoreFactory, dim: int
    ) -> None:
        """ "Abstract only" excludes source=fulltext, so chunks indexed before the facet
        existed count as abstract; the exclusion follows later writes."""
        fulltext = {"source": ("fulltext",)}
        abstract_only = SearchFilters(exclude_facets=(("source", frozenset({"fulltext"})),))
        fulltext_only = SearchFilters(facets=(("source", frozenset({"fulltext"})),))
        text = "metformin"

        async def scenario(store: VectorStore) -> None:
            old = chunk("pmid:1", "0", "metformin abstract", unit_vector(dim, toward=0, sim=0.9))
            tagged = chunk(
                "pmid:2", "0", "metformin abstract", unit_vector(dim, toward=1, sim=0.9),
                facets={"source": ("abstract",)},
            )  # fmt: skip
            body = chunk(
                "pmid:1", "ft-0", "metformin body", unit_vector(dim, toward=0), facets=fulltext
            )
            name = await self._filled(store, dim, [old, tagged, body])
            query = unit_vector(dim, toward=0)

            async def found(filters: SearchFilters) -> set[str]:
                arms = await store.search_arms(
                    name, text, query, keyword_limit=10, vector_limit=10, filters=filters
                )
                keyword, vector = {h.uuid for h in arms.keyword}, {h.uuid for h in arms.vector}
                assert keyword == vector
                return keyword

            assert await found(abstract_only) == {old.uuid, tagged.uuid}
            assert await found(fulltext_only) == {body.uuid}
            more = chunk(
                "pmid:2", "ft-0", "metformin body", unit_vector(dim, toward=1), facets=fulltext
            )
            retagged = replace(old, facets=fulltext)
            await store.upsert_chunks(name, [more, retagged])
            assert await found(abstract_only) == {tagged.uuid}
            assert await found(fulltext_only) == {body.uuid, more.uuid, old.uuid}

        self.run(store_factory, scenario)

    def test_a_sample_shows_stored_chunks_with_their_nested_metadata(
        self, store_factory: StoreFactory, dim: int
    ) -> None:
        payload = {"zotero": {"citekey": "k1", "tags": ["a", "b"]}, "doc": {"page_span": [4, 5]}}

        async def scenario(store: VectorStore) -> None:
            corpus = self.corpus(dim)
            corpus[5] = replace(corpus[5], metadata=payload)
            name = await self._filled(store, dim, corpus)
            assert await store.sample(name, 0) == []
            three = await store.sample(name, 3)
            assert len(three) == 3
            assert {h.uuid for h in three} <= {c.uuid for c in corpus}
            assert await store.sample(name, 3) == three  # stable while nothing is written
            everything = await store.sample(name, 50)
            assert {h.uuid for h in everything} == {c.uuid for c in corpus}
            by_uuid = {h.uuid: h for h in everything}
            assert by_uuid[corpus[5].uuid].metadata == payload
            assert by_uuid[corpus[0].uuid].text == corpus[0].text

        self.run(store_factory, scenario)

    def test_two_collections_holding_the_same_uuids_never_mix(
        self, store_factory: StoreFactory, dim: int
    ) -> None:
        """Project isolation at the store: the same chunks (uuids, texts, facets) in two
        collections; writes, deletes, searches, counts and samples of one never touch the
        other."""

        async def scenario(store: VectorStore) -> None:
            corpus = self.corpus(dim)
            first = await self._filled(store, dim, corpus)
            second = await self._filled(
                store, dim, [replace(c, text=c.text + " second") for c in corpus]
            )
            await store.delete_chunks(first, "pmid:1")
            await store.upsert_chunks(second, [replace(corpus[2], text="only in the second")])
            assert await store.count(first) == len(corpus) - 2
            assert await store.count(second) == len(corpus)
            for name, suffix in ((first, ""), (second, " second")):
                hits = await hybrid_search(
                    store, name, "metformin statins aspirin", unit_vector(dim, toward=0), limit=20
                )
                sampled = await store.sample(name, 20)
                for hit in [*hits, *sampled]:
                    assert hit.text is not None
                    if hit.uuid == corpus[2].uuid and name == second:
                        assert hit.text == "only in the second"
                    else:
                        assert (
                            hit.text.endswith(suffix)
                            if suffix
                            else not hit.text.endswith(" second")
                        )
            assert corpus[0].uuid not in {h.uuid for h in await store.sample(first, 20)}
            assert corpus[0].uuid in {h.uuid for h in await store.sample(second, 20)}

        self.run(store_factory, scenario)

    def test_fetched_chunks_are_the_records_written(
        self, store_factory: StoreFactory, dim: int
    ) -> None:
        async def scenario(store: VectorStore) -> None:
            corpus = self.corpus(dim)
            corpus[5] = replace(corpus[5], metadata={"doc": {"page_span": [1, 2]}, "n": 3})
            name = await self._filled(store, dim, corpus)
            wanted = [corpus[0].uuid, corpus[2].uuid, corpus[5].uuid, str(uuid.uuid4())]
            fetched = {c.uuid: c for c in await store.fetch_chunks(name, wanted)}
            assert set(fetched) == set(wanted[:3])
            for original in (corpus[0], corpus[2], corpus[5]):
                got = fetched[original.uuid]
                assert got.vector == pytest.approx(list(original.vector), abs=1e-6)
                assert {k: sorted(v) for k, v in got.facets.items()} == {
                    k: sorted(v) for k, v in original.facets.items()
                }
                assert replace(got, vector=(), facets={}) == replace(original, vector=(), facets={})
            assert await store.fetch_chunks(name, []) == []

        self.run(store_factory, scenario)

    # --- sentence vectors ----------------------------------------------------------------

    def _with_sentences(self, dim: int) -> list[ChunkRecord]:
        """The corpus with sentence vectors on two chunks (two and three sentences)."""
        corpus = self.corpus(dim)
        corpus[0] = replace(
            corpus[0],
            sentence_vectors=(
                unit_vector(dim, toward=3, sim=0.6),
                unit_vector(dim, toward=5, sim=0.95),
            ),
        )
        corpus[2] = replace(
            corpus[2],
            sentence_vectors=tuple(unit_vector(dim, seed=s) for s in (11, 12, 13)),
        )
        return corpus

    def test_a_chunk_is_scored_by_its_best_sentence(
        self, store_factory: StoreFactory, dim: int
    ) -> None:
        async def scenario(store: VectorStore) -> None:
            corpus = self._with_sentences(dim)
            name = await self._filled(store, dim, corpus)
            query = unit_vector(dim, toward=5)
            wanted = [c.uuid for c in corpus] + [str(uuid.uuid4())]
            scores = await store.sentence_scores(name, wanted, query)
            # Only the chunks stored with sentence vectors are scored.
            assert set(scores) == {corpus[0].uuid, corpus[2].uuid}
            assert scores[corpus[0].uuid] == pytest.approx(0.95, abs=2e-3)
            best = max(dot(v, query) for v in corpus[2].sentence_vectors)
            assert scores[corpus[2].uuid] == pytest.approx(best, abs=2e-3)
            assert await store.sentence_scores(name, [], query) == {}

        self.run(store_factory, scenario)

    def test_sentence_vectors_are_replaced_read_back_and_deleted_with_their_chunk(
        self, store_factory: StoreFactory, dim: int
    ) -> None:
        async def scenario(store: VectorStore) -> None:
            corpus = self._with_sentences(dim)
            name = await self._filled(store, dim, corpus)
            fetched = {c.uuid: c for c in await store.fetch_chunks(name, [corpus[0].uuid])}
            got = fetched[corpus[0].uuid].sentence_vectors
            assert len(got) == 2
            for read, written in zip(got, corpus[0].sentence_vectors, strict=True):
                assert list(read) == pytest.approx(list(written), abs=2e-3)
            # What was read back can be written again as it is (a restore).
            report = await store.upsert_chunks(name, [fetched[corpus[0].uuid]])
            assert report.errors == ()
            paged = [c for c in await store.page_chunks(name, limit=10) if c.uuid == corpus[2].uuid]
            assert len(paged[0].sentence_vectors) == 3
            # A chunk written again without sentence vectors has none.
            await store.upsert_chunks(name, [replace(corpus[2], sentence_vectors=())])
            query = unit_vector(dim, toward=5)
            scores = await store.sentence_scores(name, [corpus[0].uuid, corpus[2].uuid], query)
            assert set(scores) == {corpus[0].uuid}
            await store.delete_chunks(name, corpus[0].doc_id, keep={corpus[1].chunk_id})
            assert await store.sentence_scores(name, [corpus[0].uuid], query) == {}

        self.run(store_factory, scenario)

    def test_a_chunk_with_an_invalid_sentence_vector_is_refused_alone(
        self, store_factory: StoreFactory, dim: int
    ) -> None:
        async def scenario(store: VectorStore) -> None:
            name = _name()
            await store.ensure_schema(name, dim=dim, model_id=MODEL)
            good = self._with_sentences(dim)[0]
            bad = [
                replace(good, uuid=str(uuid.uuid4()), sentence_vectors=(vector,))
                for vector in (
                    unit_vector(dim - 1, seed=1),
                    [2.0 * x for x in unit_vector(dim, seed=2)],
                    [math.nan] * dim,
                )
            ]
            many = tuple(unit_vector(dim, seed=s) for s in range(MAX_SENTENCE_VECTORS + 1))
            bad.append(replace(good, uuid=str(uuid.uuid4()), sentence_vectors=many))
            report = await store.upsert_chunks(name, [*bad, good])
            assert report.upserted == 1
            assert sorted(e.uuid for e in report.errors) == sorted(c.uuid for c in bad)
            assert all("sentence vector" in e.message for e in report.errors)
            assert await store.existing_uuids(name, [c.uuid for c in bad]) == set()

        self.run(store_factory, scenario)

    def test_sentence_scores_refuse_an_invalid_query_vector(
        self, store_factory: StoreFactory, dim: int
    ) -> None:
        async def scenario(store: VectorStore) -> None:
            name = await self._filled(store, dim, self._with_sentences(dim))
            with pytest.raises(InvalidVectorError):
                await store.sentence_scores(name, [], unit_vector(dim - 1, seed=1))
            with pytest.raises(CollectionNotFoundError):
                await store.sentence_scores(_name(), [], unit_vector(dim, seed=1))

        self.run(store_factory, scenario)

    def test_paging_walks_every_chunk_once_in_uuid_order(
        self, store_factory: StoreFactory, dim: int
    ) -> None:
        async def scenario(store: VectorStore) -> None:
            corpus = self.corpus(dim)
            name = await self._filled(store, dim, corpus)
            pages: list[list[str]] = []
            after: str | None = None
            while page := await store.page_chunks(name, after=after, limit=3):
                pages.append([c.uuid for c in page])
                after = page[-1].uuid
            walked = [u for page in pages for u in page]
            assert walked == sorted(c.uuid for c in corpus)
            assert all(len(page) == 3 for page in pages[:-1])
            first = (await store.page_chunks(name, limit=1))[0]
            original = next(c for c in corpus if c.uuid == first.uuid)
            assert first.vector == pytest.approx(list(original.vector), abs=1e-6)
            assert first.text == original.text
            assert await store.page_chunks(name, after=walked[-1]) == []
            assert await store.page_chunks(name, limit=0) == []

        self.run(store_factory, scenario)

    def test_an_invalid_query_vector_is_refused(
        self, store_factory: StoreFactory, dim: int
    ) -> None:
        async def scenario(store: VectorStore) -> None:
            name = await self._filled(store, dim, self.corpus(dim))
            for vector in (
                unit_vector(dim - 1, seed=1),
                [3 * x for x in unit_vector(dim, seed=1)],
                [math.nan] * dim,
            ):
                with pytest.raises(InvalidVectorError):
                    await hybrid_search(store, name, "metformin", vector)

        self.run(store_factory, scenario)

    # --- persistence ---------------------------------------------------------------------

    def test_a_new_store_on_the_same_storage_gives_the_same_results(
        self, store_factory: StoreFactory, dim: int
    ) -> None:
        name = _name()
        corpus = self.corpus(dim)
        query = unit_vector(dim, seed=11)
        searches: list[tuple[str, Sequence[float] | None, float, Fusion]] = [
            ("metformin bleeding", query, 0.5, Fusion.RELATIVE_SCORE),
            ("metformin bleeding", query, 0.5, Fusion.RANKED),
            ("metformin bleeding", None, 0.5, Fusion.RELATIVE_SCORE),
            ("statins", query, 1.0, Fusion.RELATIVE_SCORE),
        ]

        async def results(store: VectorStore) -> list[list[tuple[str, float]]]:
            return [
                [
                    (h.uuid, h.score)
                    for h in await hybrid_search(store, name, t, v, alpha=a, fusion=f)
                ]
                for t, v, a, f in searches
            ]

        async def write_then_search(store: VectorStore) -> list[list[tuple[str, float]]]:
            await store.ensure_schema(name, dim=dim, model_id=MODEL)
            await store.upsert_chunks(name, corpus)
            await store.delete_chunks(name, "pmid:2")
            return await results(store)

        async def search_again(store: VectorStore) -> list[list[tuple[str, float]]]:
            assert name in await store.collections()
            assert await store.count(name) == len(corpus) - 1
            return await results(store)

        async def drop(store: VectorStore) -> None:
            await store.drop_collection(name)

        before = self.run(store_factory, write_then_search, keep={name})
        after = self.run(store_factory, search_again)
        self.run(store_factory, drop)
        assert [[u for u, _ in r] for r in after] == [[u for u, _ in r] for r in before]
        for got, want in zip(after, before, strict=True):
            assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-6)


def _first(fused: Sequence[tuple[str, float]]) -> list[str]:
    return [key for key, _ in fused]
