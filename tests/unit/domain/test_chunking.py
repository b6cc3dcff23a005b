"""The section-aware chunker and its numeric guard."""

from __future__ import annotations

import re
import uuid
from dataclasses import replace
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from biomcp.domain.chunking import (
    CHUNK_NAMESPACE,
    ChunkingConfig,
    chunk_record,
    chunk_uuid,
    chunking_for_window,
    sentence_spans,
)
from biomcp.domain.errors import InvalidConfigError
from biomcp.domain.numeric import claim_spans
from biomcp.domain.records import AbstractSection, Chunk, PubMedRecord
from biomcp.domain.tokens import count_tokens
from tests.support.numeric_claims import GOLDEN_CLAIMS

pytestmark = pytest.mark.unit

FILLER = (
    "Background work in this area has been limited to small cohorts. "
    "Investigators therefore designed a pragmatic study across several centres. "
    "Eligibility was broad and follow-up was complete for most participants. "
    "Outcomes were adjudicated by a committee unaware of group assignment. "
)
TIGHT = ChunkingConfig(target_tokens=24, max_tokens=40, overlap_tokens=8)


def _record(sections: list[tuple[str | None, str]], title: str | None = "A title") -> PubMedRecord:
    return PubMedRecord(
        pmid="12345",
        title=title,
        abstract=tuple(AbstractSection(text, label, label) for label, text in sections),
    )


def _section_texts(record: PubMedRecord) -> dict[int, str]:
    if record.is_structured:
        return {i: s.text for i, s in enumerate(record.abstract)}
    return {0: "\n".join(s.text for s in record.abstract if s.text)}


def _rebuilt(record: PubMedRecord, chunks: tuple[Chunk, ...]) -> dict[int, str]:
    texts = _section_texts(record)
    out: dict[int, str] = {}
    for chunk in chunks:
        if chunk.start == chunk.end:  # the title-only chunk of a record without abstract
            continue
        text = texts[chunk.section_index]
        out[chunk.section_index] = (
            out.get(chunk.section_index, "") + text[chunk.start + chunk.overlap : chunk.end]
        )
    return out


# --- rules -------------------------------------------------------------------------------------


def test_short_structured_sections_become_one_chunk_each_with_stable_ids() -> None:
    record = _record([("BACKGROUND", "Asthma is common."), ("RESULTS", "It improved (p = 0.01).")])
    chunks = chunk_record(record)
    assert [c.chunk_id for c in chunks] == ["s0_0", "s1_0"]
    assert [c.section for c in chunks] == ["BACKGROUND", "RESULTS"]
    assert chunks[0].text == "A title\nBACKGROUND: Asthma is common."
    assert chunks[1].text == "A title\nRESULTS: It improved (p = 0.01)."
    first_only = chunk_record(record, ChunkingConfig(title_every_chunk=False))
    assert [c.text for c in first_only] == [
        "A title\nBACKGROUND: Asthma is common.",
        "RESULTS: It improved (p = 0.01).",
    ]


def test_unstructured_abstract_uses_w_ids_and_the_title_on_every_chunk() -> None:
    record = _record([(None, FILLER * 3)])
    chunks = chunk_record(record, TIGHT)
    assert [c.chunk_id for c in chunks] == [f"w{k}" for k in range(len(chunks))]
    assert len(chunks) > 2
    assert all(c.text.startswith("A title\n") for c in chunks)
    assert all(c.section is None for c in chunks)
    assert all(c.token_count <= TIGHT.max_tokens for c in chunks)


def test_the_title_can_go_on_the_first_chunk_only() -> None:
    record = _record([(None, FILLER * 3)], title="Pragmatic multicentre trials of asthma care")
    config = replace(TIGHT, title_every_chunk=False)
    chunks = chunk_record(record, config)
    assert chunks[0].text.startswith("Pragmatic multicentre trials of asthma care\n")
    assert not any(c.text.startswith("Pragmatic") for c in chunks[1:])
    text = _section_texts(record)[0]
    assert [c.text for c in chunks[1:]] == [text[c.start : c.end].strip() for c in chunks[1:]]
    title = "Pragmatic multicentre trials of asthma care\n"
    every = chunk_record(record, TIGHT)
    assert [c.text for c in every] == [title + text[c.start : c.end].strip() for c in every]


