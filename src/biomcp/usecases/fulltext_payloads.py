"""How an answer shows a full-text article's body (the live tool and `rag.get` share it)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from biomcp.domain.fulltext import Caption, FullTextArticle, Reference, RenderedArticle, Section

__all__ = ["article_body"]


def article_body(article: FullTextArticle, rendered: RenderedArticle) -> dict[str, Any]:
    """The rendered part of `article`: its mode, abstract, sections, captions, references and
    counts (camelCase keys, empty parts left out)."""
    body: dict[str, Any] = {"mode": rendered.mode}
    if rendered.reason is not None:
        body["outlineReason"] = rendered.reason
    if rendered.abstract:
        body["abstract"] = rendered.abstract
    sections = []
    for section in rendered.sections:
        shown: dict[str, Any] = {
            "path": section.path,
            "level": section.level,
            "title": section.title,
            "chars": section.chars,
        }
        if section.kind:
            shown["type"] = section.kind
        if section.text is not None:
            shown["text"] = section.text
            if section.truncated:
                shown["truncated"] = True
        sections.append(shown)
    body["sections"] = sections
    if rendered.mode == "full":
        shown_captions = (*rendered.figures, *rendered.tables, *rendered.supplements)
        body["captions"] = [_caption(c) for c in shown_captions]
        if rendered.references:
            body["references"] = [_reference(r) for r in rendered.references]
        if rendered.references_omitted:
            body["referencesOmitted"] = rendered.references_omitted
    body["counts"] = {
        "sections": sum(1 for _ in _walk(article)),
        "figures": len(article.figures),
        "tables": len(article.tables),
        "supplements": len(article.supplements),
        "references": len(article.references),
    }
    return body


def _reference(reference: Reference) -> dict[str, Any]:
    """A reference: its citation line, then its parts (empty ones left out)."""
    fields: tuple[tuple[str, Any], ...] = (
        ("label", reference.label),
        ("text", reference.text),
        ("authors", list(reference.authors)),
        ("etAl", reference.et_al),
        ("editors", list(reference.editors)),
        ("title", reference.title),
        ("journal", reference.journal),
        ("year", reference.year),
        ("volume", reference.volume),
        ("issue", reference.issue),
        ("pages", reference.pages),
        ("publisher", reference.publisher),
        ("pmid", reference.pmid),
        ("doi", reference.doi),
        ("url", reference.url),
    )
    return {k: v for k, v in fields if v}


def _caption(caption: Caption) -> dict[str, Any]:
    shown: dict[str, Any] = {"kind": caption.kind, "caption": caption.caption}
    if caption.label:
        shown["label"] = caption.label
    if caption.footnotes:
        shown["footnotes"] = list(caption.footnotes)
    if caption.files:
        shown["files"] = list(caption.files)
    return shown


def _walk(article: FullTextArticle) -> Iterator[Section]:
    stack = list(article.sections)
    while stack:
        section = stack.pop()
        yield section
        stack.extend(section.children)
