"""PubMed query builders for the two evidence tiers (spec 03, sections 1 and 11).

A topic is a set of slots (indication, targets, target MeSH headings, drug names), each holding
one or more terms. The builders fill the spec's templates:

* Tier A (clinical, spec 1.2): indication x trial publication types x humans.
* Tier B (basic/preclinical, spec 1.3): target/drug x indication x mechanism vocabulary.
* Combined one-shot (spec 1.4): target/drug x indication x (trial types OR mechanism vocabulary).

Rules the builders follow:

* The fixed parts of each template (publication types, mechanism vocabulary, humans filters, the
  opinion-piece exclusion) are the spec's text verbatim, including its layout and its quoting of
  some single words (`"pharmacology"[sh]`); only the slots are rendered by this module.
* Terms of one slot are OR-ed in the order given, after collapsing whitespace and dropping
  case-insensitive duplicates. Each placeholder occurrence expands in place, so an indication
  `(X[mh] OR X[tiab])` with two terms becomes `(a[mh] OR b[mh] OR a[tiab] OR b[tiab])`.
  Duplicates are removed within a slot only: a word given both as a target and as a drug name
  appears twice, which is harmless in an OR group.
* A term is emitted bare when it is one ASCII token of letters and digits joined by single
  hyphens (`obesity[tiab]`, `GLP-1[tiab]`), else double-quoted (`"in vitro"[tiab]`). A bare
  token that reads as an operator (AND / OR / NOT in any case) is quoted too, since PubMed would
  parse it as one. Callers give plain words: field tags are the builder's job, so a term with
  `[` or `]` is rejected, as is one with a double quote (PubMed has no escape for it inside a
  phrase), a control character other than tab / newline / carriage return (those are
  whitespace and collapse), or more than MAX_TERM_LENGTH characters after collapsing.
* The opinion-piece exclusion `NOT (Review[pt] OR Editorial[pt] OR Letter[pt])` is on by
  default (the spec calls it optional); Tier A's humans filters are part of its template.
* Extra mechanism terms (e.g. "pharmacodynamics" in the section 11 GLP-1 example) are searched
  as [tiab] and appended after the template's mechanism vocabulary; one already in that
  vocabulary is dropped, since it is already searched.

Deliberate departure from spec 1.4: its combined template carries the line
`AND (humans[mh] OR humans[tiab] OR NOT animals[mh])   -- allows preclinical when intended`.
That line is not PubMed syntax: PubMed's NOT is binary only (`A NOT B`), so `OR NOT animals[mh]`
is not a valid expression; and PubMed has no comment syntax, so `-- allows preclinical when
intended` would be sent as search text. Read as "human, or not about animals", it would also
drop the animal-model studies the same query asks for with "animal model"[tiab], against its own
comment. The section 11 worked examples, the spec's drop-in queries, leave the line out, and a
combined query without a humans filter already allows preclinical work. So the builder leaves
it out.

Query strings keep the spec's one-group-per-line layout: PubMed reads newlines as spaces. Use
`compact` for a single-line form (logs, URLs). Date windows are not part of the term: E-utilities
takes them as separate `mindate` / `maxdate` parameters.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from biomcp.domain.errors import InvalidQueryError

__all__ = [
    "MAX_TERM_LENGTH",
    "TopicTerms",
    "combined_query",
    "compact",
    "tier_a_query",
    "tier_b_query",
]

MAX_TERM_LENGTH = 200

_BARE_TOKEN = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")
_OPERATORS = frozenset({"and", "or", "not"})
_WHITESPACE_CONTROLS = frozenset("\t\n\r")
_FIXED_ATOM = re.compile(r'"?(?P<term>[^"\[]+)"?\[(?P<tag>[a-z]+)\]')

# Each inner tuple is one line of the spec's layout.
_TRIAL_TYPES: tuple[tuple[str, ...], ...] = (
    ('"Clinical Trial"[pt]', '"Randomized Controlled Trial"[pt]'),
    (
        '"Clinical Trial, Phase I"[pt]',
        '"Clinical Trial, Phase II"[pt]',
        '"Clinical Trial, Phase III"[pt]',
    ),
)
_TIER_B_MECHANISM: tuple[tuple[str, ...], ...] = (
    ("mechanism[tiab]", '"molecular mechanism"[tiab]', '"signal transduction"[mh]'),
    ('"pharmacology"[sh]', '"pharmacodynamics"[tiab]', '"pharmacokinetics"[tiab]'),
    (
        '"in vitro"[tiab]',
        '"animal model"[tiab]',
        "mouse[tiab]",
        "rat[tiab]",
        '"preclinical"[tiab]',
    ),
)
_COMBINED_MECHANISM: tuple[tuple[str, ...], ...] = (
    (
        "mechanism[tiab]",
        '"molecular mechanism"[tiab]',
        '"in vitro"[tiab]',
        '"animal model"[tiab]',
        "preclinical[tiab]",
    ),
)
_HUMANS = "AND (humans[mh] OR humans[tiab])"
_NOT_ANIMALS_ONLY = "NOT (animals[mh] NOT humans[mh])"
_NOT_OPINION = "NOT (Review[pt] OR Editorial[pt] OR Letter[pt])"

_HANGING_INDENT = "\n     "  # spec 1.2 / 1.3 align continuation lines under the group's first term
_BLOCK_INDENT = "\n  "  # spec 1.4 / section 11 open the group on its own line


@dataclass(frozen=True, slots=True)
class TopicTerms:
    """The slots of one search topic, each a tuple of normalized, de-duplicated terms.

    Construction collapses whitespace in every term, drops case-insensitive duplicates within a
    slot (first spelling wins) and validates each term; a bare str given for a slot is taken as
    one term. Use `TopicTerms.of` to pass str or any iterable of str.

    Raises:
        InvalidQueryError: a term is not a str, is empty, contains `"`, `[`, `]` or a control
            character, or is longer than MAX_TERM_LENGTH; or the indication slot is empty.
    """

    indication: tuple[str, ...]
    targets: tuple[str, ...] = ()
    target_mesh: tuple[str, ...] = ()
    drug_names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for slot in ("indication", "targets", "target_mesh", "drug_names"):
            object.__setattr__(self, slot, _normalize_slot(slot, getattr(self, slot)))
        if not self.indication:
            raise InvalidQueryError("a topic needs at least one indication term")

    @classmethod
    def of(
        cls,
        indication: str | Iterable[str],
        *,
        targets: str | Iterable[str] = (),
        target_mesh: str | Iterable[str] = (),
        drug_names: str | Iterable[str] = (),
    ) -> TopicTerms:
        """Build a topic from slots given as one str or an iterable of str each.

        Raises:
            InvalidQueryError: as for the class itself.
        """
        return cls(
            _as_tuple(indication),
            _as_tuple(targets),
            _as_tuple(target_mesh),
            _as_tuple(drug_names),
        )


def tier_a_query(topic: TopicTerms, *, exclude_opinion: bool = True) -> str:
    """The Tier A (clinical) PubMed query of spec 1.2 for the topic's indication.

    Tier A is indication-wide by design: the topic's target, target MeSH and drug slots are not
    used. The humans filters are always present; `exclude_opinion=False` drops the final
    `NOT (Review[pt] OR Editorial[pt] OR Letter[pt])` line.

    Raises:
        InvalidQueryError: not raised here; a TopicTerms cannot be built without an indication,
            so the check lives in its constructor.
    """
    lines = [
        _indication_group(topic),
        "AND " + _hanging_group(_TRIAL_TYPES),
        _HUMANS,
        _NOT_ANIMALS_ONLY,
    ]
    return _finish(lines, exclude_opinion=exclude_opinion)


def tier_b_query(
    topic: TopicTerms,
    *,
    exclude_opinion: bool = True,
    extra_mechanism_terms: str | Iterable[str] = (),
) -> str:
    """The Tier B (basic / preclinical) PubMed query of spec 1.3.

    `extra_mechanism_terms` are searched as [tiab] after the template's mechanism vocabulary
    (terms already in that vocabulary are dropped). `exclude_opinion=False` drops the final
    opinion-piece exclusion.

    Raises:
        InvalidQueryError: the topic has no target, target MeSH heading or drug name, or an
            extra mechanism term is invalid (same rules as TopicTerms).
    """
    mechanism = _with_extras(_TIER_B_MECHANISM, extra_mechanism_terms)
    lines = [
        _target_group(topic),
        "AND " + _indication_group(topic),
        "AND " + _hanging_group(mechanism),
    ]
    return _finish(lines, exclude_opinion=exclude_opinion)


def combined_query(
    topic: TopicTerms,
    *,
    exclude_opinion: bool = True,
    extra_mechanism_terms: str | Iterable[str] = (),
) -> str:
    """The combined one-shot (both tiers) PubMed query of spec 1.4, as section 11 writes it.

    The spec's `AND (humans[mh] OR humans[tiab] OR NOT animals[mh])` line is left out (see the
    module docstring: it is not valid PubMed syntax). `extra_mechanism_terms` are searched as
    [tiab] after the template's mechanism vocabulary (terms already in it are dropped).
    `exclude_opinion=False` drops the final opinion-piece exclusion.

    Raises:
        InvalidQueryError: the topic has no target, target MeSH heading or drug name, or an
            extra mechanism term is invalid (same rules as TopicTerms).
    """
    evidence = _TRIAL_TYPES + _with_extras(_COMBINED_MECHANISM, extra_mechanism_terms)
    lines = [
        _target_group(topic),
        "AND " + _indication_group(topic),
        "AND " + _block_group(evidence),
    ]
    return _finish(lines, exclude_opinion=exclude_opinion)


def compact(query: str) -> str:
    """The query on one line, for logs and URLs; PubMed reads it the same way.

    Outside double-quoted phrases, every whitespace run becomes one space, a space right after
    `(` or right before `)` is removed, and the ends are stripped. Text inside double quotes is
    left untouched (builder terms are already single-spaced).

    Raises:
        Nothing: any str is accepted.
    """
    parts = query.split('"')
    for index in range(0, len(parts), 2):  # even indexes lie outside quotes
        text = re.sub(r"\s+", " ", parts[index])
        parts[index] = text.replace("( ", "(").replace(" )", ")")
    parts[0] = parts[0].lstrip()
    if len(parts) % 2 == 1:
        parts[-1] = parts[-1].rstrip()
    return '"'.join(parts)


def _as_tuple(value: str | Iterable[str]) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)


def _normalize_slot(slot: str, value: str | Iterable[str]) -> tuple[str, ...]:
    seen: set[str] = set()
    terms: list[str] = []
    for raw in _as_tuple(value):
        term = _normalize_term(slot, raw)
        key = term.casefold()
        if key not in seen:
            seen.add(key)
            terms.append(term)
    return tuple(terms)


def _normalize_term(slot: str, raw: object) -> str:
    if not isinstance(raw, str):
        raise InvalidQueryError(f"{slot} term {_describe(raw)} is not a string")
    for char in raw:
        if char not in _WHITESPACE_CONTROLS and unicodedata.category(char) == "Cc":
            raise InvalidQueryError(f"{slot} term {_describe(raw)} contains a control character")
    term = " ".join(raw.split())
    if not term:
        raise InvalidQueryError(f"{slot} term {_describe(raw)} is empty")
    if '"' in term:
        raise InvalidQueryError(
            f"{slot} term {_describe(raw)} contains a double quote, which PubMed cannot escape"
        )
    if "[" in term or "]" in term:
        raise InvalidQueryError(
            f"{slot} term {_describe(raw)} contains [ or ]; field tags are added by the builder"
        )
    if len(term) > MAX_TERM_LENGTH:
        raise InvalidQueryError(
            f"{slot} term {_describe(raw)} is longer than {MAX_TERM_LENGTH} characters"
        )
    return term


def _describe(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _render(term: str, tag: str) -> str:
    if _BARE_TOKEN.fullmatch(term) and term.casefold() not in _OPERATORS:
        return f"{term}[{tag}]"
    return f'"{term}"[{tag}]'


def _indication_group(topic: TopicTerms) -> str:
    atoms = [_render(term, "mh") for term in topic.indication]
    atoms += [_render(term, "tiab") for term in topic.indication]
    return "(" + " OR ".join(atoms) + ")"


def _target_group(topic: TopicTerms) -> str:
    atoms = [_render(term, "tiab") for term in topic.targets]
    atoms += [_render(term, "mh") for term in topic.target_mesh]
    atoms += [_render(term, "tiab") for term in topic.drug_names]
    if not atoms:
        raise InvalidQueryError(
            "a Tier B or combined query needs at least one target, target MeSH heading or drug name"
        )
    return "(" + " OR ".join(atoms) + ")"


def _with_extras(
    lines: tuple[tuple[str, ...], ...], extras: str | Iterable[str]
) -> tuple[tuple[str, ...], ...]:
    searched = {
        match["term"].casefold()
        for line in lines
        for atom in line
        if (match := _FIXED_ATOM.fullmatch(atom)) is not None and match["tag"] == "tiab"
    }
    new = [
        _render(term, "tiab")
        for term in _normalize_slot("extra_mechanism_terms", extras)
        if term.casefold() not in searched
    ]
    return (*lines, tuple(new)) if new else lines


def _hanging_group(lines: tuple[tuple[str, ...], ...]) -> str:
    return "(" + (" OR" + _HANGING_INDENT).join(" OR ".join(line) for line in lines) + ")"


def _block_group(lines: tuple[tuple[str, ...], ...]) -> str:
    body = (" OR" + _BLOCK_INDENT).join(" OR ".join(line) for line in lines)
    return "(" + _BLOCK_INDENT + body + "\n)"


def _finish(lines: list[str], *, exclude_opinion: bool) -> str:
    if exclude_opinion:
        lines.append(_NOT_OPINION)
    return "\n".join(lines)
