"""PubMed Central in the fake E-utilities: EFetch `db=pmc` (JATS) and ELink `pubmed_pmc`.

The fake's PMC holds two kinds of articles (`PmcStore`, one per server state, `pmc_store`):

* JATS files given to it (`add_jats`; at start, the files named in `BIOMCP_FAKE_PMC_JATS`,
  separated by the path separator): each `<article>` served exactly as written, e.g. NCBI's
  own answer `biopython/efetch_pmc.xml`;
* SYNTHETIC articles it builds (`add_synthetic`, or on demand for every corpus record that
  names a PMCID and has no JATS file): the record's title and abstract, then generated
  sections (Introduction; Methods with two subsections; Results; Discussion), one figure, one
  table, three references and a CC BY 4.0 licence. Their text says they are synthetic. Kinds:
  `open_access` (the `open_access` property), `restricted` (front matter only, no body, as PMC
  answers for publishers who do not allow downloads), `manuscript` (an author manuscript) and
  `withdrawn` (the `withdrawn` property). On-demand articles are `restricted` when the PMID's
  last digit is 1, `open_access` otherwise.

EFetch `db=pmc` answers a `<pmc-articleset>` of the articles it has among the ids asked for
(`123` or `PMC123`; unknown ids are left out). ELink `dbfrom=pubmed&db=pmc` answers each PMID's
PMC id under `pubmed_pmc`. Both go through the app's fault injection like every endpoint.
"""

from __future__ import annotations

import os
import threading
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from xml.sax.saxutils import escape

from lxml import etree

from biomcp.testing.eutils.render import error_xml
from biomcp.testing.eutils.state import ServerState

__all__ = [
    "JATS_ENV",
    "PmcArticle",
    "PmcStore",
    "SyntheticKind",
    "efetch_pmc",
    "elink_pmc",
    "pmc_reply",
    "pmc_store",
    "synthetic_jats",
]

JATS_ENV = "BIOMCP_FAKE_PMC_JATS"
SyntheticKind = Literal["open_access", "restricted", "manuscript", "withdrawn"]

_HEAD = (
    b'<?xml version="1.0" ?>\n<!DOCTYPE pmc-articleset PUBLIC "-//NLM//DTD ARTICLE SET 2.0//EN" '
    b'"https://dtd.nlm.nih.gov/ncbi/pmc/articleset/nlm-articleset-2.0.dtd">\n<pmc-articleset>'
)
_TAIL = b"</pmc-articleset>"
_NAMESPACES = (
    'xmlns:mml="http://www.w3.org/1998/Math/MathML" xmlns:xlink="http://www.w3.org/1999/xlink"'
)


@dataclass(frozen=True, slots=True)
class PmcArticle:
    """One article the fake's PMC serves: its numeric PMC id, PMID, JATS and origin."""

    pmc: str
    pmid: str | None
    jats: bytes
    origin: Literal["file", "synthetic"]


class PmcStore:
    """The fake's PMC articles, by numeric PMC id (thread-safe)."""

    def __init__(self, state: ServerState | None = None) -> None:
        self._state = weakref.ref(state) if state is not None else None
        self._lock = threading.Lock()
        self._articles: dict[str, PmcArticle] = {}
        self._by_pmid: dict[str, str] = {}

    def add(self, article: PmcArticle) -> None:
        with self._lock:
            self._articles[article.pmc] = article
            if article.pmid:
                self._by_pmid[article.pmid] = article.pmc

    def add_jats(self, xml: bytes) -> list[str]:
        """Serve every `<article>` of a JATS document (a `<pmc-articleset>` or one `<article>`)
        as written; returns their PMCIDs.

        Raises:
            ValueError: the document is not JATS the fake can serve.
        """
        parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
        try:
            root = etree.fromstring(xml, parser)
        except etree.XMLSyntaxError as exc:
            raise ValueError(f"not well-formed JATS: {exc}") from None
        articles = [root] if root.tag == "article" else list(root.iterchildren("article"))
        added: list[str] = []
        for node in articles:
            ids = {i.get("pub-id-type"): (i.text or "").strip() for i in node.iter("article-id")}
            pmc = (ids.get("pmc") or ids.get("pmcid") or "").upper().removeprefix("PMC")
            if not pmc.isdigit():
                raise ValueError("a JATS article without a PMC id cannot be served")
            jats = etree.tostring(node, encoding="UTF-8", with_tail=False)
            self.add(PmcArticle(pmc, ids.get("pmid") or None, jats, "file"))
            added.append(f"PMC{pmc}")
        return added

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
        jats = synthetic_jats(
            pmid, number, kind=kind, title=title, abstract=abstract, chars=paragraph_chars
        )
        self.add(PmcArticle(number, pmid, jats, "synthetic"))
        return f"PMC{number}"

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
        kind: SyntheticKind = "restricted" if record.pmid.endswith("1") else "open_access"
        self.add_synthetic(record.pmid, number, kind=kind, title=record.title, abstract=abstract)
        with self._lock:
            return self._articles.get(number)


