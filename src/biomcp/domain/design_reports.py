"""What a title and abstract state about a record that reports cases or reviews a topic.

A case report names its patient ("A 25-year-old man presented with...", "A patient with X is
described", "Report of two cases") or calls itself one in the title ("...: a case report",
"...in a 39-year-old woman"). A handful of cases (up to five) is still a case report, as NLM
indexes it; a larger series is observational.

A narrative review says so in its title or text ("...: a review", "In this review"). A chart or
record review is not one, nor is a title that reviews a series ("a review of 42 cases").
"""

from __future__ import annotations

import re

__all__ = [
    "case_title",
    "narrative_review",
    "narrative_title",
    "states_case",
]

_I = re.IGNORECASE
# A handful of patients: a larger series is observational.
_FEW = r"(?:a|an|one|two|three|four|five|[1-5]|single)"
_AGE_WORDS = r"(?:\d{1,3}|[a-z]+(?:-[a-z]+){0,4})"
_AGE = rf"{_AGE_WORDS}[- ](?:year|month|week|day)s?[- ]old"
_PERSON = (
    r"(?:man|woman|boy|girl|patient|male|female|infant|child|newborn|neonate|baby|gentleman|"
    r"lady|adolescent|primigravida|multigravida)"
)

# "A case series", "in a child and adolescent cohort": a group, not one patient.
_NOT_A_GROUP = (
    r"(?![ -](?:and|or|series|analys[ie]s|stud(?:y|ies)|control|mix|population|cohort|"
    r"registr\w*|definitions?|scenarios?|management|trials?|programs?|databases?|groups?)\b)"
)

# --- case reports ---------------------------------------------------------------------------

_CASE_TITLE = re.compile(
    r"\bcase reports?\b|\bcase presentation\b|"
    rf"\breports? (?:of|on) {_FEW} (?:\w+ ){{0,2}}?(?:cases?|patients?)\b|"
    rf"\b(?:apropos|à propos|a propos) (?:of )?{_FEW} (?:\w+ ){{0,2}}?cases?\b|"
    r"(?:^|[:.(\[] *)(?:a|one) (?:new |rare |unusual |fatal |familial )?case (?:of|with|in)\b|"
    r"\b(?:two|three|four|five|[2-5]) (?:new |rare |unusual |fatal |familial )?cases\b"
    r"(?!-| series| stud)|"
    rf"\bin (?:a|an) (?:[\w-]+ ){{0,2}}?(?:{_AGE}|{_PERSON}){_NOT_A_GROUP}\b|"
    r"\bin (?:two|three) (?:sisters|brothers|siblings|twins)\b",
    _I,
)
_CASE_TEXT = re.compile(
    r"\bcase report\b|"
    r"\bwe (?:report|describe|present) (?:a|an|the|two|three) "
    r"(?:\w+[- ]){0,4}(?:case|patient|man|woman|boy|girl|infant|child)s?\b|"
    rf"\ban? {_AGE} (?:\w+ ){{0,2}}(?:man|woman|boy|girl|patient|male|"
    r"female|infant|child) (?:presented|was admitted|was referred|underwent|with)\b|"
    r"\b(?:a|one) case of (?:[^.]{0,120}?) (?:is|was) (?:described|reported|presented)\b",
    _I,
)
# Words between a count and its noun that make it a study, not a case: "a study of 88 cases".
_NOT_A_CASE = r"(?!(?:of|study|series|review|analysis|survey|total|number|group)\b)"
_CASE_SENTENCE = re.compile(
    # "A patient with biopsy-proven X ... is described", "Three cases of X are reported"
    rf"\b(?:a|an|one|single) (?:{_NOT_A_CASE}[\w-]+ ){{0,4}}?(?:{_PERSON}|case)\b{_NOT_A_GROUP}"
    r"[^.]{0,160}? "
    r"(?:is|was) (?:here )?(?:described|reported|presented)\b|"
    rf"\b(?:two|three|four|five|[2-5]) (?:{_NOT_A_CASE}[\w-]+ ){{0,3}}?(?:cases|patients|"
    r"children|infants|siblings|sisters|brothers|men|women)\b[^.]{0,160}? (?:are|were) (?:here )?"
    r"(?:described|reported|presented)\b|"
    r"\breported is (?:a|an|the) case\b|(?:^|[.!?]\s+)the case of (?:a|an)\b|"
    r"\bpatient whose case\b|\bin this report,? we describe\b|"
    r"\ba report is (?:made|given) (?:on|of)\b|"
    rf"\breports? (?:of|on) {_FEW} (?:\w+ ){{0,2}}?(?:cases?|patients?)\b|"
    # a sentence that opens on one patient: "A 25-year-old man...", "An elderly woman with"
    rf"(?:^|[.!?]\s+)(?:A|An) (?:[\w-]+,? ){{0,3}}?(?:{_AGE}|{_PERSON}\b (?:with|who|had|"
    r"developed|presented|was|is))|"
    rf"\b(?:in|of) (?:a|an) {_AGE}\b{_NOT_A_GROUP}",
    _I,
)
# A sentence about patients in general ("A patient with X should be...") is not a case.
_GENERAL_PATIENT = re.compile(
    r"\b(?:should|must|may|can|could|might|will|would|if|when|whenever|every|any)\b", _I
)


