"""The PubMed query builders against spec 03 sections 1 and 11."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biomcp.domain.errors import InvalidQueryError
from biomcp.domain.queries import (
    MAX_TERM_LENGTH,
    TopicTerms,
    combined_query,
    compact,
    tier_a_query,
    tier_b_query,
)

pytestmark = pytest.mark.unit

# Spec 03 text, verbatim (templates of section 1, worked examples of section 11).
SPEC_TIER_A = """\
(<INDICATION>[mh] OR <INDICATION>[tiab])
AND ("Clinical Trial"[pt] OR "Randomized Controlled Trial"[pt] OR
     "Clinical Trial, Phase I"[pt] OR "Clinical Trial, Phase II"[pt] OR "Clinical Trial, Phase III"[pt])
AND (humans[mh] OR humans[tiab])
NOT (animals[mh] NOT humans[mh])
NOT (Review[pt] OR Editorial[pt] OR Letter[pt])
"""  # noqa: E501 -- the spec text, verbatim
SPEC_TIER_B = """\
(<TARGET>[tiab] OR <TARGET_MESH>[mh] OR <DRUG_NAME>[tiab])
AND (<INDICATION>[mh] OR <INDICATION>[tiab])
AND (mechanism[tiab] OR "molecular mechanism"[tiab] OR "signal transduction"[mh] OR
     "pharmacology"[sh] OR "pharmacodynamics"[tiab] OR "pharmacokinetics"[tiab] OR
     "in vitro"[tiab] OR "animal model"[tiab] OR mouse[tiab] OR rat[tiab] OR "preclinical"[tiab])
