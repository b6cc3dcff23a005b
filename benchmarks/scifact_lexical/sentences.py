"""`python -m benchmarks scifact_variants --sentences`: a dense arm over single sentences.

An experiment harness, not the product. The embedder was trained on sentence pairs, and a
SciFact claim is usually supported by one sentence of an abstract. A chunk's vector averages
many sentences, so it may dilute the one that matters. This measures a dense score per paper
taken from its best single sentence (title included), beside the chunk vectors.

Every sentence of every abstract is embedded once with the configured embedder, behind an
embedding cache (`--cache`). Variants, each over the same candidates and the product's fusion:

- `chunk`: the store's dense arm (the product today).
- `sentence`: each paper's best sentence score, given to every chunk of the paper.
- `blend L`: L x the best chunk's cosine + (1 - L) x the best sentence's, per paper.
- `three arms S`: chunk dense, sentence dense and BM25 fused, the sentence arm taking a share
  S of the dense weight.

- `chunk blend L`: the same blend per chunk, from the chunk's own sentences (what a store can
  hold beside each chunk's vector).
- `chunk three arms S`: a third arm ranking chunks by their best own sentence, fused with the
  chunk arm and BM25, the sentence arm taking a share S of the dense weight.

`--titled` adds the same sentences embedded after their paper's title, as a third and fourth arm.
`--grid` scores the train split only. With `--test`, the fixed rule, the best train variant and
the best chunk-level blend on train are scored once on test.
"""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.machine import describe, loadavg
from benchmarks.scifact_lexical import chunk_fields
from benchmarks.scifact_lexical.common import (
    Judge,
    dense_top,
    experiment_parser,
    load_candidates,
    say,
)
from benchmarks.scifact_lexical.variants import ARM, Harness, Lexical
from benchmarks.scifact_rankers import Candidates
from biomcp.domain.chunking import sentence_spans
from biomcp.eval.beir import BeirDataset, beir_pmids, load_beir

ALPHA = 0.6
BATCH = 256
_STORE = Lexical(store=True)  # the store's own BM25 arm


def chunk_sentences(
    data: BeirDataset, uuids: list[str], titled: bool = False
) -> tuple[list[str], np.ndarray]:
    """Every sentence of every stored chunk (the chunk's title line first), and the position
    of its chunk in `uuids`. Overlapping chunks repeat a sentence; the cache embeds it once.
    `titled` prefixes each body sentence with the paper's title, as context."""
    fields = chunk_fields(data, uuids)
    texts: list[str] = []
    owner: list[int] = []
    for pos, (title, body) in enumerate(zip(fields.titles, fields.bodies, strict=True)):
        lead = f"{title.strip()}. " if titled and title.strip() else ""
        parts = [title.strip()] + [lead + body[a:b].strip() for a, b in sentence_spans(body)]
        for part in parts:
            if part:
                texts.append(part)
                owner.append(pos)
    return texts, np.array(owner, dtype=np.int64)


