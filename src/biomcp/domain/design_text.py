"""What a title and abstract state about how a study was done, read the way a reviewer reads.

Each function answers one question about the text (was anyone randomized, were the subjects
animals, was it a survey...). What kind of publication the record is (a case report, a
review, a systematic review, a guideline, a letter) is read in `design_reports`.
`design.classify_design` decides the order in which the answers are trusted.

The functions take `research_sentences`: the title and abstract without BACKGROUND sections,
background sentences ("Animal studies suggest...") and curriculum phrases ("pre-clinical
modules"). `affirmed` asks whether a pattern is stated outside a negation.

Randomization is stated in many ways: "randomized, double-blind, placebo-controlled trial",
"we randomized", "allocated at random", "random assignment", "randomly divided into groups".
It is not stated by random sampling ("a random sample", "randomly selected"), by Mendelian
randomization (a genetic epidemiology design), by a negation ("non-randomized") or by a call
for future trials ("randomized trials are needed").

A species is studied when the text names it as a subject ("forty rats"). It is not studied
when it names where cells came from ("mouse pituitary cells"), material used for people
("bovine serum albumin") or food ("fish oil", "chicken bones").
"""

from __future__ import annotations

import re

from biomcp.domain.records import PubMedRecord
from biomcp.domain.sections import section_category

__all__ = [
    "NUMBER_WORDS",
    "affirmed",
    "animal_experiment",
    "bench_measures",
    "cells_of_a_species",
    "computational_methods",
    "economic_evaluation",
    "economic_model",
    "genome_sequencing",
    "has_cell_work",
    "has_species",
    "is_mendelian_randomization",
    "lab_assays",
    "latin_square",
    "observational_methods",
    "regression_of_people",
    "research_sentences",
    "states_assay",
    "states_human_participants",
    "states_randomization",
    "states_trial",
]

_I = re.IGNORECASE
_NUMBER_WORD = (
    r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
    r"fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|"
    r"eighty|ninety|hundred|thousand)"
)
#: A number written in words ("forty-one", "one hundred and twelve"), as a regex fragment.
NUMBER_WORDS = rf"{_NUMBER_WORD}(?:(?:[- ]|\s+and\s+){_NUMBER_WORD})*"

# --- randomization and trials ----------------------------------------------------------------

