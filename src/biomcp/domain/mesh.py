"""MeSH (Medical Subject Headings) records as bio-mcp shows them, and the fielded PubMed query
each one suggests.

A record comes from NCBI's `db=mesh` (ESummary). Three kinds share that database, told apart by
the first letter of their unique identifier (UI):

* `D` descriptors (main headings, `Myocardial Infarction`, D009203), searched with `[mh]`;
* `C` supplementary concept records (chemicals, rare diseases, protocols), searched with
  `[nm]` (Substance Name);
* `Q` qualifiers (subheadings, `drug therapy`, Q000188), searched with `[sh]`.

NCBI's numeric `db=mesh` UID is the UI with its letter replaced by the letter's ASCII code:
D009203 <-> 68009203, C000591245 <-> 67000591245, Q000188 <-> 81000188.

The suggested query follows the indication group of spec 03's tier templates,
`(<X>[mh] OR <X>[tiab])`, rendered by the same rules as `domain.queries`: a term is bare when
it is one ASCII token of letters and digits joined by single hyphens (and not an operator),
else double-quoted. The `[tiab]` half uses the heading in natural word order: a heading
written inverted (`Carcinoma, Non-Small-Cell Lung`) takes its first entry term without a comma
(`Non-Small-Cell Lung Carcinoma`), since titles and abstracts do not invert words.

Pure: standard library only, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "MESH_QUALIFIERS",
    "MeshDescriptor",
    "MeshQualifier",
    "RecordType",
    "parse_mesh_ui",
    "qualifier",
    "record_type",
    "suggested_query",
    "tiab_phrase",
    "ui_to_uid",
    "uid_to_ui",
    "unique_terms",
]

RecordType = Literal["descriptor", "supplementary", "qualifier"]

_UI = re.compile(r"([DCQ])(\d{6,9})")
_UID = re.compile(r"(67|68|81)(\d{6,9})")
_KINDS: dict[str, RecordType] = {"D": "descriptor", "C": "supplementary", "Q": "qualifier"}
_TAGS: dict[RecordType, str] = {"descriptor": "mh", "supplementary": "nm", "qualifier": "sh"}
_BARE_TOKEN = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")
_OPERATORS = frozenset({"and", "or", "not"})
_UNSAFE = re.compile(r'["\[\]\x00-\x1f\x7f]')

#: MeSH's topical qualifiers (subheadings) and their two-letter abbreviations, as NLM lists
#: them (https://www.nlm.nih.gov/mesh/subhierarchy.html). PubMed accepts either after a
#: heading: `"Myocardial Infarction/drug therapy"[mh]` or `/dt`.
MESH_QUALIFIERS: dict[str, str] = {
    "abnormalities": "AB",
    "administration & dosage": "AD",
    "adverse effects": "AE",
    "agonists": "AG",
    "analogs & derivatives": "AA",
    "analysis": "AN",
    "anatomy & histology": "AH",
    "antagonists & inhibitors": "AI",
    "biosynthesis": "BI",
    "blood": "BL",
    "blood supply": "BS",
    "cerebrospinal fluid": "CF",
    "chemical synthesis": "CS",
    "chemically induced": "CI",
    "chemistry": "CH",
    "classification": "CL",
    "complications": "CO",
    "congenital": "CN",
    "cytology": "CY",
    "deficiency": "DF",
    "diagnosis": "DI",
    "diagnostic imaging": "DG",
    "diet therapy": "DH",
    "drug effects": "DE",
    "drug therapy": "DT",
    "economics": "EC",
    "education": "ED",
    "embryology": "EM",
    "enzymology": "EN",
    "epidemiology": "EP",
    "ethics": "ES",
    "ethnology": "EH",
    "etiology": "ET",
    "genetics": "GE",
    "growth & development": "GD",
    "history": "HI",
    "immunology": "IM",
    "injuries": "IN",
    "innervation": "IR",
    "instrumentation": "IS",
    "isolation & purification": "IP",
    "legislation & jurisprudence": "LJ",
    "manpower": "MA",
    "metabolism": "ME",
    "methods": "MT",
    "microbiology": "MI",
    "mortality": "MO",
    "nursing": "NU",
    "organization & administration": "OG",
    "parasitology": "PS",
    "pathogenicity": "PY",
    "pathology": "PA",
    "pharmacokinetics": "PK",
    "pharmacology": "PD",
    "physiology": "PH",
    "physiopathology": "PP",
    "poisoning": "PO",
    "prevention & control": "PC",
    "psychology": "PX",
    "radiation effects": "RE",
    "radiotherapy": "RT",
    "rehabilitation": "RH",
    "secondary": "SC",
    "standards": "ST",
    "statistics & numerical data": "SN",
    "supply & distribution": "SD",
    "surgery": "SU",
    "therapeutic use": "TU",
    "therapy": "TH",
    "toxicity": "TO",
    "transmission": "TM",
    "transplantation": "TR",
    "trends": "TD",
    "ultrastructure": "UL",
    "urine": "UR",
    "veterinary": "VE",
    "virology": "VI",
}
_BY_ABBREVIATION = {abbreviation: name for name, abbreviation in MESH_QUALIFIERS.items()}


@dataclass(frozen=True, slots=True)
class MeshQualifier:
    """A qualifier allowed with a descriptor: its name (`drug therapy`) and NLM's two-letter
    abbreviation (`DT`; None for a name NLM's list does not hold)."""

    name: str
    abbreviation: str | None = None


@dataclass(frozen=True, slots=True)
class MeshDescriptor:
    """One `db=mesh` record: a descriptor, supplementary concept or qualifier.

    `ui` is MeSH's identifier (`D009203`), `uid` NCBI's numeric one (`68009203`); `name` the
    preferred term; `entry_terms` the other terms that map to it (synonyms, the name excluded);
    `tree_numbers` its places in the MeSH trees (supplementary records have none);
    `qualifiers` the subheadings it may be combined with; `mapped_to` the headings a
    supplementary record is indexed under.
    """

    uid: str
    ui: str
    name: str
    tree_numbers: tuple[str, ...] = ()
    entry_terms: tuple[str, ...] = ()
    scope_note: str | None = None
    qualifiers: tuple[MeshQualifier, ...] = ()
    year_introduced: str | None = None
    mapped_to: tuple[str, ...] = ()

    @property
    def record_type(self) -> RecordType:
        return record_type(self.ui) or "descriptor"

    def matches(self, term: str) -> bool:
        """True when `term` is the name or one of the entry terms (case and spacing ignored)."""
        wanted = _fold(term)
        return any(_fold(text) == wanted for text in (self.name, *self.entry_terms))


def parse_mesh_ui(text: str) -> str | None:
    """The MeSH UI `text` names (`D009203`, `d009203`, ` C000591245 `), or None when it is not
    one (a letter D, C or Q followed by 6 to 9 digits)."""
    match = _UI.fullmatch(text.strip().upper())
    return match.group(0) if match else None


def record_type(ui: str) -> RecordType | None:
    """The kind of record a UI names (None when `ui` is not a MeSH UI)."""
    canonical = parse_mesh_ui(ui)
    return _KINDS[canonical[0]] if canonical else None


def ui_to_uid(ui: str) -> str:
    """NCBI's numeric `db=mesh` UID of a MeSH UI: D009203 -> 68009203.

    Raises:
        ValueError: `ui` is not a MeSH UI.
    """
    canonical = parse_mesh_ui(ui)
    if canonical is None:
        raise ValueError(f"not a MeSH UI: {ui[:40]!r}")
    return f"{ord(canonical[0])}{canonical[1:]}"


def uid_to_ui(uid: str) -> str | None:
    """The MeSH UI of NCBI's numeric `db=mesh` UID (68009203 -> D009203), None if not one."""
    match = _UID.fullmatch(uid.strip())
    return f"{chr(int(match.group(1)))}{match.group(2)}" if match else None


def qualifier(text: str) -> MeshQualifier:
    """A qualifier from NCBI's text: a name (`drug therapy`, any case) or an abbreviation
    (`DT`), with the other half filled in from NLM's list when it holds it."""
    cleaned = " ".join(text.split())
    name = cleaned.lower()
    if name in MESH_QUALIFIERS:
        return MeshQualifier(name, MESH_QUALIFIERS[name])
    upper = cleaned.upper()
    if upper in _BY_ABBREVIATION:
        return MeshQualifier(_BY_ABBREVIATION[upper], upper)
    return MeshQualifier(cleaned)


def tiab_phrase(descriptor: MeshDescriptor) -> str:
    """The words a title or abstract would use for the record: its name, or, when the name is
    inverted (has a comma), its first entry term that is not."""
    if "," not in descriptor.name:
        return descriptor.name
    natural = next((t for t in descriptor.entry_terms if "," not in t and _clean(t)), None)
    return natural or descriptor.name


def suggested_query(descriptor: MeshDescriptor) -> str:
    """The fielded PubMed query for the record, in the form of spec 03's indication group:
    `(Obesity[mh] OR Obesity[tiab])`, `("Myocardial Infarction"[mh] OR "Myocardial
    Infarction"[tiab])`; `[nm]` for a supplementary record, `[sh]` for a qualifier."""
    tag = _TAGS[descriptor.record_type]
    heading = _atom(descriptor.name, tag)
    words = _atom(tiab_phrase(descriptor), "tiab")
    return f"({heading} OR {words})"


def _atom(term: str, tag: str) -> str:
    text = _clean(term)
    if _BARE_TOKEN.fullmatch(text) and text.casefold() not in _OPERATORS:
        return f"{text}[{tag}]"
    return f'"{text}"[{tag}]'


def _clean(term: str) -> str:
    """`term` without what PubMed cannot take inside a phrase (double quotes, brackets,
    control characters), whitespace collapsed."""
    return " ".join(_UNSAFE.sub(" ", term).split())


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def unique_terms(terms: Iterable[str], *, exclude: str = "") -> tuple[str, ...]:
    """`terms` without blanks, case-insensitive duplicates and `exclude`, first spelling kept."""
    seen = {_fold(exclude)} if exclude else set()
    kept: list[str] = []
    for term in terms:
        text = " ".join(term.split())
        key = text.casefold()
        if text and key not in seen:
            seen.add(key)
            kept.append(text)
    return tuple(kept)
