"""ESpell for the fake E-utilities: synthetic spelling suggestions in NCBI's `eSpellResult`
shape.

The suggestions are synthetic (NCBI's speller is not public): each free word of the query (not
an operator, not field-tagged, at least 4 letters) that the corpus vocabulary does not know is
replaced by the entry of a small built-in misspelling table, else by the corpus word nearest to
it in edit distance (at most 1 for words of 4 letters, 2 for longer ones; ties go to the more
frequent word, then the alphabetically first). When nothing changes `<CorrectedQuery>` is empty,
as NCBI sends it. The vocabulary is every word of the corpus' titles, abstracts, keywords and
MeSH headings, built once per corpus version.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from xml.sax.saxutils import escape

from biomcp.testing.eutils.fields import tokenize
from biomcp.testing.eutils.state import ServerState

__all__ = ["MISSPELLINGS", "correct", "espell_xml"]

#: Synthetic misspellings always corrected (whatever the corpus holds).
MISSPELLINGS = {
    "asthmaa": "asthma",
    "biopythooon": "biopython",
    "cancr": "cancer",
    "diabtes": "diabetes",
    "hypertenshun": "hypertension",
    "metfromin": "metformin",
}
_HEAD = (
    '<?xml version="1.0" encoding="UTF-8" ?>\n'
    '<!DOCTYPE eSpellResult PUBLIC "-//NLM//DTD eSpellResult, 23 November 2004//EN" '
    '"https://www.ncbi.nlm.nih.gov/entrez/query/DTD/eSpell.dtd">\n'
)
# A field-tagged term (kept as typed), or a word that may be corrected.
_CHUNK = re.compile(r'(?:"[^"]*"|[^\s()\[\]"]+)\s*\[[^\]]*\]|[^\W\d_]+')
_OPERATORS = frozenset({"and", "or", "not"})
_vocabularies: dict[int, tuple[int, Counter[str]]] = {}
_lock = threading.Lock()


def espell_xml(state: ServerState, db: str | None, term: str) -> bytes:
    """The `eSpellResult` for `term` in `db` (PubMed only; another db gets NCBI's error)."""
    database = (db or "").lower()
    if database != "pubmed":
        body = f"\t<Database>{escape(db or '')}</Database>\n\t<ERROR>Invalid db name</ERROR>\n"
        return _document(body)
    corrected, pieces = correct(term, _vocabulary(state))
    tags = {True: "Replaced", False: "Original"}
    spelled = "".join(f"<{tags[c]}>{escape(text)}</{tags[c]}>" for text, c in pieces)
    body = (
        "\t<!-- synthetic: the bio-mcp fake's spelling suggestion, not NCBI's -->\n"
        f"\t<Database>pubmed</Database>\n\t<Query>{escape(term)}</Query>\n"
        f"\t<CorrectedQuery>{escape(corrected)}</CorrectedQuery>\n"
        f"\t<SpelledQuery>{spelled}</SpelledQuery>\n\t<ERROR/>\n"
    )
    return _document(body)


def correct(term: str, vocabulary: Counter[str]) -> tuple[str, list[tuple[str, bool]]]:
    """(the corrected query, or "" when nothing changed; the query in pieces, each marked
    replaced or not, as `<SpelledQuery>` lists them)."""
    pieces: list[tuple[str, bool]] = []
    position = 0
    changed = False
    for match in _CHUNK.finditer(term):
        word = match.group(0)
        replacement = None
        if not word.endswith("]") and word.lower() not in _OPERATORS and len(word) >= 4:
            replacement = _suggest(word.lower(), vocabulary)
        if replacement is None:
            continue
        if match.start() > position:
            pieces.append((term[position : match.start()], False))
        pieces.append((replacement, True))
        position = match.end()
        changed = True
    if position < len(term):
        pieces.append((term[position:], False))
    if not changed:
        return "", pieces
    return "".join(text for text, _ in pieces), pieces


def _suggest(word: str, vocabulary: Counter[str]) -> str | None:
    if word in MISSPELLINGS:
        return MISSPELLINGS[word]
    if word in vocabulary:
        return None
    limit = 1 if len(word) <= 4 else 2
    best: tuple[int, int, str] | None = None
    for candidate, frequency in vocabulary.items():
        if abs(len(candidate) - len(word)) > limit or len(candidate) < 4:
            continue
        distance = _distance(word, candidate, limit)
        if distance <= limit:
            key = (distance, -frequency, candidate)
            if best is None or key < best:
                best = key
    return best[2] if best is not None else None


def _distance(a: str, b: str, limit: int) -> int:
    """Levenshtein distance of `a` and `b`, or `limit + 1` once it must exceed `limit`."""
    previous = list(range(len(b) + 1))
    for i, char in enumerate(a, 1):
        current = [i]
        for j, other in enumerate(b, 1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char != other))
            )
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


def _vocabulary(state: ServerState) -> Counter[str]:
    corpus = state.corpus
    with _lock:
        cached = _vocabularies.get(id(corpus))
        if cached is not None and cached[0] == corpus.version:
            return cached[1]
    words: Counter[str] = Counter()
    for entry in corpus.entries():
        f = entry.fields
        texts = [f.title, *f.abstract, *f.keywords, *(name for name, _ in f.mesh)]
        for text in texts:
            words.update(t for t in tokenize(text or "") if t.isalpha())
    with _lock:
        _vocabularies[id(corpus)] = (corpus.version, words)
    return words


def _document(body: str) -> bytes:
    return f"{_HEAD}<eSpellResult>\n{body}</eSpellResult>\n".encode()