_ALLOCATION_VERBS = (
    r"(?:re-?)?(?:assigned|allocated|divided|subdivided|apportioned|entered|administered|given|"
    r"treated|received|(?:distributed|split|placed|grouped|sorted) (?:in)?to)"
)
_RANDOMIZED = re.compile(
    r"(?<![\w-])(?:"
    r"randomi[sz](?:ed|ing|ation)|"  # "randomized, double-blind", "we randomized"
    rf"randomly {_ALLOCATION_VERBS}|"
    rf"{_ALLOCATION_VERBS} (?:\w+ ){{0,2}}(?:at random|randomly)|"
    r"random (?:assignment|allocation)|"
    r"(?:in|by) (?:a )?random (?:order|sequence|fashion|manner|design)"
    r")\b",
    _I,
)
# Words that make a randomization mention say nothing about this study's allocation.
_NOT_ALLOCATION = re.compile(
    r"(?:\bnon|\bun|\bquasi|\bpseudo|\bnot|\bwithout|\bno|\bMendelian|\bMR)[\s-]+(?:\w+[\s-]+)?$",
    _I,
)
# Randomization that is not this study's allocation: statistics, random sampling, trials in
# the plural (other studies: "as reported in randomized trials"), stimuli in random order.
_NOT_THIS_ALLOCATION = re.compile(
    r"\brandomi[sz]ation (?:tests?|permutations?)\b|\brandomi[sz]ed response\b|"
    r"\brandomi[sz]ed,? (?:[\w-]+,? ){0,3}?(?:surveys?|samples?|sampling|datasets?|databases?|"
    r"trials|studies|RCTs|evidence|data|presentations?|stimuli)\b",
    _I,
)
# "Randomized trials are needed", "should be confirmed in a randomized trial".
_CALL_FOR_TRIALS = re.compile(
    r"\b(?:needed|warranted|required|necessary|needs? to be|should be|future|larger|merits?|"
    r"deserves?|encourag\w+|lacking|are planned|is planned|would be (?:useful|valuable|needed)|"
    r"(?:ought|remains?) to be|await\w*|need for|basis for|justif\w+|upcoming|forthcoming|"
    r"in preparation for|prior to (?:its |the )?implementation|we recommend|"
    r"(?:is|are) (?:recommended|indicated)|"
    # a trial still running: "a randomised phase III study is underway"
    r"(?:is|are) (?:now |currently )?(?:running|underway|under way|ongoing|in progress|"
    r"being conducted|recruiting))\b",
    _I,
)
# Records split at random into data sets for a prediction model, not people into arms:
# "randomly divided into training (n = 51) and test (n = 23) sets".
_DATA_SPLIT = re.compile(
    r"\b(?:training|derivation|development|validation|testing|test)(?: \([^)]{0,40}\))? "
    r"(?:sets?|cohorts?|groups?|datasets?|samples?)\b",
    _I,
)
# A trial the study compares its own results with: "results were comparable to that of the
# phase III randomized clinical trial", "consistent with the randomised trials".
_COMPARED_TRIAL = re.compile(
    r"\b(?:comparable|similar|consistent|in line|in agreement|in keeping|concordant|compared)"
    r" (?:to|with) (?:th(?:at|ose) (?:of|in|from|seen in|observed in|reported in) )?"
    r"(?:the|a|an|previous|prior|earlier|published|pivotal|landmark)\b"
    r"(?: [\w-]+,?){0,4}? (?:randomi[sz]ed|controlled|clinical|phase [\w/]+),?"
    r"(?: [\w-]+,?){0,3}? (?:trials?|RCTs?)\b",
    _I,
)
_MENDELIAN = re.compile(r"\bMendelian randomi[sz]ation\b|\bMR (?:analys[ie]s|study|approach)\b", _I)
# Trial designs without a stated randomization. A "nonrandomized prospective cohort study"
# is a cohort: its comparison was observed, not assigned.
_CONTROLLED_TRIAL = re.compile(
    r"\b(?:non-?randomi[sz]ed,? (?!(?:\w+ ){0,2}?(?:cohort|observational|registry|"
    r"retrospective|database)\b)(?:\w+ ){0,2}(?:trial|study)|quasi-?randomi[sz]ed|single-arm|"
    r"open-label (?:\w+ ){0,2}(?:trial|study)|"
    r"phase (?:I{1,3}|[123])(?:/(?:I{1,3}|[123]))?[ab]? (?:\w+ )?(?:trial|study)|"
    r"first-in-human|pilot (?:clinical )?trial|(?:clinical|feasibility|controlled|field) trial|"
    r"double[- ]?(?:blind|masked)\w*|placebo[- ]controlled)\b",
    _I,
)
# A placebo this study gave: "compared with placebo", "X or a placebo", "the placebo group",
# "were given placebo". Not the placebo effect or response as a topic, not placebos in
# general ("placebos are taken for active drugs"), nor placebo arms of other trials.
_PLACEBO_GIVEN = re.compile(
    r"\b(?:or|and|versus|vs\.?|with|than|against|"
    r"(?:compared|relative|comparison) to) (?:an? |the |matching |identical |oral |inactive |"
    r"saline )*placebos?\b(?![- ](?:stud|trial|arm|effect|respon|controlled|pharmacolog)"
    r"| (?:are|is|can|may)\b)|"
    r"\bplacebo[- ](?:groups?|conditions?|treatments?|tablets?|capsules?|infusions?|"
    r"injections?|sessions?|days?|periods?|phases?|administration|patients|subjects|"
    r"volunteers)\b|"
    r"\b(?:given|received|receiving|took|taking|administered|ingested|treated with) "
    r"(?:[\w-]+ ){0,6}?(?:an? |the )?placebos?\b|"
    r"\bplacebos? (?:was|were) (?:given|administered)\b",
    _I,
)
# An intervention compared without randomization, in the words of education, nursing and
# public health: "a quasi-experimental study", "a non-equivalent control group", "a
# pretest-posttest design with a control group". Not other studies ("quasi-experimental
# studies were included"), nor a test of an association ("a quasi-experimental test of").
_QUASI_EXPERIMENT = re.compile(
    r"\bquasi-?experiment(?:al)?['\u2019\"]?,? (?:[\w-]+,? ){0,3}?(?:study|design|trial|"
    r"evaluation|intervention|research)\b|"
    r"\bnon-?equivalent (?:\w+ )?control group\b|"
    r"\bpre-?test[- ,/]+(?:and )?post-?test\b(?=.*\bcontrol group\b)",
    _I,
)
# A natural experiment: a law, policy or reform the investigators did not give, read from
# records or a time series. Its quasi-experimental analysis is observational.
_NATURAL_EXPERIMENT = re.compile(
    r"\b(?:time[- ]series|ex[- ]post[- ]facto|natural experiments?|synthetic control|"
    r"difference-in-differences?|regression discontinuity|laws?|polic(?:y|ies)|reforms?|"
    r"legislation|bans?)\b",
    _I,
)
_OTHER_PLACEBO_ARMS = re.compile(
    r"\bplacebo[- ](?:groups?|arms?) (?:of|from|in) (?:[\w-]+ ){0,6}?(?:trials?|studies)\b", _I
)
# Trial words that do not say this study is a trial: other trials in the plural, a trial's
# attributes ("clinical trial evidence"), and a trial another study draws on ("an ancillary
# study to a clinical trial", "data from a controlled clinical trial"). A registration
# number still counts: registered trials report one. A stated randomization keeps its label
# in a secondary analysis ("a post hoc analysis of a randomized trial"): its comparison may
# still be the randomized one.
_NOT_THIS_TRIAL = re.compile(
    r"\b(?:double[- ]?(?:blind|masked)|placebo[- ]controlled|open-label|single-arm|clinical|"
    r"controlled)\w*,? (?:[\w-]+,? ){0,3}?(?:trials|RCTs)\b|"
    r"\b(?:clinical|controlled) trial (?:evidence|data|designs?|enterprise|literature|results|"
    r"findings|protocols?|sites?|networks?|methodolog\w*|research|programs?|landscape|"
    r"endpoints?|framework|monitoring|investigators?|units?|participation|recruitment|"
    r"simulations?|pipelines?)\b|"
    r"\b(?:ancillary|secondary|post[- ]hoc|exploratory)(?: [\w-]+){0,2} (?:study|analys[ie]s|"
    r"sub-?study) (?:of|to|from|within|in) (?:[\w-]+ ){0,6}?trial\b|"
    r"\b(?:data|samples) (?:[\w-]+ ){0,2}?from (?:an? |the )(?:[\w-]+ ){0,5}?trial\b|"
    r"\bas part of (?:an? |the )(?:[\w-]+ ){0,5}?trial\b",
    _I,
)


