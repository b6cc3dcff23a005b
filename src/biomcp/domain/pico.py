"""A PubMed query from a PICO question (population, intervention, comparison, outcome), built on
the evidence-tier templates of spec 03 (`queries`).

Each PICO element is plain words; several synonyms of one element are separated by `;`
(`"semaglutide; tirzepatide"`). The population is the indication of the templates and is
required. What each tier does with the other elements:

* Tier A (clinical, spec 1.2): the indication-wide clinical template, narrowed by one
  `AND (...)` group per element given: the intervention, the comparison and the outcome, each
  searched in title and abstract ([tiab]).
* Tier B (basic / preclinical, spec 1.3): the intervention is the template's drug / target slot
  (required); comparison and outcome are clinical notions that preclinical abstracts rarely
  name, so they are not searched (`PicoQuery.unused` lists them).
* Combined (spec 1.4, both tiers): as Tier B, over the combined template.

Each element searched becomes one group: its MeSH headings (given in `mesh`, as looked up by the
caller), OR its free-text synonyms in title and abstract. The synonyms are the element's own
terms, then a few of each heading's entry terms (`MAX_SYNONYMS_PER_HEADING`). Without headings
an element is free text only: a user's phrase is never sent as a heading. A phrase of more than
`MAX_PHRASE_WORDS` words that MeSH does not name is searched as its words, all required, since
PubMed refuses a quoted phrase missing from its phrase index.

The terms follow `queries`' rules (no `"`, `[`, `]`, control characters; at most
`queries.MAX_TERM_LENGTH` characters each); a bad one raises `InvalidQueryError`. The query keeps
the templates' one-group-per-line layout (PubMed reads newlines as spaces).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from biomcp.domain.errors import InvalidQueryError
from biomcp.domain.mesh import MeshDescriptor, tiab_phrase, unique_terms
from biomcp.domain.queries import TopicTerms, combined_query, tier_a_query, tier_b_query

__all__ = [
    "ELEMENTS",
    "MAX_HEADINGS_PER_ELEMENT",
    "MAX_PHRASE_WORDS",
    "MAX_SYNONYMS_PER_HEADING",
    "TIERS",
    "PicoQuery",
    "Tier",
    "pico_query",
    "searched_elements",
    "split_terms",
]

Tier = Literal["A", "B", "both"]
#: The tiers, with what each retrieves (used for argument completion and help).
TIERS: dict[str, str] = {
    "A": "clinical: trials and RCTs in humans (spec 03, Tier A)",
    "B": "basic / preclinical: mechanism, in vitro, animal models (spec 03, Tier B)",
    "both": "the combined one-shot query over both tiers (spec 03, section 1.4)",
}
#: The PICO elements, in query order.
ELEMENTS = ("population", "intervention", "comparison", "outcome")
#: At most this many MeSH headings per element are searched.
MAX_HEADINGS_PER_ELEMENT = 2
#: At most this many entry terms of each heading are searched as free text.
MAX_SYNONYMS_PER_HEADING = 3
#: A longer phrase that MeSH does not name is searched as its words.
MAX_PHRASE_WORDS = 3
_TIER_ALIASES = {"a": "A", "b": "B", "both": "both", "ab": "both", "combined": "both"}
_BARE_TOKEN = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")
_OPERATORS = frozenset({"and", "or", "not"})
# Words PubMed ignores in title and abstract searches; required alone they only add warnings.
_STOPWORDS = frozenset(
    {"a", "an", "at", "by", "for", "from", "in", "of", "on", "the", "to", "with"}
)
_TAGS = {"descriptor": "mh", "supplementary": "nm", "qualifier": "sh"}
# Inverted or qualified terms (rare in text), and what PubMed cannot take inside a phrase.
_INVERTED = frozenset(',()"[]')
_UNSAFE = frozenset('"[]')
_KEY_MAX = 64


@dataclass(frozen=True, slots=True)
class PicoQuery:
    """A built query: the PubMed `term`, its `tier`, a suggested checkpoint `query_key`, the
    PICO elements given but not searched in this tier (`unused`), and the MeSH headings
    searched (`headings`: element and fielded heading, such as `Obesity[mh]`)."""

    term: str
    tier: Tier
    query_key: str
    unused: tuple[str, ...] = ()
    headings: tuple[tuple[str, str], ...] = ()


def split_terms(value: str | None) -> tuple[str, ...]:
    """The synonyms of one PICO element: `;`-separated, stripped, empty parts dropped."""
    if value is None:
        return ()
    return tuple(part.strip() for part in value.split(";") if part.strip())


def searched_elements(tier: str, given: Mapping[str, str | None]) -> tuple[str, ...]:
    """The elements of `given` (by name, with a value) that `tier` searches, in query order.

    Raises:
        InvalidQueryError: an unknown tier.
    """
    chosen = _tier(tier)
    wanted = ELEMENTS if chosen == "A" else ELEMENTS[:2]
    return tuple(name for name in wanted if split_terms(given.get(name)))


def pico_query(
    population: str,
    intervention: str | None = None,
    comparison: str | None = None,
    outcome: str | None = None,
    *,
    tier: str = "A",
    mesh: Mapping[str, Sequence[MeshDescriptor]] | None = None,
) -> PicoQuery:
    """The PubMed query for a PICO question in `tier` (`A`, `B` or `both`; case-insensitive,
    `combined` is `both`). `mesh` maps an element name to the MeSH records its terms name.

    Raises:
        InvalidQueryError: an unknown tier; no population term; no intervention for Tier B or
            both; or a term `queries` rejects.
    """
    chosen = _tier(tier)
    topic = TopicTerms.of(split_terms(population), drug_names=split_terms(intervention))
    terms = {
        "population": topic.indication,
        "intervention": topic.drug_names,
        "comparison": _checked(comparison),
        "outcome": _checked(outcome),
    }
    found = {
        name: tuple(r for r in records if not _UNSAFE & set(r.name))[:MAX_HEADINGS_PER_ELEMENT]
        for name, records in (mesh or {}).items()
    }
    groups = {name: _group(terms[name], found.get(name, ())) for name in ELEMENTS if terms[name]}
    unused: tuple[str, ...] = ()
    if chosen == "A":
        template = tier_a_query(TopicTerms.of("x"), exclude_opinion=False).split("\n")
        lines = [groups["population"], *template[1:]]
        lines += [f"AND {groups[name]}" for name in ELEMENTS[1:] if name in groups]
        lines.append("NOT (Review[pt] OR Editorial[pt] OR Letter[pt])")
        searched: tuple[str, ...] = ELEMENTS
    else:
        if not topic.drug_names:
            raise InvalidQueryError(
                f"a Tier {chosen} query needs an intervention (a drug, target or exposure)"
            )
        build = tier_b_query if chosen == "B" else combined_query
        template = build(TopicTerms.of("x", drug_names="x")).split("\n")
        lines = [groups["intervention"], f"AND {groups['population']}", *template[2:]]
        unused = tuple(name for name in ELEMENTS[2:] if terms[name])
        searched = ELEMENTS[:2]
    headings = tuple(
        (name, _atom(record.name, _TAGS[record.record_type]))
        for name in searched
        if terms[name]
        for record in found.get(name, ())
    )
    return PicoQuery("\n".join(lines), chosen, _query_key(topic, chosen), unused, headings)


def _tier(value: str) -> Tier:
    tier = _TIER_ALIASES.get(value.strip().casefold())
    if tier == "A":
        return "A"
    if tier == "B":
        return "B"
    if tier == "both":
        return "both"
    raise InvalidQueryError(f"unknown tier {value[:20]!r}; tiers: {', '.join(TIERS)}")


def _checked(value: str | None) -> tuple[str, ...]:
    """The element's terms, normalized and checked by `queries`' rules (as an indication)."""
    terms = split_terms(value)
    return TopicTerms.of(terms).indication if terms else ()


def _group(terms: tuple[str, ...], records: tuple[MeshDescriptor, ...]) -> str:
    """One element's group: its headings, then its terms and a few entry terms as free text."""
    atoms = [_atom(record.name, _TAGS[record.record_type]) for record in records]
    named = {_fold(text) for record in records for text in (record.name, *record.entry_terms)}
    for term in unique_terms([*terms, *(s for r in records for s in _synonyms(r))]):
        words = [word for word in term.split() if word.casefold() not in _STOPWORDS]
        if _fold(term) in named or len(term.split()) <= MAX_PHRASE_WORDS or not words:
            atoms.append(_atom(term, "tiab"))
        elif len(words) == 1:
            atoms.append(_atom(words[0], "tiab"))
        else:
            atoms.append("(" + " AND ".join(_atom(word, "tiab") for word in words) + ")")
    return "(" + " OR ".join(atoms) + ")"


def _synonyms(record: MeshDescriptor) -> list[str]:
    """The record's words as text would use them: its natural-order name, then a few entry
    terms that are neither inverted nor qualified (no comma, no parenthesis)."""
    natural = tiab_phrase(record)
    plain = [term for term in record.entry_terms if not _INVERTED & set(term)]
    others = unique_terms(plain, exclude=natural)[:MAX_SYNONYMS_PER_HEADING]
    return list(others) if _INVERTED & set(natural) else [natural, *others]


def _atom(term: str, tag: str) -> str:
    if _BARE_TOKEN.fullmatch(term) and term.casefold() not in _OPERATORS:
        return f"{term}[{tag}]"
    return f'"{term}"[{tag}]'


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def _query_key(topic: TopicTerms, tier: Tier) -> str:
    words = [*topic.drug_names[:1], topic.indication[0]]
    slug = re.sub(r"[^a-z0-9]+", "_", " ".join(words).casefold()).strip("_") or "topic"
    suffix = f"_{tier.casefold()}_v1"
    return "pico_" + slug[: _KEY_MAX - len("pico_") - len(suffix)].rstrip("_") + suffix
