"""Section-aware abstract chunking with a numeric guard (spec 03 section 4).

How a record becomes chunks:

* A structured abstract (any labelled section) is chunked section by section; chunk ids are
  `s<i>_<j>` (section i, part j) and every chunk's text starts with its section label. A section
  stays whole when it fits the target; Results and Conclusions stay whole up to the hard maximum.
* An unstructured abstract is chunked as one text; ids are `w<k>`.
* A record without an abstract gets one title-only chunk `w0`, so it can still be found.
* Every chunk starts with the record's title (clipped to a third of the maximum, which only a
  pathological title reaches), then its section label: a chunk read alone says which paper it
  comes from, and both retrieval arms see the title beside every part of the abstract (chosen
  on SciFact's train split against a title on the first chunk only: better nDCG@10 for hybrid
  search and more so for BM25 alone; `title_every_chunk` False restores the old way; figures:
  benchmarks/README.md, "Decisions and their figures").
* A section that must be split is cut only between units (sentences, or for an over-long
  sentence its clauses, then words), never inside a numeric claim (`numeric.claim_spans`), never
  between a sentence reporting a number and a following sentence that gives its comparator
  ("In the placebo group, ..."), and consecutive parts share about `overlap_tokens` of whole
  units.

Token counts are `tokens.count_tokens` estimates of the default embedder's WordPiece tokens.
"""

from __future__ import annotations

import math
import re
import uuid
from bisect import bisect_left
from dataclasses import dataclass, field
from itertools import accumulate

from biomcp.domain.errors import InvalidConfigError
from biomcp.domain.numeric import bracket_pairs, claim_spans, numeric_atoms
from biomcp.domain.records import Chunk, PubMedRecord
from biomcp.domain.sections import section_category
from biomcp.domain.tokens import count_tokens, token_spans

__all__ = [
    "CHUNK_NAMESPACE",
    "ChunkingConfig",
    "chunk_record",
    "chunk_uuid",
    "chunking_for_window",
    "clip_to_tokens",
    "has_sentence_units",
    "sentence_spans",
    "sentence_units",
    "split_text",
]

#: Namespace of chunk uuids: `uuid5(NAMESPACE_URL, "urn:bio-mcp:pubmed-chunk")`, written out so
#: that it can never change by accident. Changing it re-keys every stored vector.
CHUNK_NAMESPACE = uuid.UUID("98c273dc-d76f-529c-b64f-a3f6bfd50b7d")

_INTACT_WHEN_SHORT = frozenset({"RESULTS", "CONCLUSIONS", "CONCLUSION", "FINDINGS"})


@dataclass(frozen=True, slots=True)
class ChunkingConfig:
    """Token budgets (spec 03 section 4: target 250-350, max 450, overlap ~50).

    `target_tokens` is the size a split section aims at and the size up to which any section
    stays whole; sections whose label or NLM category is in `intact_sections` stay whole up to
    `max_tokens` (a record NLM has not categorized yet is read by its label, as `sections` maps
    it), the hard ceiling that only an indivisible numeric claim may break.
    `title_every_chunk` prefixes the title to every chunk (the default) rather than to the
    record's first chunk only.
    """

    target_tokens: int = 350
    max_tokens: int = 450
    overlap_tokens: int = 50
    intact_sections: frozenset[str] = field(default_factory=lambda: _INTACT_WHEN_SHORT)
    title_every_chunk: bool = True

    def __post_init__(self) -> None:
        if not 16 <= self.target_tokens <= self.max_tokens:
            raise InvalidConfigError("need 16 <= target_tokens <= max_tokens")
        if not 0 <= self.overlap_tokens <= self.target_tokens // 2:
            raise InvalidConfigError("need 0 <= overlap_tokens <= target_tokens / 2")


#: Special tokens a BERT-style encoder adds around every input ([CLS], [SEP]).
_SPECIAL_TOKENS = 2
#: `count_tokens` under-counts the true WordPiece count by up to about 14% on 19 sections in
#: 20 (see `tokens`); budgets for a hard window are scaled down by this much.
_ESTIMATE_SLACK = 0.86


