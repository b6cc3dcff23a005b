"""The full-text gold questions, asked of a corpus synced through the product's own path.

The fake E-utilities serve the 8 real PMC articles of ../shared/data/ncbi_files/pmc with their
PubMed twins, beside synthetic distractors; `build_services` syncs them into a temporary data
folder with the deterministic embedder, once without full text and once with it. The answers
sit only in the articles' bodies, so no abstract-only chunk may carry one, and the full text
must bring most of them into the top 10. (`python -m benchmarks fulltext_sync` measures the
same with the default embedder.)
"""

from __future__ import annotations

import asyncio
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from biomcp.entrypoints.services import build_services
from biomcp.entrypoints.settings import Settings
from biomcp.eval.fulltext_gold import load_fulltext_gold
from biomcp.eval.fulltext_run import ask_fulltext_questions
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, generate_articles
from biomcp.testing.eutils.pmc_twins import TWIN_TERM
from tests.conftest import shared_data_path

pytestmark = pytest.mark.integration

GOLD = Path(__file__).resolve().parents[1] / "fixtures/gold/fulltext.jsonl"


async def _ask(data_dir: Path, base_url: str, *, fulltext: bool) -> dict[str, Any]:
    settings = Settings(
        biomcp_data_dir=data_dir,
        biomcp_embeddings="deterministic",
        ncbi_eutils_base_url=base_url,
    )
    services = build_services(settings)
    try:
        await services.sync.run("articles", TWIN_TERM, fulltext=fulltext)
        await services.sync.run("distractors", "Journal Article[pt]", fulltext=fulltext)
        questions = load_fulltext_gold(GOLD)
        report = await ask_fulltext_questions(services.search, questions, top_k=10)
        overview = await services.saved_queries.overview()
        return {"summary": report.summary(), "overview": overview}
    finally:
        await services.aclose()


def test_full_text_answers_the_questions_abstracts_cannot(tmp_path: Path) -> None:
    folder = shared_data_path("ncbi_files", "pmc")
    corpus = FakeCorpus.from_xml_bytes(
        generate_articles(
            40, start=date(2024, 1, 1), end=date(2024, 6, 30), seed=5,
            pmid_start=33_000_000, pmc_share=0.5,
        )
    )  # fmt: skip
    with FakeEutilsServer(corpus, pmc_dir=folder) as server:
        without = asyncio.run(_ask(tmp_path / "a", server.base_url, fulltext=False))
        with_text = asyncio.run(_ask(tmp_path / "b", server.base_url, fulltext=True))

    assert without["summary"]["questions"] >= 12
    assert without["summary"]["overall"]["answer_recall"] == 0.0
    assert without["overview"]["fulltext"] == {}
    assert with_text["overview"]["fulltext"]["available"] >= 8
    assert all(q["fulltext"] for q in with_text["overview"]["queries"])
    found = with_text["summary"]["overall"]
    assert found["answer_recall"] >= 0.7, with_text["summary"]["missed"]
    assert found["paper_recall"] >= without["summary"]["overall"]["paper_recall"]
