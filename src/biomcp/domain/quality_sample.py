"""The sample size of a study, read from its abstract (the quality score's sample component).

`read_sample_size` finds every stated count of people ("n = 1,234", "3849 patients", "one
hundred and forty-one patients", "a total of 560") and keeps the largest. Rules:

* Thousands are read whole, grouped by commas or by spaces ("12 537", also thin and no-break
  spaces).
* Counts of things are refused: examinations, samples, eyes, knees, procedures such as
  "103 endarterectomies in 95 patients" (which reads 95).
* Groups are summed: a list of counts ending in "and" or "vs" ("483 patients and 461
  controls", "n = 120 in the intervention group and n = 118 in the control group"), and a
  control group stated in the sentence after a study group. Words that mark a subset, a
  time point or an exclusion between two counts keep them apart.
* A total stated beside its arms is not added to them: the largest of the totals and the
  sums is kept ("120 patients were randomized, 60 to A and 60 to B" reads 120).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from biomcp.domain.design import NUMBER_WORDS
from biomcp.domain.records import SampleSizeReading

__all__ = ["read_sample_size", "words_to_number"]

_PEOPLE = (
    r"patients|participants|subjects|individuals|persons|people|women|men|children|adults|"
    r"adolescents|infants|neonates|newborns|volunteers|respondents|residents|veterans|"
    r"pregnancies|mothers|smokers|survivors|cases|controls|mice|rats|animals|athletes|"
    r"runners|students|workers|employees|nurses|physicians"
)
_NOT_ADJECTIVE = (
    r"(?:in|of|with|from|per|and|or|to|at|by|for|among|on|vs|versus|"
    r"hours?|days?|weeks?|months?|years?|times|mg|kg|g|ml|doses?|sessions?|cycles?|visits?)"
)
# Thousands grouped by a comma or a space (plain, thin, narrow or no-break): "12 537".
_NUM = r"(?<!\d)(\d{1,3}(?:(?:,|[ \u00a0\u2009\u202f])\d{3})+(?!\d)|\d+)(?![.,]\d)"
_WORDS = rf"((?<![\w-]){NUMBER_WORDS})(?![\w-])"
_PEOPLE_AFTER = rf"\s+(?:(?!{_NOT_ADJECTIVE}\b)[a-zA-Z-]+\s+){{0,3}}?(?:{_PEOPLE})\b"
_SAMPLE_PATTERNS = (
    re.compile(rf"\b[nN]\s?=\s?{_NUM}"),
    # "120 adult women", "3849 consecutive patients"; not "104 weeks in patients".
    re.compile(rf"(?<![\d.,]){_NUM}{_PEOPLE_AFTER}", re.IGNORECASE),
    re.compile(
        rf"\b(?:total of|sample of|cohort of|enrolled|recruited|randomi[sz]ed|included)\s+{_NUM}",
        re.IGNORECASE,
    ),
    # "One hundred and forty-one patients", "Thirty-two children".
    re.compile(rf"{_WORDS}{_PEOPLE_AFTER}", re.IGNORECASE),
)
# Patterns whose count may be one group of several ("483 patients", "n = 120").
_GROUP_PATTERNS = frozenset({0, 1, 3})
# What is counted when it is not people: a count of these is not a sample size.
_NOT_PARTICIPANTS = re.compile(
    r"\b(?:examinations?|exams?|samples?|specimens?|images?|scans?|radiographs?|slides?|"
    r"visits?|encounters?|admissions?|episodes?|procedures?|operations?|records?|"
    r"prescriptions?|claims?|tests?|measurements?|observations?|readings?|trips?|journeys?|"
    r"person-(?:months|years|days)|patient-(?:months|years|days)|cycles?|embryos?|oocytes?|"
    r"cells?|genes?|sequences?|reads?|articles?|studies|papers?|publications?|citations?|"
    r"lesions?|teeth|tooth|strains?|isolates?|documents?|reports?|trials?|reviews?|calls?|doses?|injections?|questions?|items?|events?|"
    # Body parts and sites: one person gives two eyes, knees, hips...
    r"eyes?|knees?|hips?|shoulders?|ankles?|elbows?|wrists?|joints?|limbs?|hands?|feet|"
    r"ears?|kidneys?|vertebrae|segments?|sites?|vessels?|arteries|veins?|implants?|"
    r"fractures?|wounds?|ulcers?|aneurysms?|nodules?|polyps?|tumou?rs?|stents?|"
    # Procedures: "103 endarterectomies", "54 arthroplasties", "80 biopsies".
    r"[a-z]*(?:ectom|otom|ostom|plast|scop|rrhaph|pex)(?:y|ies)|biops(?:y|ies)|"
    r"resections?|repairs?|implantations?|transplant(?:ation)?s?|grafts?|surgeries|"
    r"catheteri[sz]ations?|angiograms?|deliveries)\b",
    re.IGNORECASE,
)
_UNITS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen",
)  # fmt: skip
_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_WORD_VALUES = {w: i for i, w in enumerate(_UNITS)} | {w: 10 * i for i, w in enumerate(_TENS, 2)}


def words_to_number(text: str) -> int | None:
    """A number written in English words: "one hundred and forty-one" -> 141, "One thousand
    ninety-nine" -> 1099, "Seventy six" -> 76; None when a word is not a number word."""
    total, current = 0, 0
    for word in re.split(r"[\s-]+", text.casefold().strip()):
        if word in ("and", ""):
            continue
        if word in _WORD_VALUES:
            current += _WORD_VALUES[word]
        elif word == "hundred":
            current = (current or 1) * 100
        elif word == "thousand":
            total += (current or 1) * 1000
            current = 0
        else:
            return None
    return total + current


