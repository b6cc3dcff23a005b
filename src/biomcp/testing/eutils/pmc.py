"""PubMed Central in the fake E-utilities: EFetch `db=pmc` (JATS) and ELink `pubmed_pmc`.

The fake's PMC holds two kinds of articles (`PmcStore`, one per server state, `pmc_store`):

* JATS files given to it, each `<article>` served exactly as written (e.g. NCBI's own answer
  `biopython/efetch_pmc.xml`): `add_jats` / `add_file`; at start, the files named in
  `BIOMCP_FAKE_PMC_JATS` (separated by the path separator); and every `*.nxml` / `*.xml` file
  of the folder named in `BIOMCP_FAKE_PMC_DIR` (`load_pmc_directory`). A folder's articles
  also get a PubMed record in the corpus when it has none for their PMID (`pmc_twins`), so a
  saved-query sync finds them: ESearch `"fake pmc twin"[kw]` or their PMIDs;
* SYNTHETIC articles it builds (`add_synthetic`, or on demand for every corpus record that
  names a PMCID and has no JATS file; see `pmc_synthetic`). Their text says they are
  synthetic. Kinds: `open_access` (the `open_access` property), `restricted` (front matter
  only, no body, as PMC answers for publishers who do not allow downloads), `manuscript` (an
  author manuscript) and `withdrawn` (the `withdrawn` property). On-demand articles are
  `restricted` when the PMID's last digit is 1, `withdrawn` when it is 7, `open_access`
  otherwise. `revise` makes a synthetic article's next version (new `pmcid-ver`, Results
  text and one table value changed); `POST /_fake/pmc/revise {"pmcid": "PMC123"}` does it
  over HTTP (`pmc_routes`).

EFetch `db=pmc` answers a `<pmc-articleset>` of the articles it has among the ids asked for
(`123` or `PMC123`; unknown ids are left out). ELink `dbfrom=pubmed&db=pmc` answers each PMID's
PMC id under `pubmed_pmc`. Both go through the app's fault injection like every endpoint.
"""

from __future__ import annotations

import json
import os
import threading
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from xml.sax.saxutils import escape

from lxml import etree
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from biomcp.testing.eutils.pmc_synthetic import SyntheticKind, synthetic_jats
from biomcp.testing.eutils.pmc_twins import TWIN_TERM, pubmed_twin
from biomcp.testing.eutils.render import error_xml
from biomcp.testing.eutils.state import ServerState

__all__ = [
    "JATS_ENV",
    "PMC_DIR_ENV",
    "TWIN_TERM",
    "PmcArticle",
    "PmcStore",
    "SyntheticKind",
    "efetch_pmc",
    "elink_pmc",
    "load_pmc_directory",
    "pmc_reply",
    "pmc_routes",
    "pmc_store",
    "synthetic_jats",
]

JATS_ENV = "BIOMCP_FAKE_PMC_JATS"
PMC_DIR_ENV = "BIOMCP_FAKE_PMC_DIR"

_HEAD = (
    b'<?xml version="1.0" ?>\n<!DOCTYPE pmc-articleset PUBLIC "-//NLM//DTD ARTICLE SET 2.0//EN" '
    b'"https://dtd.nlm.nih.gov/ncbi/pmc/articleset/nlm-articleset-2.0.dtd">\n<pmc-articleset>'
)
_TAIL = b"</pmc-articleset>"
_JATS_SUFFIXES = (".nxml", ".xml")


@dataclass(frozen=True, slots=True)
class PmcArticle:
    """One article the fake's PMC serves: its numeric PMC id, PMID, JATS, origin and (for a
    synthetic article) version."""

    pmc: str
    pmid: str | None
    jats: bytes
    origin: Literal["file", "synthetic"]
    version: int = 1


@dataclass(frozen=True, slots=True)
class _Recipe:
    """What a synthetic article was built from, so `revise` can build its next version."""

    pmid: str
    kind: SyntheticKind
    title: str | None
    abstract: str | None
    chars: int


