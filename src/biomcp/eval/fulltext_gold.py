"""Gold full-text questions: each answered only by the full text of one PMC article.

A question names its article (`pmid`, `pmcid`), where in the article the answer sits (`where`)
and 1-3 `answer_terms`: short strings a chunk carrying the answer contains. A retrieved text
answers the question when it contains every term, compared case-insensitively with whitespace
collapsed (`answer_found`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biomcp.eval.data import PMID_PATTERN, EvaluationDataError, read_jsonl

__all__ = [
    "MAX_TERM_CHARS",
    "WHERE",
    "FullTextQuestion",
    "answer_found",
    "load_fulltext_gold",
    "normalize",
]

#: Where in an article an answer can sit.
WHERE = ("methods", "results", "table", "figure", "discussion")
#: An answer term is a short value, not a passage.
MAX_TERM_CHARS = 60
_FIELDS = frozenset({"id", "question", "pmid", "pmcid", "answer_terms", "where"})
_PMCID = re.compile(r"PMC[1-9][0-9]{0,9}")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class FullTextQuestion:
    """One gold question and the article whose full text answers it."""

    qid: str
    question: str
    pmid: str
    pmcid: str
    answer_terms: tuple[str, ...]
    where: str


def normalize(text: str) -> str:
    """`text` case-folded, its whitespace runs collapsed to one space."""
    return _SPACE.sub(" ", text).strip().casefold()


def answer_found(texts: Sequence[str], item: FullTextQuestion) -> bool:
    """True when one of `texts` contains every answer term of `item`."""
    terms = [normalize(t) for t in item.answer_terms]
    return any(all(term in text for term in terms) for text in map(normalize, texts))


def load_fulltext_gold(path: Path) -> list[FullTextQuestion]:
    """Read a JSONL file of full-text questions: `id`, `question`, `pmid`, `pmcid`,
    `answer_terms` (1-3 strings) and `where` (one of `WHERE`) on every line.

    Raises:
        EvaluationDataError: a missing file, or a malformed line (its number is given).
    """
    path = Path(path)
    if not path.is_file():
        raise EvaluationDataError(f"{path.name} not found")
    questions: list[FullTextQuestion] = []
    seen: set[str] = set()
    for number, item in read_jsonl(path):
        question = _question(item, f"{path.name}:{number}")
        if question.qid in seen:
            raise EvaluationDataError(f"{path.name}:{number}: id {question.qid!r} is repeated")
        seen.add(question.qid)
        questions.append(question)
    if not questions:
        raise EvaluationDataError(f"{path.name}: no questions")
    return questions


def _question(item: dict[str, Any], where: str) -> FullTextQuestion:
    unknown = set(item) - _FIELDS
    missing = _FIELDS - set(item)
    if unknown:
        raise EvaluationDataError(f"{where}: unknown fields {', '.join(sorted(unknown))}")
    if missing:
        raise EvaluationDataError(f"{where}: missing fields {', '.join(sorted(missing))}")
    text = {k: item[k] for k in _FIELDS - {"answer_terms"}}
    for name, value in text.items():
        if not isinstance(value, str) or not value.strip():
            raise EvaluationDataError(f"{where}: {name} must be a non-empty string")
    if not PMID_PATTERN.fullmatch(item["pmid"]):
        raise EvaluationDataError(f"{where}: pmid {item['pmid']!r} is not a PMID")
    if not _PMCID.fullmatch(item["pmcid"]):
        raise EvaluationDataError(f"{where}: pmcid {item['pmcid']!r} is not PMC + digits")
    if item["where"] not in WHERE:
        raise EvaluationDataError(f"{where}: where {item['where']!r} is not one of {WHERE}")
    return FullTextQuestion(
        qid=item["id"].strip(),
        question=item["question"].strip(),
        pmid=item["pmid"],
        pmcid=item["pmcid"],
        answer_terms=_terms(item["answer_terms"], where),
        where=item["where"],
    )


def _terms(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not 1 <= len(value) <= 3:
        raise EvaluationDataError(f"{where}: answer_terms must be a list of 1 to 3 strings")
    terms = []
    for term in value:
        if not isinstance(term, str) or not normalize(term):
            raise EvaluationDataError(f"{where}: every answer term must be a non-empty string")
        if len(term) > MAX_TERM_CHARS:
            raise EvaluationDataError(
                f"{where}: answer term {term[:20]!r}... is over {MAX_TERM_CHARS} characters"
            )
        terms.append(term)
    return tuple(terms)
