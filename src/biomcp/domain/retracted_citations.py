"""Citations of retracted papers, marked as NLM's Citing Medicine marks them.

Citing Medicine (the Vancouver style's reference) ends the citation of a retracted article
with `Retraction in:` and the citation of the retraction notice. PubMed's own citations do the
same. Every style here follows that one rule:

* APA, MLA and Vancouver strings end with `Retraction in: <notice>. PMID: <notice PMID>.`,
  or `Retracted publication.` when PubMed gives no notice;
* RIS gets the same sentence as an `N1` note, BibTeX in its `note` field.

A record that is not retracted is cited exactly as `format_citation` cites it.
"""

from __future__ import annotations

from biomcp.domain.citations import CitationStyle, bibtex_escape, format_citation
from biomcp.domain.records import NoticeKind, PubMedRecord

__all__ = ["cite", "retraction_sentence"]


def retraction_sentence(record: PubMedRecord) -> str | None:
    """`Retraction in: <notice citation>. PMID: <n>.` for a retracted record, or
    `Retracted publication.` when it has no notice; None when it is not retracted."""
    if not record.is_retracted:
        return None
    notice = next((n for n in record.notices if n.kind is NoticeKind.RETRACTION_IN), None)
    if notice is None or not (notice.source or notice.pmid):
        return "Retracted publication."
    parts = []
    if notice.source and notice.source.strip(" ."):
        parts.append(notice.source.strip().rstrip(". ") + ".")
    if notice.pmid:
        parts.append(f"PMID: {notice.pmid}.")
    return "Retraction in: " + " ".join(parts)


def cite(record: PubMedRecord, style: CitationStyle | str) -> str:
    """The citation of `record` in `style`, marked when the record is retracted.

    Raises:
        ValueError: an unknown style.
    """
    chosen = CitationStyle(style)
    text = format_citation(record, chosen)
    sentence = retraction_sentence(record)
    if sentence is None:
        return text
    match chosen:
        case CitationStyle.RIS:
            return _ris(text, sentence)
        case CitationStyle.BIBTEX:
            return _bibtex(text, sentence)
        case _:
            return f"{text.rstrip()} {sentence}"


def _ris(text: str, sentence: str) -> str:
    """The note goes just before the end-of-record tag (`ER  -`)."""
    lines = text.split("\n")
    end = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].startswith("ER  -")), None)
    note = f"N1  - {sentence}"
    if end is None:
        return "\n".join([*lines, note])
    return "\n".join([*lines[:end], note, *lines[end:]])


def _bibtex(text: str, sentence: str) -> str:
    """The sentence joins an existing `note` field, else becomes one before the closing brace."""
    escaped = bibtex_escape(sentence)
    lines = text.split("\n")
    for index, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("note = {") and stripped.rstrip(",").endswith("}"):
            comma = "," if stripped.endswith(",") else ""
            body = stripped.rstrip(",")[len("note = {") : -1].rstrip(". ")
            indent = line[: len(line) - len(line.lstrip())]
            lines[index] = f"{indent}note = {{{body}. {escaped}}}{comma}"
            return "\n".join(lines)
    close = max((i for i, line in enumerate(lines) if line.strip() == "}"), default=0)
    if close == 0:  # not an entry this module writes: the note after it
        return f"{text}\n% {sentence}"
    before = lines[close - 1]
    lines[close - 1] = before if before.rstrip().endswith(",") else before.rstrip() + ","
    return "\n".join([*lines[:close], f"  note = {{{escaped}}}", *lines[close:]])