def _mentions(pattern: re.Pattern[str], sentence: str, negation: re.Pattern[str]) -> bool:
    """True when `pattern` matches `sentence` where `negation` does not end the text before."""
    for match in pattern.finditer(sentence):
        if not negation.search(sentence[: match.start()][-40:]):
            return True
    return False


def _randomization_sentences(sentences: list[str]) -> list[str]:
    return [
        s
        for s in sentences
        if not _CALL_FOR_TRIALS.search(s)
        and not _MENDELIAN.search(s)
        and not _DATA_SPLIT.search(s)
        and _mentions(
            _RANDOMIZED, _NOT_THIS_ALLOCATION.sub(" ", _COMPARED_TRIAL.sub(" ", s)), _NOT_ALLOCATION
        )
    ]


def states_randomization(sentences: list[str]) -> bool:
    """True when the text says this study's participants (or units) were randomized."""
    return bool(_randomization_sentences(sentences))


def states_trial(sentences: list[str]) -> bool:
    """True when the text describes a trial without stating randomization: single-arm,
    open-label, phase 1-3, pilot or controlled trials, double-blind or placebo-controlled,
    a placebo given to this study's subjects (`_PLACEBO_GIVEN`), or a quasi-experimental
    design that is not a natural experiment (`_QUASI_EXPERIMENT`). A trial the text only
    mentions does not count (`_NOT_THIS_TRIAL`)."""
    for s in sentences:
        if _CALL_FOR_TRIALS.search(s):
            continue
        own = _NOT_THIS_TRIAL.sub(" ", _COMPARED_TRIAL.sub(" ", s))
        if _mentions(_CONTROLLED_TRIAL, own, _NEGATED) or _mentions(
            _PLACEBO_GIVEN, _OTHER_PLACEBO_ARMS.sub(" ", own), _NEGATED
        ):
            return True
        if _mentions(_QUASI_EXPERIMENT, own, _NEGATED) and not _NATURAL_EXPERIMENT.search(s):
            return True
    return False


_LATIN_SQUARE = re.compile(r"\blatin[- ]square\b", _I)


def latin_square(sentences: list[str]) -> bool:
    """True when treatments were given in a Latin square design: each subject or group takes
    the treatments in an order drawn from the square, an allocation design of its own."""
    return affirmed(_LATIN_SQUARE, sentences)


def is_mendelian_randomization(text: str) -> bool:
    """True for a Mendelian randomization study (genetic variants as instruments)."""
    return bool(_MENDELIAN.search(text))


# --- species and people ----------------------------------------------------------------------