class PmcStore:
    """The fake's PMC articles, by numeric PMC id (thread-safe)."""

    def __init__(self, state: ServerState | None = None) -> None:
        self._state = weakref.ref(state) if state is not None else None
        self._lock = threading.Lock()
        self._articles: dict[str, PmcArticle] = {}
        self._by_pmid: dict[str, str] = {}
        self._recipes: dict[str, _Recipe] = {}

    def add(self, article: PmcArticle) -> None:
        with self._lock:
            self._put(article)

    def _put(self, article: PmcArticle) -> None:
        self._articles[article.pmc] = article
        if article.pmid:
            self._by_pmid[article.pmid] = article.pmc
        if article.origin == "file":
            self._recipes.pop(article.pmc, None)

    def add_jats(self, xml: bytes) -> list[str]:
        """Serve every `<article>` of a JATS document (a `<pmc-articleset>` or one `<article>`)
        as written; returns their PMCIDs.

        Raises:
            ValueError: the document is not JATS the fake can serve.
        """
        return [self._add_node(node) for node in _jats_articles(xml)]

    def _add_node(self, node: etree._Element) -> str:
        ids = {i.get("pub-id-type"): (i.text or "").strip() for i in node.iter("article-id")}
        pmc = (ids.get("pmc") or ids.get("pmcid") or "").upper().removeprefix("PMC")
        if not pmc.isdigit():
            raise ValueError("a JATS article without a PMC id cannot be served")
        jats = etree.tostring(node, encoding="UTF-8", with_tail=False)
        self.add(PmcArticle(pmc, ids.get("pmid") or None, jats, "file"))
        return f"PMC{pmc}"

    def add_file(self, path: str | os.PathLike[str]) -> list[str]:
        return self.add_jats(Path(path).read_bytes())

    def add_synthetic(
        self,
        pmid: str,
        pmc: str,
        *,
        kind: SyntheticKind = "open_access",
        title: str | None = None,
        abstract: str | None = None,
        paragraph_chars: int = 400,
    ) -> str:
        """Build and serve a SYNTHETIC article (see the module docstring); returns its PMCID.
        `paragraph_chars` sets the size of each generated section's paragraph."""
        number = pmc.upper().removeprefix("PMC")
        recipe = _Recipe(pmid, kind, title, abstract, paragraph_chars)
        with self._lock:
            self._recipes[number] = recipe
            self._put(_build(number, recipe, 1))
        return f"PMC{number}"

    def revise(self, pmc: str) -> int:
        """Serve the next version of a synthetic article (see `pmc_synthetic`); returns the
        new version number.

        Raises:
            KeyError: the fake's PMC has no such article.
            ValueError: the article is a served file (only synthetic ones are revised).
        """
        number = pmc.strip().upper().removeprefix("PMC")
        if self.get(number) is None:
            raise KeyError(f"PMC{number} is not in the fake's PMC")
        with self._lock:
            recipe = self._recipes.get(number)
            if recipe is None:
                raise ValueError(f"PMC{number} is served from a file: it cannot be revised")
            version = self._articles[number].version + 1
            self._put(_build(number, recipe, version))
        return version

    def get(self, pmc: str) -> PmcArticle | None:
        number = pmc.strip().upper().removeprefix("PMC")
        with self._lock:
            found = self._articles.get(number)
        if found is not None:
            return found
        return self._on_demand(pmc_number=number)

    def pmc_for(self, pmid: str) -> str | None:
        """The numeric PMC id of a PMID's article, if the fake's PMC has one."""
        with self._lock:
            found = self._by_pmid.get(pmid)
        if found is not None:
            return found
        article = self._on_demand(pmid=pmid)
        return article.pmc if article is not None else None

    def _on_demand(
        self, *, pmid: str | None = None, pmc_number: str | None = None
    ) -> PmcArticle | None:
        """The synthetic article of a corpus record that names a PMCID (built once)."""
        state = self._state() if self._state is not None else None
        if state is None:
            return None
        if pmid is None:
            pmid = next(
                (
                    e.pmid
                    for e in state.corpus.entries()
                    if e.record is not None
                    and (e.record.pmcid or "").upper().removeprefix("PMC") == pmc_number
                ),
                None,
            )
        entry = state.corpus.get(pmid) if pmid else None
        record = entry.record if entry is not None else None
        if record is None or not record.pmcid:
            return None
        number = record.pmcid.upper().removeprefix("PMC")
        if pmc_number is not None and number != pmc_number:
            return None
        abstract = " ".join(s.text for s in record.abstract if getattr(s, "text", None))
        kind = on_demand_kind(record.pmid)
        with self._lock:
            if number not in self._articles:
                recipe = _Recipe(record.pmid, kind, record.title, abstract, 400)
                self._recipes[number] = recipe
                self._put(_build(number, recipe, 1))
            return self._articles.get(number)


