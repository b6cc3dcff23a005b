"""Chunks of a PMC full-text article, for the evidence corpus.

What becomes a chunk, in this order (`section_index` counts these pieces in it):

* every section with text, at every depth, in document order: ids `f<i>_<j>` (i its place
  among all sections, depth first, left-out ones included; j the part); `section_path` the
  titles from the top ("Results > Primary outcome", "Main text" for untitled leading text);
  `anchor` its paragraphs counted within the section ("p1", "p2-p4");
* every table: ids `t<k>_<j>`; its caption, then its rows rendered with their column headers
  (`Age, years — Placebo: 54 (12); Drug: 55 (11)`), packed up to the token budget, with the
  path and caption repeated in every chunk; its footnotes follow the last rows, in chunks of
  their own when they do not fit; `anchor` the rows ("r1-r12") or "notes"; its `section` is
  `TABLE_SECTION` (Results), so the ranking treats a table as the results it reports;
* every figure caption (`g<k>`) and supplementary caption (`x<k>`), `anchor` "caption"; a
  caption longer than the budget is split, its later parts `g<k>_<j>` / `x<k>_<j>`.

A table row whose cells all say the same thing (or only its first) is a group heading: it is
not a line of its own, and the rows after it are prefixed by it ("Smokers > Current — ...").
A row's leading empty cells take the previous row's text in that column when that text has no
digit (a stub left blank under its group), so each row still says what it describes.

References are never chunks. Back matter that is not evidence is left out with its
subsections: a section whose `kind` (sec-type) is in `SKIPPED_KINDS`, or whose title contains
one of `SKIPPED_TITLE_WORDS` (acknowledgements, funding, competing interests, author
contributions, abbreviations, data availability, supporting information ...).

Text: the record's title first (clipped to a third of the maximum; on every chunk unless
`config.title_every_chunk` is False, then on none: the abstract's first chunk carries it),
then the section path and ": ", then the body. A section is split as an abstract section is
(`chunking.split_text`: between units, never inside a numeric claim, with the comparator
guard and overlap), preferring paragraph starts as cut points. `start` / `end` / `overlap`
are offsets in the section's own text; for a table, in its rendered rows and footnotes joined
by newlines.

At most `MAX_ARTICLE_CHUNKS` chunks; `chunk_article_counted` says how many more were dropped.
"""

from __future__ import annotations

import hashlib
import json
import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from biomcp.domain.chunking import ChunkingConfig, chunk_uuid, clip_to_tokens, split_text
from biomcp.domain.fulltext import Caption, FullTextArticle, Section
from biomcp.domain.records import Chunk
from biomcp.domain.tokens import count_tokens

__all__ = [
    "MAX_ARTICLE_CHUNKS",
    "SKIPPED_KINDS",
    "SKIPPED_TITLE_WORDS",
    "TABLE_SECTION",
    "ArticleChunks",
    "article_content_hash",
    "article_text_chars",
    "chunk_article",
    "chunk_article_counted",
    "kept_sections",
    "table_text",
]

#: At most this many chunks of one article; the rest are dropped (and counted).
MAX_ARTICLE_CHUNKS = 600
#: The section a table chunk counts in for ranking (its path keeps its own label).
TABLE_SECTION = "Results"

SKIPPED_KINDS = frozenset(
    {
        "ack", "acknowledgment", "acknowledgement", "acknowledgments", "acknowledgements",
        "funding", "funding-information", "financial-disclosure", "coi-statement", "conflict",
        "competing-interests", "author-contributions", "contributions", "abbreviations",
        "abbr", "data-availability", "supplementary-material", "display-objects", "references",
    }
)  # fmt: skip
SKIPPED_TITLE_WORDS = (
    "acknowledg", "funding", "financial support", "financial disclosure", "disclosures",
    "competing interest", "conflict of interest", "conflicts of interest",
    "declaration of interest", "declarations of interest", "author contribution",
    "authors' contribution", "authors’ contribution", "contributors", "abbreviation",
    "data availability", "availability of data", "data sharing", "supporting information",
    "supplementary material", "additional files", "pre-publication history", "references",
    "author information", "consent for publication",
)  # fmt: skip
_UNTITLED = "Main text"
_PARAGRAPH = re.compile(r"\n\s*\n\s*")
_DIGIT = re.compile(r"\d")
#: Bumped when what the hash covers changes, so every article is chunked again.
_HASH_SCHEME = "fulltext-chunks/1"


