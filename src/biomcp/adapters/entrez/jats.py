"""Read an EFetch `db=pmc` answer (a `<pmc-articleset>` of JATS `<article>`s) into
`FullTextArticle`s, through the hardened reader of `xmlsafe` (no entity, no DTD, no network).

What is read from each `<article>`:

* ids (`article-id` pmc / pmcid, pmid, doi), title, journal title, year (epub, ppub, then any
  `pub-date`), `@article-type`;
* the abstract (the first one that is not a graphical abstract, teaser or summary for lay
  readers), its sections as `Title: text` paragraphs;
* the body's sections, nested (an untitled leading text becomes an untitled section), then the
  back matter's sections, acknowledgements and appendices; each section's own text leaves out
  figures, tables, formulas' markup (MathML gives its `alttext`) and supplementary material;
* the captions of every `<fig>` and `<table-wrap>` (a table with its `table-wrap-foot`
  footnotes, its column headers and body rows, read by `jats_tables`), every
  `<supplementary-material>` (label, caption, file names), the references
  (`<ref>`, read by `jats_references`), the licence (`permissions/license`: URL, type, text);
* how PMC lets it be read, and whether it is withdrawn (see `biomcp.domain.fulltext`): the
  `<?properties ...?>` processing instruction (`open_access`, `manuscript`, `withdrawn`), the
  presence of `<body>`, a `<notes notes-type="withdrawal">`.

Sizes are bounded: at most `_MAX_REFERENCES` references, `_MAX_CAPTIONS` captions (of each
kind), `_MAX_FOOTNOTES` footnotes a table, table grids as `jats_tables` bounds them, sections
nested at most `MAX_SECTION_DEPTH` deep (deeper ones are folded into their ancestor), each
reference, caption and licence text cut to a few thousand characters.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

from lxml import etree

from biomcp.adapters.entrez.jats_references import parse_reference
from biomcp.adapters.entrez.jats_tables import parse_table
from biomcp.adapters.entrez.xmlsafe import XLINK_NS, parse_document
from biomcp.domain.fulltext import (
    MAX_SECTION_DEPTH,
    Access,
    Caption,
    FullTextArticle,
    License,
    PmcArticleSet,
    Reference,
    Section,
)

__all__ = ["parse_jats_article", "parse_pmc_articles"]

_ROOTS = frozenset({"pmc-articleset"})
_MAX_REFERENCES = 2000
_MAX_CAPTIONS = 500
_MAX_FOOTNOTES = 100
_MAX_SHORT = 4000
_MATHML = "{http://www.w3.org/1998/Math/MathML}"
_HREF = f"{{{XLINK_NS}}}href"
#: Elements whose text is not a section's own text (kept elsewhere, or not text at all).
_SKIP = frozenset(
    {
        "fig", "fig-group", "table-wrap", "table-wrap-group", "supplementary-material",
        "ref-list", "graphic", "media", "alternatives", "object-id", "sec-meta",
    }
)  # fmt: skip
_SECTION_PARTS = frozenset({"sec", "title", "label"})
#: Block elements: their text is set apart from what surrounds it.
_BLOCKS = frozenset(
    {
        "p", "title", "label", "caption", "sec", "list", "list-item", "def-list", "def-item",
        "disp-quote", "boxed-text", "statement", "speech", "verse-group", "disp-formula",
    }
)  # fmt: skip
_SKIPPED_ABSTRACTS = frozenset({"graphical", "teaser", "summary", "precis", "web-summary"})


def parse_pmc_articles(xml: bytes) -> PmcArticleSet:
    """Parse an EFetch `db=pmc` answer.

    Raises:
        EntrezResponseError: not a `<pmc-articleset>` (HTML, truncated or malformed XML, a
            document declaring entities); see `xmlsafe.parse_document`.
        EntrezRequestError, EntrezUnavailableError: an NCBI `<ERROR>` payload.
    """
    root = parse_document(xml, expected_roots=_ROOTS, what="an EFetch <pmc-articleset>")
    articles: list[FullTextArticle] = []
    problems: dict[str, str] = {}
    for position, node in enumerate(root.iterchildren("article"), start=1):
        try:
            articles.append(parse_jats_article(node))
        except (ValueError, TypeError, AttributeError, RecursionError) as exc:
            key = _pmcid(node) or f"#{position}"
            problems[key] = f"unreadable JATS article ({type(exc).__name__}: {exc})"[:300]
    return PmcArticleSet(tuple(articles), problems)


def parse_jats_article(node: etree._Element) -> FullTextArticle:
    """One JATS `<article>` element.

    Raises:
        ValueError: the article carries no PMC id.
    """
    pmcid = _pmcid(node)
    if pmcid is None:
        raise ValueError("the article has no PMC id")
    meta = node.find("front/article-meta")
    body = node.find("body")
    properties = _properties(node)
    return FullTextArticle(
        pmcid=pmcid,
        pmid=_article_id(meta, ("pmid",)),
        doi=_article_id(meta, ("doi",)),
        title=_flat(meta.find("title-group/article-title")) if meta is not None else None,
        journal=_flat(node.find("front/journal-meta/journal-title-group/journal-title"))
        or _flat(node.find("front/journal-meta/journal-title")),
        year=_year(meta),
        article_type=node.get("article-type") or None,
        abstract=_abstract(meta),
        sections=_sections(body, node.find("back")),
        figures=_captions(node, "fig", "figure"),
        tables=_captions(node, "table-wrap", "table"),
        references=_references(node.find("back")),
        supplements=_supplements(node),
        license=_license(meta),
        access=_access(properties, body is not None),
        withdrawn="withdrawn" in properties
        or (meta is not None and meta.find("notes[@notes-type='withdrawal']") is not None)
        or node.find("front/notes[@notes-type='withdrawal']") is not None,
        has_body=body is not None,
    )


# --- ids and metadata ----------------------------------------------------------------------


def _pmcid(node: etree._Element) -> str | None:
    meta = node.find("front/article-meta")
    value = _article_id(meta, ("pmc", "pmcid", "pmcaid"))
    if value is None:
        return None
    digits = value.upper().removeprefix("PMC").split(".")[0]
    return f"PMC{digits}" if digits.isdigit() else None


def _article_id(meta: etree._Element | None, kinds: tuple[str, ...]) -> str | None:
    if meta is None:
        return None
    for kind in kinds:
        for found in meta.iterfind("article-id"):
            if found.get("pub-id-type") == kind and (text := _flat(found)):
                return text
    return None


def _year(meta: etree._Element | None) -> str | None:
    if meta is None:
        return None
    dates = list(meta.iterfind("pub-date"))
    for wanted in ("epub", "ppub", "collection", None):
        for date in dates:
            kind = date.get("pub-type") or date.get("date-type")
            if (wanted is None or kind == wanted) and (year := _flat(date.find("year"))):
                return year
    return None


def _properties(node: etree._Element) -> set[str]:
    """The tokens of the article's `<?properties ...?>` processing instructions."""
    tokens: set[str] = set()
    for pi in node.iter(etree.ProcessingInstruction):
        if cast("etree._ProcessingInstruction", pi).target == "properties":
            tokens.update((pi.text or "").replace(",", " ").split())
        if len(tokens) > 50:
            break
    return tokens


