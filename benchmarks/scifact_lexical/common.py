"""What the per-query SciFact experiments share: candidates, scoring and the dense top-k.

`adaptive` and `sentences` read the same candidate pickles and score rankings the same way.
"""

from __future__ import annotations

import argparse
import pickle
import sys
from pathlib import Path

import numpy as np

from benchmarks.scifact_variants import Collected
from biomcp.eval.beir import BeirDataset, beir_pmids
from biomcp.eval.metrics import score_ranking


def experiment_parser(flag: str) -> argparse.ArgumentParser:
    """The options every per-query experiment takes: the data and the candidate pickles."""
    parser = argparse.ArgumentParser(prog=f"python -m benchmarks scifact_variants {flag}")
    parser.add_argument("--data", type=Path, default=Path("../shared/data/scifact"))
    parser.add_argument("--train", type=Path, required=True, help="train candidates (pickle)")
    parser.add_argument("--test", type=Path, help="test candidates (pickle); scored once")
    return parser


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def load_candidates(path: Path, like: Collected | None = None) -> Collected:
    """Candidates written by `scifact_variants --candidates`; `like` must share their index.

    Raises:
        SystemExit: the two pickles come from different indexes.
    """
    collected: Collected = pickle.loads(path.read_bytes())  # noqa: S301 (own file)
    if like is not None and collected.corpus.uuids != like.corpus.uuids:
        raise SystemExit("train and test candidates come from different indexes")
    return collected


class Judge:
    """nDCG@10 of a ranking of the harness's paper ids against one split's qrels."""

    def __init__(self, data: BeirDataset) -> None:
        pmids = beir_pmids(d.doc_id for d in data.documents)
        self._doc = {f"pmid:{pmid}": doc for doc, pmid in pmids.items()}
        self._qrels = data.qrels

    def ndcg(self, qid: str, docs: list[str]) -> float:
        ranked = [self._doc.get(d, d) for d in docs]
        return score_ranking(ranked, self._qrels[qid])["ndcg@10"]


def dense_top(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions and scores of the `k` best scores, best first (negative ones too)."""
    pos = np.argpartition(-scores, k - 1)[:k]
    pos = pos[np.argsort(-scores[pos], kind="stable")]
    return pos.astype(np.int64), scores[pos].astype(np.float64)
