"""PubMedQA as retrieval: each PQA-L question must find its own abstract among distractors.

The corpus is every PQA-L abstract plus the documents of a BEIR corpus (SciFact's) as
distractors. A PQA-L abstract is its contexts joined in order, as one unstructured section.
The long answer stays out: it is the abstract's conclusion, the answer to the question.
PQA-L has no titles; a `TITLE` field is used when a record has one. The question is never
used as a title, since it is the query. Each question's one relevant document is its own
abstract, so Recall@1 is the share of questions whose abstract ranks first.

The result is a `BeirDataset`, scored by `BeirEvaluation` like any BEIR data set.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from biomcp.eval.beir import BeirDataset, BeirDocument, BeirReport
from biomcp.eval.data import PMID_PATTERN, EvaluationDataError, read_jsonl
from biomcp.usecases.errors import InvalidRequestError

__all__ = [
    "DATASET",
    "DISTRACTOR_PREFIX",
    "RECALL_AT",
    "SPLIT",
    "load_pubmedqa_retrieval",
    "pubmedqa_markdown",
    "pubmedqa_payload",
    "read_distractors",
]

DATASET = "pubmedqa"
#: PQA-L, the 1,000 expert-labelled questions.
SPLIT = "pqa-l"
#: The Recall@k cut-offs this benchmark reports.
RECALL_AT = (1, 10, 100)
#: Distractor ids are namespaced, so they never collide with a PQA-L PMID.
DISTRACTOR_PREFIX = "distractor:"
_PQAL_FILE = "ori_pqal.json"
_CORPUS_FILE = "corpus.jsonl"
_COLUMNS = (
    ("recall@1", "Recall@1"),
    ("recall@10", "Recall@10"),
    ("ndcg@10", "nDCG@10"),
    ("mrr@10", "MRR@10"),
    ("recall@100", "Recall@100"),
)


def _file_in(path: Path, name: str, what: str) -> Path:
    """`path` itself when it is a file, else `path / name`; it must exist."""
    path = Path(path)
    found = path if path.is_file() else path / name
    if not found.is_file():
        raise EvaluationDataError(f"{found} not found: {what}")
    return found


def _read_pqal(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise EvaluationDataError(f"cannot read {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise EvaluationDataError(f"{path}: not JSON ({exc.msg})") from None
    if not isinstance(data, dict) or not data:
        raise EvaluationDataError(f"{path}: expected a JSON object of records keyed by PMID")
    return data


def _pqal_entry(path: Path, pmid: str, item: Any) -> tuple[BeirDocument, str]:
    """The document and the question of one PQA-L record."""
    where = f"{path}: record {pmid!r}"
    if not PMID_PATTERN.fullmatch(pmid):
        raise EvaluationDataError(f"{where}: the key is not a PMID")
    if not isinstance(item, dict):
        raise EvaluationDataError(f"{where}: expected a JSON object")
    contexts = item.get("CONTEXTS")
    if not isinstance(contexts, list) or not all(isinstance(c, str) for c in contexts):
        raise EvaluationDataError(f"{where}: CONTEXTS must be a list of strings")
    question = item.get("QUESTION")
    if not isinstance(question, str):
        raise EvaluationDataError(f"{where}: QUESTION must be a string")
    text = " ".join(c.strip() for c in contexts if c.strip())
    title = item.get("TITLE")
    return BeirDocument(pmid, title.strip() if isinstance(title, str) else "", text), question


def read_distractors(path: Path) -> list[BeirDocument]:
    """The documents of a BEIR corpus (a folder holding `corpus.jsonl`, or the file), each id
    prefixed with `DISTRACTOR_PREFIX`.

    Raises:
        EvaluationDataError: a missing or malformed file.
    """
    corpus = _file_in(path, _CORPUS_FILE, "the distractors are a BEIR corpus.jsonl")
    documents: list[BeirDocument] = []
    for number, item in read_jsonl(corpus):
        if "_id" not in item:
            raise EvaluationDataError(f"{corpus}:{number}: no _id")
        documents.append(
            BeirDocument(
                f"{DISTRACTOR_PREFIX}{item['_id']}",
                str(item.get("title") or ""),
                str(item.get("text") or ""),
            )
        )
    return documents


def load_pubmedqa_retrieval(
    data: Path,
    distractors: Path,
    *,
    limit: int | None = None,
    max_distractors: int | None = None,
) -> BeirDataset:
    """PQA-L (a folder holding `ori_pqal.json`, or the file) as a retrieval data set.

    Every abstract is in the corpus, whatever `limit` is. `limit` keeps the first N questions,
    in file order. `max_distractors` keeps the first N distractors (quick runs only). Questions
    without text are skipped with a warning.

    Raises:
        EvaluationDataError: a missing or malformed file.
        InvalidRequestError: a `limit` below 1 or a negative `max_distractors`.
    """
    if limit is not None and limit < 1:
        raise InvalidRequestError(f"limit must be >= 1, got {limit}")
    if max_distractors is not None and max_distractors < 0:
        raise InvalidRequestError(f"max_distractors must be >= 0, got {max_distractors}")
    path = _file_in(data, _PQAL_FILE, "PubMedQA PQA-L is one JSON file, ori_pqal.json")
    documents: list[BeirDocument] = []
    queries: dict[str, str] = {}
    for pmid, item in _read_pqal(path).items():
        document, question = _pqal_entry(path, pmid, item)
        documents.append(document)
        if question.strip():
            queries[pmid] = question.strip()
    warnings = []
    if len(queries) < len(documents):
        warnings.append(f"{len(documents) - len(queries)} questions have no text and were skipped")
    if not queries:
        raise EvaluationDataError(f"{path}: no question has text")
    chosen = list(queries)[:limit] if limit is not None else list(queries)
    documents.extend(read_distractors(distractors)[:max_distractors])
    return BeirDataset(
        name=DATASET,
        split=SPLIT,
        documents=tuple(documents),
        queries={q: queries[q] for q in chosen},
        qrels={q: {q: 1} for q in chosen},
        warnings=tuple(warnings),
    )


def pubmedqa_payload(
    report: BeirReport, data: BeirDataset, *, per_query: bool = False
) -> dict[str, Any]:
    """The JSON report: `BeirReport.as_dict()` with its kind and the corpus's make-up."""
    payload = report.as_dict(per_query=per_query)
    distractors = sum(d.doc_id.startswith(DISTRACTOR_PREFIX) for d in data.documents)
    payload["kind"] = DATASET
    payload["corpus"] = {
        "abstracts": len(data.documents) - distractors,
        "distractors": distractors,
        "questions": len(data.queries),
    }
    return payload