def _access(properties: set[str], has_body: bool) -> Access:
    if "open_access" in properties:
        return "open_access"
    if not has_body:
        return "restricted"
    if "manuscript" in properties:
        return "author_manuscript"
    return "free_to_read"


def _license(meta: etree._Element | None) -> License | None:
    if meta is None:
        return None
    node = meta.find("permissions/license")
    if node is None:
        statement = _flat(meta.find("permissions/copyright-statement"))
        return License(text=_short(statement)) if statement else None
    url = node.get(_HREF)
    for child in node:
        if isinstance(child.tag, str) and etree.QName(child).localname == "license_ref":
            url = url or _flat(child)
    paragraphs = [t for p in node.iterfind("license-p") if (t := _flat(p))]
    return License(
        url=url or None,
        type=node.get("license-type") or _ali_type(node),
        text=_short(" ".join(paragraphs)) or None,
    )


def _ali_type(node: etree._Element) -> str | None:
    for child in node:
        if isinstance(child.tag, str) and etree.QName(child).localname == "license_ref":
            return child.get("content-type") or None
    return None


# --- text ----------------------------------------------------------------------------------


def _local(node: etree._Element) -> str | None:
    tag = node.tag
    if not isinstance(tag, str):
        return None  # a processing instruction (comments are already removed)
    return tag.rpartition("}")[2] if tag.startswith("{") else tag


