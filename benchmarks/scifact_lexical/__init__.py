"""An in-benchmark BM25 over SciFact's chunks, for ranking experiments only (not the product).

The product's BM25 arm is tantivy inside the embedded store (`embedded_lexical`). This
experiment harness rebuilds the same chunks (`chunk_record` under the embedder's window), the
same tokens (Greek letters spelled out, word runs, lower-cased, English stemming; query
stopwords dropped as words) and the same scoring (k1 1.2, b 0.75, Lucene's IDF) with numpy
and scipy, so that a variant can change one thing the store cannot: field weights, the
query's terms, feedback terms.

Document lengths are exact here (tantivy quantizes them to a byte), so the baseline lands
near the store's figures, not on them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from biomcp.adapters.vectors.lexical_analysis import ENGLISH_STOPWORDS, index_terms, query_terms
from biomcp.domain.chunking import chunk_record, chunking_for_window
from biomcp.eval.beir import BeirDataset, beir_pmids, beir_record

#: all-MiniLM-L6-v2's window: the chunking the evaluation's index used.
WINDOW_TOKENS = 256


class Analyzer:
    """The store's tokens: `index` for stored text, `query` for a query (stopwords dropped)."""

    def index(self, text: str) -> list[str]:
        return index_terms(text)

    def query(self, text: str, stopwords: frozenset[str] = ENGLISH_STOPWORDS) -> Counter[str]:
        return query_terms(text, stopwords)


@dataclass(frozen=True, slots=True)
class Fields:
    """Title and body text of each unit (a chunk or a paper), and each unit's paper id."""

    titles: list[str]
    bodies: list[str]
    doc_ids: list[str]


def chunk_fields(data: BeirDataset, uuids: Sequence[str]) -> Fields:
    """Each stored chunk's title and body, in the order of `uuids` (the collected corpus).

    Raises:
        ValueError: a stored chunk the chunking here does not rebuild.
    """
    pmids = beir_pmids(d.doc_id for d in data.documents)
    config = chunking_for_window(WINDOW_TOKENS)
    by_uuid: dict[str, tuple[str, str, str]] = {}
    for doc in data.documents:
        record = beir_record(pmids[doc.doc_id], doc)
        for chunk in chunk_record(record, config):
            title, _, body = chunk.text.partition("\n") if record.title else ("", "", chunk.text)
            by_uuid[chunk.uuid] = (title, body, f"pmid:{record.pmid}")
    missing = [u for u in uuids if u not in by_uuid]
    if missing:
        raise ValueError(f"{len(missing)} stored chunks are not rebuilt, e.g. {missing[0]}")
    rows = [by_uuid[u] for u in uuids]
    return Fields([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])


def paper_fields(data: BeirDataset) -> Fields:
    """Each paper's title and whole abstract, in the dataset's order."""
    pmids = beir_pmids(d.doc_id for d in data.documents)
    docs = data.documents
    return Fields(
        [d.title.strip() for d in docs],
        [d.text.strip() for d in docs],
        [f"pmid:{pmids[d.doc_id]}" for d in docs],
    )