_ON_DEMAND_KINDS: dict[str, SyntheticKind] = {"1": "restricted", "7": "withdrawn"}


def on_demand_kind(pmid: str) -> SyntheticKind:
    """The kind of a record's on-demand synthetic article, by the PMID's last digit."""
    return _ON_DEMAND_KINDS.get(pmid[-1:], "open_access")


def _build(number: str, recipe: _Recipe, version: int) -> PmcArticle:
    jats = synthetic_jats(
        recipe.pmid,
        number,
        kind=recipe.kind,
        title=recipe.title,
        abstract=recipe.abstract,
        chars=recipe.chars,
        version=version,
    )
    return PmcArticle(number, recipe.pmid, jats, "synthetic", version)


def _jats_articles(xml: bytes) -> list[etree._Element]:
    """The `<article>`s of a JATS document, read with entities, DTDs and network off.

    Raises:
        ValueError: the document is not well-formed XML.
    """
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    try:
        root = etree.fromstring(xml, parser)
    except etree.XMLSyntaxError as exc:
        raise ValueError(f"not well-formed JATS: {exc}") from None
    return [root] if root.tag == "article" else list(root.iterchildren("article"))


def load_pmc_directory(state: ServerState, folder: str | os.PathLike[str]) -> list[str]:
    """Serve every JATS file (`*.nxml`, `*.xml`) of `folder` under its PMC id, and add to the
    corpus a PubMed record for each article whose PMID it lacks (`pmc_twins`). Returns the
    PMCIDs served, in file order.

    Raises:
        FileNotFoundError, NotADirectoryError: `folder` is not a folder.
        ValueError: the folder has no JATS file, or a file is not JATS the fake can serve.
    """
    path = Path(folder)
    if not path.exists():
        raise FileNotFoundError(f"no such folder: {path.name or folder}")
    if not path.is_dir():
        raise NotADirectoryError(f"not a folder: {path.name}")
    files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in _JATS_SUFFIXES)
    if not files:
        raise ValueError(f"{path.name}: no JATS file (*.nxml, *.xml) in the folder")
    store = pmc_store(state, load_environment=False)
    served: list[str] = []
    twins: list[bytes] = []
    for file in files:
        try:
            nodes = _jats_articles(file.read_bytes())
            served += [store._add_node(node) for node in nodes]
        except ValueError as exc:
            raise ValueError(f"{file.name}: {exc}") from None
        for node in nodes:
            twin = pubmed_twin(node)
            if twin is not None and _twin_pmid(node) not in state.corpus:
                twins.append(twin)
    if twins:
        state.corpus.add(
            b"<PubmedArticleSet>" + b"".join(twins) + b"</PubmedArticleSet>",
            source="<pmc folder twins>",
        )
    return served


def _twin_pmid(node: etree._Element) -> str:
    return next(
        ((i.text or "").strip() for i in node.iter("article-id") if i.get("pub-id-type") == "pmid"),
        "",
    )


_STORES: weakref.WeakKeyDictionary[ServerState, PmcStore] = weakref.WeakKeyDictionary()
_STORES_LOCK = threading.RLock()