def _collect(node: etree._Element, out: list[str]) -> None:
    if node.text:
        out.append(node.text)
    for child in node:
        local = _local(child)
        if local is None or local in _SKIP:
            pass
        elif isinstance(child.tag, str) and child.tag.startswith(_MATHML):
            out.append(child.get("alttext") or " ".join(_texts(child)))
        elif local in ("tex-math",):
            pass
        elif local in _BLOCKS:
            out.append(" ")
            _collect(child, out)
            out.append(" ")
        else:
            _collect(child, out)
        if child.tail:
            out.append(child.tail)


def _texts(node: etree._Element) -> Iterable[str]:
    return cast("Iterable[str]", node.itertext())


def _flat(node: etree._Element | None) -> str | None:
    """The element's text, whitespace collapsed (None when empty or absent)."""
    if node is None:
        return None
    out: list[str] = []
    _collect(node, out)
    text = " ".join("".join(out).split())
    return text or None


def _short(text: str | None, limit: int = _MAX_SHORT) -> str:
    return (text or "")[:limit]


def _own_text(node: etree._Element) -> str:
    """A section's own paragraphs (everything but its title, label and subsections)."""
    paragraphs: list[str] = []
    for child in node:
        local = _local(child)
        if local is None or local in _SKIP or local in _SECTION_PARTS:
            continue
        if text := _flat(child):
            paragraphs.append(text)
    return "\n\n".join(paragraphs)


# --- abstract, sections --------------------------------------------------------------------


def _abstract(meta: etree._Element | None) -> str:
    if meta is None:
        return ""
    for node in meta.iterfind("abstract"):
        if (node.get("abstract-type") or "") in _SKIPPED_ABSTRACTS:
            continue
        parts: list[str] = []
        own = _own_text(node)
        if own:
            parts.append(own)
        for sec in node.iterfind("sec"):
            title = _flat(sec.find("title"))
            text = _own_text(sec) or _flat(sec) or ""
            parts.append(f"{title}: {text}" if title else text)
        return "\n\n".join(p for p in parts if p)
    return ""


def _section(node: etree._Element, depth: int, kind: str | None = None) -> Section:
    title = _flat(node.find("title")) or ""
    label = _flat(node.find("label"))
    if label and title and not title.startswith(label):
        title = f"{label} {title}"
    if depth >= MAX_SECTION_DEPTH:
        return Section(title or (label or ""), kind or node.get("sec-type"), _flat_all(node))
    children = tuple(_section(s, depth + 1) for s in node.iterfind("sec"))
    return Section(title or (label or ""), kind or node.get("sec-type"), _own_text(node), children)


def _flat_all(node: etree._Element) -> str:
    """Everything of a section folded into one text (below the depth limit)."""
    return _flat(node) or ""