NOT (Review[pt] OR Editorial[pt] OR Letter[pt])
"""
SPEC_COMBINED = """\
(<TARGET>[tiab] OR <TARGET_MESH>[mh] OR <DRUG_NAME>[tiab])
AND (<INDICATION>[mh] OR <INDICATION>[tiab])
AND (
  "Clinical Trial"[pt] OR "Randomized Controlled Trial"[pt] OR
  "Clinical Trial, Phase I"[pt] OR "Clinical Trial, Phase II"[pt] OR "Clinical Trial, Phase III"[pt] OR
  mechanism[tiab] OR "molecular mechanism"[tiab] OR "in vitro"[tiab] OR "animal model"[tiab] OR preclinical[tiab]
)
AND (humans[mh] OR humans[tiab] OR NOT animals[mh])   -- allows preclinical when intended
NOT (Review[pt] OR Editorial[pt] OR Letter[pt])
"""  # noqa: E501 -- the spec text, verbatim
SPEC_GLP1 = """\
("GLP-1 receptor"[mh] OR "GLP-1 receptor agonist"[tiab] OR semaglutide[tiab] OR tirzepatide[tiab])
AND (Obesity[mh] OR obesity[tiab])
AND (
  "Clinical Trial"[pt] OR "Randomized Controlled Trial"[pt] OR
  "Clinical Trial, Phase I"[pt] OR "Clinical Trial, Phase II"[pt] OR "Clinical Trial, Phase III"[pt] OR
  mechanism[tiab] OR "pharmacodynamics"[tiab] OR "in vitro"[tiab] OR "animal model"[tiab] OR preclinical[tiab]
)
NOT (Review[pt] OR Editorial[pt] OR Letter[pt])
"""  # noqa: E501 -- the spec text, verbatim
SPEC_KRAS = """\
("KRAS G12C"[tiab] OR "KRAS protein"[mh] OR sotorasib[tiab] OR adagrasib[tiab])
AND ("Carcinoma, Non-Small-Cell Lung"[mh] OR "non-small cell lung cancer"[tiab] OR NSCLC[tiab])
AND (
  "Clinical Trial"[pt] OR "Randomized Controlled Trial"[pt] OR
  "Clinical Trial, Phase II"[pt] OR "Clinical Trial, Phase III"[pt] OR
  mechanism[tiab] OR "signal transduction"[mh] OR "in vitro"[tiab] OR "animal model"[tiab]
)
NOT (Review[pt] OR Editorial[pt] OR Letter[pt])
"""

NO_OPINION = "NOT (Review[pt] OR Editorial[pt] OR Letter[pt])"

ASTHMA = TopicTerms.of(
    "asthma", targets="IL-5", target_mesh="Interleukin-5", drug_names="mepolizumab"
)

# A quoted phrase with its tag, or a bare token with its tag (not preceded by token characters).
ATOM = re.compile(r'"[^"]*"\[[a-z]+\]|(?<![A-Za-z0-9-])[A-Za-z0-9-]+\[[a-z]+\]')


def atoms(query: str) -> list[str]:
    return ATOM.findall(query)


def outside_quotes(query: str) -> str:
    return " ".join(query.split('"')[::2])


def normalized_atom(atom: str) -> tuple[str, str]:
    term, _, tag = atom.rpartition("[")
    return term.strip('"').casefold(), tag.rstrip("]")


def top_level_groups(query: str) -> list[tuple[str, frozenset[tuple[str, str]]]]:
    """(operator before the group, set of normalized atoms in it), for each top-level group."""
    groups: list[tuple[str, frozenset[tuple[str, str]]]] = []
    depth, in_quote, start, gap_start = 0, False, 0, 0
    text = compact(query)
    for index, char in enumerate(text):
        if char == '"':
            in_quote = not in_quote
        elif not in_quote and char == "(":
            if depth == 0:
                start = index
            depth += 1
        elif not in_quote and char == ")":
            depth -= 1
            if depth == 0:
                operator = text[gap_start:start].strip()
                groups.append((operator, frozenset(map(normalized_atom, atoms(text[start:index])))))
                gap_start = index + 1
    return groups


def fill(template: str, *, indication: str, target: str, mesh: str, drug: str) -> str:
    return (
        template.replace("<INDICATION>", indication)
        .replace("<TARGET_MESH>", mesh)
        .replace("<TARGET>", target)
        .replace("<DRUG_NAME>", drug)
    )


# --- golden outputs ------------------------------------------------------------------------------


def test_tier_a_for_a_simple_topic_is_the_spec_template_with_the_indication_filled_in() -> None:
    assert tier_a_query(ASTHMA) == (
        "(asthma[mh] OR asthma[tiab])\n"
        'AND ("Clinical Trial"[pt] OR "Randomized Controlled Trial"[pt] OR\n'
        '     "Clinical Trial, Phase I"[pt] OR "Clinical Trial, Phase II"[pt] OR'
        ' "Clinical Trial, Phase III"[pt])\n'
        "AND (humans[mh] OR humans[tiab])\n"
        "NOT (animals[mh] NOT humans[mh])\n"
        "NOT (Review[pt] OR Editorial[pt] OR Letter[pt])"
    )


def test_tier_b_for_a_simple_topic_is_the_spec_template_with_the_slots_filled_in() -> None:
    assert tier_b_query(ASTHMA) == (
        "(IL-5[tiab] OR Interleukin-5[mh] OR mepolizumab[tiab])\n"
        "AND (asthma[mh] OR asthma[tiab])\n"
        'AND (mechanism[tiab] OR "molecular mechanism"[tiab] OR "signal transduction"[mh] OR\n'
        '     "pharmacology"[sh] OR "pharmacodynamics"[tiab] OR "pharmacokinetics"[tiab] OR\n'
        '     "in vitro"[tiab] OR "animal model"[tiab] OR mouse[tiab] OR rat[tiab] OR'
        ' "preclinical"[tiab])\n'
        "NOT (Review[pt] OR Editorial[pt] OR Letter[pt])"
    )


def test_combined_for_a_simple_topic_uses_the_section_11_layout() -> None:
    assert combined_query(ASTHMA) == (
        "(IL-5[tiab] OR Interleukin-5[mh] OR mepolizumab[tiab])\n"
        "AND (asthma[mh] OR asthma[tiab])\n"
        "AND (\n"
        '  "Clinical Trial"[pt] OR "Randomized Controlled Trial"[pt] OR\n'
        '  "Clinical Trial, Phase I"[pt] OR "Clinical Trial, Phase II"[pt] OR'
        ' "Clinical Trial, Phase III"[pt] OR\n'
        '  mechanism[tiab] OR "molecular mechanism"[tiab] OR "in vitro"[tiab] OR'
        ' "animal model"[tiab] OR preclinical[tiab]\n'
        ")\n"
        "NOT (Review[pt] OR Editorial[pt] OR Letter[pt])"
    )


def test_tier_a_matches_the_spec_1_2_template_text_after_substitution() -> None:
    expected = fill(SPEC_TIER_A, indication="asthma", target="", mesh="", drug="")
    assert tier_a_query(ASTHMA) == expected.rstrip("\n")


def test_tier_b_matches_the_spec_1_3_template_text_after_substitution() -> None:
    expected = fill(
        SPEC_TIER_B, indication="asthma", target="IL-5", mesh="Interleukin-5", drug="mepolizumab"
    )
    assert tier_b_query(ASTHMA) == expected.rstrip("\n")


def test_combined_matches_the_spec_1_4_template_without_its_invalid_humans_line() -> None:
    """Spec 1.4 has `AND (humans[mh] OR humans[tiab] OR NOT animals[mh])   -- allows ...`.

    PubMed's NOT is binary (`A NOT B`), so `OR NOT animals[mh]` is not a valid expression, and
    PubMed has no `--` comments (the comment would be searched as words). The section 11 worked
    examples leave the line out, so the builder does too; everything else is the template.
    """
    spec_lines = SPEC_COMBINED.splitlines()
    invalid = [line for line in spec_lines if "OR NOT" in line]
    assert len(invalid) == 1
    assert "--" in invalid[0]
    valid = "\n".join(line for line in spec_lines if line not in invalid)
    expected = fill(
        valid, indication="asthma", target="IL-5", mesh="Interleukin-5", drug="mepolizumab"
    )
    built = combined_query(ASTHMA)
    assert built == expected
    assert "OR NOT" not in built
    assert "--" not in built
    assert "humans" not in built


def test_glp1_obesity_example_of_section_11_is_reproduced_up_to_order_and_one_default_term() -> (
    None
):
    """Section 11, GLP-1 agonists for obesity, built from slots plus "pharmacodynamics".

    Differences the builder cannot express, asserted rather than hidden:
    * the example lists the MeSH heading before the free-text target; the template of spec
      1.3 / 1.4 (which the builder follows) puts <TARGET> before <TARGET_MESH>;
    * the example writes `Obesity[mh] OR obesity[tiab]`; one indication term is spelled the same
      under both tags (PubMed is case-insensitive, so the search is identical);
    * the example replaces the template's "molecular mechanism" by "pharmacodynamics"; the
      builder keeps the template vocabulary and appends extra terms after it, bare because it is
      one token.
    Group by group, the builder's query searches the example's terms plus "molecular mechanism".
    """
    topic = TopicTerms.of(
        "obesity",
        targets="GLP-1 receptor agonist",
        target_mesh="GLP-1 receptor",
        drug_names=("semaglutide", "tirzepatide"),
    )
    built = combined_query(topic, extra_mechanism_terms="pharmacodynamics")

    assert compact(built) == (
        '("GLP-1 receptor agonist"[tiab] OR "GLP-1 receptor"[mh] OR semaglutide[tiab] OR'
        " tirzepatide[tiab]) AND (obesity[mh] OR obesity[tiab]) AND"
        ' ("Clinical Trial"[pt] OR "Randomized Controlled Trial"[pt] OR'
        ' "Clinical Trial, Phase I"[pt] OR "Clinical Trial, Phase II"[pt] OR'
        ' "Clinical Trial, Phase III"[pt] OR mechanism[tiab] OR "molecular mechanism"[tiab] OR'
        ' "in vitro"[tiab] OR "animal model"[tiab] OR preclinical[tiab] OR'
        " pharmacodynamics[tiab]) NOT (Review[pt] OR Editorial[pt] OR Letter[pt])"
    )
    assert compact(built) != compact(SPEC_GLP1)
    spec_groups, built_groups = top_level_groups(SPEC_GLP1), top_level_groups(built)
    assert [op for op, _ in built_groups] == [op for op, _ in spec_groups]
    assert [op for op, _ in built_groups] == ["", "AND", "AND", "NOT"]
    for index, ((_, spec_atoms), (_, built_atoms)) in enumerate(
        zip(spec_groups, built_groups, strict=True)
    ):
        assert spec_atoms <= built_atoms
        extra = {("molecular mechanism", "tiab")} if index == 2 else set()
        assert built_atoms - spec_atoms == extra


def test_kras_nsclc_example_of_section_11_differs_only_where_the_template_cannot_follow() -> None:
    """Section 11, KRAS G12C in NSCLC, built from slots.

    Differences the builder cannot express, asserted rather than hidden:
    * the example searches the MeSH heading only as [mh] and the free-text names only as [tiab];
      the template searches every indication term as both `[mh]` and `[tiab]`, so the builder
      adds three atoms (harmless: a free-text term is not a MeSH heading and finds nothing);
    * the example drops "Clinical Trial, Phase I"[pt], "molecular mechanism"[tiab] and
      preclinical[tiab] from the combined template and adds "signal transduction"[mh]; the
      builder keeps the template vocabulary, and extra mechanism terms are [tiab] only.
    """
    topic = TopicTerms.of(
        ("Carcinoma, Non-Small-Cell Lung", "non-small cell lung cancer", "NSCLC"),
        targets="KRAS G12C",
        target_mesh="KRAS protein",
        drug_names=("sotorasib", "adagrasib"),
    )
    built = combined_query(topic)

    assert compact(built) == (
        '("KRAS G12C"[tiab] OR "KRAS protein"[mh] OR sotorasib[tiab] OR adagrasib[tiab]) AND'
        ' ("Carcinoma, Non-Small-Cell Lung"[mh] OR "non-small cell lung cancer"[mh] OR NSCLC[mh]'
        ' OR "Carcinoma, Non-Small-Cell Lung"[tiab] OR "non-small cell lung cancer"[tiab] OR'
        ' NSCLC[tiab]) AND ("Clinical Trial"[pt] OR "Randomized Controlled Trial"[pt] OR'
        ' "Clinical Trial, Phase I"[pt] OR "Clinical Trial, Phase II"[pt] OR'
        ' "Clinical Trial, Phase III"[pt] OR mechanism[tiab] OR "molecular mechanism"[tiab] OR'
        ' "in vitro"[tiab] OR "animal model"[tiab] OR preclinical[tiab])'
        " NOT (Review[pt] OR Editorial[pt] OR Letter[pt])"
    )
    spec_groups, built_groups = top_level_groups(SPEC_KRAS), top_level_groups(built)
    assert [op for op, _ in built_groups] == [op for op, _ in spec_groups]
    (_, spec_target), (_, spec_ind), (_, spec_evidence), (_, spec_opinion) = spec_groups
    (_, built_target), (_, built_ind), (_, built_evidence), (_, built_opinion) = built_groups
    assert built_target == spec_target
    assert built_opinion == spec_opinion
    assert spec_ind <= built_ind
    assert built_ind - spec_ind == {
        ("carcinoma, non-small-cell lung", "tiab"),
        ("non-small cell lung cancer", "mh"),
        ("nsclc", "mh"),
    }
    assert built_evidence - spec_evidence == {
        ("clinical trial, phase i", "pt"),
        ("molecular mechanism", "tiab"),
        ("preclinical", "tiab"),
    }
    assert spec_evidence - built_evidence == {("signal transduction", "mh")}


# --- structure properties ------------------------------------------------------------------------

ALPHABET = "abcXYZ019 -,/()'.:;+*&#éαµ\t\n"
# Words the fixed parts of the templates already search; a generated term equal to one of them
# would appear more than once for a reason unrelated to slot expansion.
FIXED_WORDS = frozenset(
    normalized_atom(atom)[0]
    for query in (tier_a_query(ASTHMA), tier_b_query(ASTHMA), combined_query(ASTHMA))
    for atom in atoms(query)
)


def key(term: str) -> str:
    return " ".join(term.split()).casefold()


TERMS = st.text(alphabet=ALPHABET, min_size=1, max_size=30).filter(
    lambda term: bool(term.strip()) and key(term) not in FIXED_WORDS
)


@st.composite
def topics(draw: st.DrawFn) -> dict[str, list[str]]:
    """Slots of distinct terms (distinct across slots too), some repeated in another case."""
    # Leading blanks mark the case-changed repeats below, so drawn terms must not have them.
    plain = TERMS.filter(lambda t: not t[:1].isspace())
    terms = draw(st.lists(plain, min_size=2, max_size=10, unique_by=key))
    names = ["indication", "targets", "target_mesh", "drug_names"]
    slots: dict[str, list[str]] = {name: [] for name in names}
    slots["indication"].append(terms[0])
    slots[names[draw(st.integers(1, 3))]].append(terms[1])
    for term in terms[2:]:
        slots[names[draw(st.integers(0, 3))]].append(term)
    for name in names:
        repeat = draw(st.booleans())
        if slots[name] and repeat:
            slots[name].append("  " + slots[name][0].upper() + " ")
    return slots


def rendered(term: str, tag: str) -> str:
    term = " ".join(term.split())
    bare = re.fullmatch(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*", term) and term.casefold() not in {
        "and",
        "or",
        "not",
    }
    return f"{term}[{tag}]" if bare else f'"{term}"[{tag}]'


def assert_well_formed(query: str) -> None:
    assert query.count('"') % 2 == 0
    depth = 0
    for char in outside_quotes(query):
        depth += {"(": 1, ")": -1}.get(char, 0)
        assert depth >= 0
    assert depth == 0
    assert "--" not in outside_quotes(query)
    assert "OR NOT" not in outside_quotes(query)
    assert "\n" not in compact(query)


@given(topics(), st.booleans())
def test_every_query_is_balanced_and_names_each_slot_term_once_per_occurrence(
    slots: dict[str, list[str]], exclude_opinion: bool
) -> None:
    topic = TopicTerms.of(
        slots["indication"],
        targets=slots["targets"],
        target_mesh=slots["target_mesh"],
        drug_names=slots["drug_names"],
    )
    tier_a = tier_a_query(topic, exclude_opinion=exclude_opinion)
    tier_b = tier_b_query(topic, exclude_opinion=exclude_opinion)
    combined = combined_query(topic, exclude_opinion=exclude_opinion)
    expected_tags = {
        "indication": ("mh", "tiab"),
        "targets": ("tiab",),
        "target_mesh": ("mh",),
        "drug_names": ("tiab",),
    }
    for query in (tier_a, tier_b, combined):
        assert_well_formed(query)
        assert (NO_OPINION in query) is exclude_opinion
        found = atoms(query)
        for name, terms in slots.items():
            used = query is not tier_a or name == "indication"
            # The upper-cased repeats (padded with spaces) are dropped: the first spelling wins.
            kept = [term for term in terms if not term.startswith("  ")]
            repeats = [term for term in terms if term.startswith("  ")]
            for term in kept:
                for tag in ("mh", "tiab"):
                    want = 1 if used and tag in expected_tags[name] else 0
                    assert found.count(rendered(term, tag)) == want, (name, term, tag)
            for repeat in repeats:
                if rendered(repeat, "tiab") != rendered(kept[0], "tiab"):
                    assert rendered(repeat, "tiab") not in found
                    assert rendered(repeat, "mh") not in found


@given(TERMS)
def test_a_single_term_is_bare_only_when_it_is_one_plain_token(term: str) -> None:
    query = tier_a_query(TopicTerms.of(term))
    normalized = " ".join(term.split())
    plain = re.fullmatch(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*", normalized) is not None
    if plain and normalized.casefold() not in {"and", "or", "not"}:
        assert query.startswith(f"({normalized}[mh] OR {normalized}[tiab])")
    else:
        assert query.startswith(f'("{normalized}"[mh] OR "{normalized}"[tiab])')
    assert_well_formed(query)


# --- slots: OR-ing, order, de-duplication, quoting ---------------------------------------------


def test_terms_of_a_slot_are_or_ed_in_the_order_given_at_each_placeholder() -> None:
    topic = TopicTerms.of(
        ["obesity", "overweight"],
        targets=["GLP-1", "GIP"],
        target_mesh="Glucagon-Like Peptide-1 Receptor",
        drug_names=["semaglutide", "tirzepatide", "liraglutide"],
    )
    first, second = tier_b_query(topic).splitlines()[:2]
    assert first == (
        '(GLP-1[tiab] OR GIP[tiab] OR "Glucagon-Like Peptide-1 Receptor"[mh] OR'
        " semaglutide[tiab] OR tirzepatide[tiab] OR liraglutide[tiab])"
    )
    assert second == "AND (obesity[mh] OR overweight[mh] OR obesity[tiab] OR overweight[tiab])"


def test_duplicates_within_a_slot_are_dropped_case_insensitively_keeping_the_first_spelling() -> (
    None
):
    topic = TopicTerms.of(
        ["NSCLC", "nsclc", "  Non-small  cell lung cancer ", "non-small cell LUNG cancer"],
        drug_names=["Sotorasib", "sotorasib", "SOTORASIB"],
    )
    assert topic.indication == ("NSCLC", "Non-small cell lung cancer")
    assert topic.drug_names == ("Sotorasib",)
    assert tier_b_query(topic).splitlines()[0] == "(Sotorasib[tiab])"


def test_a_term_repeated_across_slots_is_kept_in_each_slot() -> None:
    topic = TopicTerms.of("gout", targets="allopurinol", drug_names="allopurinol")
    assert tier_b_query(topic).splitlines()[0] == "(allopurinol[tiab] OR allopurinol[tiab])"


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        ("obesity", "obesity[tiab]"),
        ("NSCLC", "NSCLC[tiab]"),
        ("GLP-1", "GLP-1[tiab]"),
        ("KRAS G12C", '"KRAS G12C"[tiab]'),
        ("Carcinoma, Non-Small-Cell Lung", '"Carcinoma, Non-Small-Cell Lung"[tiab]'),
        ("TNF/IL-6", '"TNF/IL-6"[tiab]'),
        ("IL-6 (interleukin)", '"IL-6 (interleukin)"[tiab]'),
        ("-leading", '"-leading"[tiab]'),
        ("double--hyphen", '"double--hyphen"[tiab]'),
        ("café", '"café"[tiab]'),
        ("semaglut*", '"semaglut*"[tiab]'),
        ("AND", '"AND"[tiab]'),
        ("or", '"or"[tiab]'),
        ("Not", '"Not"[tiab]'),
        ("android", "android[tiab]"),
        ("cats and dogs", '"cats and dogs"[tiab]'),
    ],
)
def test_a_term_is_quoted_unless_it_is_a_single_plain_token_that_is_not_an_operator(
    term: str, expected: str
) -> None:
    topic = TopicTerms.of("asthma", drug_names=term)
    assert tier_b_query(topic).splitlines()[0] == f"({expected})"


def test_whitespace_inside_a_term_collapses_and_the_ends_are_stripped() -> None:
    topic = TopicTerms.of(" non-small \t cell\nlung   cancer  ")
    assert topic.indication == ("non-small cell lung cancer",)


def test_the_convenience_constructor_takes_a_str_or_any_iterable_per_slot() -> None:
    from_str = TopicTerms.of("asthma", targets="IL-5", target_mesh="Interleukin-5")
    from_iterables = TopicTerms.of(
        ["asthma"], targets=("IL-5",), target_mesh=(t for t in ["Interleukin-5"])
    )
    assert from_str == from_iterables == TopicTerms(("asthma",), ("IL-5",), ("Interleukin-5",))


def test_the_plain_constructor_normalizes_too_and_the_topic_is_frozen() -> None:
    topic = TopicTerms(("  asthma ", "ASTHMA"), drug_names=("mepolizumab",))
    assert topic.indication == ("asthma",)
    with pytest.raises(dataclasses.FrozenInstanceError):
        topic.indication = ("copd",)  # type: ignore[misc]


def test_tier_a_searches_the_indication_only_and_ignores_target_slots() -> None:
    with_targets = tier_a_query(ASTHMA)
    assert with_targets == tier_a_query(TopicTerms.of("asthma"))
    assert "mepolizumab" not in with_targets


# --- options -------------------------------------------------------------------------------------


@pytest.mark.parametrize("build", [tier_a_query, tier_b_query, combined_query])
def test_the_opinion_exclusion_is_the_last_line_by_default_and_can_be_switched_off(
    build: Callable[..., str],
) -> None:
    with_exclusion = build(ASTHMA)
    without = build(ASTHMA, exclude_opinion=False)
    assert with_exclusion.splitlines()[-1] == NO_OPINION
    assert NO_OPINION not in without
    assert with_exclusion == without + "\n" + NO_OPINION


def test_tier_a_always_keeps_its_humans_filters() -> None:
    query = tier_a_query(ASTHMA, exclude_opinion=False)
    assert "AND (humans[mh] OR humans[tiab])" in query
    assert query.endswith("NOT (animals[mh] NOT humans[mh])")


def test_extra_mechanism_terms_follow_the_defaults_and_skip_terms_already_searched() -> None:
    extras = ["pharmacodynamics", "receptor occupancy", "Mechanism", "cAMP", "camp"]
    tier_b = tier_b_query(ASTHMA, extra_mechanism_terms=extras)
    combined = combined_query(ASTHMA, extra_mechanism_terms=extras)
    # Tier B already searches "pharmacodynamics"[tiab] and both already search mechanism[tiab].
    assert tier_b.splitlines()[5] == '     "receptor occupancy"[tiab] OR cAMP[tiab])'
    assert combined.splitlines()[6] == (
        '  pharmacodynamics[tiab] OR "receptor occupancy"[tiab] OR cAMP[tiab]'
    )
    assert tier_b_query(ASTHMA, extra_mechanism_terms="mouse") == tier_b_query(ASTHMA)
    for query in (tier_b, combined):
        assert_well_formed(query)


def test_an_invalid_extra_mechanism_term_is_rejected_by_name() -> None:
    with pytest.raises(InvalidQueryError, match=r"extra_mechanism_terms.*'in\[tiab\]'"):
        combined_query(ASTHMA, extra_mechanism_terms=["in[tiab]"])


# --- validation ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("term", "reason"),
    [
        ("", "empty"),
        ("   \t\n ", "empty"),
        ('GLP-1 "agonist"', "double quote"),
        ("obesity[mh]", r"\[ or \]"),
        ("a]b", r"\[ or \]"),
        ("null\x00byte", "control character"),
        ("escape\x1b[0m", "control character"),
        ("delete\x7f", "control character"),
        ("vertical\x0btab", "control character"),
        ("x" * (MAX_TERM_LENGTH + 1), f"longer than {MAX_TERM_LENGTH}"),
    ],
)
def test_a_term_pubmed_cannot_take_is_rejected_with_a_message_naming_it(
    term: str, reason: str
) -> None:
    with pytest.raises(InvalidQueryError, match=reason) as caught:
        TopicTerms.of("asthma", targets=["IL-5", term])
    message = str(caught.value)
    assert message.startswith("targets term ")
    assert repr(term)[:20] in message


def test_a_term_of_exactly_the_maximum_length_is_accepted() -> None:
    term = "x" * MAX_TERM_LENGTH
    assert TopicTerms.of(term).indication == (term,)


def test_the_length_limit_applies_after_whitespace_collapses() -> None:
    term = "a" + " " * 300 + "b"
    assert TopicTerms.of(term).indication == ("a b",)


def test_a_non_string_term_is_rejected() -> None:
    with pytest.raises(InvalidQueryError, match="drug_names term 42 is not a string"):
        TopicTerms.of("asthma", drug_names=[42])  # type: ignore[list-item]


def test_a_topic_without_an_indication_is_rejected() -> None:
    with pytest.raises(InvalidQueryError, match="indication"):
        TopicTerms.of([], targets="IL-5")


@pytest.mark.parametrize("build", [tier_b_query, combined_query])
def test_tier_b_and_combined_need_a_target_a_target_mesh_heading_or_a_drug(
    build: Callable[..., str],
) -> None:
    with pytest.raises(InvalidQueryError, match="target"):
        build(TopicTerms.of("asthma"))
    assert build(TopicTerms.of("asthma", target_mesh="Interleukin-5"))


# --- compact -------------------------------------------------------------------------------------


def test_compact_puts_a_query_on_one_line_without_padding_inside_parentheses() -> None:
    assert compact("AND (\n  a[tiab] OR\n     b[mh]\n)\n") == "AND (a[tiab] OR b[mh])"


def test_compact_leaves_text_inside_quotes_alone() -> None:
    assert compact('(  "x ( y"[tiab]\n OR z[tiab] )') == '("x ( y"[tiab] OR z[tiab])'


def test_compact_of_the_spec_examples_is_a_single_line_pubmed_reads_the_same_way() -> None:
    for text in (SPEC_GLP1, SPEC_KRAS):
        line = compact(text)
        assert "\n" not in line
        assert "  " not in line
        assert atoms(line) == atoms(text)