@dataclass(frozen=True, slots=True)
class ArticleChunks:
    """An article's chunks (at most `MAX_ARTICLE_CHUNKS`) and how many were dropped."""

    chunks: tuple[Chunk, ...]
    dropped: int = 0


@dataclass(frozen=True, slots=True)
class _Piece:
    """One thing to chunk: its id stem, index, path, top-level section and own text."""

    stem: str
    index: int
    path: str
    section: str | None
    text: str


def chunk_article(
    pmid: str, article: FullTextArticle, config: ChunkingConfig, *, title: str | None = None
) -> tuple[Chunk, ...]:
    """The article's chunks (see the module docstring), at most `MAX_ARTICLE_CHUNKS`.

    Deterministic: the same article, title and config always give the same chunks and ids.
    `title` is the record's title; without it, the article's own.
    """
    return chunk_article_counted(pmid, article, config, title=title).chunks


def chunk_article_counted(
    pmid: str, article: FullTextArticle, config: ChunkingConfig, *, title: str | None = None
) -> ArticleChunks:
    """`chunk_article`, also counting the chunks dropped beyond `MAX_ARTICLE_CHUNKS`."""
    head = title if title is not None else article.title
    clipped = clip_to_tokens((head or "").strip(), config.max_tokens // 3)
    prefix = f"{clipped}\n" if clipped and config.title_every_chunk else ""
    chunks = [*_section_chunks(pmid, article, config, prefix)]
    base = sum(1 for _ in _walk(article.sections))
    for k, table in enumerate(article.tables):
        chunks.extend(_table_chunks(pmid, table, k, base + k, config, prefix))
    base += len(article.tables)
    for stem, captions in (("g", article.figures), ("x", article.supplements)):
        for k, caption in enumerate(captions):
            chunks.extend(_caption_chunks(pmid, caption, f"{stem}{k}", base + k, config, prefix))
        base += len(captions)
    kept = tuple(chunks[:MAX_ARTICLE_CHUNKS])
    return ArticleChunks(kept, len(chunks) - len(kept))


# --- sections ------------------------------------------------------------------------------


def _walk(
    sections: Sequence[Section], parents: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], Section]]:
    """(titles from the top, section) of every section, depth first, in document order."""
    for section in sections:
        path = (*parents, section.title.strip())
        yield path, section
        yield from _walk(section.children, path)


def _skipped(section: Section) -> bool:
    if (section.kind or "").strip().casefold() in SKIPPED_KINDS:
        return True
    title = section.title.casefold().replace("\u2019", "'")
    return any(word in title for word in SKIPPED_TITLE_WORDS)


def kept_sections(article: FullTextArticle) -> Iterator[tuple[int, str, Section]]:
    """(place among all sections, path, section) of every section whose text is chunked."""
    left_out: tuple[str, ...] | None = None
    for i, (titles, section) in enumerate(_walk(article.sections)):
        if left_out is not None and titles[: len(left_out)] == left_out:
            continue
        left_out = None
        if _skipped(section):
            left_out = titles
            continue
        path = " > ".join(t for t in titles if t) or _UNTITLED
        yield i, path, section


def _section_chunks(
    pmid: str, article: FullTextArticle, config: ChunkingConfig, title: str
) -> Iterator[Chunk]:
    for i, path, section in kept_sections(article):
        if not section.text.strip():
            continue
        top = next(iter(path.split(" > ")))
        piece = _Piece(f"f{i}", i, path, top if top != _UNTITLED else None, section.text)
        yield from _text_chunks(pmid, piece, config, title, config.target_tokens)


def _paragraph_starts(text: str) -> list[int]:
    return [0, *(m.end() for m in _PARAGRAPH.finditer(text))]