def _counts_something_else(text: str, start: int, end: int, pattern_index: int) -> bool:
    """True when the number at text[start:end] counts things, not people: "a total of 232,878
    seafarer medical examinations", "N = 26,819,987 person-months", "trips ... (n = 205,673)"."""
    after = text[end : end + 60]
    # After "n = 19)" the words are the sentence's, not what was counted.
    counted_after = pattern_index == 2 or (
        pattern_index == 0 and re.match(r"[^\S\n]+[A-Za-z]", after)
    )
    words_after = " ".join(re.findall(r"[\w-]+", after)[:4])
    if counted_after and _NOT_PARTICIPANTS.search(words_after):
        people = re.search(rf"\b(?:{_PEOPLE})\b", words_after, re.IGNORECASE)
        thing = _NOT_PARTICIPANTS.search(words_after)
        if not people or (thing and thing.start() < people.start()):
            return True
    if pattern_index == 0:
        # "trips ... identified (n = 205,673)": the three words before "(n =" name the count.
        before = re.sub(r"[\s(\[]*[nN]\s?=\s?$", "", text[max(0, start - 80) : start])
        words = re.findall(r"[\w-]+", re.split(r"[.;:,]\s", before)[-1])
        clause = " ".join(words[-3:])
        thing = _NOT_PARTICIPANTS.search(clause)
        if thing and not re.search(rf"\b(?:{_PEOPLE})\b", clause, re.IGNORECASE):
            # "patients who underwent an MRI scan (n = 42)": a singular thing after the
            # people it happened to counts the people; "MRI scans (n = 42)" counts scans.
            singular = not thing.group(0).casefold().endswith("s")
            people_before = re.search(rf"\b(?:{_PEOPLE})\b", " ".join(words[-10:-3]), re.IGNORECASE)
            return not (singular and people_before)
    return False


@dataclass(frozen=True, slots=True)
class _Count:
    """One accepted count of people: its value, where its number starts, where its match
    ends, and where its phrase starts (the "n" of "n = 120")."""

    value: int
    start: int
    end: int
    phrase: str
    group: bool
    phrase_start: int


def _counts(text: str) -> tuple[list[_Count], list[str]]:
    """Every accepted count of people in `text`, in text order, and the refused phrases."""
    found: dict[int, _Count] = {}
    refused: list[str] = []
    for index, pattern in enumerate(_SAMPLE_PATTERNS):
        for match in pattern.finditer(text):
            raw = match.group(1)
            value = words_to_number(raw) if index == 3 else int(re.sub(r"\D", "", raw))
            if value is None:
                continue
            grouped = not raw.isdigit()
            looks_like_year = 1900 <= value <= 2099 and not grouped and index in (1, 2)
            if value <= 0 or looks_like_year:
                continue
            tail = re.match(r"(?:[^\S\n]*[\w,-]+){0,4}", text[match.end() :])
            phrase = match.group(0) + (tail.group(0) if tail and index in (0, 2) else "")
            if _counts_something_else(text, match.start(1), match.end(1), index):
                refused.append(phrase)
                continue
            count = _Count(
                value, match.start(1), match.end(), phrase, index in _GROUP_PATTERNS, match.start()
            )
            kept = found.get(count.start)
            if kept is None or (count.group and not kept.group):
                found[count.start] = count
    return sorted(found.values(), key=lambda c: c.start), refused


# Words between two group counts that show they are not two groups of one study.
_NOT_A_JOIN = re.compile(
    r"\b(?:of|whom|which|who|these|those|them|were|was|had|have|has|are|is|at|after|before|"
    r"during|baseline|follow-up|followed|completed|remained|died|total|including|among|out|"
    r"than|from|per|each|respectively|while|whereas|but|enrolled|included|recruited|"
    r"analy[sz]ed|identified|screened|eligible|exclu\w+|remaining|failed)\b",
    re.IGNORECASE,
)
_JOINER_WORD = re.compile(r"\b(?:and|vs|versus)\b", re.IGNORECASE)
_JOINER = re.compile(r",|\b(?:and|vs|versus)\b", re.IGNORECASE)


