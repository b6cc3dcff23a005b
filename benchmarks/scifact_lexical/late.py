"""`python -m benchmarks scifact_variants --late`: late interaction over the model's token states.

An experiment harness, not the product. A sentence vector is the mean of the model's token
states. Late interaction keeps the tokens apart: each query token takes its best cosine with
any token of a chunk (MaxSim), and the chunk's late score is their weighted mean. A claim's
every word must then find a match, which one averaged vector cannot ask.

The product's ranking comes first: the chunk arm, the best-sentence arm and BM25 at alpha 0.6.
Its `depth` best chunks get a late score. That score joins the fusion as a fourth arm of weight
`w` (the other arms keep theirs), and the product's tempered rerank follows.

Query tokens are weighted three ways: `mean` (every token), `content` (word pieces of letters
or digits, stopwords out) and `idf` (content pieces weighted by their idf over the chunks).

Token states are kept in `--tokens` (a pickle of float16 arrays by chunk uuid); a chunk's states
are computed once. The run prints how many chunks per second the model gives states for:
a product would pay `depth` of them per search, as no store can hold every token's vector.

`--grid` scores the train split only. With `--test`, the product and the best configuration
on train are scored once on test.
"""

from __future__ import annotations

import json
import math
import pickle
import sys
import time
from collections import Counter
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
from benchmarks.scifact_lexical.sentences import ALPHA, OwnSentences, best_own_sentence
from benchmarks.scifact_lexical.variants import ARM, Arm, Harness, Lexical
from benchmarks.scifact_rankers import Candidates
from biomcp.adapters.vectors.lexical_analysis import ENGLISH_STOPWORDS
from biomcp.eval.beir import BeirDataset, load_beir

KINDS = ("mean", "content", "idf")
#: (query token weights, late arm weight, depth): the train grid
GRID = [(k, w, d) for d in (20, 40, 80) for k in KINDS for w in (0.2, 0.3, 0.5, 0.8)]
PRODUCT = ("mean", 0.0, 0)


def is_content(piece: str) -> bool:
    """A word piece of letters or digits that is not a stopword."""
    word = piece.removeprefix("##")
    return word.isalnum() and piece not in ENGLISH_STOPWORDS


def token_weights(pieces: list[str], kind: str, idf: dict[str, float]) -> np.ndarray:
    """Each query token's weight in the mean (all ones when `kind` leaves none)."""
    if kind == "mean":
        weights = np.ones(len(pieces))
    elif kind == "content":
        weights = np.array([1.0 if is_content(p) else 0.0 for p in pieces])
    else:
        weights = np.array([idf.get(p, 0.0) if is_content(p) else 0.0 for p in pieces])
    return weights if weights.sum() > 0 else np.ones(len(pieces))