def chunk_sentence_vectors(
    data: BeirDataset, uuids: list[str], cache: Path | None, titled: bool = False
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """`chunk_sentences` with a vector for each sentence; each distinct text is embedded once."""
    texts, owner = chunk_sentences(data, uuids, titled)
    unique = list(dict.fromkeys(texts))
    say(f"{len(texts)} chunk sentences, {len(unique)} distinct")
    vectors = asyncio.run(embed_all(unique, cache, say))
    where = {t: i for i, t in enumerate(unique)}
    return texts, vectors[[where[t] for t in texts]], owner


def sentences(data: BeirDataset, window: int = 1) -> tuple[list[str], list[str]]:
    """Every sentence of every paper (its title first) and the paper id of each. With
    `window` > 1, runs of that many consecutive abstract sentences (stride one) instead."""
    pmids = beir_pmids(d.doc_id for d in data.documents)
    texts, owners = [], []
    for doc in data.documents:
        paper = f"pmid:{pmids[doc.doc_id]}"
        parts = [doc.title.strip()] if doc.title.strip() else []
        body = doc.text.strip()
        spans = sentence_spans(body)
        runs = max(1, len(spans) - window + 1) if spans else 0
        parts += [
            body[spans[i][0] : spans[min(i + window, len(spans)) - 1][1]] for i in range(runs)
        ]
        for part in parts:
            if part.strip():
                texts.append(part.strip())
                owners.append(paper)
    return texts, owners


async def embed_all(texts: list[str], cache: Path | None, say: Any) -> np.ndarray:
    """Vectors for `texts` from the configured embedder, cached on disk."""
    from biomcp.adapters.embeddings import CachingEmbedder
    from biomcp.entrypoints.backends import build_embedder
    from biomcp.entrypoints.settings import load_settings

    model = build_embedder(load_settings())
    embedder = CachingEmbedder(model, cache) if cache is not None else model
    out: list[list[float]] = []
    try:
        for start in range(0, len(texts), BATCH):
            out.extend(await embedder.embed(texts[start : start + BATCH]))
            if start % (BATCH * 40) == 0:
                say(f"embedded {start + BATCH}/{len(texts)} sentences")
    finally:
        if isinstance(embedder, CachingEmbedder):
            embedder.close()
        closer = getattr(model, "aclose", None)
        if closer is not None:
            await closer()
    vectors = np.asarray(out, dtype=np.float32)
    norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
    unit: np.ndarray = vectors / norms
    return unit


def best_own_sentence(
    query: np.ndarray, vectors: np.ndarray, owner: np.ndarray, chunks: int
) -> np.ndarray:
    """Each of `chunks` chunks' best cosine with the unit `query` among its own sentences
    (`vectors`, the chunk of each in `owner`); -1 for a chunk without one."""
    best = np.full(chunks, -1.0)
    np.maximum.at(best, owner, vectors @ query)
    return best


@dataclass(frozen=True, slots=True)
class OwnSentences:
    """The vector of every sentence of every chunk, and the chunk position of each."""

    vectors: np.ndarray
    owner: np.ndarray

    @classmethod
    def of(cls, data: BeirDataset, uuids: list[str], cache: Path | None) -> OwnSentences:
        """The sentences of the chunks `uuids`, embedded through `cache`."""
        _, vectors, owner = chunk_sentence_vectors(data, uuids, cache)
        return cls(vectors, owner)


class SentenceArm:
    """Per-paper dense scores from single sentences, spread onto the papers' chunks."""

    def __init__(self, harness: Harness, vectors: np.ndarray, owners: list[str]) -> None:
        self.harness = harness
        self.vectors = vectors
        self.papers = sorted(set(owners))
        index = {p: i for i, p in enumerate(self.papers)}
        self.owner = np.array([index[o] for o in owners], dtype=np.int64)
        chunk_vectors = harness.corpus.vectors.astype(np.float32)
        norms = np.maximum(np.linalg.norm(chunk_vectors, axis=1, keepdims=True), 1e-9)
        self.chunk_vectors = chunk_vectors / norms
        self.chunk_owner = np.array(
            [index.get(d, -1) for d in harness.corpus.doc_ids], dtype=np.int64
        )

    def with_chunk_sentences(self, vectors: np.ndarray, owner: np.ndarray) -> SentenceArm:
        """Adds each chunk's own sentences, for the chunk-level blend."""
        self.chunk_sentence_vectors, self.chunk_sentence_owner = vectors, owner
        return self

    def with_titled_sentences(self, vectors: np.ndarray, owner: np.ndarray) -> SentenceArm:
        """Adds each chunk's sentences embedded after the paper's title, for `titled` kinds."""
        self.titled_vectors, self.titled_owner = vectors, owner
        return self

    def chunk_blend(
        self, query: np.ndarray, share: float, titled: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """Every chunk scored `share` x its cosine + (1 - share) x its best sentence's; the
        best `ARM` chunks, best first. `titled` reads the title-prefixed sentences."""
        q = query / (np.linalg.norm(query) or 1.0)
        chunks = len(self.chunk_vectors)
        if titled:
            best = best_own_sentence(q, self.titled_vectors, self.titled_owner, chunks)
        else:
            best = best_own_sentence(
                q, self.chunk_sentence_vectors, self.chunk_sentence_owner, chunks
            )
        return dense_top(share * (self.chunk_vectors @ q) + (1 - share) * best, ARM)

    def paper_scores(self, query: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each paper's best sentence cosine, best chunk cosine, and the mean of its two best
        sentences (the best one alone when it has one)."""
        q = query / (np.linalg.norm(query) or 1.0)
        cos = self.vectors @ q
        sent = np.full(len(self.papers), -1.0)
        np.maximum.at(sent, self.owner, cos)
        is_best = cos >= sent[self.owner]
        second = np.full(len(self.papers), -np.inf)
        np.maximum.at(second, self.owner[~is_best], cos[~is_best])
        sent2 = np.where(np.isfinite(second), (sent + second) / 2, sent)
        chunk = np.full(len(self.papers), -1.0)
        ok = self.chunk_owner >= 0
        np.maximum.at(chunk, self.chunk_owner[ok], (self.chunk_vectors @ q)[ok])
        return sent, chunk, sent2

    def arm(self, paper_scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The best papers' scores given to each of their chunks, best first."""
        pos: list[int] = []
        out: list[float] = []
        for paper in np.argsort(-paper_scores, kind="stable"):
            chunks = self.harness.chunks_of.get(self.papers[paper], [])
            pos.extend(chunks)
            out.extend([float(paper_scores[paper])] * len(chunks))
            if len(pos) >= ARM:
                break
        return np.array(pos[:ARM], dtype=np.int64), np.array(out[:ARM])


def variants(grid: bool, titled: bool = False) -> dict[str, tuple[str, float, float]]:
    """Name -> (kind, its value, alpha). `grid` adds the train-only exploration."""
    out = {"chunk": ("chunk", 0.0, ALPHA), "sentence": ("sentence", 0.0, ALPHA)}
    for blend in (0.25, 0.5, 0.75):
        out[f"blend {blend}"] = ("blend", blend, ALPHA)
    for share in (0.25, 0.5, 0.75):
        out[f"three arms {share}"] = ("three", share, ALPHA)
    if grid:
        for blend in (0.4, 0.5, 0.6):
            for alpha in (0.5, 0.65, 0.7, 0.75):
                out[f"blend {blend} alpha {alpha}"] = ("blend", blend, alpha)
        for blend in (0.4, 0.5, 0.6):
            out[f"blend {blend} top-2 mean"] = ("blend2", blend, ALPHA)
    for blend in (0.25, 0.5, 0.75):
        out[f"chunk blend {blend}"] = ("chunk blend", blend, ALPHA)
    for share in (0.25, 0.5, 0.75):
        out[f"chunk three arms {share}"] = ("chunk three", share, ALPHA)
    if titled:
        out = {k: v for k, v in out.items() if v[0] in {"chunk", "chunk three"}}
        for share in (0.25, 0.5, 0.75):
            out[f"titled three arms {share}"] = ("titled three", share, ALPHA)
        for share in (0.25, 0.5):
            out[f"both four arms {share}"] = ("both four", share, ALPHA)
    return out


def _arms(
    kind: str, value: float, alpha: float, keyword: Any, chunk_dense: Any, arm: SentenceArm,
    scores: tuple[np.ndarray, np.ndarray, np.ndarray], query: np.ndarray,
) -> list[tuple[float, Any]]:  # fmt: skip
    sent, chunk, sent2 = scores
    if kind == "chunk":
        dense = chunk_dense
    elif kind == "sentence":
        dense = arm.arm(sent)
    elif kind == "blend":
        dense = arm.arm(value * chunk + (1 - value) * sent)
    elif kind == "chunk three":
        return [
            (alpha * (1 - value), chunk_dense),
            (alpha * value, arm.chunk_blend(query, 0.0)),
            (1 - alpha, keyword),
        ]
    elif kind == "titled three":
        return [
            (alpha * (1 - value), chunk_dense),
            (alpha * value, arm.chunk_blend(query, 0.0, titled=True)),
            (1 - alpha, keyword),
        ]
    elif kind == "both four":
        return [
            (alpha * (1 - 2 * value), chunk_dense),
            (alpha * value, arm.chunk_blend(query, 0.0)),
            (alpha * value, arm.chunk_blend(query, 0.0, titled=True)),
            (1 - alpha, keyword),
        ]
    elif kind == "chunk blend":
        dense = arm.chunk_blend(query, value)
    elif kind == "blend2":
        dense = arm.arm(value * chunk + (1 - value) * sent2)
    else:
        return [
            (alpha * (1 - value), chunk_dense),
            (alpha * value, arm.arm(sent)),
            (1 - alpha, keyword),
        ]
    return [(alpha, dense), (1 - alpha, keyword)]


def score(
    harness: Harness,
    arm: SentenceArm,
    data: BeirDataset,
    queries: dict[str, Candidates],
    names: dict[str, tuple[str, float, float]],
) -> dict[str, float]:
    """Mean nDCG@10 on the agent path of each named variant."""
    judge = Judge(data)
    sums = dict.fromkeys(names, 0.0)
    for qid, cands in queries.items():
        keyword = harness.keyword(cands, _STORE)
        chunk_dense = harness.dense(cands)
        scores = arm.paper_scores(np.asarray(cands.vector, dtype=np.float32))
        for name, (kind, value, alpha) in names.items():
            vector = np.asarray(cands.vector, dtype=np.float32)
            arms = _arms(kind, value, alpha, keyword, chunk_dense, arm, scores, vector)
            docs = harness.rank(cands, arms, True)
            sums[name] += judge.ndcg(qid, docs)
    return {name: round(total / len(queries), 4) for name, total in sums.items()}


def run(argv: list[str]) -> dict[str, Any]:
    parser = experiment_parser("--sentences")
    parser.add_argument("--cache", type=Path, help="embedding cache for the sentences")
    parser.add_argument("--grid", action="store_true", help="explore on train only")
    parser.add_argument("--window", type=int, default=1, help="sentences per paper-level unit")
    parser.add_argument(
        "--titled", action="store_true", help="compare sentences embedded after their title"
    )
    args = parser.parse_args(argv)
    if not (args.data / "corpus.jsonl").is_file():
        return {"benchmark": "scifact_sentence_arm", "skipped": "no SciFact data at --data"}
    load_before = loadavg()

    train = load_candidates(args.train)
    data = load_beir(args.data, "train")
    harness = Harness(data, train.corpus)
    texts, owners = sentences(data, args.window)
    say(f"{len(texts)} sentences of {len(set(owners))} papers")
    vectors = asyncio.run(embed_all(texts, args.cache, say))
    arm = SentenceArm(harness, vectors, owners)
    _, chunk_vectors, chunk_owner = chunk_sentence_vectors(data, train.corpus.uuids, args.cache)
    arm.with_chunk_sentences(chunk_vectors, chunk_owner)
    if args.titled:
        _, titled_vectors, titled_owner = chunk_sentence_vectors(
            data, train.corpus.uuids, args.cache, titled=True
        )
        arm.with_titled_sentences(titled_vectors, titled_owner)
    names = variants(args.grid, args.titled)
    out: dict[str, Any] = {
        "benchmark": "scifact_sentence_arm",
        "sentences": len(texts),
        "train": score(harness, arm, data, train.queries, names),
    }
    if args.test is not None and not args.grid:
        best = max(out["train"], key=out["train"].__getitem__)
        test = load_candidates(args.test, like=train)
        data = load_beir(args.data, "test")
        chunk_level = max(
            (n for n in out["train"] if names[n][0].startswith("chunk ")),
            key=out["train"].__getitem__,
        )
        chosen = {n: names[n] for n in dict.fromkeys(["chunk", best, chunk_level])}
        out["test"] = score(harness, arm, data, test.queries, chosen)
    out["machine"], out["load_before"], out["load_after"] = describe(), load_before, loadavg()
    return out


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1:]), indent=2))