def _joined(text: str, first: _Count, second: _Count) -> bool:
    """True when two group counts are joined as parts of one whole: "483 patients and 461
    controls", "n = 120 in the intervention group and n = 118 in the control group"."""
    gap = text[first.end : second.phrase_start].replace("vs.", "vs")
    if re.search(r"[.;:!?\d\n]", gap) or not _JOINER.search(gap):
        return False
    # "1489 patients included (preintervention, N = 637)": a part inside the first's brackets.
    between = gap.rstrip(" (")
    if between.count("(") > between.count(")"):
        return False
    # "72 patients (37 men and 35 women) and 71 controls": the bracket closes around a part.
    opened_here = re.search(r"\(\s*$", text[max(0, first.phrase_start - 3) : first.phrase_start])
    if between.count(")") > between.count("(") and not opened_here:
        return False
    sentence_start = _sentence(text, first.start)[0]
    if re.search(r"\bexclu", text[sentence_start : first.start], re.IGNORECASE):
        return False
    return len(re.findall(r"[\w-]+", gap)) <= 8 and not _NOT_A_JOIN.search(gap)


_SENTENCE_END = re.compile(r"[.!?](?=\s+[A-Z(])|\n")
_CONTROLS = re.compile(r"\b(?:controls?|healthy|comparison group)\b", re.IGNORECASE)
_STUDY_GROUP = re.compile(r"\b(?:group|arm|cases)\b", re.IGNORECASE)
_A_TOTAL = re.compile(
    r"\b(?:total|overall|all|both|two|three|four|randomi[sz]ed|allocated)\b", re.IGNORECASE
)


def _sentence(text: str, at: int) -> tuple[int, int]:
    """The bounds of the sentence holding text[at]."""
    start, end = 0, len(text)
    for mark in _SENTENCE_END.finditer(text):
        if mark.end() <= at:
            start = mark.end()
        else:
            end = mark.start()
            break
    return start, end


def _control_follows(text: str, first: _Count, second: _Count) -> bool:
    """True when `second` is a control group stated in the sentence after `first`'s study
    group: "483 patients were included in the study group. The control group consisted of
    461 healthy subjects"."""
    first_start, first_end = _sentence(text, first.start)
    second_start, second_end = _sentence(text, second.start)
    # The next sentence of the same section: only the end mark and spaces between.
    if not re.fullmatch(r"[.!?][^\S\n]*", text[first_end:second_start]):
        return False
    first_sentence = text[first_start:first_end]
    return bool(
        _CONTROLS.search(text[second_start : min(second_end, second.end + 30)])
        and _STUDY_GROUP.search(first_sentence)
        and not _CONTROLS.search(first_sentence)
        and not _A_TOTAL.search(first_sentence)
    )


def _group_sums(text: str, counts: list[_Count]) -> list[tuple[int, str]]:
    """Totals of groups stated side by side (module docstring), with the text they span."""
    sums: list[tuple[int, str]] = []
    run: list[_Count] = []
    for count in counts:
        previous = run[-1] if run else None
        if (
            previous is not None
            and count.group
            and previous.group
            and (
                _joined(text, previous, count)
                or (len(run) == 1 and _control_follows(text, previous, count))
            )
        ):
            run.append(count)
            continue
        sums.extend(_run_total(text, run))
        run = [count]
    sums.extend(_run_total(text, run))
    return sums


def _run_total(text: str, run: list[_Count]) -> list[tuple[int, str]]:
    """The sum of a run of joined groups. A list ends with "and" or "vs": "Of 1 366 422
    patients with AF, 11 947 patients had..." is a total and a part. A first count that a bare
    comma sets before parts adding up to no more than it is their total ("120 patients, 60 men
    and 60 women")."""
    last_gap = text[run[-2].end : run[-1].phrase_start] if len(run) > 1 else ""
    # A control group in the next sentence joins by the sentence (`_control_follows`).
    if not (_JOINER_WORD.search(last_gap) or re.search(r"[.!?]", last_gap)):
        return []
    bare_comma = not re.search(r"\w", text[run[0].end : run[1].start])
    if bare_comma and run[0].value >= sum(c.value for c in run[1:]):
        run = run[1:]
    if len(run) < 2:
        return []
    return [(sum(c.value for c in run), text[run[0].phrase_start : run[-1].end])]


def read_sample_size(text: str) -> SampleSizeReading:
    """The largest plausible study size stated in `text` and the phrase it was read from
    (module docstring). Numbers that look like years (1900-2099 followed by a people word)
    are ignored; counts of things are refused and listed in `refused`."""
    counts, refused = _counts(text)
    candidates = [(c.value, c.phrase) for c in counts] + _group_sums(text, counts)
    if not candidates:
        return SampleSizeReading(None, None, tuple(refused))
    # The first of the largest: a sum wins over a single count only when larger.
    n, phrase = max(candidates, key=lambda item: item[0])
    return SampleSizeReading(n, phrase, tuple(refused))
