"""Author names in each style's form.

Initials keep their script (`Ø.`, `Á.`): they are letters, not only ASCII letters.
"""

from __future__ import annotations

from dataclasses import dataclass

from biomcp.domain.records import Author, PubMedRecord

__all__ = ["Name", "cited_names", "first_names"]


def _letters(text: str) -> str:
    """The letters of `text`, whatever their script (`Ø`, `Á`, `Ж` are kept)."""
    return "".join(ch for ch in text if ch.isalpha())


def _initial_groups(author: Author) -> list[str]:
    """The author's initials from the fore name, one entry per given name; a hyphenated given
    name gives one hyphenated entry (`King-Hwa` -> `K-H`). Without a fore name, each letter
    of NLM's `Initials` stands alone."""
    groups: list[str] = []
    for name in (author.fore_name or "").split():
        parts = [p for p in name.split("-") if _letters(p)]
        if parts:
            groups.append("-".join(_letters(p)[0] for p in parts))
    return groups or list(_letters(author.initials or ""))


def _initials(author: Author) -> str:
    """`JA` (Vancouver): NLM's `Initials` as PubMed prints them (letters of any script), else
    the fore name's initials without dots, spaces or hyphens."""
    return _letters(author.initials or "") or "".join(_initial_groups(author)).replace("-", "")


def _dotted(author: Author) -> str:
    """`J. A.`, `K.-H.` (APA)."""
    return " ".join(".-".join(g.split("-")) + "." for g in _initial_groups(author))


def first_names(author: Author) -> str:
    """The fore name with a period after each lone initial (`J Michael` -> `J. Michael`,
    `T C` -> `T. C.`); the dotted initials when there is no fore name."""
    if not author.fore_name:
        return _dotted(author)
    return " ".join(f"{w}." if len(w) == 1 and w.isalpha() else w for w in author.fore_name.split())


@dataclass(frozen=True, slots=True)
class Name:
    """One author (a person or a group) as each style writes it."""

    author: Author

    @property
    def group(self) -> str | None:
        return self.author.collective_name

    @property
    def last(self) -> str:
        return self.author.last_name or self.author.collective_name or ""

    def apa(self) -> str:
        if self.group:
            return self.group
        initials = _dotted(self.author)
        return f"{self.last}, {initials}" if initials else self.last

    def vancouver(self) -> str:
        if self.group:
            return self.group
        initials = _initials(self.author)
        return f"{self.last} {initials}" if initials else self.last

    def inverted(self) -> str:
        """`Last, First` (MLA first author, BibTeX, RIS)."""
        if self.group:
            return self.group
        first = first_names(self.author)
        return f"{self.last}, {first}" if first else self.last

    def natural(self) -> str:
        """`First Last` (MLA second author)."""
        if self.group:
            return self.group
        first = first_names(self.author)
        return f"{first} {self.last}" if first else self.last


def cited_names(record: PubMedRecord) -> list[Name]:
    """The record's authors that have a name to print, in order."""
    return [Name(a) for a in record.authors if a.last_name or a.collective_name]