def case_title(title: str) -> bool:
    """True when the title calls the record a case report or names one patient: "...: a case
    report", "Report of two cases", "...in a 39-year-old man", "...in two sisters"."""
    return bool(_CASE_TITLE.search(title))


def states_case(text: str) -> bool:
    """True for a case report: "we report a case", "A 7-year-old girl presented with", "A
    patient with X is described", "Three cases of X are reported"."""
    if _CASE_TEXT.search(text):
        return True
    for sentence in re.split(r"(?<=[.!?])\s+|\n", text):
        match = _CASE_SENTENCE.search(sentence)
        if match and not _GENERAL_PATIENT.search(sentence[: match.end() + 40]):
            return True
    return False


# --- narrative reviews ----------------------------------------------------------------------

_NARRATIVE_TITLE = re.compile(r"\bnarrative (?:review|overview|synthesis)\b", _I)
_REVIEW_TITLE = re.compile(r"\breview\b|\ban overview\b|\bstate of the art\b", _I)
# "A review of 42 cases" is a case series, not a review of a topic.
_SERIES_TITLE = re.compile(
    r"\breview of (?:the )?(?:\d[\d,]*|[a-z]+(?:[- ][a-z]+)?) (?:\w+ ){0,2}?(?:cases|patients|"
    r"consecutive|operations|procedures|admissions)\b|\breview of (?:the )?(?:\w+ ){0,2}cases\b",
    _I,
)
_REVIEW_TEXT = re.compile(
    r"\b(?:purpose of review|this review|in this review|we review|we summari[sz]e|"
    r"this article reviews|the literature (?:is|was) reviewed|"
    r"(?:studies|articles) were reviewed)\b",
    _I,
)
_RECORD_REVIEW = re.compile(
    r"\b(?:chart|record|case notes?|file)s? review\b|\breviewed (?:the )?"
    r"(?:medical |clinical |patient )?(?:records|charts)\b",
    _I,
)


def narrative_title(title: str) -> bool:
    """True when the title calls the record a narrative review (whatever it searched)."""
    return bool(_NARRATIVE_TITLE.search(title))


def narrative_review(title: str, text: str) -> bool:
    """True for a review that is not a chart or record review, nor a review of a case series."""
    titled = bool(_REVIEW_TITLE.search(title)) and not _SERIES_TITLE.search(title)
    said = titled or bool(_REVIEW_TEXT.search(text))
    return said and not _RECORD_REVIEW.search(text)
