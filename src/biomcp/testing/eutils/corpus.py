"""The fake's corpus: PubMed articles loaded from PubmedArticleSet XML, kept verbatim.

Each article is kept as its raw XML (what EFetch serves back) and its searchable fields; the
full `PubMedRecord` is parsed on first use by the production parser (`parse_pubmed_articles`)
and cached. Files are parsed once, with entity resolution, DTD loading and network access off.
"""

from __future__ import annotations

import gc
import gzip
import io
import re
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import date
from os import PathLike
from pathlib import Path

from lxml import etree

from biomcp.adapters.entrez.pubmed_xml import parse_pubmed_articles
from biomcp.domain.records import PubMedRecord
from biomcp.testing.eutils.fields import ArticleFields, extract_fields
from biomcp.testing.eutils.retractions import retracted_article_xml

__all__ = ["CorpusEntry", "FakeCorpus"]

_ROOT_TAG = re.compile(rb"<([A-Za-z_][\w.:-]*)[\s/>]")
_PREFIXES = {
    "mml": b"http://www.w3.org/1998/Math/MathML",
    "xlink": b"http://www.w3.org/1999/xlink",
}
_ROOT_START = re.compile(rb"<PubmedArticleSet(?=[\s/>])")
_HEAD = 65536


class CorpusEntry:
    """One article: `raw` (the `PubmedArticle` element's XML), its searchable `fields`, and
    its `record`, parsed on first access (None if the production parser rejects it)."""

    __slots__ = ("_record", "_record_lock", "fields", "raw", "source")

    def __init__(self, raw: bytes, fields: ArticleFields, source: str) -> None:
        self.raw = raw
        self.fields = fields
        self.source = source
        self._record: PubMedRecord | bool | None = False  # False: not parsed yet
        self._record_lock = threading.Lock()

    @property
    def pmid(self) -> str:
        return self.fields.pmid

    @property
    def record(self) -> PubMedRecord | None:
        if self._record is False:
            with self._record_lock:
                if self._record is False:
                    parsed = parse_pubmed_articles(
                        b"<PubmedArticleSet>" + self.raw + b"</PubmedArticleSet>"
                    )
                    self._record = parsed.records[0] if parsed.records else None
        return self._record if isinstance(self._record, PubMedRecord) else None


class FakeCorpus:
    """PubMed articles by PMID, in load order. A later article with the same PMID replaces
    the earlier one. `problems` lists what was skipped while loading (files that are not a
    PubmedArticleSet or not well-formed, articles without a valid PMID, book articles).

    Safe to read from the server thread while the loading thread adds (readers see either the
    old or the new state); `version` changes on every change so indexes know to rebuild.
    """

    def __init__(self) -> None:
        self._entries: dict[str, CorpusEntry] = {}
        self._lock = threading.Lock()
        self.problems: list[str] = []
        self.documents_loaded = 0
        self.version = 0

    # -- construction ------------------------------------------------------------------------

    @classmethod
    def from_paths(cls, paths: Iterable[str | PathLike[str]]) -> FakeCorpus:
        """Load every PubmedArticleSet file given, or found (recursively, `*.xml` and
        `*.xml.gz`) under the folders given. Unreadable and foreign files are skipped and
        reported in `problems`; a path that does not exist raises FileNotFoundError."""
        corpus = cls()
        for path in paths:
            corpus.add(Path(path))
        return corpus

    @classmethod
    def from_xml_bytes(cls, *documents: bytes, source: str = "<bytes>") -> FakeCorpus:
        """A corpus from in-memory PubmedArticleSet documents (e.g. `generate_articles`)."""
        corpus = cls()
        for document in documents:
            corpus.add(document, source=source)
        return corpus

    def add(self, xml: bytes | str | PathLike[str], *, source: str | None = None) -> int:
        """Add a PubmedArticleSet document (bytes) or a file or folder (a path). Returns the
        number of articles added (replacements included)."""
        if isinstance(xml, bytes | bytearray | memoryview):
            return self._add_document(bytes(xml), source or "<bytes>") or 0
        path = Path(xml)
        if path.is_dir():
            files = sorted(
                p for p in path.rglob("*") if p.is_file() and p.name.endswith((".xml", ".xml.gz"))
            )
            return sum(self._add_file(p) for p in files)
        if not path.exists():
            raise FileNotFoundError(f"no such file or folder: {path}")
        return self._add_file(path)

    def retract(
        self,
        pmid: str,
        notice_pmid: str,
        *,
        source: str | None = None,
        revised: date | None = None,
    ) -> None:
        """Mark the article retracted after the fact, as PubMed does: publication type
        "Retracted Publication", a `RetractionIn` comment naming the notice `notice_pmid`
        (citation `source`), and DateRevised `revised` when given (see `retractions`).

        Raises:
            KeyError: `pmid` is not in the corpus.
        """
        raw = self.raw(pmid)
        if raw is None:
            raise KeyError(f"PMID {pmid} is not in the fake corpus")
        edited = retracted_article_xml(raw, notice_pmid, source=source, revised=revised)
        self.add(b"<PubmedArticleSet>" + edited + b"</PubmedArticleSet>", source="<retract>")

    def remove(self, pmid: str) -> None:
        """Take the article out, as PubMed does with a record it deletes: ESearch finds it no
        more and EFetch does not return it.

        Raises:
            KeyError: `pmid` is not in the corpus.
        """
        with self._lock:
            del self._entries[pmid]
            self.version += 1

    # -- reading -----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, pmid: object) -> bool:
        return pmid in self._entries

    def __iter__(self) -> Iterator[CorpusEntry]:
        return iter(self.entries())

    def entries(self) -> list[CorpusEntry]:
        """A snapshot of the entries in load order."""
        with self._lock:
            return list(self._entries.values())

    def pmids(self) -> list[str]:
        with self._lock:
            return list(self._entries)

    def get(self, pmid: str) -> CorpusEntry | None:
        return self._entries.get(pmid)

    def raw(self, pmid: str) -> bytes | None:
        """The article's `<PubmedArticle>` XML, or None when unknown."""
        entry = self._entries.get(pmid)
        return entry.raw if entry is not None else None

    def record(self, pmid: str) -> PubMedRecord | None:
        """The article parsed by the production parser, or None when unknown or unparsable."""
        entry = self._entries.get(pmid)
        return entry.record if entry is not None else None

    # -- loading -----------------------------------------------------------------------------

    def _add_file(self, path: Path) -> int:
        try:
            data = path.read_bytes()
            if path.name.endswith(".gz"):
                data = gzip.decompress(data)
        except OSError as exc:
            self.problems.append(f"{path}: skipped: cannot read: {exc}")
            return 0
        return self._add_document(data, str(path)) or 0

    def _add_document(self, data: bytes, source: str) -> int | None:
        """Load one document; None when it was skipped as a whole."""
        root_tag = _root_tag(data)
        if root_tag != b"PubmedArticleSet":
            shown = root_tag.decode("ascii", "replace") if root_tag else "no XML element"
            self.problems.append(f"{source}: skipped: root is <{shown}>, not PubmedArticleSet")
            return None
        try:
            loaded = _load_articles(data, source, self.problems)
        except Exception as exc:  # report any unreadable document and keep loading the others
            self.problems.append(f"{source}: skipped: {type(exc).__name__}: {exc}")
            return None
        with self._lock:
            for entry in loaded:
                self._entries.pop(entry.pmid, None)  # last one wins, and moves to the end
                self._entries[entry.pmid] = entry
            self.version += 1
            self.documents_loaded += 1
        return len(loaded)


