"""What one fake server holds between requests: the corpus and its index, the link table, the
history server (WebEnv / query_key), the fault plan, the PMIDs EFetch withholds and the request
log."""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from os import PathLike
from pathlib import Path
from typing import Any

from biomcp.testing.eutils.corpus import FakeCorpus
from biomcp.testing.eutils.faults import FaultInjector
from biomcp.testing.eutils.index import SearchIndex

__all__ = ["History", "LinkTable", "ServerState", "load_relations", "normalize_relations"]

#: link name -> source PMID -> [(linked PMID, score or None)], best first.
LinkTable = dict[str, dict[str, list[tuple[str, int | None]]]]

_LOG_LIMIT = 100_000


def normalize_relations(data: Mapping[str, Any]) -> LinkTable:
    """Check and normalize a relation table: `{"pubmed_pubmed": {"123": [["456", 99], ...]},
    "pubmed_pubmed_citedin": {"123": ["789", ...]}, ...}`. Each linked id may be a PMID or a
    [PMID, score] pair.

    Raises:
        ValueError: when the table does not have that shape.
    """
    table: LinkTable = {}
    for linkname, sources in data.items():
        if not isinstance(sources, Mapping):
            raise ValueError(f"relations[{linkname!r}] must map source PMIDs to lists")
        by_source: dict[str, list[tuple[str, int | None]]] = {}
        for source, links in sources.items():
            if not isinstance(links, list):
                raise ValueError(f"relations[{linkname!r}][{source!r}] must be a list")
            entries: list[tuple[str, int | None]] = []
            for link in links:
                if isinstance(link, str | int):
                    entries.append((str(link), None))
                elif isinstance(link, list | tuple) and len(link) == 2:
                    entries.append((str(link[0]), None if link[1] is None else int(link[1])))
                else:
                    raise ValueError(
                        f"relations[{linkname!r}][{source!r}]: {link!r} is neither a PMID "
                        "nor a [PMID, score] pair"
                    )
            by_source[str(source)] = entries
        table[str(linkname)] = by_source
    return table


def load_relations(path: str | PathLike[str]) -> LinkTable:
    """Read a relation table from a JSON file (see `normalize_relations`).

    Raises:
        OSError: when the file cannot be read; ValueError: when it is not such a table.
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, Mapping):
        raise ValueError(f"{path}: a relation table must be a JSON object")
    return normalize_relations(data)


class History:
    """NCBI's history server: result sets by WebEnv and query_key (the oldest WebEnvs are
    forgotten past `limit`, as NCBI expires them)."""

    def __init__(self, limit: int = 500) -> None:
        self._limit = limit
        self._lock = threading.Lock()
        self._envs: OrderedDict[str, list[list[str]]] = OrderedDict()

    def store(self, webenv: str | None, pmids: list[str]) -> tuple[str, str]:
        """Keep `pmids` in `webenv` (a new WebEnv when None); returns (WebEnv, query_key)."""
        with self._lock:
            name = webenv or f"MCID_{secrets.token_hex(12)}"
            sets = self._envs.setdefault(name, [])
            self._envs.move_to_end(name)
            sets.append(list(pmids))
            while len(self._envs) > self._limit:
                self._envs.popitem(last=False)
            return name, str(len(sets))

    def get(self, webenv: str, query_key: str) -> list[str] | None:
        """The stored PMIDs, or None when the WebEnv or query_key is unknown."""
        with self._lock:
            sets = self._envs.get(webenv)
            if sets is None or not query_key.strip().isdigit():
                return None
            index = int(query_key) - 1
            return sets[index] if 0 <= index < len(sets) else None


class ServerState:
    """Everything the app needs, shared by the server thread and the test's thread."""

    def __init__(
        self,
        corpus: FakeCorpus,
        *,
        relations: Mapping[str, Any] | None = None,
        faults: FaultInjector | None = None,
        api_keys: Iterable[str] | None = None,
    ) -> None:
        self.corpus = corpus
        #: the API keys NCBI would accept (None: any); another key gets NCBI's HTTP 400
        self.api_keys = frozenset(api_keys) if api_keys is not None else None
        self.relations: LinkTable = normalize_relations(relations or {})
        self.faults = faults or FaultInjector()
        self.history = History()
        self.started = datetime.now(UTC)
        self.build = f"Build-fake-{self.started:%Y.%m.%d.%H.%M}"
        self._index: SearchIndex | None = None
        self._index_lock = threading.Lock()
        self._log: deque[dict[str, Any]] = deque(maxlen=_LOG_LIMIT)
        self._log_lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self._executor_lock = threading.Lock()
        self._withheld: frozenset[str] = frozenset()

    @property
    def executor(self) -> ThreadPoolExecutor:
        """The worker threads that search and render (created on first use, ended by
        `close`): the server's own, so stopping it leaves no thread behind."""
        with self._executor_lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(8, thread_name_prefix="fake-eutils-worker")
            return self._executor

    def close(self) -> None:
        """End the worker threads (waiting for the requests they are answering)."""
        with self._executor_lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)

    def index(self) -> SearchIndex:
        """The search index of the corpus as it is now (rebuilt after the corpus changed)."""
        with self._index_lock:
            version = self.corpus.version
            if self._index is None or self._index.version != version:
                self._index = SearchIndex(self.corpus.entries(), version)
            return self._index

    @property
    def withheld(self) -> frozenset[str]:
        """PMIDs EFetch leaves out of its answers while ESearch still finds them (as NCBI does
        now and then with a record in flux)."""
        return self._withheld

    def withhold(self, pmids: Iterable[str]) -> None:
        """EFetch leaves `pmids` out from now on (replacing any earlier set; empty: none)."""
        self._withheld = frozenset(str(p) for p in pmids)

    def record(self, entry: dict[str, Any]) -> None:
        with self._log_lock:
            self._log.append(entry)

    @property
    def log(self) -> list[dict[str, Any]]:
        """A copy of the request log, oldest first."""
        with self._log_lock:
            return [dict(e) for e in self._log]

    def clear_log(self) -> None:
        with self._log_lock:
            self._log.clear()

    @property
    def last_update(self) -> str:
        return f"{self.started:%Y/%m/%d %H:%M}"


def now() -> float:
    """Unix time, for the request log."""
    return time.time()