def test_a_record_without_abstract_gets_one_title_chunk_and_without_either_none() -> None:
    chunks = chunk_record(_record([], title="Editorial: a view"))
    assert [(c.chunk_id, c.text) for c in chunks] == [("w0", "Editorial: a view")]
    assert chunk_record(_record([], title=None)) == ()


def test_a_label_without_text_is_no_chunk_and_leaves_the_title_chunk() -> None:
    only_label = _record([("LEVEL OF EVIDENCE: 4", "")], title="Knee outcomes")
    assert [(c.chunk_id, c.text) for c in chunk_record(only_label)] == [("w0", "Knee outcomes")]
    with_results = _record([("LEVEL OF EVIDENCE: 4", ""), ("RESULTS", "Pain fell by 3 points.")])
    assert [c.chunk_id for c in chunk_record(with_results)] == ["s1_0"]


def test_results_stay_whole_up_to_the_maximum_while_other_sections_split_at_the_target() -> None:
    body = FILLER  # over the target, under the maximum
    config = ChunkingConfig(target_tokens=40, max_tokens=80, overlap_tokens=5)
    assert 40 < count_tokens("RESULTS: " + body) <= 80
    record = _record([("METHODS", body), ("RESULTS", body), ("CONCLUSIONS", body)], title=None)
    chunks = chunk_record(record, config)
    by_section = {label: [c for c in chunks if c.section == label] for label in ("METHODS",)}
    assert len(by_section["METHODS"]) > 1
    assert [c.chunk_id for c in chunks if c.section == "RESULTS"] == ["s1_0"]
    assert [c.chunk_id for c in chunks if c.section == "CONCLUSIONS"] == ["s2_0"]


@pytest.mark.parametrize(
    ("label", "category"),
    [("Results", "UNASSIGNED"), ("Findings", None), ("Conclusions and Relevance", "UNASSIGNED")],
)
def test_results_named_by_their_label_alone_stay_whole_as_well(
    label: str, category: str | None
) -> None:
    # A record NLM has not categorized yet: its label says what the section is.
    config = ChunkingConfig(target_tokens=40, max_tokens=80, overlap_tokens=5)
    assert 40 < count_tokens(f"{label}: {FILLER}") <= 80
    record = PubMedRecord(
        pmid="12345", title=None, abstract=(AbstractSection(FILLER, label, category),)
    )
    assert [c.chunk_id for c in chunk_record(record, config)] == ["s0_0"]


def test_split_parts_overlap_by_whole_sentences_within_the_budget() -> None:
    config = ChunkingConfig(target_tokens=40, max_tokens=60, overlap_tokens=16)
    record = _record([(None, FILLER * 4)], title=None)
    chunks = chunk_record(record, config)
    assert len(chunks) > 2
    text = _section_texts(record)[0]
    sentence_starts = {start for start, _ in sentence_spans(text)}
    for previous, chunk in pairwise(chunks):
        assert chunk.overlap > 0
        assert chunk.start in sentence_starts  # overlaps are whole sentences
        assert chunk.start + chunk.overlap == previous.end
        assert count_tokens(text[chunk.start : chunk.start + chunk.overlap]) <= 16


def test_chunks_respect_the_maximum_on_ordinary_text() -> None:
    record = _record([(None, FILLER * 10)])
    for config in (TIGHT, ChunkingConfig(), ChunkingConfig(target_tokens=100, max_tokens=120)):
        chunks = chunk_record(record, config)
        assert all(c.token_count <= config.max_tokens for c in chunks)


def test_uuid_is_uuid5_of_pmid_and_chunk_id_in_the_documented_namespace() -> None:
    assert uuid.uuid5(uuid.NAMESPACE_URL, "urn:bio-mcp:pubmed-chunk") == CHUNK_NAMESPACE
    assert chunk_uuid("12345", "s1_0") == str(uuid.uuid5(CHUNK_NAMESPACE, "12345:s1_0"))
    # Pinned literal: a change here re-keys every stored vector.
    assert chunk_uuid("1", "w0") == "89f3c91d-90a3-5ab9-add8-98aa1045d6e2"
    chunk = chunk_record(_record([(None, "Text.")]))[0]
    assert chunk.uuid == chunk_uuid("12345", "w0")


