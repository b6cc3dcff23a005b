"""What kind of publication a record is, by its title and abstract: case report, review,
systematic review, guideline, commentary, letter or computational work.

A case report names its patient ("A 25-year-old man presented with...", "A patient with X is
described", "Report of two cases") or its family ("A family is presented in which..."), or
calls itself one in the title ("...: a case report", "...in a 39-year-old woman", "[Case of
X]", "...in a case of X"). A handful of cases (up to five) is still a case report, as NLM
indexes it; a larger series is observational.

A narrative review says so in its title or text ("...: a review", "In this review"). A chart or
record review is not one, nor is a title that reviews a series ("a review of 42 cases"). A
systematic review names its search or its pooling ("Electronic databases were searched").

A guideline names itself in its title or abstract; a study about guidelines does not. A
commentary says so, and a letter or reply names the article it answers in its title.

Computational work is named by its title ("...: a simulation study", "an R package for...")
or by a software paper's heading ("AVAILABILITY AND IMPLEMENTATION:"). A title that also
names bench work ("Synthesis, in vitro evaluation and molecular docking") is laboratory work.
"""

from __future__ import annotations

import re

from biomcp.domain.design_text import affirmed

__all__ = [
    "case_heading",
    "case_title",
    "computational_study_title",
    "computational_title",
    "correspondence_title",
    "guideline_text",
    "guideline_title",
    "is_commentary",
    "names_itself_narrative",
    "narrative_review",
    "narrative_title",
    "notice_title",
    "software_heading",
    "states_case",
    "systematic_search",
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
    # "[Case of ...]", "Apropos of a case of X", "Mechanism of hypoxia in a case of X"
    r"^\W*case (?:of|with)\b|\b(?:a|one) (?:new |rare |unusual |fatal |familial )?case of\b|"
    r"\b(?:two|three|four|five|[2-5]) (?:new |rare |unusual |fatal |familial )?cases\b"
    r"(?!-| series| stud)|"
    rf"\bin (?:a|an) (?:[\w-]+ ){{0,2}}?(?:{_AGE}|{_PERSON}){_NOT_A_GROUP}\b|"
    r"\b(?:in|of|on) (?:two|three) (?:sisters|brothers|siblings|twins)\b",
    _I,
)
_NOT_A_MOLECULE = r"(?!(?:gene|protein|enzyme|receptor|multigene|virus|viral|drug|compound)s?\b)"
_KIN = r"(?:famil(?:y|ies)|kindreds?|pedigrees?|sibships?)"
_CASE_TEXT = re.compile(
    r"\bcase report\b|"
    r"\bwe (?:here(?:in|by)? )?(?:report|describe|present) (?:a|an|the|two|three) "
    r"(?:\w+[- ]){0,4}(?:case|patient|man|woman|boy|girl|infant|child)s?\b|"
    r"\b(?:this|the present|our) (?:article|paper|report|communication|manuscript) "
    r"(?:presents|describes|reports)(?: and \w+)? (?:a|an|the|two|three) "
    r"(?:(?!(?:of|for|in|with|on)\b)\w+[- ]){0,4}(?:case|patient|man|woman|boy|girl|infant|"
    r"child)s?\b|"
    rf"\ban? {_AGE} (?:\w+ ){{0,2}}(?:man|woman|boy|girl|patient|male|"
    r"female|infant|child) (?:presented|was admitted|was referred|underwent|with)\b|"
    r"\b(?:a|one) case of (?:[^.]{0,120}?) (?:is|was) (?:described|reported|presented)\b|"
    # one family: "A family is presented in which...", "we report two siblings with"; not a
    # family of genes, proteins or compounds
    rf"\b(?:a|an|one|this) (?:{_NOT_A_MOLECULE}[\w-]+ ){{0,2}}{_KIN} (?:is|was) (?:here )?"
    r"(?:described|reported|presented)\b|"
    r"\bwe (?:here(?:in|by)? )?(?:report|describe|present) (?:a|an|one|two|three) "
    rf"(?:{_NOT_A_MOLECULE}[\w-]+ ){{0,3}}(?:{_KIN}|siblings|brothers|sisters|twins)\b(?! of)|"
    rf"\b(?:report|description) of (?:a|an|one|two) (?:{_NOT_A_MOLECULE}[\w-]+ ){{0,3}}{_KIN}"
    r"\b(?! of)",
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
# The label a structured abstract puts before a section's first sentence ("CASE: "). A
# teaching vignette keeps its label: the patient it opens on is an example in a review.
_SECTION_LABEL = re.compile(r"^(?![A-Z ]*VIGNETTE)[A-Z][A-Z0-9 ,/&()'-]{1,60}:\s+")
# A sentence about patients in general ("A patient with X should be...") is not a case.
_GENERAL_PATIENT = re.compile(
    r"\b(?:should|must|may|can|could|might|will|would|if|when|whenever|every|any)\b", _I
)


# A section a structured abstract heads as one case ("CASE PRESENTATION: ..."). Not a
# teaching vignette, which opens a review ("CASE VIGNETTE:").
_CASE_HEADING = re.compile(
    r"(?:^|\n)(?:CLINICAL )?CASE (?:PRESENTATIONS?|REPORTS?|DESCRIPTIONS?|SUMMARY|HISTORY|"
    r"DETAILS)\s*:"
)


def case_heading(text: str) -> bool:
    """True when a section of the abstract is headed as a case: "CASE PRESENTATION:",
    "CASE DESCRIPTION:", "CASE REPORT:"."""
    return bool(_CASE_HEADING.search(text))


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
        sentence = _SECTION_LABEL.sub("", sentence, count=1)
        match = _CASE_SENTENCE.search(sentence)
        if match and not _GENERAL_PATIENT.search(sentence[: match.end() + 40]):
            return True
    return False


# --- narrative reviews ----------------------------------------------------------------------

_NARRATIVE_TITLE = re.compile(r"\bnarrative (?:review|overview|synthesis)\b", _I)
# The abstract names this record a narrative or non-systematic review: "the present narrative
# review", "A non-systematic literature review was performed", "METHODS: Narrative review of".
# Not another review it cites ("a recent narrative review claims", "narrative reviews have").
_NARRATIVE_SELF = re.compile(
    r"\b(?:this|the present|the current|our|a|an) (?!(?:recent|previous|prior|earlier|"
    r"published)\b)(?:[\w-]+ )?(?:narrative|non-?systematic) (?:literature )?review\b"
    r"(?! articles)|(?:^|\n|[.:] )narrative (?:literature )?review (?:of|based on)\b",
    _I,
)
_REVIEW_TITLE = re.compile(r"\breview\b|\ban overview\b|\bstate of the art\b", _I)
# "A review of 42 cases" is a case series, not a review of a topic.
_SERIES_TITLE = re.compile(
    r"\breview of (?:the )?(?:\d[\d,]*|[a-z]+(?:[- ][a-z]+)?) (?:\w+ ){0,2}?(?:cases|patients|"
    r"consecutive|operations|procedures|admissions)\b|\breview of (?:the )?(?:\w+ ){0,2}cases\b",
    _I,
)
_REVIEW_TEXT = re.compile(
    r"\b(?:purpose of review|this review|in this review|we review|we summari[sz]e|"
    r"mini[- ]?review|"
    r"this article reviews|the literature (?:is|was) reviewed|"
    r"(?:studies|articles) were reviewed)\b|"
    # "We provide an overview of...", "an overview of the current...": a review's own words.
    r"\bwe (?:provide|present|give|offer) (?:here )?an? (?:[\w-]+ ){0,2}overview\b|"
    r"\b(?:an|this) overview of (?:the )?(?:current|recent|existing|latest)\b|"
    # "This paper reviews the current evidence", "Here, we discuss recent progress in...".
    r"\b(?:(?:this|the present) (?:article|paper|chapter|manuscript|work)|(?:here(?:in)?|"
    r"in this (?:article|paper|chapter|work)),? we|we) (?:will )?(?:\w+ )?(?:reviews?|"
    r"summari[sz]es?|discuss(?:es)?|outlines?|highlights?) (?:the )?(?:most )?(?:recent|"
    r"current|latest|existing|state[- ]of[- ]the[- ]art) (?:\w+ )?(?:advances|progress|"
    r"developments|knowledge|understanding|status|evidence|literature|findings|research|"
    r"insights|concepts|trends)\b|"
    # "The present review", "our review", "this comprehensive review"; not a retrospective or
    # chart review of patients, "our review of the charts", or an ethics review board.
    r"\b(?:this|the present|our) (?!(?:[\w-]+ )?(?:retrospective|prospective|chart|records?|"
    r"cases?|files?|notes|medical|single[\w-]*|multi[\w-]*|institutional|hospital|ethics?|"
    r"ethical|systematic|expert|manual|visual|peer)\b)(?:(?!to\b)[\w-]+ ){0,2}review\b"
    r"(?! (?:board|committee|panel|process)\b)"
    r"(?! of (?:the )?(?:[\w-]+ ){0,3}(?:records|charts|notes|files|cases|patients)\b)|"
    # The first heading of a review in the "Current Treatment Options" journals.
    r"(?:^|\n)opinion statement:",
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


def names_itself_narrative(text: str) -> bool:
    """True when the abstract calls the record a narrative or non-systematic review, whatever
    databases it searched."""
    return bool(_NARRATIVE_SELF.search(text))


# The "Expert Review" journals head a review's scope "AREAS COVERED:". A case report in
# their format opens that section on its patient ("AREAS COVERED: A 10-year-old girl...").
_AREAS_COVERED = re.compile(r"(?:^|\n)areas covered:\s*(?P<first>[^.]*)", _I)


def _areas_covered(text: str) -> bool:
    match = _AREAS_COVERED.search(text)
    return match is not None and not _CASE_SENTENCE.search(match.group("first"))


def narrative_review(title: str, text: str) -> bool:
    """True for a review that is not a chart or record review, nor a review of a case series."""
    titled = bool(_REVIEW_TITLE.search(title)) and not _SERIES_TITLE.search(title)
    said = titled or bool(_REVIEW_TEXT.search(text)) or _areas_covered(text)
    return said and not _RECORD_REVIEW.search(text)


# --- systematic reviews and meta-analyses ----------------------------------------------------

_DATABASES = (
    r"(?:MEDLINE|PubMed|Embase|EMBASE|Cochrane|CENTRAL|Web of Science|Scopus|CINAHL|PsycINFO|"
    r"LILACS|Google Scholar|CNKI|Wanfang)"
)
_SYSTEMATIC_TEXT = re.compile(
    r"\b(?:systematic(?:ally)? (?:review|literature review|search)|meta-?analys[ie]s|"
    r"meta-?regression|pooled analysis of (?:\w+ ){0,3}(?:trials|studies)|"
    r"(?:studies|trials|articles) (?:\w+ ){0,6}were identified by (?:a |an )?(?:\w+ )?search\w*|"
    r"(?:electronic |bibliographic |online )?databases? (?:\w+ ){0,4}(?:was|were) searched|"
    r"(?:literature|database|electronic) searche?s? (?:of|in|was|were|using|through|across)|"
    r"(?:we |were )?searched (?:\w+ ){0,3}(?:MEDLINE|PubMed|Embase|Cochrane|databases)|"
    r"searched (?:[\w,()-]+ ){0,8}for (?:\w+ ){0,3}(?:randomi[sz]ed|controlled|trials|studies|"
    r"articles|reports|publications)|"
    rf"{_DATABASES},? (?:and |or )?{_DATABASES})\b",
    _I,
)


def systematic_search(title: str, sentences: list[str]) -> bool:
    """True for a systematic review or meta-analysis: "systematic review", "meta-analysis",
    "Electronic databases were searched", "We searched MEDLINE and Embase for trials"."""
    return bool(_SYSTEMATIC_TEXT.search(title)) or affirmed(_SYSTEMATIC_TEXT, sentences)


# --- guidelines, commentaries and letters -----------------------------------------------

_IS_GUIDELINE_TITLE = re.compile(
    r"\b(?:guidelines?|guidance (?:on|for)|"
    r"consensus (?:statement|recommendations?|report|document)|"
    r"position (?:statement|paper)|expert consensus|recommendations? (?:for|of|on|from)|"
    r"(?:practice|practical|clinical|international|national|expert) recommendations?)\b",
    _I,
)
# Words that make a title about guidelines rather than one: adherence studies, audits,
# cohorts, appraisals, comparisons.
_ABOUT_GUIDELINES = re.compile(
    r"\b(?:adheren\w+|complian\w+|concordan\w+|conform\w+|implement\w+|uptake|awareness|"
    r"knowledge|attitudes?|appraisal|quality of|review of|comparisons?|compared?|according to|"
    r"based on|recommended|get with the guidelines|impact|effects?|evaluation of|validation|"
    r"analysis|defined (?:by|in)|before and after|barriers|challenging|retrospective|cohort|"
    r"chart review|"
    r"real-world|receipt|survival|prognostic|factors|determinants|survey|audit|trends?|"
    r"variation|practice patterns|reach|for (?:future|further) research|improving)\b",
    _I,
)
_COMMENTARY = re.compile(
    r"(?:^|[.!?:]\s+)(?:In )?(?:this|the present|our) (?:commentary|editorial|viewpoint|"
    r"perspective|opinion(?: piece)?|essay|debate article)\b(?! of)|\b(?:we|I) argue that\b|"
    r"\bthis (?:paper|article) argues\b",
    _I,
)


# A guideline that says so of itself: "These ERC guidelines are based on...", "The Council
# has produced these guidelines", "This section provides guidelines on...". "Our work provides
# guidelines for" and "local guidelines" say nothing of what the record is.
_GUIDELINE_SELF = re.compile(
    r"(?:^|[.;:]\s+)(?:These|This|The present) (?:[\w-]+ ){0,5}?[Gg]uidelines?\b(?!-) (?:(?:are|is|"
    r"was|were) (?:\w+ )?(?:based|intended|designed|developed|written|aimed|meant|endorsed|"
    r"produced|prepared|organi[sz]ed|structured|divided|targeted|directed|updated)|provides?|"
    r"covers?|presents?|updates?|replaces?|focus|address|aims?|includes?|summari[sz]es?|"
    r"describes?|gives?|offers?|refers?|apply|applies|contains?)\b|"
    r"\b(?:ha(?:s|ve) )?(?:produced|developed|prepared|issued|written|updated) these "
    r"(?:[\w-]+ ){0,5}?[Gg]uidelines\b(?!-)|"
    r"(?:^|[.;:]\s+)(?:This|The present) (?:section|document|statement|guidance) (?:provides|"
    r"presents|summari[sz]es|updates|gives|sets out) (?:[\w-]+ ){0,3}?(?:guidelines|"
    r"recommendations)\b",
)
# A letter, comment or reply whose title names the article it answers: its words about a
# cohort or a trial are the other article's.
_CORRESPONDENCE_TITLE = re.compile(
    r"^\W*(?:Re:|Reply\b|In reply\b|Authors?'? (?:reply|response)\b|Comments? on\b|"
    r"(?:A )?Commentary on\b|Letter(?: to the editor)?\b\s*[:(\-–—]|Letter to the editors?\b|"
    r"(?:Response|Responses|Answer) to (?:the |a |an )?(?:letters?|comments?|commentary|"
    r"correspondence|editorial|reviewers?|critique|Dr\b|[\"'«“‘]|"
    r"(?-i:[A-Z][a-z][\w'-]* (?:et al|and [A-Z][a-z])))|(?:Response|Reply|Answer) to\s*:)|"
    # concerns about another article, opening the title or after its topic
    r"(?:^\W*|\w[-–—:]\s*)Some concerns (?:about|regarding|on|with)\b",
    _I,
)


# A notice about another article, named by its title: "Correction to: ...", "Corrigendum",
# "Erratum", "Retraction: ...", "Retracted: ...", "Expression of Concern: ...".
_NOTICE_TITLE = re.compile(
    r"^\W*(?:(?:Erratum|Errata|Corrigendum|Expression of concern)\b|"
    r"(?:Correction|Retraction) (?:notice|note)\b|"
    # "Correction to: X", "Retraction of 'X'"; not "Correction of hyponatremia in..."
    r"(?:Correction|Retraction|Retracted)\s*(?:[:.\-–—]|$|(?:to|of|for)\s*(?::|[\"'“‘«])))",
    _I,
)


def notice_title(title: str) -> bool:
    """True when the title names the record a correction, erratum, retraction or expression
    of concern about another article."""
    return bool(_NOTICE_TITLE.search(title))


def guideline_text(sentences: list[str]) -> bool:
    """True when the abstract calls the record itself a guideline ("These guidelines are
    based on...", "has produced these guidelines")."""
    return any(_GUIDELINE_SELF.search(s) for s in sentences)


def correspondence_title(title: str) -> bool:
    """True for a letter, comment or reply by its title ("Comment on...", "Reply to...",
    "Re: ...", "Letter to the editor regarding...", "Response to the letter...")."""
    return bool(_CORRESPONDENCE_TITLE.search(title))


def guideline_title(title: str) -> bool:
    """True when the title names the record itself as a guideline, consensus or position
    statement; a title about guidelines (adherence, impact, a cohort) or a question is not."""
    title = title.strip()
    if not _IS_GUIDELINE_TITLE.search(title) or title.endswith("?"):
        return False
    return not _ABOUT_GUIDELINES.search(title)


def is_commentary(text: str) -> bool:
    """True for a commentary, viewpoint or essay that says so ("In this commentary...")."""
    return bool(_COMMENTARY.search(text))


# --- computational work named by its title or headings -------------------------------------

_COMPUTATIONAL_TITLE = re.compile(
    r"\b(?:in silico|simulations?|Monte Carlo|computational|molecular (?:docking|dynamics)|"
    r"mathematical model\w*|machine learning|deep learning|software|pipelines?|algorithms?|"
    r"web[- ](?:applications?|servers?|platforms?|portals?|tools?)|R packages?|"
    r"Python (?:packages?|library)|open[- ]source (?:[\w-]+ )?(?:tools?|software|platforms?|"
    r"packages?|library|pipelines?|procedures?|frameworks?))\b",
    _I,
)
# A title that also names bench work ("Synthesis, in vitro evaluation and molecular docking of
# ...") reports a laboratory study; its docking supports the bench results.
_BENCH_TITLE = re.compile(
    r"\bin vitro\b|\bbioassays?\b|\bbiological (?:evaluation|activit(?:y|ies))\b|"
    r"\b(?:anti\w+|cytotoxic|enzym\w+|inhibitory) (?:evaluation|activit(?:y|ies)|assays?)\b",
    _I,
)
# A title that names its study as computational: "...: a simulation study", "a modelling study".
_COMPUTATIONAL_STUDY_TITLE = re.compile(
    r"\b(?:a|an) (?:[\w-]+ ){0,2}?(?:(?:micro)?simulation|modell?ing|in silico|computational) "
    r"study\b",
    _I,
)
# The section headings of a software paper ("Bioinformatics" and its kin).
_SOFTWARE_HEADING = re.compile(r"(?:^|\n)availability(?: ?(?:and|of) implementation)?\s*:", _I)


def computational_title(title: str) -> bool:
    """True when the title names computational work (simulation, software, algorithms) and
    no bench work beside it."""
    return bool(_COMPUTATIONAL_TITLE.search(title)) and not _BENCH_TITLE.search(title)


def computational_study_title(title: str) -> bool:
    """True when the title names the study a simulation, modelling or in-silico study."""
    return bool(_COMPUTATIONAL_STUDY_TITLE.search(title))


def software_heading(text: str) -> bool:
    """True when the abstract has a software paper's heading ("AVAILABILITY AND
    IMPLEMENTATION:")."""
    return bool(_SOFTWARE_HEADING.search(text))