def _sections(body: etree._Element | None, back: etree._Element | None) -> tuple[Section, ...]:
    found: list[Section] = []
    if body is not None:
        leading: list[str] = []
        for child in body:
            local = _local(child)
            if local == "sec":
                found.append(_section(child, 1))
            elif local is not None and local not in _SKIP and (text := _flat(child)):
                leading.append(text)
        if leading:
            found.insert(0, Section("", None, "\n\n".join(leading)))
    if back is not None:
        for child in back:
            local = _local(child)
            if local == "sec":
                found.append(_section(child, 1))
            elif local == "ack":
                found.append(_section(child, 1, "ack"))
                if not found[-1].title:
                    found[-1] = Section(
                        "Acknowledgements", "ack", found[-1].text, found[-1].children
                    )
            elif local == "app-group":
                found.extend(_section(app, 1, "app") for app in child.iterfind("app"))
    return tuple(found)


# --- captions, references ------------------------------------------------------------------


def _captions(article: etree._Element, tag: str, kind: str) -> tuple[Caption, ...]:
    found: list[Caption] = []
    for part in ("body", "back", "floats-group"):
        container = article.find(part)
        if container is None:
            continue
        for node in container.iter(tag):
            caption = _flat(node.find("caption"))
            label = _flat(node.find("label"))
            footnotes = _footnotes(node) if kind == "table" else ()
            header, rows = parse_table(node, _flat) if kind == "table" else ((), ())
            if caption or label or footnotes or rows:
                found.append(
                    Caption(
                        "figure" if kind == "figure" else "table",
                        label,
                        _short(caption),
                        footnotes,
                        header=header,
                        rows=rows,
                    )
                )
            if len(found) >= _MAX_CAPTIONS:
                return tuple(found)
    return tuple(found)


def _footnotes(table: etree._Element) -> tuple[str, ...]:
    """A table's footnotes: each `<fn>` and each paragraph directly in `table-wrap-foot`, as
    `label text` (a paragraph's leading superscript counts as its label)."""
    found: list[str] = []
    for foot in table.iterfind("table-wrap-foot"):
        for node in foot.iter("fn", "p"):
            if node.tag == "p" and node.getparent() is not foot:
                continue  # a paragraph of an `<fn>`: read with it
            paragraphs = list(node.iterfind("p")) if node.tag == "fn" else [node]
            label = _flat(node.find("label"))
            text = " ".join(t for p in paragraphs if (t := _flat(p)))
            first = paragraphs[0] if paragraphs else None
            if not label and first is not None and len(first) and not (first.text or "").strip():
                mark = _flat(first[0]) if first[0].tag == "sup" else None
                if mark and text.startswith(mark):
                    label, text = mark, text[len(mark) :].strip()
            if text or label:
                found.append(_short(" ".join(p for p in (label, text) if p)))
            if len(found) >= _MAX_FOOTNOTES:
                return tuple(found)
    return tuple(found)


def _supplements(article: etree._Element) -> tuple[Caption, ...]:
    """Every `<supplementary-material>` not nested in another: label, caption, file names."""
    found: list[Caption] = []
    for node in article.iter("supplementary-material"):
        if any(a.tag == "supplementary-material" for a in node.iterancestors()):
            continue
        files = tuple(
            dict.fromkeys(
                name
                for media in node.iter("media", "inline-supplementary-material")
                if (name := _file_name(media.get(_HREF)))
            )
        )
        found.append(
            Caption(
                "supplement",
                _flat(node.find("label")),
                _short(_flat(node.find("caption"))),
                files=files[:_MAX_FOOTNOTES],
            )
        )
        if len(found) >= _MAX_CAPTIONS:
            break
    return tuple(found)


def _file_name(href: str | None) -> str | None:
    """The last part of a file's address (no URL is followed or kept)."""
    name = (href or "").strip().split("?")[0].rstrip("/").rpartition("/")[2]
    return name[:200] or None


def _references(back: etree._Element | None) -> tuple[Reference, ...]:
    if back is None:
        return ()
    found: list[Reference] = []
    for ref in back.iter("ref"):
        reference = parse_reference(ref)
        if reference is None:
            continue
        found.append(reference)
        if len(found) >= _MAX_REFERENCES:
            break
    return tuple(found)