def maxsim(chunks: list[np.ndarray], query: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Each chunk's late score: the `weights`-mean over query tokens of their best cosine with
    the chunk's tokens (rows of unit vectors)."""
    best = np.stack([(c.astype(np.float32) @ query.T).max(axis=0) for c in chunks])
    scores: np.ndarray = best @ weights / weights.sum()
    return scores


def piece_idf(texts: list[str]) -> dict[str, float]:
    """Lucene's idf of each word piece of the model's tokenizer over `texts`."""
    from tokenizers import Tokenizer

    from biomcp.adapters.embeddings.onnx import TOKENIZER_PATH, WINDOW

    tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
    tokenizer.enable_truncation(max_length=WINDOW)
    df: Counter[str] = Counter()
    for encoding in tokenizer.encode_batch(texts):
        df.update(set(encoding.tokens))
    n = len(texts)
    return {p: math.log(1 + (n - c + 0.5) / (c + 0.5)) for p, c in df.items()}


class TokenStates:
    """Chunk token states by uuid, computed by the ONNX embedder once and kept on disk."""

    def __init__(self, path: Path | None) -> None:
        from biomcp.adapters.embeddings.onnx import OnnxEmbedder

        self.path = path
        self.states: dict[str, np.ndarray] = {}
        if path is not None and path.is_file():
            self.states = pickle.loads(path.read_bytes())  # noqa: S301 (own file)
        self.model = OnnxEmbedder(precision="fp32")
        self.computed = 0
        self.seconds = 0.0
        self.unsaved = False

    def query(self, text: str) -> tuple[list[str], np.ndarray]:
        ((pieces, states),) = self.model.token_states([text])
        return pieces, states

    def ensure(self, uuids: list[str], texts: list[str]) -> None:
        """Computes the states of the chunks not kept yet."""
        todo = [(u, t) for u, t in zip(uuids, texts, strict=True) if u not in self.states]
        started = time.perf_counter()
        for start in range(0, len(todo), 64):
            part = todo[start : start + 64]
            for (uuid, _), (_, rows) in zip(
                part, self.model.token_states([t for _, t in part]), strict=True
            ):
                self.states[uuid] = rows.astype(np.float16)
            if len(todo) > 64 and start % 2560 == 0:
                say(f"token states {start + len(part)}/{len(todo)}")
        self.computed += len(todo)
        self.seconds += time.perf_counter() - started
        self.unsaved = self.unsaved or bool(todo)

    def save(self) -> None:
        """Writes the states to `path` when some were computed since the last save."""
        if self.unsaved and self.path is not None:
            part = self.path.with_name(self.path.name + ".part")
            part.write_bytes(pickle.dumps(self.states))
            part.replace(self.path)
        self.unsaved = False


def product_arms(
    harness: Harness, sentences: OwnSentences, cands: Candidates
) -> list[tuple[float, Arm]]:
    """The product's three arms: chunk cosine, best own sentence, BM25."""
    query = np.asarray(cands.vector, dtype=np.float32)
    query /= np.linalg.norm(query) or 1.0
    chunks = len(harness.corpus.uuids)
    best = best_own_sentence(query, sentences.vectors, sentences.owner, chunks)
    return [
        (ALPHA * 0.5, harness.dense(cands)),
        (ALPHA * 0.5, dense_top(best, ARM)),
        (1 - ALPHA, harness.keyword(cands, Lexical(store=True))),
    ]


def score(
    harness: Harness,
    sentences: OwnSentences,
    states: TokenStates,
    idf: dict[str, float],
    texts: list[str],
    data: BeirDataset,
    queries: dict[str, Candidates],
    configs: list[tuple[str, float, int]],
) -> dict[str, float]:
    """Mean nDCG@10 on the agent path of each configuration (weight 0: the product)."""
    judge = Judge(data)
    uuids = harness.corpus.uuids
    deepest = max(d for _, _, d in configs)
    sums = dict.fromkeys(configs, 0.0)
    for qid, cands in queries.items():
        base = product_arms(harness, sentences, cands)
        first, _ = harness.fuse(base, keep=deepest)
        states.ensure([uuids[p] for p in first], [texts[p] for p in first])
        pieces, query = states.query(cands.text)
        chunks = [states.states[uuids[p]] for p in first]
        best = {k: maxsim(chunks, query, token_weights(pieces, k, idf)) for k in KINDS}
        for config in configs:
            kind, weight, depth = config
            arms = list(base)
            if weight > 0:
                late = best[kind][:depth]
                order = np.argsort(-late, kind="stable")
                arms.append((weight, (first[:depth][order], late[order])))
            sums[config] += judge.ndcg(qid, harness.rank(cands, arms, True))
    states.save()
    return {_name(c): round(total / len(queries), 4) for c, total in sums.items()}


def _name(config: tuple[str, float, int]) -> str:
    kind, weight, depth = config
    return "product" if weight == 0 else f"{kind} w{weight} depth {depth}"


def run(argv: list[str]) -> dict[str, Any]:
    parser = experiment_parser("--late")
    parser.add_argument("--cache", type=Path, help="embedding cache for the sentences")
    parser.add_argument("--tokens", type=Path, help="where chunk token states are kept")
    parser.add_argument("--grid", action="store_true", help="score the train split only")
    args = parser.parse_args(argv)
    if not (args.data / "corpus.jsonl").is_file():
        return {"benchmark": "scifact_late_interaction", "skipped": "no SciFact data at --data"}
    load_before = loadavg()
    train = load_candidates(args.train)
    data = load_beir(args.data, "train")
    harness = Harness(data, train.corpus)
    own = OwnSentences.of(data, train.corpus.uuids, args.cache)
    fields = chunk_fields(data, train.corpus.uuids)
    texts = [f"{t}\n{b}" if t else b for t, b in zip(fields.titles, fields.bodies, strict=True)]
    states = TokenStates(args.tokens)
    idf = piece_idf(texts)
    configs = [PRODUCT, *GRID]
    out: dict[str, Any] = {
        "benchmark": "scifact_late_interaction",
        "train": score(harness, own, states, idf, texts, data, train.queries, configs),
    }
    if args.test is not None and not args.grid:
        best = max(GRID, key=lambda c: out["train"][_name(c)])
        test = load_candidates(args.test, like=train)
        data = load_beir(args.data, "test")
        out["chosen on train"] = _name(best)
        out["test"] = score(harness, own, states, idf, texts, data, test.queries, [PRODUCT, best])
    if states.computed:
        rate = states.computed / states.seconds
        out["token states per second"] = round(rate, 1)
        out["seconds per search at depth 40"] = round(40 / rate, 2)
    out["machine"], out["load_before"], out["load_after"] = describe(), load_before, loadavg()
    return out


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1:]), indent=2))