# Lower case for the short ambiguous words ("rat", not "HW-RAT"; "Rats" opens sentences,
# hence the capital allowed only at the start of a word that is not an acronym).
# "Knockout" and "transgenic" name a genetic change, not a species: knockout cell lines and
# transgenic plants are common, and a knockout mouse is named by "mouse".
_SPECIES = re.compile(
    r"(?<![\w-])(?:[Mm]ice|[Mm]ouse|[Mm]urine|[Rr]ats?|[Rr]odents?|[Gg]uinea[- ]pigs?|"
    r"[Pp]iglets?|[Pp]igs?|[Pp]orcine|[Ss]wine|[Mm]inipigs?|[Gg]ilts?|[Ss]ows?|[Dd]ogs?|"
    r"[Cc]anine|[Bb]eagles?|[Rr]abbits?|[Ss]heep|[Oo]vine|[Ll]ambs?|[Ee]wes?|[Zz]ebrafish|"
    r"(?:[Nn]on-?human )?[Pp]rimates?|"
    r"[Mm]onkeys?|[Mm]acaques?|Macaca|[Bb]aboons?|[Mm]armosets?|[Hh]amsters?|[Gg]erbils?|"
    r"[Ff]errets?|"
    r"[Cc]ats?|[Ff]eline|[Hh]orses?|[Ee]quine|[Pp]on(?:y|ies)|[Cc]attle|[Cc]ows?|[Cc]alves|[Bb]ovine|"
    r"[Hh]eifers?|[Ss]teers?|[Bb]ulls|[Gg]oats?|[Cc]aprine|[Cc]hickens?|[Cc]hicks?|[Hh]ens|"
    # Livestock of other regions. A capital "Buffalo" in the singular is mostly the city.
    r"buffalo(?:e?s)?|Buffaloe?s|[Cc]amels?|[Dd]onkeys?|[Yy]aks?|[Rr]uminants|"
    r"[Bb]roilers?|[Ff]owls?|[Cc]ockerels?|[Rr]oosters?|"
    r"[Qq]uails?|[Dd]ucks?|Drosophila|[Ff]ruit ?fl(?:y|ies)|Caenorhabditis|C\. elegans|"
    r"Xenopus|[Ff]rogs?|[Ff]ish|[Tt]rout|[Ss]almon|[Ll]ivestock|[Aa]nimal models?|"
    r"[Aa]nimal (?:stud(?:y|ies)|experiments?|trials?)|"
    r"[Aa]nimals|[Xx]enografts?|"
    # Amphibians, reptiles, birds, fish and invertebrates of the laboratory; not the words
    # that name a setting for human studies ("birds", "bats", "insects", "deer", "snails"),
    # nor "Turkey" the country or the Hedgehog pathway.
    r"[Tt]oads?|[Nn]ewts?|[Ss]alamanders?|Necturus|Bufo|[Ll]izards?|[Tt]urtles?|turkeys?|Turkeys|"
    r"[Pp]igeons?|[Gg]oldfish|[Cc]arp|[Cc]atfish|[Tt]ilapia|[Ee]els?|[Ss]harks?|[Cc]rabs?|"
    r"[Cc]rayfish|[Ll]obsters?|[Ss]quids?|Aplysia|[Ll]eech(?:es)?|[Ee]arthworms?|"
    r"[Ss]ea urchins?|[Ss]tarfish|Tetrahymena|Paramecium|[Cc]iliates?|[Ll]ocusts?|"
    r"[Cc]ockroach(?:es)?|[Hh]oney ?bees?|[Ww]asps?|[Mm]oths?|[Ss]ilkworms?|[Oo]possums?|"
    r"[Aa]rmadillos?|[Vv]oles?|[Cc]hinchillas?|[Aa]mphibians?|[Rr]eptiles?|[Ss]ongbirds?|"
    r"[Ss]tarlings?|[Zz]ebra finch(?:es)?|[Bb]udgerigars?|[Ss]parrows?)(?![\w-])"
)
_SPECIES_FALSE_FRIENDS = re.compile(
    r"\b(?:dog|cat|animal|rat|snake|horse)[- ]bites?\b|\bguinea[- ]pig (?:of|for) \b|"
    r"\bcat[- ]scratch\b|\bpet owners?\b|\bowners? of (?:dogs|cats|pets)\b|"
    r"\b(?:dog|animal|pet|horse|equine)[- ]assisted\b|\bChinese hamster ovary\b|"
    r"\b(?:leech|crab|eel|shark|lizard|turtle)[- ]bites?\b|\bsea urchin (?:spines?|stings?)\b|"
    r"\bmoth[- ]?(?:repellents?|balls?)\b|\bcold turkey\b|"
    r"\bpigeon (?:peas?|breeders?|breast|chest)\b|"
    r"\b(?:honey ?)?(?:bees?|wasps?|hornets?)[- ](?:venoms?|stings?|toxins?)\b|"
    r"\b(?:cockroach|mite|moth)[- ]?allerg\w+\b|\b(?:eel|salmon) calcitonin\b|"
    r"\bgoldfish bowl\b|\bsilkworm cocoons?\b|\bchick ?peas?\b|\brooster combs?\b|"
    r"\bchick cell agglutination\b|\bfowl ?(?:plague|pox)\b|"
    # fish as food: "fish consumption", "fish oil", "intake of fish"
    r"\bfish[- ]?(?:oils?|consumption|intake|meals?|products?|eating|eaters|allerg\w*|"
    r"sauce)\b|\b(?:intake|consumption|eating) of (?:\w+ ){0,2}?fish\b|"
    # meat and bones as food: "chicken bone ingestion", "raw chicken meat"
    r"\b(?:chicken|fish|duck|turkey|pork|beef)[- ](?:bones?|meat|nuggets|broth|soup)\b",
    _I,
)
# Animal material used on or for people: "bovine intestines" for a surgical skills test,
# "porcine skin" grafts, "bovine serum albumin". Counted, it is what the study used instead:
# "Twelve hypertrophied pig hearts underwent...".
_ANIMAL_MATERIAL = re.compile(
    r"\b(?:bovine|porcine|ovine|equine|canine|murine|animal|pig|cow|sheep) (?:intestines?|"
    r"tissues?|skin|hearts?|bones?|serum|albumin|collagen|pericardium|cadavers?|xenografts?|"
    r"valves?|grafts?|insulin|heparin|surfactant|models? (?:of|for) (?:surgical )?training)\b",
    _I,
)
# Cells taken from a species and studied at the bench: "mouse pituitary AtT-20 cells", "rat
# bone marrow-derived mesenchymal stem cells". The species is where the cells came from.
# Neither neurons nor monkeys: "monkey cortical neurons" are mostly recorded in the animal.
_ANIMAL_CELLS = re.compile(
    r"\b(?:mouse|murine|rat|hamster|rabbit|porcine|pig|bovine|canine|dog|feline|equine|ovine|"
    r"chicken|chick) (?:[\w-]+ ){0,4}?(?:cells|cell lines?|hepatocytes|"
    r"fibroblasts|macrophages|cardiomyocytes|myocytes|chondrocytes|osteoblasts|"
    r"keratinocytes|myoblasts|adipocytes|preadipocytes|microglia|astrocytes|splenocytes)\b",
    _I,
)
# A count (not a year, not a choice "of two") and at most one word before the material:
# "Twelve hypertrophied pig hearts".
_COUNT_BEFORE = re.compile(
    rf"(?<![\w.,])(?<!\bof )(?:(?!(?:19|20)\d\d\b)\d[\d,]*|{NUMBER_WORDS})(?: [a-z][\w-]*)? $", _I
)
# People named by a plural noun, for a sample or an analysis of them.
_PEOPLE_WORDS = (
    r"(?:patients|participants|volunteers|adults|children|adolescents|women|men|students|"
    r"individuals|people|persons|residents|workers|respondents|infants|mothers|pregnan\w+|"
    r"veterans|nurses|physicians)"
)
_HUMAN_PARTICIPANTS = re.compile(
    rf"\b(?:\d[\d,]*|{NUMBER_WORDS}) (?:\w+[- ]){{0,3}}?(?:patients|participants|subjects|women|"
    r"men|children|adults|adolescents|infants|neonates|newborns|volunteers|respondents|"
    r"residents|veterans|mothers|pregnant women|survivors|nurses|physicians|students|workers|"
    r"employees|staff|carriers|relatives|siblings|twins|healthy controls|"
    r"athletes|runners|individuals|persons|people|cases)\b|\b(?:patients|participants|"
    r"subjects|volunteers|runners|athletes|respondents|students|workers|nurses|physicians|"
    r"women|men|children|adults|adolescents|infants|midwives|residents|trainees|surgeons)"
    r"(?: \([^)]{1,30}\))? (?:were|was|who|with|undergoing|aged|"
    r"conducted|performed|completed|underwent)\b|"
    # "a sample of healthy volunteers", "a random sample of people with bipolar psychosis"
    rf"\bsample of (?:[\w-]+ ){{0,3}}?{_PEOPLE_WORDS}\b",
    _I,
)
# Regression models fitted to data about people: the analysis of an observational study.
_REGRESSION_MODEL = re.compile(
    r"\b(?:logistic|Cox|multivariable|multivariate|linear|Poisson|multinomial|"
    r"mixed[- ]effects?|multilevel|hierarchical) (?:\w+ )?(?:regression|models?)\b",
    _I,
)
_PEOPLE = re.compile(rf"\b{_PEOPLE_WORDS}\b", _I)