def test_invalid_budgets_are_rejected() -> None:
    with pytest.raises(InvalidConfigError):
        ChunkingConfig(target_tokens=500, max_tokens=450)
    with pytest.raises(InvalidConfigError):
        ChunkingConfig(target_tokens=100, max_tokens=120, overlap_tokens=60)
    with pytest.raises(InvalidConfigError):
        ChunkingConfig(target_tokens=8, max_tokens=10)


# --- sentences ---------------------------------------------------------------------------------


SENTENCE_CASES = [
    ("Weight fell. Mood rose.", ["Weight fell. ", "Mood rose."]),
    ("Rates: 34.4% vs. 31.1% of weeks. Next.", ["Rates: 34.4% vs. 31.1% of weeks. ", "Next."]),
    ("As shown by Smith et al. Results held.", ["As shown by Smith et al. Results held."]),
    ("Cells (Fig. 2) grew. E. coli was absent.", ["Cells (Fig. 2) grew. ", "E. coli was absent."]),
    ("It was low (p = 0.03. Not a stop) here.", ["It was low (p = 0.03. Not a stop) here."]),
    ("P was .05. Then 12 patients left.", ["P was .05. ", "Then 12 patients left."]),
]


@pytest.mark.parametrize(("text", "expected"), SENTENCE_CASES)
def test_sentences_end_only_at_real_full_stops(text: str, expected: list[str]) -> None:
    assert [text[a:b] for a, b in sentence_spans(text)] == expected


def test_a_sentence_giving_the_comparator_stays_with_the_number_it_compares() -> None:
    text = (
        "Weight fell by 14.9% with semaglutide. In the placebo group, it fell by 2.4%. "
        "Adverse events were mostly gastrointestinal."
    )
    sentences = [text[a:b] for a, b in sentence_spans(text)]
    assert (
        sentences[0]
        == "Weight fell by 14.9% with semaglutide. In the placebo group, it fell by 2.4%. "
    )
    assert sentences[1] == "Adverse events were mostly gastrointestinal."


# --- the numeric guard ------------------------------------------------------------------------


def _boundaries(chunks: tuple[Chunk, ...]) -> set[int]:
    return {b for c in chunks for b in (c.start, c.end, c.start + c.overlap)}


@pytest.mark.parametrize("claim", GOLDEN_CLAIMS)
@pytest.mark.parametrize(
    "config",
    [TIGHT, ChunkingConfig(target_tokens=16, max_tokens=20, overlap_tokens=4)],
    ids=["tight", "tiny"],
)
def test_no_chunk_boundary_ever_falls_inside_a_golden_claim(
    claim: str, config: ChunkingConfig
) -> None:
    contexts = [
        f"{FILLER}The primary comparison showed {claim} in the trial population. {FILLER}",
        f"{FILLER}Overall, with long adjudication and several sensitivity analyses, {claim}, "
        f"and the effect was consistent across the prespecified subgroups. {FILLER}",
        f"{FILLER}{claim} was observed; investigators judged it clinically relevant. {FILLER}",
    ]
    for text in contexts:
        record = _record([(None, text)], title=None)
        chunks = chunk_record(record, config)
        start = text.index(claim)
        end = start + len(claim)
        cut = [b for b in _boundaries(chunks) if start < b < end]
        assert not cut, f"boundary inside {claim!r}: {cut}"
        assert any(claim in c.text for c in chunks)


# --- properties --------------------------------------------------------------------------------