def chunking_for_window(window_tokens: int | None) -> ChunkingConfig:
    """The chunk budget for an embedder that reads at most `window_tokens` of its tokens.

    Spec 03's budget (target 350, max 450, overlap 50) where the window allows it; otherwise
    the maximum shrinks so that a chunk's estimated tokens, plus the encoder's two special
    tokens, fit the window even when the estimate runs 14% low, and the target and overlap
    shrink with it. For all-MiniLM-L6-v2 (256) that is max 218, target 185, overlap 46: text
    past the window would be invisible to the vector arm.

    Raises:
        InvalidConfigError: for a window too small to hold a useful chunk (< 32 tokens).
    """
    default = ChunkingConfig()
    if window_tokens is None:
        return default
    if window_tokens < 32:
        raise InvalidConfigError(f"an embedding window of {window_tokens} tokens is too small")
    max_tokens = min(default.max_tokens, int((window_tokens - _SPECIAL_TOKENS) * _ESTIMATE_SLACK))
    if max_tokens >= default.max_tokens:
        return default
    target = min(default.target_tokens, int(max_tokens * 0.85))
    overlap = min(default.overlap_tokens, target // 4)
    return ChunkingConfig(
        target_tokens=max(16, target), max_tokens=max_tokens, overlap_tokens=overlap
    )


def chunk_uuid(pmid: str, chunk_id: str) -> str:
    """The stable vector-store key of a chunk: `uuid5(CHUNK_NAMESPACE, f"{pmid}:{chunk_id}")`."""
    return str(uuid.uuid5(CHUNK_NAMESPACE, f"{pmid}:{chunk_id}"))


# --- sentences -----------------------------------------------------------------------------

# Words whose trailing period is not a full stop.
_ABBREVIATION_WORDS = """
    vs v e.g i.e eg ie al fig figs tab eq eqs ref refs no nos vol vols approx ca cf dr mr mrs ms
    prof inc ltd co corp jr sr st resp incl min max mo mos yr yrs wk wks hr hrs sp spp var subsp
    ssp jan feb mar apr jun jul aug sep sept oct nov dec u.s u.k e.u viz nr est dept univ suppl
"""
_ABBREVIATIONS = frozenset(_ABBREVIATION_WORDS.split())
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*(\s+)(?=[\"'“‘(\[]?[A-Z0-9])|\n+")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)\.$")
# A sentence that opens by giving the comparator of the previous sentence's number.
_COMPARATOR_OPENING = re.compile(
    r"(?:in comparison|by comparison|in contrast|by contrast|compared (?:with|to)|versus\b|"
    r"vs\.?\s|whereas|corresponding(?:ly)?\b|the corresponding|respective(?:ly)?\b|"
    r"(?:in|among|for) (?:the )?(?:placebo|control|comparator|sham|usual[- ]care|vehicle)"
    r"(?:[- ](?:group|arm|recipients|patients|mice|rats))?|"
    r"(?:the )?(?:placebo|control|comparator|vehicle)[- ](?:group|arm)s?\b)",
    re.IGNORECASE,
)
# Where an over-long sentence may be cut, best first: after a clause mark, after a comma, at a
# space, between pre-tokens ("IL-6/STAT3" -> "IL-6/" "STAT3"), and as a last resort between
# any two characters (a run of text with no space longer than the budget).
_CLAUSE_POINTS = (
    re.compile(r"[;:]\s+"),
    re.compile(r",\s+"),
    re.compile(r"\s+"),
    re.compile(
        r"(?<=[^\W\d_])(?=[^\w\s])|(?<=[^\w\s])(?=\w)|(?<=\d)(?=[^\W\d_])|(?<=[^\W\d_])(?=\d)"
    ),
    re.compile(r"(?<=.)(?=.)", re.DOTALL),
)


def _is_abbreviation(text: str, period_at: int) -> bool:
    match = _WORD_BEFORE.search(text, max(0, period_at - 20), period_at + 1)
    if not match:
        return False
    word = match.group(1)
    # Initials ("A. Smith", "J.R.R.") and listed abbreviations keep the sentence going.
    return len(word.rstrip(".")) == 1 or word.lower().rstrip(".") in _ABBREVIATIONS


def _inside(spans: list[tuple[int, int]], pos: int) -> bool:
    """True when a cut at `pos` would fall strictly inside one of the sorted `spans`."""
    i = bisect_left(spans, (pos, pos)) - 1
    return any(start < pos < end for start, end in spans[max(0, i) : i + 2])


def _bracket_depths(text: str) -> list[int]:
    """How many matched bracket pairs enclose each character (`numeric.bracket_pairs`): an
    unclosed "(" protects nothing, so it cannot switch sentence ends off for the rest of the
    section."""
    steps = [0] * (len(text) + 1)
    for start, end in bracket_pairs(text):
        steps[start] += 1
        steps[end - 1] -= 1  # the closer itself is outside, as the opener is inside
    return list(accumulate(steps[:-1]))


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Partition `text` into sentences: contiguous spans covering every character.

    A sentence ends at ".", "!" or "?" followed by whitespace and a capital letter or digit,
    except after an abbreviation or an initial, inside brackets, or inside a numeric claim; a
    sentence opening with a comparator ("In contrast, ...", "In the placebo group, ...") stays
    with a preceding sentence that reports a number.
    """
    claims = claim_spans(text)
    depths = _bracket_depths(text)
    cuts: list[int] = []
    for match in _SENTENCE_END.finditer(text):
        cut = match.end()
        mark = match.start()
        if cut >= len(text) or depths[mark] > 0:
            continue
        if _inside(claims, mark + 1) or _inside(claims, cut):
            continue
        if text[mark] == "." and _is_abbreviation(text, mark):
            continue
        cuts.append(cut)
    spans = list(zip([0, *cuts], [*cuts, len(text)], strict=True))
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if (
            merged
            and _COMPARATOR_OPENING.match(text, start)
            and numeric_atoms(text[merged[-1][0] : merged[-1][1]])
        ):
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return [s for s in merged if s[1] > s[0]]


# --- units and packing ---------------------------------------------------------------------


#: The most sentences of one chunk that are embedded apart (`sentence_units`).
MAX_SENTENCE_UNITS = 32


def sentence_units(text: str, limit: int = MAX_SENTENCE_UNITS) -> list[str]:
    """The sentences of a chunk's text, embedded one by one so that a search can score the
    chunk by its best sentence.

    Each line is split apart, so the title line is a unit of its own. A chunk of one unit
    gets none: its own vector is that sentence's. Only the first `limit` units are kept.
    """
    units = [
        piece
        for line in text.splitlines()
        for start, end in sentence_spans(line)
        if (piece := line[start:end].strip())
    ]
    return units[:limit] if len(units) > 1 else []


def has_sentence_units(text: str) -> bool:
    """Whether `sentence_units(text)` gives any, without splitting a text of several lines
    (each non-blank line holds at least one unit)."""
    lines = sum(1 for line in text.splitlines() if line.strip())
    return lines > 1 or (lines == 1 and bool(sentence_units(text)))


class _Counter:
    """Token estimates of any span of one text, by prefix sums over pre-tokens."""

    def __init__(self, text: str) -> None:
        spans = token_spans(text)
        self._starts = [s for s, _, _ in spans]
        self._sums = [0.0, *accumulate(w for _, _, w in spans)]

    def __call__(self, start: int, end: int) -> int:
        lo = bisect_left(self._starts, start)
        hi = bisect_left(self._starts, end)
        return math.ceil(self._sums[hi] - self._sums[lo])


def _split_long(
    text: str, start: int, end: int, budget: int, count: _Counter, claims: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    """Cut an over-budget sentence at clause marks, then commas, then spaces; never inside a
    numeric claim, and outside brackets whenever a bracket-free cut exists."""
    if count(start, end) <= budget:
        return [(start, end)]
    depths = _bracket_depths(text[start:end])
    for pattern in _CLAUSE_POINTS:
        for allow_brackets in (False, True):
            cuts = [
                m.end()
                for m in pattern.finditer(text, start, end)
                if start < m.end() < end
                and not _inside(claims, m.start())
                and not _inside(claims, m.end())
                and (allow_brackets or depths[m.start() - start] == 0)
            ]
            if cuts:
                pieces = zip([start, *cuts], [*cuts, end], strict=True)
                return [
                    part
                    for a, b in pieces
                    for part in _split_long(text, a, b, budget, count, claims)
                ]
    return [(start, end)]  # one numeric claim longer than the budget: allowed to overflow


@dataclass(frozen=True, slots=True)
class _Part:
    start: int
    end: int
    overlap: int


def _pack(
    units: list[tuple[int, int]],
    count: _Counter,
    budgets: tuple[int, int],
    config: ChunkingConfig,
    breaks: frozenset[int] = frozenset(),
) -> list[_Part]:
    """Group consecutive units into parts of about the target size.

    `budgets` is (first part's body budget, later parts' body budget): with the title on the
    first chunk only, the record's first part carries more prefix than the rest. Parts after
    the first start with whole units of the previous part adding up to at most
    `overlap_tokens`. A part that would end inside a run of units ends instead at the last
    of `breaks` (preferred cut offsets) it reaches, when that keeps at least half its aim.
    """
    total = count(units[0][0], units[-1][1])
    aim = math.ceil(total / max(1, math.ceil(total / config.target_tokens)))
    parts: list[_Part] = []
    previous_new = -1  # index of the first new (non-overlap) unit of the previous part
    i = 0
    while i < len(units):
        first = i
        # Overlap: whole units from the end of the previous part, never all of it.
        while first - 1 > previous_new and (
            count(units[first - 1][0], units[i][0]) <= config.overlap_tokens
        ):
            first -= 1
        budget = budgets[1] if parts else budgets[0]
        if count(units[first][0], units[i][1]) > budget:
            first = i  # an oversized unit (one long numeric claim) travels without overlap
        overlap_tokens = count(units[first][0], units[i][0])
        j = i + 1
        while j < len(units):
            size = count(units[first][0], units[j][1])
            if size > budget or size - overlap_tokens > aim:
                break
            j += 1
        if breaks and j < len(units):
            j = _preferred_end(units, (first, i, j), count, breaks, aim // 2 + overlap_tokens)
        parts.append(_Part(units[first][0], units[j - 1][1], units[i][0] - units[first][0]))
        previous_new, i = i, j
    return parts


def _preferred_end(
    units: list[tuple[int, int]],
    bounds: tuple[int, int, int],
    count: _Counter,
    breaks: frozenset[int],
    least: int,
) -> int:
    """The end (exclusive unit index) of a part spanning units `first`..`j`, moved back to the
    last unit ending at one of `breaks` while the part keeps `least` tokens."""
    first, i, j = bounds
    if units[j - 1][1] in breaks:
        return j
    for k in range(j - 1, i, -1):
        if units[k - 1][1] in breaks and count(units[first][0], units[k - 1][1]) >= least:
            return k
    return j


def _split(
    text: str,
    count: _Counter,
    budgets: tuple[int, int],
    config: ChunkingConfig,
    breaks: frozenset[int] = frozenset(),
) -> list[_Part]:
    claims = claim_spans(text)
    units = [
        unit
        for start, end in sentence_spans(text)
        for unit in _split_long(text, start, end, min(budgets), count, claims)
    ]
    return _pack(units, count, budgets, config, breaks) if units else []


def split_text(
    text: str,
    budgets: tuple[int, int],
    config: ChunkingConfig,
    *,
    breaks: frozenset[int] = frozenset(),
) -> list[tuple[int, int, int]]:
    """Cut `text` as an over-long abstract section is cut: (start, end, overlap) of each part.

    `budgets` is (first part's, later parts') token budget for the body. Cuts fall between
    sentences (or clauses of an over-long one), never inside a numeric claim, and parts share
    about `config.overlap_tokens` of whole units. `breaks` are preferred cut offsets (such as
    paragraph starts): a part ends at one when that keeps at least half its aimed size.
    """
    if not text:
        return []
    parts = _split(text, _Counter(text), budgets, config, breaks)
    return [(p.start, p.end, p.overlap) for p in parts]


# --- records -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Section:
    index: int
    label: str | None
    category: str | None
    text: str


def _sections(record: PubMedRecord) -> tuple[list[_Section], bool]:
    if record.is_structured:  # a label without text (kept by the parser) is not a chunk
        return [
            _Section(i, s.label, s.category, s.text)
            for i, s in enumerate(record.abstract)
            if s.text.strip()
        ], True
    text = "\n".join(s.text for s in record.abstract if s.text)
    return ([_Section(0, None, None, text)] if text.strip() else []), False


def chunk_record(record: PubMedRecord, config: ChunkingConfig | None = None) -> tuple[Chunk, ...]:
    """Chunk a record's abstract (see the module docstring for the rules).

    Deterministic: the same record and config always give the same chunks, ids and uuids.
    """
    config = config or ChunkingConfig()
    title = clip_to_tokens((record.title or "").strip(), config.max_tokens // 3)
    sections, structured = _sections(record)
    chunks: list[Chunk] = []
    if not sections:
        if title:
            chunks.append(_make_chunk(record, "w0", title, None, 0, 0, 0, 0))
        return tuple(chunks)
    serial = 0
    for section in sections:
        text = section.text
        if not text.strip():
            continue
        label_prefix = f"{section.label}: " if section.label else ""
        title_prefix = f"{title}\n" if title else ""
        later_prefix = (title_prefix if config.title_every_chunk else "") + label_prefix
        first_prefix = title_prefix + label_prefix if not chunks else later_prefix
        budgets = (
            max(1, config.max_tokens - count_tokens(first_prefix)),
            max(1, config.max_tokens - count_tokens(later_prefix)),
        )
        count = _Counter(text)
        whole = count(0, len(text))
        category = section_category(section.label, section.category)
        names = {section.label, section.category, category} - {None}
        keep_whole = whole + count_tokens(first_prefix) <= config.target_tokens or (
            bool(names & config.intact_sections) and whole <= budgets[0]
        )
        parts = [_Part(0, len(text), 0)] if keep_whole else _split(text, count, budgets, config)
        for j, part in enumerate(parts):
            chunk_id = f"s{section.index}_{j}" if structured else f"w{serial}"
            prefix = first_prefix if not chunks else later_prefix
            body = text[part.start : part.end].strip()
            chunks.append(
                _make_chunk(
                    record,
                    chunk_id,
                    prefix + body,
                    section.label,
                    section.index,
                    part.start,
                    part.end,
                    part.overlap,
                )
            )
            serial += 1
    return tuple(chunks)


def clip_to_tokens(text: str, max_tokens: int) -> str:
    """`text` cut at a pre-token boundary to at most `max_tokens` (an ellipsis marks the cut),
    so a pathological title cannot crowd the abstract out of the first chunk."""
    if count_tokens(text) <= max_tokens:
        return text
    total = 0.0
    for start, _, weight in token_spans(text):
        total += weight
        if total > max_tokens - 1:  # keep one token for the ellipsis
            return text[:start].rstrip() + "…"
    return text


def _make_chunk(
    record: PubMedRecord,
    chunk_id: str,
    text: str,
    section: str | None,
    section_index: int,
    start: int,
    end: int,
    overlap: int,
) -> Chunk:
    return Chunk(
        pmid=record.pmid,
        chunk_id=chunk_id,
        uuid=chunk_uuid(record.pmid, chunk_id),
        text=text,
        section=section,
        section_index=section_index,
        start=start,
        end=end,
        overlap=overlap,
        token_count=count_tokens(text),
    )