def affirmed(
    pattern: re.Pattern[str], sentences: list[str], false_friends: re.Pattern[str] | None = None
) -> bool:
    """True when `pattern` matches a sentence outside a negation and a false friend."""
    for sentence in sentences:
        text = false_friends.sub(" ", sentence) if false_friends else sentence
        for match in pattern.finditer(text):
            if not _NEGATED.search(text[: match.start()][-40:]):
                return True
    return False


def has_species(sentences: list[str]) -> bool:
    """True when an animal species is named as something this study used."""
    return affirmed(_SPECIES, [_without_material(s) for s in sentences], _SPECIES_FALSE_FRIENDS)


def _without_material(sentence: str) -> str:
    """`sentence` without the animal cells it names, and without the animal material it names
    unless the material is counted."""
    sentence = _ANIMAL_CELLS.sub(" ", sentence)
    return _ANIMAL_MATERIAL.sub(
        lambda m: m.group(0) if _COUNT_BEFORE.search(sentence, 0, m.start()) else " ", sentence
    )


def states_human_participants(sentences: list[str]) -> bool:
    """True when people took part: "312 patients", "participants were recruited"."""
    return affirmed(_HUMAN_PARTICIPANTS, sentences)


def regression_of_people(sentences: list[str]) -> bool:
    """True when regression models are fitted and the study's sentences name people."""
    return affirmed(_REGRESSION_MODEL, sentences) and affirmed(_PEOPLE, sentences)