_STORES: weakref.WeakKeyDictionary[ServerState, PmcStore] = weakref.WeakKeyDictionary()
_STORES_LOCK = threading.Lock()


def pmc_store(state: ServerState) -> PmcStore:
    """The PMC articles of a fake server's state (created on first use, loading the files
    named in `BIOMCP_FAKE_PMC_JATS`)."""
    with _STORES_LOCK:
        store = _STORES.get(state)
        if store is None:
            store = PmcStore(state)
            for name in os.environ.get(JATS_ENV, "").split(os.pathsep):
                if name.strip():
                    store.add_file(name.strip())
            _STORES[state] = store
        return store


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


# --- synthetic JATS ------------------------------------------------------------------------

_FILLER = (
    "This synthetic paragraph was generated by the fake E-utilities server to exercise "
    "full-text handling; it reports no real finding. "
)


def _paragraph(topic: str, chars: int) -> str:
    text = f"{topic}: " + _FILLER * (chars // len(_FILLER) + 1)
    return escape(text[:chars].rstrip())


def synthetic_jats(
    pmid: str,
    pmc: str,
    *,
    kind: SyntheticKind,
    title: str | None,
    abstract: str | None,
    chars: int,
) -> bytes:
    """A SYNTHETIC JATS `<article>` (see the module docstring)."""
    properties = {
        "open_access": "open_access",
        "restricted": "",
        "manuscript": "manuscript",
        "withdrawn": "withdrawn open_access",
    }[kind]
    title_text = escape(title or f"Synthetic PMC article {pmc}")
    abstract_text = escape(abstract or f"Synthetic abstract of PMC{pmc}.")
    front = (
        "<front><journal-meta><journal-title-group><journal-title>Journal of Synthetic Tests"
        "</journal-title></journal-title-group></journal-meta><article-meta>"
        f'<article-id pub-id-type="pmid">{escape(pmid)}</article-id>'
        f'<article-id pub-id-type="pmc">{escape(pmc)}</article-id>'
        f'<article-id pub-id-type="doi">10.5555/synthetic.{escape(pmc)}</article-id>'
        f"<title-group><article-title>{title_text}</article-title></title-group>"
        '<pub-date pub-type="epub"><day>1</day><month>3</month><year>2024</year></pub-date>'
        '<permissions><license license-type="open-access" '
        'xlink:href="https://creativecommons.org/licenses/by/4.0/"><license-p>Synthetic '
        "article under CC BY 4.0.</license-p></license></permissions>"
        f"<abstract><p>{abstract_text}</p></abstract></article-meta></front>"
    )
    body = "" if kind == "restricted" else _synthetic_body(chars)
    pi = f"<?properties {properties}?>" if properties else ""
    return (
        f'<article {_NAMESPACES} article-type="research-article">{pi}{front}{body}</article>'
    ).encode()


def _synthetic_body(chars: int) -> str:
    def sec(kind: str, name: str, inner: str = "") -> str:
        return (
            f'<sec sec-type="{kind}"><title>{name}</title>'
            f"<p>{_paragraph(name, chars)}</p>{inner}</sec>"
        )

    methods = sec("subjects", "Participants") + sec("methods", "Statistical analysis")
    return (
        "<body>"
        + sec("intro", "Introduction")
        + sec("methods", "Methods", methods)
        + sec("results", "Results")
        + '<sec sec-type="results"><title>Outcomes</title><p>'
        + _paragraph("Outcomes", chars)
        + '</p><fig id="f1"><label>Figure 1</label><caption><p>Synthetic outcome curve.</p>'
        + "</caption></fig>"
        + '<table-wrap id="t1"><label>Table 1</label><caption><p>Synthetic baseline table.'
        + "</p></caption><table><tr><td>1</td></tr></table></table-wrap></sec>"
        + sec("discussion", "Discussion")
        + "</body><back><ack><p>Synthetic acknowledgements.</p></ack><ref-list>"
        + "".join(
            f'<ref id="r{n}"><label>{n}</label><mixed-citation>Synthetic A. Reference {n}. '
            f'J Synth. 2020;{n}:1-2. <pub-id pub-id-type="pmid">{10_000_000 + n}</pub-id>'
            "</mixed-citation></ref>"
            for n in (1, 2, 3)
        )
        + "</ref-list></back>"
    )


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
