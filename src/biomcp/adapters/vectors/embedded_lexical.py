"""The lexical (BM25) index of one embedded collection: tantivy, on disk, derived from the rows.

Text becomes terms as `lexical_analysis.py` says, the same at index and query time and in
every store. Every token counts towards the document length.

Stemming was chosen by measurement (`biomcp eval beir`, SciFact, all-MiniLM-L6-v2 int8;
chosen on the train split, test measured afterwards): it raised nDCG@10 of BM25 alone and of
hybrid search on both splits. A longer stopword list (NLTK's 179 words) or dropping the
stopwords from the index as well made no meaningful difference, so neither was adopted
(figures: benchmarks/README.md, "Decisions and their figures").

Scoring is tantivy's BM25 with k1 = 1.2, b = 0.75 and IDF = ln(1 + (N - n + 0.5) / (n + 0.5)),
which are Weaviate's defaults too (document lengths are quantized to one byte, as in Lucene).
A query is a disjunction of its terms (OR), conjoined with the filters as zero-score clauses,
so a hit's score is its raw BM25 score. A facet filter arrives as a set of row ids: a large
one is checked on the hits of a wider search instead, since a term set of many ids costs more.

The index records in `lexical.json` the row-store generation it reflects and the analyzer it
was built with (`ANALYZER`); it is written after each tantivy commit, so it never claims more
than the index holds. An index built by another analyzer (an older bio-mcp: no `analyzer`
entry) is dropped when opened and rebuilt from the rows, which hold every chunk's text: the
collection's first open after an upgrade re-tokenizes it, which is quick (figures:
benchmarks/README.md, "Decisions and their figures"), and nothing else changes. Bump
`ANALYZER` whenever the tokens change (a new filter, a tantivy upgrade that changes the stemmer).
"""

from __future__ import annotations

import atexit
import json
import math
import os
import shutil
import struct
import tempfile
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import tantivy

from biomcp.adapters.vectors.lexical_analysis import ANALYZER, analyzer
from biomcp.adapters.vectors.lexical_spelling import fold_spellings
from biomcp.ports.vectors import SearchFilters

__all__ = ["LexicalDoc", "LexicalIndex"]

_TOKENIZER = "biomcp_word_en_stem"
_GEN_FILE = "lexical.json"
_DELETE_BATCH = 1024
#: Rid sets up to this size go into the query; larger ones letting through at least
#: `_POST_FILTER_MIN_SHARE` of the rows are checked on the hits, asking for more until enough.
_TERM_SET_MAX = 4096
_POST_FILTER_MIN_SHARE = 0.2
_POST_FILTER_MAX = 50_000
#: Every segment file tantivy writes ends with a JSON footer holding the CRC32 of the bytes
#: before it, then the footer's length and this number (two little-endian u32).
_FOOTER_MAGIC = 1337
_CRC_BLOCK = 1 << 20


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_unsigned_field("rid", indexed=True, fast=True)
    builder.add_text_field("text", tokenizer_name=_TOKENIZER, index_option="freq")
    builder.add_integer_field("year", indexed=True, fast=True)
    builder.add_float_field("quality", indexed=True, fast=True)
    for name in ("evidence", "journal", "doc"):
        builder.add_text_field(name, tokenizer_name="raw", index_option="basic")
    return builder.build()


@dataclass(frozen=True, slots=True)
class LexicalDoc:
    rid: int
    text: str
    doc_id: str
    year: int | None
    evidence_type: str | None
    quality_total: float | None
    journal: str | None


def write_json_atomically(path: Path, value: object) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        json.dump(value, handle)
        handle.flush()
        os.fsync(handle.fileno())
    tmp.replace(path)


class _OtherAnalyzerError(ValueError):
    """The index was built by another analyzer (an earlier bio-mcp)."""


def _footer_damage(path: Path) -> str | None:
    """Why `path` fails its tantivy footer check, or None when its CRC32 matches."""
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            if size < 8:
                return "too short to hold its footer"
            handle.seek(size - 8)
            length, magic = struct.unpack("<II", handle.read(8))
            if magic != _FOOTER_MAGIC or length > size - 8:
                return "its footer is damaged"
            handle.seek(size - 8 - length)
            expected = json.loads(handle.read(length))["crc"]
            handle.seek(0)
            crc, left = 0, size - 8 - length
            while left > 0:
                block = handle.read(min(_CRC_BLOCK, left))
                if not block:
                    return "shorter than its footer says"
                crc, left = zlib.crc32(block, crc), left - len(block)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f"unreadable ({type(exc).__name__}: {exc})"
    return None if crc == expected else "does not match its checksum"