def animal_experiment(sentences: list[str]) -> bool:
    """True when the subjects of a trial-like experiment are animals: a species in a sentence
    that states randomization ("Forty rats were randomly divided"), or a species named and no
    people taking part."""
    for sentence in _randomization_sentences(sentences):
        if has_species([sentence]):
            return True
    return has_species(sentences) and not states_human_participants(sentences)


# --- economic evaluations and laboratory work ------------------------------------------------

# Measures only a full economic evaluation reports; "cost-effectiveness" alone is often a word
# in an essay or a background sentence.
_ECONOMIC = re.compile(
    r"\b(?:QALYs?|quality[- ]adjusted life[- ]years?|ICERs?|incremental cost\w*|"
    r"cost[- ]utility|budget[- ]impact analys[ie]s|willingness[- ]to[- ]pay thresholds?)\b",
    _I,
)
_ECONOMIC_ANALYSIS = re.compile(
    r"\b(?:cost[- ](?:effectiveness|utility|benefit|minimi[sz]ation) (?:analys[ie]s|"
    r"evaluations?|stud(?:y|ies)|models?)|economic evaluations?)\b",
    _I,
)
_ECONOMIC_MODEL = re.compile(
    r"\b(?:Markov|decision[- ]analytic(?:al)?|decision[- ]tree|microsimulation|"
    r"partitioned survival|simulation) (?:\w+ )?models?\b|\bmodel-based\b",
    _I,
)
_IN_VITRO = re.compile(
    r"\bin vitro\b(?! fertili[sz]ation| maturation| (?:diagnostic|diagnosis))|"
    r"\bcell lines?\b|\bcultured (?:\w+ )?cells\b|\bcell cultures?\b|\bcells were (?:cultured|"
    r"treated|transfected|incubated)\b|\bwere (?:cultured|incubated|transfected)\b|"
    r"\bclinical isolates\b|\bisolates (?:were|of)\b|"
    r"\b(?:HeLa|HEK ?293T?|MCF-?7|A549|HepG2|Caco-2|Jurkat|THP-1|SH-SY5Y|PC12|U87|HCT116|"
    r"LNCaP|RAW ?264\.7|3T3|HUVECs?|iPSCs?|organoids?)\b|\bMIC\b|\bminimum inhibitory "
    r"concentrations?\b|\bspermatozoa\b|\bin culture\b",
)
# A concentration or an enzyme assay measured at the bench ("IC50 = 6.68 μg/mL", "enzyme
# inhibition assays"). Studies of people measure them too (platelet enzymes of patients), so
# they make laboratory work only when no people take part.
_BENCH_MEASURES = re.compile(r"\bIC ?50s?\b|\benzym\w+ (?:inhibition )?assays?\b", _I)
# An assay named beside computational work ("molecular docking and a binding assay"): the
# computation supports bench results.
_ASSAY = re.compile(r"\bassays?\b", _I)
_IN_VITRO_FALSE_FRIENDS = re.compile(r"\bin vitro fertili[sz]ation\b|\bIVF\b|\bICSI\b", _I)
# Bench assays of cell biology; two of them with cells make laboratory work.
_LAB_ASSAYS = re.compile(
    r"\b(?:CCK-?8|MTT|colony formation|transwell|wound[- ]healing|scratch assay|western blot\w*|"
    r"immunoblot\w*|siRNA|shRNA|knock(?:ed)?[- ]?down|overexpress\w*|luciferase|"
    r"flow cytometry|qRT-PCR|RT-qPCR|immunofluorescence|EdU|co-?immunoprecipitation|"
    r"transfect\w+|apoptosis assay|TUNEL)\b",
    _I,
)
_CELLS = re.compile(r"\bcells\b", _I)