def _text_chunks(
    pmid: str, piece: _Piece, config: ChunkingConfig, title: str, whole_up_to: int
) -> Iterator[Chunk]:
    """A section's text cut into parts, each a chunk `<stem>_<j>` anchored on its paragraphs
    (a caption's: `<stem>`, then `<stem>_<j>`, anchored "caption")."""
    prefix = f"{title}{piece.path}: "
    text = piece.text
    budget = max(1, config.max_tokens - count_tokens(prefix))
    starts = _paragraph_starts(text)
    if count_tokens(prefix + text) <= whole_up_to:
        parts = [(0, len(text), 0)]
    else:
        parts = split_text(text, (budget, budget), config, breaks=frozenset(starts[1:]))
    section = piece.stem.startswith("f")
    for j, (start, end, overlap) in enumerate(parts):
        first = bisect_right(starts, start)
        last = bisect_right(starts, max(start, end - 1))
        anchor = f"p{first}" if first == last else f"p{first}-p{last}"
        chunk_id = f"{piece.stem}_{j}" if section or j else piece.stem
        body = text[start:end].strip()
        span = (start, end, overlap)
        yield _chunk(pmid, chunk_id, prefix + body, piece, span, anchor if section else "caption")


def _chunk(
    pmid: str,
    chunk_id: str,
    text: str,
    piece: _Piece,
    span: tuple[int, int, int],
    anchor: str | None,
) -> Chunk:
    start, end, overlap = span
    return Chunk(
        pmid=pmid,
        chunk_id=chunk_id,
        uuid=chunk_uuid(pmid, chunk_id),
        text=text,
        section=piece.section,
        section_index=piece.index,
        start=start,
        end=end,
        overlap=overlap,
        token_count=count_tokens(text),
        source="fulltext",
        section_path=piece.path,
        anchor=anchor,
    )


# --- captions and tables -------------------------------------------------------------------


def _caption_path(caption: Caption, number: int) -> str:
    label = (caption.label or "").strip().rstrip(".:").strip()
    if label:
        return label
    return f"{'Figure' if caption.kind == 'figure' else caption.kind.title()} {number}"


def _caption_chunks(
    pmid: str, caption: Caption, stem: str, index: int, config: ChunkingConfig, title: str
) -> Iterator[Chunk]:
    """A figure's or supplementary file's caption: `<stem>`, then `<stem>_<j>` parts."""
    if not caption.caption.strip():
        return
    path = _caption_path(caption, int(stem[1:]) + 1)
    piece = _Piece(stem, index, path, path, caption.caption)
    yield from _text_chunks(pmid, piece, config, title, config.max_tokens)


@dataclass(frozen=True, slots=True)
class _Entry:
    """A line of a table's text (a row, a part of one, or a footnote) and its offsets."""

    text: str
    row: int | None
    start: int
    end: int


def _row_lines(table: Caption) -> list[tuple[str, int]]:
    """Each body row as one line with its column names, and its row number (from 1)."""
    lines: list[tuple[str, int]] = []
    group = ""
    previous: list[str] = []
    for number, row in enumerate(table.rows, start=1):
        cells = [cell.strip() for cell in row]
        filled = [cell for cell in cells if cell]
        if not filled:
            continue
        if len(cells) > 1 and cells[0] and all(cell == cells[0] for cell in filled):
            group, previous = cells[0], []
            continue
        for c in range(min(len(cells), len(previous)) - 1):
            if cells[c] or not previous[c] or _DIGIT.search(previous[c]):
                break
            cells[c] = previous[c]
        previous = cells
        values = "; ".join(
            f"{name}: {value}" if name else value
            for name, value in zip(_names(table.header, len(cells))[1:], cells[1:], strict=True)
            if value
        )
        lead = " > ".join(part for part in (group, cells[0]) if part)
        lines.append((f"{lead} — {values}" if lead and values else lead or values, number))
    return lines


def _names(header: tuple[str, ...], width: int) -> list[str]:
    return [header[c].strip() if c < len(header) else "" for c in range(width)]


def _table_lines(table: Caption) -> list[tuple[str, int | None]]:
    lines: list[tuple[str, int | None]] = [*_row_lines(table)]
    lines.extend((note.strip(), None) for note in table.footnotes if note.strip())
    return lines