def pmc_store(state: ServerState, *, load_environment: bool = True) -> PmcStore:
    """The PMC articles of a fake server's state. Created on first use, loading the files
    named in `BIOMCP_FAKE_PMC_JATS` and the folder named in `BIOMCP_FAKE_PMC_DIR` (unless
    `load_environment` is false)."""
    with _STORES_LOCK:
        store = _STORES.get(state)
        if store is None:
            store = _STORES[state] = PmcStore(state)
            try:
                if load_environment:
                    _load_environment(state, store)
            except BaseException:
                del _STORES[state]  # the next call tries again, and fails the same way
                raise
        return store


def _load_environment(state: ServerState, store: PmcStore) -> None:
    for name in os.environ.get(JATS_ENV, "").split(os.pathsep):
        if name.strip():
            store.add_file(name.strip())
    if folder := os.environ.get(PMC_DIR_ENV, "").strip():
        load_pmc_directory(state, folder)


# --- the two endpoints ---------------------------------------------------------------------


def efetch_pmc(state: ServerState, ids: list[str]) -> bytes:
    """EFetch `db=pmc`: the articles among `ids` the fake's PMC has, in the order asked."""
    store = pmc_store(state)
    found = [a.jats for a in (store.get(i) for i in ids) if a is not None]
    return _HEAD + b"\n".join(found) + _TAIL


def elink_pmc(state: ServerState, groups: list[tuple[str, ...]]) -> bytes:
    """ELink `pubmed_pmc`: one LinkSet per id group, its PMIDs' PMC ids."""
    store = pmc_store(state)
    parts = ['<?xml version="1.0" encoding="UTF-8" ?>\n<eLinkResult>\n']
    for ids in groups:
        listed = "".join(f"<Id>{escape(i)}</Id>" for i in ids)
        parts.append(f"<LinkSet><DbFrom>pubmed</DbFrom><IdList>{listed}</IdList>")
        links = [pmc for i in ids if (pmc := store.pmc_for(i)) is not None]
        if links:
            linked = "".join(f"<Link><Id>{escape(p)}</Id></Link>" for p in links)
            parts.append(
                f"<LinkSetDb><DbTo>pmc</DbTo><LinkName>pubmed_pmc</LinkName>{linked}</LinkSetDb>"
            )
        parts.append("</LinkSet>\n")
    parts.append("</eLinkResult>\n")
    return "".join(parts).encode()


def pmc_reply(state: ServerState, endpoint: str, id_values: list[str]) -> bytes:
    """The answer of EFetch `db=pmc` or ELink `db=pmc` to the request's `id` values (an
    in-band error when there are none, as NCBI answers)."""
    groups = [
        ids
        for value in id_values
        if (ids := tuple(dict.fromkeys(i.strip() for i in value.split(",") if i.strip())))
    ]
    if not groups:
        root = "eFetchResult" if endpoint == "efetch" else "eLinkResult"
        return error_xml(root, "Empty id list - nothing todo")
    if endpoint == "efetch":
        return efetch_pmc(state, list(dict.fromkeys(i for ids in groups for i in ids)))
    return elink_pmc(state, groups)


# --- control --------------------------------------------------------------------------------


def pmc_routes(state: ServerState) -> list[Route]:
    """`POST /_fake/pmc/revise {"pmcid": "PMC123"}`: serve the synthetic article's next
    version; answers `{"pmcid", "version"}`, 404 for an unknown article, 400 for a file."""

    async def revise(request: Request) -> Response:
        try:
            body = json.loads(await request.body() or b"{}")
            if not isinstance(body, dict) or set(body) != {"pmcid"}:
                raise ValueError('the body must be {"pmcid": "PMC..."}')
            pmcid = str(body["pmcid"])
            version = pmc_store(state).revise(pmcid)
        except KeyError as exc:
            return JSONResponse({"error": str(exc.args[0])}, status_code=404)
        except ValueError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        number = pmcid.strip().upper().removeprefix("PMC")
        return JSONResponse({"pmcid": f"PMC{number}", "version": version})

    handler: Callable[[Request], Awaitable[Response]] = revise
    return [Route("/_fake/pmc/revise", handler, methods=["POST"])]