def _open_index(directory: Path) -> tantivy.Index:
    """The tantivy index in `directory`. tantivy opens a lock file there for writing even to
    read; where it cannot (a read-only folder), the index is read from a private copy in a
    temporary folder, removed when the process exits."""
    try:
        return tantivy.Index.open(str(directory))
    except ValueError as exc:
        if "Lockfile" not in str(exc):
            raise
    copy = Path(tempfile.mkdtemp(prefix="biomcp-lexical-"))
    atexit.register(shutil.rmtree, copy, ignore_errors=True)
    shutil.copytree(directory, copy, dirs_exist_ok=True)
    return tantivy.Index.open(str(copy))


class LexicalIndex:
    """A tantivy index under `root / "lexical"`. Not thread-safe: the collection serializes."""

    def __init__(self, root: Path, *, heap_bytes: int = 64_000_000, threads: int = 1) -> None:
        self._dir = root / "lexical"
        self._gen_path = root / _GEN_FILE
        self._heap = heap_bytes
        self._threads = threads
        self._schema = _schema()
        self.analyzer = analyzer()
        self._writer: tantivy.IndexWriter | None = None
        self._dirty = False
        self.generation = -1
        #: Why the index on disk could not be opened as it is (None: it was, or it is absent).
        self.unreadable: str | None = None
        self._index: tantivy.Index | None = self._open()

    @property
    def usable(self) -> bool:
        """False when the index on disk is missing, unreadable or of another analyzer: the
        collection rebuilds it (a writer's job) and searches skip the BM25 arm until then."""
        return self._index is not None

    def _recorded(self) -> int:
        """The generation `lexical.json` records for this analyzer.

        Raises:
            ValueError, OSError, KeyError, TypeError: missing, unreadable or another analyzer.
        """
        recorded = json.loads(self._gen_path.read_text())
        if recorded.get("analyzer") != ANALYZER:
            raise _OtherAnalyzerError(f"built by analyzer {recorded.get('analyzer')!r}")
        return int(recorded["generation"])

    def _open(self) -> tantivy.Index | None:
        """The index on disk, or None (generation -1) when it cannot be used as it is. Never
        changes the files: other processes may be reading them."""
        try:
            exists = self._dir.is_dir() and tantivy.Index.exists(str(self._dir))
        except ValueError:
            exists = False
        self.unreadable = None
        if not exists:
            self.generation = -1
            return None
        try:
            generation = self._recorded()
            index = _open_index(self._dir)
        except (ValueError, OSError, KeyError, TypeError, AttributeError) as exc:
            if not isinstance(exc, _OtherAnalyzerError):  # an upgrade, not damage
                self.unreadable = f"{type(exc).__name__}: {exc}"
            self.generation = -1
            return None
        index.register_tokenizer(_TOKENIZER, self.analyzer)
        self.generation = generation
        return index

    def open_as_built(self) -> str | None:
        """Open, as it is, an index that another analyzer built: for a folder no one can
        write, where a rebuild is impossible. Queries are then tokenized by today's analyzer,
        so only the tokens that changed between the two miss. Returns the other analyzer's
        name, or None when there is no such index (or one is already open)."""
        if self._index is not None:
            return None
        try:
            recorded = json.loads(self._gen_path.read_text())
            generation = int(recorded["generation"])
            index = _open_index(self._dir)
        except (ValueError, OSError, KeyError, TypeError, AttributeError):
            return None
        index.register_tokenizer(_TOKENIZER, self.analyzer)
        self._index, self.generation = index, generation
        return str(recorded.get("analyzer") or "an unnamed analyzer")

    def damaged_files(self) -> list[str]:
        """The files of the published segments whose bytes differ from the checksum in their
        footer, as "name: why"; empty when every one matches (or there is no index).
        Reads every segment file whole."""
        try:
            meta = json.loads((self._dir / "meta.json").read_text())
            segments = [
                (s["segment_id"].replace("-", ""), s.get("deletes")) for s in meta["segments"]
            ]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return []  # no index, or one that cannot be opened: `usable` says so
        found: list[str] = []
        for segment, deletes in segments:
            current = f"{segment}.{deletes['opstamp']}.del" if deletes else None
            for path in sorted(self._dir.glob(f"{segment}.*")):
                if path.suffix == ".del" and path.name != current:
                    continue  # left by an unpublished commit: tantivy never reads it
                why = _footer_damage(path)
                if why is not None:
                    found.append(f"{path.name}: {why}")
        return found

    def refresh(self) -> int:
        """Follow commits made by other processes: reload when `lexical.json` moved on.
        Returns the generation now searched."""
        try:
            recorded = self._recorded()
        except (ValueError, OSError, KeyError, TypeError):
            return self.generation
        if recorded == self.generation and self._index is not None:
            return self.generation
        try:
            if self._index is None:
                self._index = self._open()
            else:
                self._index.reload()
                self.generation = recorded
        except (ValueError, OSError):  # a writer is replacing files: try again next time
            pass
        return self.generation

    def create_if_missing(self) -> None:
        """Under the writer's turn: an empty index where none can be used (wiping any
        remains), to be filled from the rows."""
        if self._index is not None:
            return
        self._gen_path.unlink(missing_ok=True)
        shutil.rmtree(self._dir, ignore_errors=True)
        self._dir.mkdir(parents=True, exist_ok=True)
        index = tantivy.Index(self._schema, path=str(self._dir))
        index.register_tokenizer(_TOKENIZER, self.analyzer)
        self._index = index
        self.generation = -1

    def wipe(self) -> None:
        """Under the writer's turn: drop the index entirely (it is rebuilt from the rows)."""
        self.release_writer()
        self._index = None
        self.create_if_missing()

    def release_writer(self) -> None:
        """Under the writer's turn, at its end: let go of tantivy's writer (and its lock), so
        the next writer, maybe in another process, can take it."""
        writer, self._writer = self._writer, None
        if writer is not None:
            if self._dirty:
                writer.rollback()
                self._dirty = False
            writer.wait_merging_threads()

    def close(self) -> None:
        self.release_writer()

    # --- writes --------------------------------------------------------------------------

    def _writer_(self) -> tantivy.IndexWriter:
        if self._writer is None:
            writer = self._live().writer(self._heap, self._threads)
            # A writer killed inside tantivy's commit leaves the files it wrote before
            # publishing them (a segment's deletes, new segments); replaying the same
            # operations needs the same names, which tantivy refuses to overwrite
            # (FileAlreadyExists). Its garbage collection removes the files no published
            # commit uses (a reader in another process keeps its open files).
            writer.garbage_collect_files()
            self._writer = writer
        return self._writer

    def _live(self) -> tantivy.Index:
        if self._index is None:
            raise OSError("the lexical index is missing (it is being rebuilt)")
        return self._index

    def add(self, docs: Iterable[LexicalDoc]) -> None:
        writer = self._writer_()
        for d in docs:
            doc = tantivy.Document()
            doc.add_unsigned("rid", d.rid)
            doc.add_text("text", fold_spellings(d.text))
            doc.add_text("doc", d.doc_id)
            if d.year is not None:
                doc.add_integer("year", d.year)
            if d.quality_total is not None:
                doc.add_float("quality", float(d.quality_total))
            if d.evidence_type is not None:
                doc.add_text("evidence", d.evidence_type)
            if d.journal is not None:
                doc.add_text("journal", d.journal.casefold())
            writer.add_document(doc)
            self._dirty = True

    def delete(self, rids: Sequence[int]) -> None:
        if not rids:
            return
        writer = self._writer_()
        for start in range(0, len(rids), _DELETE_BATCH):
            part = list(rids[start : start + _DELETE_BATCH])
            writer.delete_documents_by_query(
                tantivy.Query.term_set_query(self._schema, "rid", part)
            )
        self._dirty = True

    def commit(self, generation: int) -> None:
        """Publish the pending changes, then record that they reflect `generation`."""
        if self._dirty:
            self._writer_().commit()
            self._live().reload()
            self._dirty = False
        write_json_atomically(self._gen_path, {"generation": generation, "analyzer": ANALYZER})
        self.generation = generation

    # --- reads ---------------------------------------------------------------------------

    def num_docs(self) -> int:
        return int(self._index.searcher().num_docs) if self._index is not None else 0

    def search(
        self,
        terms: Counter[str],
        k: int,
        filters: SearchFilters | None,
        *,
        rids: frozenset[int] | None = None,
        skip: frozenset[int] | None = None,
    ) -> list[tuple[int, float]]:
        """(rid, raw BM25 score) of the best `k` matches (among `rids` when given, none of
        `skip`), best first."""
        if not terms or k <= 0 or self._index is None:
            return []
        schema = self._schema
        should = [
            (
                tantivy.Occur.Should,
                tantivy.Query.term_query(schema, "text", term)
                if n == 1
                else tantivy.Query.boost_query(tantivy.Query.term_query(schema, "text", term), n),
            )
            for term, n in sorted(terms.items())
        ]
        filter_queries = self._filter_queries(filters)
        searcher = self._index.searcher()
        share = _checked_after(rids, skip, int(searcher.num_docs))
        if share is None:
            return self._top(searcher, self._query(should, filter_queries, rids, skip), k)
        query = self._query(should, filter_queries, None, None)
        dropped = skip or frozenset()
        ask = math.ceil(k / share * 1.25)
        while True:
            found = self._top(searcher, query, ask)
            kept = [(r, s) for r, s in found if (rids is None or r in rids) and r not in dropped]
            if len(kept) >= k or len(found) < ask:
                return kept[:k]
            if ask >= _POST_FILTER_MAX:  # other filters make the set sparse here: ask tantivy
                full = self._query(should, filter_queries, rids, skip)
                return self._top(searcher, full, k)
            ask *= 4

    def _query(
        self,
        should: list[tuple[tantivy.Occur, tantivy.Query]],
        filter_queries: list[tantivy.Query],
        rids: frozenset[int] | None,
        skip: frozenset[int] | None,
    ) -> tantivy.Query:
        schema = self._schema
        if rids is not None:
            allowed = tantivy.Query.term_set_query(schema, "rid", sorted(rids))
            filter_queries = [*filter_queries, tantivy.Query.const_score_query(allowed, 0.0)]
        # Wrap only when filtering: a bare disjunction is faster (block-max WAND; figures:
        # benchmarks/README.md, "Decisions and their figures").
        if not filter_queries and not skip:
            return tantivy.Query.boolean_query(should)
        clauses = [(tantivy.Occur.Must, tantivy.Query.boolean_query(should))]
        clauses += [(tantivy.Occur.Must, q) for q in filter_queries]
        if skip:
            dropped = tantivy.Query.term_set_query(schema, "rid", sorted(skip))
            clauses.append((tantivy.Occur.MustNot, dropped))
        return tantivy.Query.boolean_query(clauses)

    @staticmethod
    def _top(searcher: tantivy.Searcher, query: tantivy.Query, k: int) -> list[tuple[int, float]]:
        hits = searcher.search(query, k, count=False).hits
        if not hits:
            return []
        found = searcher.fast_field_values("rid", [address for _, address in hits])
        return [
            (int(rid), float(score))
            for (score, _), rid in zip(hits, found, strict=True)
            if isinstance(rid, int)
        ]

    def _filter_queries(self, filters: SearchFilters | None) -> list[tantivy.Query]:
        if filters is None:
            return []
        schema = self._schema
        queries: list[tantivy.Query] = []
        if filters.evidence_types is not None:
            values = sorted(filters.evidence_types)
            queries.append(tantivy.Query.term_set_query(schema, "evidence", values))
        if filters.journals is not None:
            values = sorted({j.casefold() for j in filters.journals})
            queries.append(tantivy.Query.term_set_query(schema, "journal", values))
        if filters.doc_ids is not None:
            queries.append(tantivy.Query.term_set_query(schema, "doc", sorted(filters.doc_ids)))
        if filters.year_min is not None or filters.year_max is not None:
            queries.append(
                tantivy.Query.range_query(
                    schema, "year", tantivy.FieldType.Integer, filters.year_min, filters.year_max
                )
            )
        if filters.min_quality is not None:
            queries.append(
                tantivy.Query.range_query(
                    schema, "quality", tantivy.FieldType.Float, float(filters.min_quality), None
                )
            )
        return [tantivy.Query.const_score_query(q, 0.0) for q in queries]


def _checked_after(
    rids: frozenset[int] | None, skip: frozenset[int] | None, size: int
) -> float | None:
    """The share of the rows `rids` and `skip` let through, when they are better checked on
    the hits than sent to tantivy (a term set of many rids costs more than the search), else
    None."""
    allowed, dropped = size if rids is None else len(rids), len(skip or ())
    if size <= 0 or dropped + (0 if rids is None else allowed) <= _TERM_SET_MAX:
        return None
    share = min(1.0, (allowed - dropped) / size)
    return share if share >= _POST_FILTER_MIN_SHARE else None