def has_cell_work(sentences: list[str]) -> bool:
    """True for in-vitro work: cell lines, cultured cells, clinical isolates, MICs."""
    return affirmed(_IN_VITRO, sentences, _IN_VITRO_FALSE_FRIENDS)


def cells_of_a_species(sentences: list[str]) -> bool:
    """True when cells are named by the species they came from ("isolated rat hepatocytes")."""
    return affirmed(_ANIMAL_CELLS, sentences)


def bench_measures(sentences: list[str]) -> bool:
    """True when a half-maximal inhibitory concentration or an enzyme assay was measured."""
    return affirmed(_BENCH_MEASURES, sentences)


def states_assay(sentences: list[str]) -> bool:
    """True when the study's sentences name an assay ("a dual-luciferase assay")."""
    return affirmed(_ASSAY, sentences)


def lab_assays(text: str) -> bool:
    """True when cells are studied with at least two distinct bench assays (western blot,
    siRNA, CCK-8, flow cytometry...)."""
    found = {m.group(0).casefold() for m in _LAB_ASSAYS.finditer(text)}
    return len(found) >= 2 and bool(_CELLS.search(text))


def economic_evaluation(text: str) -> bool:
    """True for a full economic evaluation: QALYs, ICERs, incremental costs, cost-utility."""
    return bool(_ECONOMIC.search(text))


def economic_model(text: str) -> bool:
    """True for an economic evaluation run on a model (Markov, decision tree, simulation)."""
    analysis = _ECONOMIC.search(text) or _ECONOMIC_ANALYSIS.search(text)
    return bool(analysis and _ECONOMIC_MODEL.search(text))


# --- observational and computational work --------------------------------------------------

_OBSERVATIONAL_TEXT = re.compile(
    r"\b(?:retrospective(?:ly)?|prospective(?:ly)?|cohorts?|case[- ]control|cross[- ]sectional|"
    r"population-based|registry|register-based|surveys?|questionnaires?|case series|"
    r"consecutive (?:\w+ ){0,2}patients|consecutive series|medical records|chart review|"
    r"follow[- ]up study|longitudinal (?:study|design|data)|observational|"
    r"epidemiolog\w+ study|interviews?|focus groups?|"
    r"qualitative (?:study|analysis|research)|"
    # human data at the population level: registries, claims, audits, ecological analyses
    r"routinely collected|administrative (?:\w+ )?data|claims data|(?:census|postcode|"
    r"national|population|county|state|area)[- ](?:level )?data|audits?|"
    # an ecological study, not an ecological niche, process or risk to nature
    r"ecologic(?:al)? (?:stud(?:y|ies)|analys[ie]s|design|data|correlations?|regressions?|"
    r"comparisons?|approach)|"
    r"secondary analysis|beneficiaries|interrupted time[- ]series|difference-in-differences|"
    r"(?:patients|participants|subjects|women|men|children|volunteers|individuals) "
    r"(?:were|was) (?:enrolled|recruited|included|studied|interviewed|surveyed|evaluated|"
    r"examined|assessed|followed)|we (?:enrolled|recruited|interviewed|surveyed)|"
    # "we studied 64 cases", not "we studied the effects of X in monkeys"
    r"we studied (?:[\w-]+ ){0,4}?(?:\d|patients|participants|subjects|women|men|children|"
    r"adults|infants|neonates|individuals|people|persons|cases|volunteers|families|twins|"
    r"pregnancies|residents|students|workers|cohorts?)|"
    r"(?:were|was) (?:recruited|enrolled))\b",
    _I,
)
# "Simulated" names computational work only when it names data ("simulated datasets"); a
# simulated condition of a laboratory or field experiment ("simulated sunlight", "simulated
# driving", "a simulated tidal cycle") is an experiment.
_COMPUTATIONAL = re.compile(
    r"\b(?:in silico|(?:micro)?simulations?|simulated (?:data|datasets?|populations?|cohorts?|"
    r"scenarios?|trials?|patients)|Monte Carlo|computational (?:model|study|analysis|"
    r"approach|method)s?|molecular (?:docking|dynamics)|finite element|mathematical model|"
    r"bioinformatic\w*|machine learning|deep learning|"
    r"neural networks?|phantoms?|synthetic (?:cases|data(?:sets?)?)|virtual patients)\b|"
    # software and the language it is written in: "a framework written in Julia"
    r"\b(?:written|implemented|coded) in (?-i:Julia|Python|R|C\+\+|C|Java|MATLAB|Rust|Fortran)\b",
    _I,
)
_GENOMICS_TEXT = re.compile(
    r"\b(?:genome sequenc\w+|sequencing (?:and|of) \w+|chromosome \d+ of|whole-genome)\b",
    _I,
)


