"""Does every comparison survive chunking? The numeric guard measured from outside.

The chunker must never put a number and what it is compared with in different chunks
(spec 03 section 4). `numeric.claim_spans` is what the chunker protects; this module finds
comparisons by its own, simpler rules, so that it can see what `claim_spans` misses:

* a *comparison*: a comparator ("vs", "versus", "compared with/to", "than", "relative to",
  "in comparison with/to") with a number before it in the same sentence (at most 80
  characters back), running to the first number after it in the sentence (at most 80
  characters on) or, when there is none, to the word after it ("43 months ... vs 13.4 months",
  "higher thresholds than control");
* a *p-value*: "p = .03", "P<0.001" with a number before it in the same sentence, running
  from that number.

A claim *loses its comparator* when no chunk of its section holds it whole. The figures are
reported by `python -m benchmarks domain` for the spec's budget, the default embedder's and
a tight 120-token one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from biomcp.domain import ChunkingConfig, PubMedRecord, chunk_record
from biomcp.domain.numeric import numeric_atoms

__all__ = ["ComparatorLoss", "comparator_losses", "comparisons"]

_COMPARATOR = re.compile(
    r"\b(?:vs\.?|versus|compared (?:with|to)|than|relative to|in comparison (?:with|to))(?=\s)",
    re.IGNORECASE,
)
_P_VALUE = re.compile(r"(?<![\w.])[pP]\s?(?:[<>=≤≥]|<=|>=)\s?0?[.\u00b7]?\d")
_NEXT_WORD = re.compile(r"\s+[^\s,;:.()\[\]]+")
_SENTENCE_END = re.compile(r"[.!?]\s+[A-Z]")
_REACH = 80


def comparisons(text: str) -> Iterator[tuple[int, int]]:
    """Spans of the comparisons and p-values of `text` that follow a number (see above)."""
    atoms = numeric_atoms(text)

    def number_before(at: int, reach: int | None) -> int | None:
        starts = [
            a
            for a, b in atoms
            if b <= at
            and (reach is None or at - b <= reach)
            and not _SENTENCE_END.search(text, b, at)
        ]
        return starts[-1] if starts else None

    for match in _COMPARATOR.finditer(text):
        start = number_before(match.start(), _REACH)
        if start is None:
            continue
        after = [
            b
            for a, b in atoms
            if a >= match.end()
            and a - match.end() <= _REACH
            and not _SENTENCE_END.search(text, match.end(), a)
        ]
        word = _NEXT_WORD.match(text, match.end())
        yield start, after[0] if after else (word.end() if word else match.end())
    for match in _P_VALUE.finditer(text):
        before = [(a, b) for a, b in atoms if b <= match.start()]
        start = number_before(match.start(), None)
        # a p-value after a p-value, or after nothing, is not a comparison of its own
        if start is None or _P_VALUE.match(text, before[-1][0]):
            continue
        yield start, match.end()


@dataclass(frozen=True, slots=True)
class ComparatorLoss:
    """How many comparisons a chunking keeps whole, and the first few it does not."""

    claims: int
    lost: int
    examples: tuple[tuple[str, str], ...]

    def as_dict(self) -> dict[str, object]:
        return {
            "claims": self.claims,
            "lost": self.lost,
            "examples": [{"pmid": p, "claim": c} for p, c in self.examples],
        }


def comparator_losses(
    records: Sequence[PubMedRecord], config: ChunkingConfig, *, examples: int = 5
) -> ComparatorLoss:
    """Count the comparisons of `records` that no chunk under `config` holds whole."""
    claims = lost = 0
    shown: list[tuple[str, str]] = []
    for record in records:
        chunks = chunk_record(record, config)
        texts = [s.text for s in record.abstract]
        if not record.is_structured:  # chunked as one text, as `chunking._sections` joins it
            texts = ["\n".join(t for t in texts if t)]
        for index, text in enumerate(texts):
            parts = [(c.start, c.end) for c in chunks if c.section_index == index]
            for start, end in comparisons(text):
                claims += 1
                if not any(a <= start and end <= b for a, b in parts):
                    lost += 1
                    if len(shown) < examples:
                        shown.append((record.pmid, text[start:end][:160]))
    return ComparatorLoss(claims, lost, tuple(shown))