class Vocabulary:
    """Term -> column, grown as texts are read."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}

    def columns(self, terms: Iterable[str]) -> list[int]:
        return [self.ids.setdefault(t, len(self.ids)) for t in terms]


@dataclass(frozen=True, slots=True)
class Params:
    """BM25's k1 and b, and the title's weight in BM25F (1.0: one field, as the store)."""

    k1: float = 1.2
    b: float = 0.75
    title_weight: float = 1.0


class Bm25:
    """BM25 (BM25F with two fields) over a set of units, as postings in numpy arrays."""

    def __init__(self, fields: Fields, analyzer: Analyzer, vocab: Vocabulary) -> None:
        self.doc_ids = fields.doc_ids
        self._vocab = vocab
        self.counts: list[dict[int, float]] = []
        rows, cols, t_tf, b_tf = [], [], [], []
        for unit, (title, body) in enumerate(zip(fields.titles, fields.bodies, strict=True)):
            t = Counter(vocab.columns(analyzer.index(title)))
            b = Counter(vocab.columns(analyzer.index(body)))
            self.counts.append({c: float(t[c] + b[c]) for c in t.keys() | b.keys()})
            for col in t.keys() | b.keys():
                rows.append(unit)
                cols.append(col)
                t_tf.append(t[col])
                b_tf.append(b[col])
        order = np.lexsort((np.array(rows), np.array(cols)))
        self._rows = np.array(rows, dtype=np.int64)[order]
        self._cols = np.array(cols, dtype=np.int64)[order]
        self._title = np.array(t_tf, dtype=np.float64)[order]
        self._body = np.array(b_tf, dtype=np.float64)[order]
        self._terms = len(vocab.ids)
        self._indptr = np.searchsorted(self._cols, np.arange(self._terms + 1))
        self.units = len(fields.bodies)
        self._cache: dict[Params, np.ndarray] = {}

    def df(self) -> np.ndarray:
        """How many units hold each term (either field), for the terms seen so far."""
        return np.diff(self._indptr).astype(np.float64)

    def idf(self) -> np.ndarray:
        df = self.df()
        return np.log(1.0 + (self.units - df + 0.5) / (df + 0.5))

    def weights(self, p: Params) -> np.ndarray:
        """Each posting's BM25 contribution for one occurrence of its term in a query."""
        if p not in self._cache:
            tf = p.title_weight * self._title + self._body
            length = np.bincount(self._rows, weights=tf, minlength=self.units)
            norm = p.k1 * (1 - p.b + p.b * length / length.mean())
            idf = self.idf()
            self._cache[p] = idf[self._cols] * tf * (p.k1 + 1) / (tf + norm[self._rows])
        return self._cache[p]

    def scores(self, query: dict[str, float], p: Params) -> np.ndarray:
        out = np.zeros(self.units)
        data = self.weights(p)
        for term, w in query.items():
            col = self._vocab.ids.get(term)
            if col is None or col >= self._terms:
                continue
            span = slice(self._indptr[col], self._indptr[col + 1])
            out[self._rows[span]] += w * data[span]
        return out


def top(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions and scores of the `k` best positive scores, best first (ties by position)."""
    hit = np.flatnonzero(scores > 0)
    if len(hit) > k:
        hit = hit[np.argpartition(-scores[hit], k - 1)[:k]]
    hit = hit[np.lexsort((hit, -scores[hit]))]
    return hit, scores[hit]


# --- query handling ---------------------------------------------------------------------------


def query_weights(
    terms: Counter[str],
    idf: dict[str, float],
    *,
    binary: bool = False,
    max_df_share: float | None = None,
    idf_power: float = 0.0,
    df_share: dict[str, float] | None = None,
) -> dict[str, float]:
    """A query's term weights: counts (or 1 each), dropping terms in more than `max_df_share`
    of units, and scaled by idf ** `idf_power` (rare terms weigh more)."""
    out: dict[str, float] = {}
    for term, count in terms.items():
        if max_df_share is not None and df_share and df_share.get(term, 0.0) > max_df_share:
            continue
        weight = 1.0 if binary else float(count)
        if idf_power:
            weight *= idf.get(term, 1.0) ** idf_power
        out[term] = weight
    return out or {t: float(c) for t, c in terms.items()}


@dataclass(frozen=True, slots=True)
class Feedback:
    """RM3: `docs` feedback papers, `terms` expansion terms, `weight` of the expansion."""

    docs: int = 10
    terms: int = 10
    weight: float = 0.5
    min_idf: float = 0.0


def rm3(
    query: dict[str, float],
    first_pass: tuple[np.ndarray, np.ndarray],
    papers: Bm25,
    idf: np.ndarray,
    names: list[str],
    fb: Feedback,
) -> dict[str, float]:
    """The query interpolated with a relevance model of the first pass's best papers.

    `first_pass` is paper positions and scores, best first; each paper's term distribution
    (count / length) is weighted by its share of the feedback scores."""
    units, scores = first_pass[0][: fb.docs].tolist(), first_pass[1][: fb.docs].tolist()
    chosen = list(zip(units, scores, strict=True))
    total = sum(s for _, s in chosen)
    if not chosen or total <= 0:
        return query
    model: dict[int, float] = {}
    for unit, score in chosen:
        counts = papers.counts[unit]
        length = sum(counts.values())
        for col, c in counts.items():
            model[col] = model.get(col, 0.0) + (score / total) * c / length
    stop = ENGLISH_STOPWORDS
    ranked = sorted(
        (
            (w, col)
            for col, w in model.items()
            if idf[col] >= fb.min_idf and names[col] not in stop and not names[col].isdigit()
        ),
        reverse=True,
    )[: fb.terms]
    exp_total = sum(w for w, _ in ranked) or 1.0
    q_total = sum(query.values()) or 1.0
    out = {t: (1 - fb.weight) * w / q_total for t, w in query.items()}
    for w, col in ranked:
        out[names[col]] = out.get(names[col], 0.0) + fb.weight * w / exp_total
    return out