_WORDS = st.sampled_from(
    [
        "patients", "were", "randomized", "the", "mean", "change", "vs.", "et al.", "e.g.",
        "(95% CI 1.1-2.3)", "p = 0.03", "n = 1,234", "HR 0.74", "12.4%", "−2.1%", "mg/kg",
        "In contrast,", "In the placebo group,", "Fig. 2", "E. coli", "[12]", "±", "0.5", ";",
        ",", "KRAS G12C", "μg", "IL-6/STAT3", "respectively", "versus", "placebo",
    ]
)  # fmt: skip
_SENTENCE = st.builds(
    lambda words, end: " ".join(words).capitalize() + end,
    st.lists(_WORDS, min_size=1, max_size=40),
    st.sampled_from([". ", "? ", "! ", ".\n", " "]),
)
_PROSE = st.builds("".join, st.lists(_SENTENCE, min_size=0, max_size=30))
_ANY_TEXT = st.text(min_size=0, max_size=1500)
_TEXT = st.one_of(_PROSE, _PROSE, _ANY_TEXT)
_LABEL = st.sampled_from(["BACKGROUND", "METHODS", "RESULTS", "CONCLUSIONS", "OBJECTIVE"])
_CONFIG = st.builds(
    lambda target, extra, overlap, title_every_chunk: ChunkingConfig(
        target_tokens=target,
        max_tokens=target + extra,
        overlap_tokens=min(overlap, target // 2 - 1),
        title_every_chunk=title_every_chunk,
    ),
    st.integers(min_value=16, max_value=120),
    st.integers(min_value=0, max_value=100),
    st.integers(min_value=0, max_value=50),
    st.booleans(),
)
_RECORD = st.one_of(
    st.builds(
        lambda t, title: _record([(None, t)], title), _TEXT, st.none() | st.text(max_size=60)
    ),
    st.builds(
        lambda secs, title: _record(secs, title),
        st.lists(st.tuples(_LABEL, _TEXT), min_size=1, max_size=5),
        st.none() | st.just("A short title"),
    ),
)


@settings(max_examples=150, deadline=None)
@given(record=_RECORD, config=_CONFIG)
def test_chunks_minus_overlaps_rebuild_every_section_exactly(
    record: PubMedRecord, config: ChunkingConfig
) -> None:
    chunks = chunk_record(record, config)
    expected = {i: t for i, t in _section_texts(record).items() if t.strip()}
    assert _rebuilt(record, chunks) == expected


@settings(max_examples=150, deadline=None)
@given(record=_RECORD, config=_CONFIG)
def test_chunks_exceed_the_maximum_only_when_one_numeric_claim_forces_it(
    record: PubMedRecord, config: ChunkingConfig
) -> None:
    texts = _section_texts(record)
    for chunk in chunk_record(record, config):
        if chunk.token_count <= config.max_tokens or chunk.start == chunk.end:
            continue
        text = texts[chunk.section_index]
        body_start = (
            chunk.start
            + len(text[chunk.start : chunk.end])
            - len(text[chunk.start : chunk.end].lstrip())
        )
        body_end = chunk.start + len(text[chunk.start : chunk.end].rstrip())
        claims = claim_spans(text)
        # Every place the body could have been cut lies inside one numeric claim.
        free = [p for p in range(body_start + 1, body_end) if not any(a < p < b for a, b in claims)]
        assert not free, (chunk.token_count, text[chunk.start : chunk.end][:200])


@settings(max_examples=100, deadline=None)
@given(record=_RECORD, config=_CONFIG)
def test_chunking_is_deterministic(record: PubMedRecord, config: ChunkingConfig) -> None:
    first = chunk_record(record, config)
    again = chunk_record(record, config)
    assert first == again
    assert len({c.chunk_id for c in first}) == len(first)
    assert all(c.uuid == chunk_uuid(record.pmid, c.chunk_id) for c in first)
    assert all(re.fullmatch(r"s\d+_\d+|w\d+", c.chunk_id) for c in first)


# --- the embedder's window ---------------------------------------------------------------


def test_the_chunk_budget_follows_the_embedder_window() -> None:
    assert chunking_for_window(None) == ChunkingConfig()
    assert chunking_for_window(8191) == ChunkingConfig()
    small = chunking_for_window(256)
    assert (small.target_tokens, small.max_tokens, small.overlap_tokens) == (185, 218, 46)
    with pytest.raises(InvalidConfigError):
        chunking_for_window(16)


def test_minilm_sized_chunks_fit_the_real_tokenizer_window() -> None:
    import tokenizers

    # The default embedder's copy of the model's tokenizer.json (byte-identical to the torch
    # extra's, as its NOTICE says), so the check needs no PyTorch.
    from biomcp.adapters.embeddings.onnx import TOKENIZER_PATH
    from tests.conftest import shared_data_path
    from tests.support.pubmedqa import load_pubmedqa

    tokenizer = tokenizers.Tokenizer.from_file(str(TOKENIZER_PATH))
    tokenizer.no_truncation()
    records = load_pubmedqa(shared_data_path("pubmedqa", "ori_pqal.json"))
    config = chunking_for_window(256)
    lengths = [
        len(tokenizer.encode(c.text).ids)  # with [CLS] and [SEP]
        for r in records
        for c in chunk_record(r, config)
    ]
    over = sum(n > 256 for n in lengths)
    assert over / len(lengths) <= 0.01, (over, len(lengths), max(lengths))
