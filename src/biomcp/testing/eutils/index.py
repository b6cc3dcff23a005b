"""Search, sort and similarity over a snapshot of the corpus.

The index is built once per corpus version (lazily, on the first request that needs it):
token postings per indexed part, whole values (MeSH descriptors, publication types, journals,
authors, languages), date columns and sort ranks. Matching is case- and accent-insensitive on
alphanumeric tokens; a phrase matches consecutive tokens inside one title, abstract section,
keyword, descriptor, journal name or author name.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date

from biomcp.testing.eutils.corpus import CorpusEntry
from biomcp.testing.eutils.fields import ArticleFields, fold, tokenize
from biomcp.testing.eutils.query import BinOp, DateRange, Node, Term, UidRange

__all__ = ["EvalResult", "SearchIndex"]

Seq = tuple[str, ...]
_TEXT_PARTS = ("ti", "ab", "ot", "mh", "ta", "au")
_VALUE_PARTS = ("mh", "majr", "pt", "ta", "la", "au")
_SIMILARITY_PARTS = ("ti", "ab", "mh")
_STOPWORDS = frozenset(
    {
        "the", "of", "and", "in", "to", "for", "with", "on", "by", "from", "at", "as", "an",
        "is", "was", "were", "are", "be", "or", "that", "this", "these", "than", "we", "our",
        "its", "their", "which", "between", "after", "during", "into", "among", "versus",
    }
)  # fmt: skip


@dataclass(slots=True)
class EvalResult:
    """Matching documents (index positions) and what NCBI would warn about."""

    docs: set[int]
    not_found: list[Term] = field(default_factory=list)
    unknown_fields: list[str] = field(default_factory=list)
    node: Node | None = None  # the query with not-found terms removed


class SearchIndex:
    """An immutable index of one corpus snapshot."""

    def __init__(self, entries: Sequence[CorpusEntry], version: int = 0) -> None:
        self.version = version
        self.entries = list(entries)
        self.position = {e.pmid: i for i, e in enumerate(self.entries)}
        self._seqs: list[dict[str, tuple[Seq, ...]]] = []
        self._postings: dict[str, dict[str, set[int]]] = {p: {} for p in _TEXT_PARTS}
        self._values: dict[str, dict[Seq, set[int]]] = {p: {} for p in _VALUE_PARTS}
        self._dates: dict[str, tuple[list[date], list[int]]] = {}
        self._uids: tuple[list[int], list[int]] | None = None
        self._ranks: dict[str, list[int]] = {}
        self._similarity_sets: dict[int, frozenset[str]] = {}
        for doc, entry in enumerate(self.entries):
            self._add(doc, entry.fields)

    def __len__(self) -> int:
        return len(self.entries)

    # -- building ----------------------------------------------------------------------------

    def _add(self, doc: int, f: ArticleFields) -> None:
        seqs: dict[str, tuple[Seq, ...]] = {
            "ti": (tokenize(f.title),),
            "ab": tuple(tokenize(s) for s in f.abstract),
            "ot": tuple(tokenize(k) for k in f.keywords),
            "mh": tuple(tokenize(name) for name, _ in f.mesh),
            "ta": tuple(tokenize(j) for j in f.journals),
            "au": tuple((*tokenize(last), fold(initials)) if initials else tokenize(last)
                        for last, initials in f.authors),
        }  # fmt: skip
        self._seqs.append(seqs)
        for part, sequences in seqs.items():
            postings = self._postings[part]
            for token in {t for s in sequences for t in s}:
                postings.setdefault(token, set()).add(doc)
        values = self._values
        for seq in seqs["mh"]:
            values["mh"].setdefault(seq, set()).add(doc)
        for seq, (_, major) in zip(seqs["mh"], f.mesh, strict=True):
            if major:
                values["majr"].setdefault(seq, set()).add(doc)
        for part, texts in (("pt", f.pub_types), ("la", f.languages)):
            for text in texts:
                values[part].setdefault(tokenize(text), set()).add(doc)
        for part in ("ta", "au"):
            for seq in seqs[part]:
                values[part].setdefault(seq, set()).add(doc)

    # -- evaluation --------------------------------------------------------------------------

    def evaluate(self, node: Node) -> EvalResult:
        """Match `node` against the whole corpus. Terms that match nothing are reported in
        `not_found` and removed from the query, as NCBI does (date and PMID ranges are never
        removed); `docs` is empty when nothing is left."""
        matches: dict[Term, set[int]] = {}
        result = EvalResult(docs=set())
        for term in _terms(node):
            if term not in matches:
                matches[term] = self.match_term(term)
                if term.unknown_tag is not None and term.unknown_tag not in result.unknown_fields:
                    result.unknown_fields.append(term.unknown_tag)
                if not matches[term]:
                    result.not_found.append(term)
        pruned = _prune(node, lambda t: bool(matches[t]))
        result.node = pruned
        if pruned is not None:
            result.docs = self._eval(pruned, matches)
        return result

    def _eval(self, node: Node, matches: dict[Term, set[int]]) -> set[int]:
        if isinstance(node, Term):
            return matches[node]
        if isinstance(node, DateRange):
            return self.date_range(node.field, node.start, node.end)
        if isinstance(node, UidRange):
            return self.uid_range(node.start, node.end)
        left = self._eval(node.left, matches)
        right = self._eval(node.right, matches)
        if node.op == "AND":
            return left & right
        if node.op == "OR":
            return left | right
        return left - right

    def match_term(self, term: Term) -> set[int]:
        """Documents matching one term, whatever the rest of the query."""
        if not term.tokens:
            return set()
        spec = term.search_field
        if spec.kind == "uid":
            return {self.position[t] for t in term.tokens if t in self.position}
        if spec.kind == "text":
            return self._match_text(spec.parts, term.tokens, term.wildcard)
        if spec.kind == "author":
            return self._match_values("au", lambda key: _author_matches(key, term.tokens))
        wanted = " ".join(term.tokens)
        if term.wildcard:
            return self._match_values(spec.parts[0], lambda key: " ".join(key).startswith(wanted))
        return set(self._values[spec.parts[0]].get(term.tokens, ()))

    def _match_values(self, part: str, accept: Callable[[Seq], bool]) -> set[int]:
        found: set[int] = set()
        for key, docs in self._values[part].items():
            if accept(key):
                found |= docs
        return found

    def _match_text(self, parts: tuple[str, ...], tokens: Seq, wildcard: bool) -> set[int]:
        candidates: set[int] | None = None
        for i, token in enumerate(tokens):
            prefix = wildcard and i == len(tokens) - 1
            docs: set[int] = set()
            for part in parts:
                postings = self._postings[part]
                if prefix:
                    for word, found in postings.items():
                        if word.startswith(token):
                            docs |= found
                else:
                    docs |= postings.get(token, set())
            candidates = docs if candidates is None else candidates & docs
            if not candidates:
                return set()
        if candidates is None or len(tokens) == 1:
            return candidates or set()
        return {
            doc
            for doc in candidates
            if any(
                _contains(seq, tokens, wildcard) for part in parts for seq in self._seqs[doc][part]
            )
        }

    def date_range(self, column: str, start: date, end: date) -> set[int]:
        """Documents whose `column` ("pdat", "edat", "mdat") falls in [start, end], whole days."""
        days, docs = self._date_column(column)
        low = bisect.bisect_left(days, start)
        high = bisect.bisect_right(days, end)
        return set(docs[low:high])

    def uid_range(self, start: int, end: int) -> set[int]:
        """Documents whose PMID is within [start, end]."""
        if self._uids is None:
            pairs = sorted((int(e.pmid), doc) for doc, e in enumerate(self.entries))
            self._uids = ([p[0] for p in pairs], [p[1] for p in pairs])
        pmids, docs = self._uids
        return set(docs[bisect.bisect_left(pmids, start) : bisect.bisect_right(pmids, end)])

    def _date_column(self, column: str) -> tuple[list[date], list[int]]:
        if column not in self._dates:
            pairs = sorted(
                (day, doc)
                for doc, entry in enumerate(self.entries)
                if (day := _day(entry.fields, column)) is not None
            )
            self._dates[column] = ([p[0] for p in pairs], [p[1] for p in pairs])
        return self._dates[column]

    # -- sorting -----------------------------------------------------------------------------

    def sort(self, docs: Iterable[int], order: str | None) -> list[int]:
        """`docs` in NCBI's order for `sort`: by default (also "relevance", "most recent")
        Entrez date newest first, then PMID descending; "pub_date" publication date newest
        first; "first_author", "journal", "title" alphabetical. Unknown orders: the default."""
        rank = self._rank(_sort_key(order))
        return sorted(docs, key=rank.__getitem__)

    def _rank(self, key: str) -> list[int]:
        if key not in self._ranks:
            fields = [e.fields for e in self.entries]
            pmid_desc = sorted(range(len(fields)), key=lambda d: -int(fields[d].pmid))
            if key == "edat":
                order = sorted(pmid_desc, key=lambda d: _newest_entry_first(fields[d]))
            elif key == "pdat":
                order = sorted(pmid_desc, key=lambda d: _newest_day_first(_day(fields[d], "pdat")))
            else:
                order = sorted(pmid_desc, key=lambda d: _alphabetical(fields[d], key))
            rank = [0] * len(fields)
            for position, doc in enumerate(order):
                rank[doc] = position
            self._ranks[key] = rank
        return self._ranks[key]

    # -- similarity --------------------------------------------------------------------------

    def similar(self, pmid: str, limit: int = 20) -> list[tuple[str, int]]:
        """Up to `limit` (PMID, score) pairs most similar to `pmid` by the overlap of title,
        abstract and MeSH tokens (Jaccard, scaled to an integer like NCBI's scores), best
        first, the source itself excluded. Empty for an unknown PMID."""
        source = self.position.get(pmid)
        if source is None:
            return []
        mine = self._similarity_set(source)
        common = max(20, len(self.entries) // 2)
        overlap: Counter[int] = Counter()
        for token in mine:
            docs: set[int] = set()
            for part in _SIMILARITY_PARTS:
                docs |= self._postings[part].get(token, set())
            if len(docs) <= common:  # a word in most documents says nothing about similarity
                overlap.update(docs)
        overlap.pop(source, None)
        scored = []
        for doc, shared in overlap.items():
            union = len(mine) + len(self._similarity_set(doc)) - shared
            scored.append((int(100_000_000 * shared / union), int(self.entries[doc].pmid), doc))
        scored.sort(reverse=True)
        return [(self.entries[doc].pmid, score) for score, _, doc in scored[:limit]]

    def _similarity_set(self, doc: int) -> frozenset[str]:
        found = self._similarity_sets.get(doc)
        if found is None:
            seqs = self._seqs[doc]
            found = frozenset(
                t
                for part in _SIMILARITY_PARTS
                for seq in seqs[part]
                for t in seq
                if len(t) > 2 and not t.isdigit() and t not in _STOPWORDS
            )
            self._similarity_sets[doc] = found
        return found


def _terms(node: Node) -> list[Term]:
    if isinstance(node, Term):
        return [node]
    if isinstance(node, DateRange | UidRange):
        return []
    return _terms(node.left) + _terms(node.right)


def _prune(node: Node, keep: Callable[[Term], bool]) -> Node | None:
    """The query without the terms `keep` rejects; an operator losing one side becomes the
    other side (a NOT losing its left side is dropped whole)."""
    if isinstance(node, Term):
        return node if keep(node) else None
    if isinstance(node, DateRange | UidRange):
        return node
    left = _prune(node.left, keep)
    right = _prune(node.right, keep)
    if left is None:
        return None if node.op == "NOT" else right
    if right is None:
        return left
    return BinOp(node.op, left, right)


def _contains(seq: Seq, tokens: Seq, wildcard: bool) -> bool:
    n = len(tokens)
    last = n - 1
    for start in range(len(seq) - n + 1):
        candidate = seq[start + last]
        if seq[start : start + last] == tokens[:last] and (
            candidate.startswith(tokens[last]) if wildcard else candidate == tokens[last]
        ):
            return True
    return False


def _author_matches(author: Seq, query: Seq) -> bool:
    """PubMed's [au] rule: `smith` matches every Smith, `smith j` matches Smith J and Smith JA
    (initials are truncated automatically), `smith ja` only Smith JA."""
    if len(query) == len(author) - 1 or len(query) == len(author):
        head, last = author[: len(query) - 1], author[len(query) - 1]
        if head != query[:-1]:
            return False
        if len(query) == len(author) - 1:  # the query is the whole last name
            return last == query[-1]
        return last == query[-1] or (len(query) > 1 and last.startswith(query[-1]))
    return False


def _day(fields: ArticleFields, column: str) -> date | None:
    if column == "edat":
        return fields.edat.date() if fields.edat is not None else None
    if column == "mdat":
        return fields.lr
    return fields.pdat.earliest() if fields.pdat is not None else None


def _newest_entry_first(fields: ArticleFields) -> tuple[bool, float]:
    edat = fields.edat
    return (edat is None, -edat.timestamp() if edat is not None else 0.0)  # undated last


def _newest_day_first(day: date | None) -> tuple[bool, int]:
    return (day is None, -day.toordinal() if day is not None else 0)


def _alphabetical(fields: ArticleFields, key: str) -> str:
    if key == "first_author":
        return fold(fields.authors[0][0]) if fields.authors else "\uffff"
    if key == "journal":
        return fold(fields.journals[0]) if fields.journals else "\uffff"
    return fold(fields.title) or "\uffff"


def _sort_key(order: str | None) -> str:
    normalized = (order or "").strip().lower().replace("+", "_").replace(" ", "_")
    return {
        "pub_date": "pdat",
        "pubdate": "pdat",
        "first_author": "first_author",
        "author": "first_author",
        "journal": "journal",
        "title": "title",
    }.get(normalized, "edat")
