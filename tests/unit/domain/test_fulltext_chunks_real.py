"""Full-text chunks of the 8 real PMC articles of ../shared/data/ncbi_files/pmc (read here,
never copied; skipped when absent), under the default budget and the default embedder's."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest
from lxml import etree

from biomcp.adapters.entrez.jats import parse_pmc_articles
from biomcp.domain.chunking import ChunkingConfig, chunking_for_window
from biomcp.domain.fulltext import FullTextArticle
from biomcp.domain.fulltext_chunks import (
    article_content_hash,
    chunk_article_counted,
    kept_sections,
    table_text,
)
from biomcp.domain.numeric import claim_spans
from biomcp.domain.records import Chunk
from tests.conftest import shared_data_path
from tests.unit.adapters.test_jats_references import REAL_ARTICLES

pytestmark = pytest.mark.unit

CONFIGS = {"default": ChunkingConfig(), "minilm": chunking_for_window(256)}
_ID = re.compile(r"([ftgx])(\d+)(?:_(\d+))?")


@cache
def _article(name: str) -> FullTextArticle:
    path: Path = shared_data_path("ncbi_files", "pmc", name)
    root = etree.parse(str(path), etree.XMLParser(load_dtd=False, no_network=True)).getroot()
    answer = parse_pmc_articles(b"<pmc-articleset>" + etree.tostring(root) + b"</pmc-articleset>")
    [article] = answer.articles
    return article


@cache
def _claims(text: str) -> list[tuple[int, int]]:
    return claim_spans(text)


@cache
def _chunks(name: str, config: str) -> tuple[Chunk, ...]:
    counted = chunk_article_counted("1", _article(name), CONFIGS[config], title="A title")
    assert counted.dropped == 0
    return counted.chunks


def _own_text(article: FullTextArticle, chunk: Chunk) -> str:
    match = _ID.fullmatch(chunk.chunk_id)
    assert match is not None, chunk.chunk_id
    kind, number = match.group(1), int(match.group(2))
    if kind == "f":
        return next(s.text for i, _, s in kept_sections(article) if i == number)
    if kind == "t":
        return table_text(article.tables[number])
    return (article.figures if kind == "g" else article.supplements)[number].caption


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("name", REAL_ARTICLES)
def test_every_section_with_text_and_every_table_is_chunked_within_the_budget(
    name: str, config: str
) -> None:
    article = _article(name)
    chunks = _chunks(name, config)
    paths = {c.section_path for c in chunks if c.chunk_id.startswith("f")}
    for _, path, section in kept_sections(article):
        if section.text.strip():
            assert path in paths
    for k, table in enumerate(article.tables):
        own = [c for c in chunks if c.chunk_id.startswith(f"t{k}_")]
        assert own, table.label
        if table.rows:
            text = "\n".join(c.text for c in own)
            names = {h for h in table.header[1:] if h}
            assert names, table.label
            assert all(f"{h}: " in text for h in names), table.label
            assert all(c.anchor and c.anchor[0] in "rn" for c in own)
    assert max(c.token_count for c in chunks) <= CONFIGS[config].max_tokens
    assert len({c.chunk_id for c in chunks}) == len(chunks)
    assert {c.source for c in chunks} == {"fulltext"}


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("name", REAL_ARTICLES)
def test_no_cut_falls_inside_a_numeric_claim(name: str, config: str) -> None:
    article = _article(name)
    for chunk in _chunks(name, config):
        text = _own_text(article, chunk)
        for cut in (chunk.start + chunk.overlap, chunk.end):
            # A table's rows are claims' outer bounds: only the row a cut falls in counts.
            start = text.rfind("\n", 0, cut) + 1 if chunk.chunk_id[0] == "t" else 0
            end = text.find("\n", cut) if chunk.chunk_id[0] == "t" else -1
            part = text[start : end if end >= 0 else len(text)]
            inside = [part[a:b] for a, b in _claims(part) if a < cut - start < b]
            assert not inside, (chunk.chunk_id, cut)


@pytest.mark.parametrize("name", REAL_ARTICLES)
def test_the_run_and_the_hash_are_deterministic(name: str) -> None:
    first = chunk_article_counted("1", _article(name), ChunkingConfig())
    digest = article_content_hash(_article(name))
    _article.cache_clear()  # parse the file again
    assert chunk_article_counted("1", _article(name), ChunkingConfig()) == first
    assert article_content_hash(_article(name)) == digest