def observational_methods(sentences: list[str]) -> bool:
    """True for observational methods: cohorts, registries, surveys, chart reviews..."""
    return affirmed(_OBSERVATIONAL_TEXT, sentences)


def computational_methods(sentences: list[str]) -> bool:
    """True for computational methods: in silico, simulation, docking, machine learning."""
    return affirmed(_COMPUTATIONAL, sentences)


def genome_sequencing(text: str) -> bool:
    """True when the text reports sequencing an organism's genome or chromosomes."""
    return bool(_GENOMICS_TEXT.search(text))


# --- sentences that can describe the study ---------------------------------------------------

# Background and negation: a species named there is not what the study did.
_BACKGROUND_SENTENCE = re.compile(
    r"\b(?:(?:previous|prior|earlier|recent|other|many|several|some|few) (?:\w+ ){0,2}"
    r"(?:studies|reports|work|research|data|trials)|(?:studies|data|evidence|experiments|work) "
    r"(?:in|from|on|with) (?:\w+ ){0,3}(?:have|has) |have (?:been )?(?:shown|demonstrated|"
    r"suggested|reported|revealed|indicated)|has (?:been )?(?:shown|demonstrated|suggested|"
    r"reported)|(?:is|are|was|were) (?:well |widely )?known|suggests? that|it is unknown|"
    r"remains? (?:unclear|unknown)|(?:animal|preclinical|pre-clinical|experimental|laboratory) "
    r"(?:studies|models|data|evidence|work) (?:suggest|show|indicate|have|has))",
    _I,
)
_NEGATED = re.compile(
    r"\b(?:no|not|without|non|never|neither|nor|instead of|rather than)\W+"
    r"(?:\w+\W+){0,2}$",
    _I,
)
# A sentence of a background section that speaks of this study: its aim or design, what the
# authors did, or a methods heading run into the section ("...unclear. Methods: 52 patients").
_THIS_STUDY = re.compile(
    r"\b(?:this|the present|the current|our)(?! (?:previous|prior|earlier|recent)\b) "
    r"(?:[\w-]+,? ){0,4}?(?:study|trial|analysis|research|investigation|work|paper|survey|"
    r"experiment|review)\b|"
    r"\bwe (?:aim|aimed|sought|conducted|performed|carried out|undertook|designed|"
    r"randomi[sz]ed|enrolled|recruited|assessed|evaluated|investigated|examined|compared|"
    r"studied|hypothesi[sz]ed|report|describe|present)\b|"
    r"\b(?:methods?|design)\s*:",  # "Methods:", "Patients and Methods:", "Settings and Design:"
    _I,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[])")
_CURRICULUM = re.compile(
    r"\bpre-?clinical (?:modules?|years?|students?|curricul\w+|courses?|phase of|training|"
    r"sciences?|education|teaching)\b",
    _I,
)


def research_sentences(record: PubMedRecord) -> list[str]:
    """The sentences of the title and abstract that can describe what this study did.
    A background section keeps only the sentences that speak of this study (`_THIS_STUDY`).
    A section is background when NLM files it so, or, on a record NLM has not categorized
    yet (UNASSIGNED), when its label names one ("Importance", "Context"). Background
    sentences elsewhere ("Previous studies have shown...") and curriculum phrases go too."""
    texts = [(record.title or "", False)]
    for section in record.abstract:
        background = section_category(section.label, section.category) == "BACKGROUND"
        texts.append((section.text, background))
    sentences: list[str] = []
    for text, background in texts:
        for sentence in _SENTENCE_END.split(text):
            if not sentence or _BACKGROUND_SENTENCE.search(sentence):
                continue
            if background and not _THIS_STUDY.search(sentence):
                continue
            sentences.append(_CURRICULUM.sub(" ", sentence))
    return sentences