def _root_tag(data: bytes) -> bytes | None:
    """The first element's name, skipping the XML declaration, DOCTYPE and comments."""
    head = re.sub(rb"<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>]*>", b"", data[:_HEAD], flags=re.S)
    match = _ROOT_TAG.search(head)
    return match.group(1) if match else None


def _load_articles(data: bytes, source: str, problems: list[str]) -> list[CorpusEntry]:
    """Every valid `PubmedArticle` of the document, streamed (a baseline file never sits
    whole in memory as a tree). Raises the parser's error when the document is not well-formed
    XML: a truncated file is rejected as a whole, like any other unreadable one."""
    try:
        return _stream(data, source, problems)
    except etree.XMLSyntaxError as exc:
        patched = _declare_prefixes(data, exc)
        if patched is None:
            raise
        return _stream(patched, source, problems)


def _stream(data: bytes, source: str, problems: list[str]) -> list[CorpusEntry]:
    loaded: list[CorpusEntry] = []
    notes: list[str] = []
    position = 0
    events = etree.iterparse(
        io.BytesIO(data),
        events=("end",),
        tag=("PubmedArticle", "PubmedBookArticle"),
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        remove_comments=True,
        remove_pis=True,
    )
    with _bulk():
        for _, element in events:
            parent = element.getparent()
            if parent is None or parent.getparent() is not None:
                continue  # only the article set's direct children are articles
            position += 1
            if element.tag == "PubmedArticle":
                try:
                    fields = extract_fields(element)
                except Exception as exc:  # one odd article must not lose the others
                    notes.append(f"{source}: PubmedArticle (article #{position}): skipped: {exc}")
                    fields = None
                else:
                    if fields is None:
                        notes.append(
                            f"{source}: PubmedArticle (article #{position}): no valid PMID"
                        )
                if fields is not None:
                    raw = etree.tostring(element, with_tail=False)
                    loaded.append(CorpusEntry(raw, fields, source))
            elif element.tag == "PubmedBookArticle":
                notes.append(f"{source}: article #{position}: book article not served")
            element.clear(keep_tail=False)
            while element.getprevious() is not None:
                del parent[0]  # drop what was already read: memory stays flat
    problems.extend(notes)
    return loaded


def _declare_prefixes(data: bytes, exc: etree.XMLSyntaxError) -> bytes | None:
    """MathML / XLink prefixes are sometimes used undeclared (NCBI's DTD binds them): declare
    them on the root as the DTD would. None when that cannot be the problem."""
    match = _ROOT_START.search(data)
    if match is None or "Namespace prefix" not in str(exc):
        return None
    start_tag = data[match.start() : data.find(b">", match.end()) + 1]
    missing = [p for p in _PREFIXES if b"xmlns:" + p.encode() not in start_tag]
    if not missing:
        return None
    declarations = b"".join(b' xmlns:%s="%s"' % (p.encode(), _PREFIXES[p]) for p in missing)
    return data[: match.end()] + declarations + data[match.end() :]


@contextmanager
def _bulk() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many small objects: they form no
    cycles, and the collector's repeated passes over them cost a third of the load time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
