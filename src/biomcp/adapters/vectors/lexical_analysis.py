"""How text becomes BM25 terms, the same for every vector store and at index and query time.

* Spelling variants are folded first (`lexical_spelling.py`): Greek letters are spelled out
  (`TNF-α` meets `TNF-alpha`, mu left alone) and British spellings made American (`tumour`
  meets `tumor`, `randomised` meets `randomized`).
* Text is split on every character that is not a Unicode letter or digit (so `IL-6` -> `il`,
  `6`; `p<0.05` -> `p`, `0`, `05`; `HbA1c` stays one token) and lower-cased: Weaviate's `word`
  tokenizer.
* Then English (Snowball / Porter2) stemming, as Lucene's and Elasticsearch's `english`
  analyzers do: `treated`, `treating` and `treats` are one term (`treat`), `studies` and
  `study` another (`studi`).
* Every token of a text is a term, numbers and tokens mixing letters and digits included
  (numbers matter in biomedicine; the stemmer leaves them alone).
* A query drops the English stopwords of `ENGLISH_STOPWORDS` (Weaviate's `en` preset) as words,
  before stemming: a content word is never dropped for stemming to a stopword. A term repeated
  in the query weighs as many times as it appears.

The embedded store gives `analyzer()` to tantivy. Weaviate has no stemmer, so its store keeps
the terms of `index_terms` as a second text property, split on whitespace, and searches the
terms of `query_terms`. A store records `ANALYZER` with what it indexed. Bump it whenever the
terms change (a new filter, a tantivy upgrade that changes the stemmer): an index built by
another analyzer is rebuilt (embedded) or searched by its words until rebuilt (Weaviate).
"""

from __future__ import annotations

import functools
from collections import Counter

import tantivy

from biomcp.adapters.vectors.lexical_spelling import fold_spellings

__all__ = [
    "ANALYZER",
    "ENGLISH_STOPWORDS",
    "analyzer",
    "index_terms",
    "query_terms",
]

ENGLISH_STOPWORDS = frozenset(
    {
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
        "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
        "these", "they", "this", "to", "was", "will", "with",
    }
)  # fmt: skip
#: The analyzer's name, recorded with each index (see the module docstring).
ANALYZER = "greek+british+word+en_stem.v3"


@functools.cache
def _words() -> tantivy.TextAnalyzer:
    """Weaviate's `word` tokenization: letter-and-digit runs, lower-cased."""
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.lowercase())
        .build()
    )


def analyzer() -> tantivy.TextAnalyzer:
    """A new index analyzer (`ANALYZER` without the spelling folds): words, then stemming.

    Its input is text that went through `fold_spellings` first."""
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


@functools.cache
def _shared() -> tantivy.TextAnalyzer:
    return analyzer()


def index_terms(text: str) -> list[str]:
    """The terms of a document's `text`, in order, repeats kept."""
    return list(_shared().analyze(fold_spellings(text)))


def query_terms(text: str, stopwords: frozenset[str] = ENGLISH_STOPWORDS) -> Counter[str]:
    """The terms of a query and how often each appears (`stopwords` dropped as words)."""
    stem = _shared()
    terms: Counter[str] = Counter()
    for word in _words().analyze(fold_spellings(text)):
        if word not in stopwords:
            terms.update(stem.analyze(word))
    return terms