def pubmedqa_markdown(payload: dict[str, Any]) -> str:
    """A short markdown summary of `pubmedqa_payload`'s report."""
    corpus, index = payload["corpus"], payload["index"]
    labels = " | ".join(label for _, label in _COLUMNS)
    rows = [
        f"| mode | alpha | fusion | {labels} | queries/s |",
        "| --- | ---: | --- | " + " | ".join("---:" for _ in _COLUMNS) + " | ---: |",
    ]
    for m in payload["modes"]:
        cells = [m["mode"], f"{m['alpha']:g}", m["fusion"]]
        cells += [f"{m['metrics'][key]:.3f}" for key, _ in _COLUMNS]
        cells.append(f"{m['queries_per_s']:.1f}")
        rows.append("| " + " | ".join(cells) + " |")
    parts = [
        f"# PubMedQA ({payload['split']}) as retrieval: {corpus['questions']} questions",
        "",
        f"Corpus: {corpus['abstracts']} PubMedQA abstracts and {corpus['distractors']} "
        f"distractors ({index['chunks']} chunks); embedder `{payload['embedder']}`. Each "
        "question's one relevant document is its own abstract.",
        "",
        *rows,
        "",
        f"Indexing {index['seconds']:.1f} s; query embedding "
        f"{payload['query_embedding_seconds']:.1f} s.",
    ]
    parts += [f"- warning: {w}" for w in payload.get("warnings", ())]
    return "\n".join(parts) + "\n"
