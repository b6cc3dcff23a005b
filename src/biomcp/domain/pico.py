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

The terms follow `queries`' rules (no `"`, `[`, `]`, control characters; at most
`queries.MAX_TERM_LENGTH` characters each); a bad one raises `InvalidQueryError`. The query keeps
the templates' one-group-per-line layout (PubMed reads newlines as spaces).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from biomcp.domain.errors import InvalidQueryError
from biomcp.domain.queries import TopicTerms, combined_query, tier_a_query, tier_b_query

__all__ = ["TIERS", "PicoQuery", "Tier", "pico_query", "split_terms"]

Tier = Literal["A", "B", "both"]
#: The tiers, with what each retrieves (used for argument completion and help).
TIERS: dict[str, str] = {
    "A": "clinical: trials and RCTs in humans (spec 03, Tier A)",
    "B": "basic / preclinical: mechanism, in vitro, animal models (spec 03, Tier B)",
    "both": "the combined one-shot query over both tiers (spec 03, section 1.4)",
}
_TIER_ALIASES = {"a": "A", "b": "B", "both": "both", "ab": "both", "combined": "both"}
_BARE_TOKEN = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")
_OPERATORS = frozenset({"and", "or", "not"})
_KEY_MAX = 64


@dataclass(frozen=True, slots=True)
class PicoQuery:
    """A built query: the PubMed `term`, its `tier`, a suggested checkpoint `query_key`, and
    the PICO elements given but not searched in this tier (`unused`)."""

    term: str
    tier: Tier
    query_key: str
    unused: tuple[str, ...] = ()


def split_terms(value: str | None) -> tuple[str, ...]:
    """The synonyms of one PICO element: `;`-separated, stripped, empty parts dropped."""
    if value is None:
        return ()
    return tuple(part.strip() for part in value.split(";") if part.strip())


def pico_query(
    population: str,
    intervention: str | None = None,
    comparison: str | None = None,
    outcome: str | None = None,
    *,
    tier: str = "A",
) -> PicoQuery:
    """The PubMed query for a PICO question in `tier` (`A`, `B` or `both`; case-insensitive,
    `combined` is `both`).

    Raises:
        InvalidQueryError: an unknown tier; no population term; no intervention for Tier B or
            both; or a term `queries` rejects.
    """
    chosen = _tier(tier)
    topic = TopicTerms.of(split_terms(population), drug_names=split_terms(intervention))
    given = {"comparison": _checked(comparison), "outcome": _checked(outcome)}
    unused: tuple[str, ...] = ()
    if chosen == "A":
        lines = [tier_a_query(topic, exclude_opinion=False)]
        for terms in (topic.drug_names, given["comparison"], given["outcome"]):
            if terms:
                lines.append("AND (" + " OR ".join(_tiab(term) for term in terms) + ")")
        lines.append("NOT (Review[pt] OR Editorial[pt] OR Letter[pt])")
        term = "\n".join(lines)
    else:
        if not topic.drug_names:
            raise InvalidQueryError(
                f"a Tier {chosen} query needs an intervention (a drug, target or exposure)"
            )
        build = tier_b_query if chosen == "B" else combined_query
        term = build(topic)
        unused = tuple(name for name, terms in given.items() if terms)
    return PicoQuery(term, chosen, _query_key(topic, chosen), unused)


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


def _tiab(term: str) -> str:
    if _BARE_TOKEN.fullmatch(term) and term.casefold() not in _OPERATORS:
        return f"{term}[tiab]"
    return f'"{term}"[tiab]'


def _query_key(topic: TopicTerms, tier: Tier) -> str:
    words = [*topic.drug_names[:1], topic.indication[0]]
    slug = re.sub(r"[^a-z0-9]+", "_", " ".join(words).casefold()).strip("_") or "topic"
    suffix = f"_{tier.casefold()}_v1"
    return "pico_" + slug[: _KEY_MAX - len("pico_") - len(suffix)].rstrip("_") + suffix