def table_text(table: Caption) -> str:
    """A table's own text, which its chunks' offsets point into: its rows rendered with their
    column names, then its footnotes, one a line."""
    return "\n".join(line for line, _ in _table_lines(table))


def _table_entries(table: Caption, budget: int, config: ChunkingConfig) -> list[_Entry]:
    """The table's rows then footnotes, each at its offset in `table_text`; a line over
    `budget` is split as a section is."""
    lines = _table_lines(table)
    entries: list[_Entry] = []
    offset = 0
    for line, row in lines:
        if count_tokens(line) <= budget:
            entries.append(_Entry(line, row, offset, offset + len(line)))
        else:
            for start, end, _ in split_text(line, (budget, budget), config):
                piece = line[start:end]
                lead, tail = len(piece) - len(piece.lstrip()), len(piece) - len(piece.rstrip())
                entries.append(
                    _Entry(piece.strip(), row, offset + start + lead, offset + end - tail)
                )
        offset += len(line) + 1
    return entries


def _table_chunks(
    pmid: str, table: Caption, k: int, index: int, config: ChunkingConfig, title: str
) -> Iterator[Chunk]:
    """A table's chunks `t<k>_<j>`: its path and caption, then as many lines as fit."""
    path = _caption_path(table, k + 1)
    caption = clip_to_tokens(" ".join(table.caption.split()), config.max_tokens // 4)
    head = f"{title}{path}: {caption}" if caption else f"{title}{path}"
    piece = _Piece(f"t{k}", index, path, TABLE_SECTION, "")
    budget = max(1, config.max_tokens - count_tokens(head))
    groups: list[list[_Entry]] = []
    used = budget + 1
    for entry in _table_entries(table, budget, config):
        cost = count_tokens(entry.text)
        if used + cost > budget:
            groups.append([])
            used = 0
        groups[-1].append(entry)
        used += cost
    if not groups:
        yield _chunk(pmid, f"t{k}_0", head.strip(), piece, (0, 0, 0), "caption")
    for j, group in enumerate(groups):
        rows = [e.row for e in group if e.row is not None]
        anchor = "notes" if not rows else f"r{rows[0]}"
        anchor += f"-r{rows[-1]}" if rows and rows[-1] != rows[0] else ""
        text = "\n".join([head, *(e.text for e in group)])
        span = (group[0].start, group[-1].end, 0)
        yield _chunk(pmid, f"t{k}_{j}", text, piece, span, anchor)


# --- size and identity ---------------------------------------------------------------------


def article_text_chars(article: FullTextArticle) -> int:
    """The size of the chunkable text: kept sections' text, and every caption's label,
    caption, footnotes and cells."""
    total = sum(len(section.text) for _, _, section in kept_sections(article))
    for caption in (*article.tables, *article.figures, *article.supplements):
        total += len(caption.label or "") + len(caption.caption)
        total += sum(map(len, caption.footnotes)) + sum(map(len, caption.header))
        total += sum(len(cell) for row in caption.rows for cell in row)
    return total


def _section_value(section: Section) -> list[object]:
    return [
        section.title,
        section.kind,
        section.text,
        [_section_value(child) for child in section.children],
    ]


def _caption_value(caption: Caption) -> list[object]:
    return [
        caption.kind,
        caption.label,
        caption.caption,
        list(caption.footnotes),
        list(caption.header),
        [list(row) for row in caption.rows],
    ]


def article_content_hash(article: FullTextArticle) -> str:
    """A hex SHA-256 of everything `chunk_article` reads of the article (its title, sections,
    tables, figures and supplementary captions; not its references, licence or ids), the
    same in every process for the same article."""
    value = {
        "scheme": _HASH_SCHEME,
        "title": article.title,
        "sections": [_section_value(s) for s in article.sections],
        "tables": [_caption_value(c) for c in article.tables],
        "figures": [_caption_value(c) for c in article.figures],
        "supplements": [_caption_value(c) for c in article.supplements],
    }
    encoded = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    return hashlib.sha256(encoded).hexdigest()
