"""Numeric claims in abstract text: where they are, and whether a text has any.

A *numeric claim* is the stretch of text a reader needs whole to understand a number: the
measure's label, the value, its unit, its interval and p-value, and what it was compared with
("HR 0.74 (95% CI 0.61-0.90) vs placebo", "-12.4% vs -2.1%", "0.20 with terbutaline, 0.07 with
budesonide"). The chunker never places a boundary inside one (`claim_spans`), and the evidence
classifier's `has_numbers` flag asks whether a text reports results at all (`has_numeric_result`).

Everything here is regular expressions over plain text; the patterns are compiled once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = [
    "bracket_pairs",
    "claim_spans",
    "has_numeric_result",
    "merge_spans",
    "numeric_atoms",
]

# Minus signs and dashes PubMed text uses: hyphen-minus, unicode minus, en dash, em dash.
_DASH = "-\u2212\u2013\u2014"
# A number: optional sign, digits with thousands separators ("1,234", "12 345" is not grouped
# because a space-separated group is ambiguous with two numbers), decimals with "." or the
# middle dot some journals print; or a bare decimal ".05".
_NUMBER = rf"(?:[{_DASH}+]\s?)?(?:\d{{1,3}}(?:,\d{{3}})+(?!\d)|\d+)(?:[.\u00b7]\d+)?|(?<!\d)\.\d+"
_NUMBER = rf"(?:{_NUMBER})"
# Powers of ten as printed in flattened abstracts: "1.2 x 10^-3", "2 × 10(-5)", "3×10−4".
_SCI = rf"(?:\s?[x×\u00d7]\s?10\s?(?:\^|\()?\s?[{_DASH}]?\s?\d+\)?)"
_BASE_UNIT = (
    r"(?:%|‰|percentage points?|percent|per cent|°C|°F|mm\s?Hg|mmHg|cm\s?H2O|bpm|kcal|cal|"
    r"IU|mIU|U|mU|kU|mEq|mOsm|[mµμnpf]?M|"
    r"[kmµμunp]?g|[kmµμunp]?mol|[mdµμn]?[lL]|mL|dL|μL|µL|[mcµμn]?m|km|m2|m²|kDa|Da|Gy|cGy|Sv|"
    r"Hz|kHz|MHz|W|kW|mW|V|mV|J|kJ|Pa|kPa|MPa|ppm|ppb|"
    r"h|hr|hrs|hours?|min|minutes?|s|sec|seconds?|d|days?|wk|weeks?|mo|months?|y|yr|yrs|years?|"
    r"fold|times|copies|cells|CFU|PFU|cycles?|doses?|points?|pts?|units?|log|logs|"
    r"patients|participants|subjects|individuals|persons|people|women|men|children|adults|"
    r"infants|mice|rats|cases|controls|eyes|events|samples|procedures|"
    r"person-years|patient-years)"
)
# A unit may be compound: "mg/kg", "mL/min/1.73 m2", "µg/kg/day", "g per day".
_UNIT = rf"(?:{_BASE_UNIT}(?:\s?(?:/|per\s)\s?(?:\d+(?:\.\d+)?\s?)?{_BASE_UNIT})*)"
# A value: number, optional power of ten, optional unit (the % may be glued on, or "-fold").
_VALUE = rf"(?:{_NUMBER}{_SCI}?(?:\s?[{_DASH}]?\s?{_UNIT}\b|\s?%)?)"
# Value continuations that must stay with the value: ranges ("0.61-0.90", "1.1 to 4.8"),
# plus-minus ("12.3 ± 4.5"), ratios ("3:1"), slashes ("120/80 mm Hg").
_CONT = rf"(?:\s?(?:[{_DASH}]|to|and|±|\+/-|\+/−|:|/)\s?{_VALUE})"
# Labels that name what a number measures; they belong to the claim.
_LABEL = (
    r"(?:\b(?:a?HRs?|a?ORs?|a?RRs?|IRR|RD|ARR|RRR|NNT|NNH|MD|SMD|WMD|SD|SE|SEM|IQR|AUC|"
    r"CIs?|Cl|CrI|PI|ES|d|g|r|R2|R²|rho|ρ|β|beta|χ2|χ²|t|F|z|U|k|κ|I2|I²|n|N|p|P|q)"
    r"|hazard ratios?|odds ratios?|risk ratios?|rate ratios?|relative risks?|risk differences?|"
    r"mean differences?|absolute risk reductions?|number needed to (?:treat|harm)|"
    r"confidence intervals?|credible intervals?|correlation coefficients?|"
    r"effect sizes?|sample sizes?|area under the curve)"
)
# A label is tied to its value by "=", ":", ",", "of", "was", "were", "is", or just spaces,
# possibly with a bracketed abbreviation or a "95%" in between ("odds ratio [OR], 1.14",
# "95% CI, 1.00 to 1.30", "hazard ratio for death, 0.74").
_LABEL_LINK = (
    r"(?:\s?(?:for [a-z]+(?: [a-z]+)?\s?)?(?:\[[^\]\n]{1,12}\]|\([^)\n]{1,12}\))?\s?"
    r"(?:,|:|=|<|>|≤|≥|<=|>=|=<|=>|~|≈)?\s?(?:(?:of|was|were|is)\s)?\s?)"
)
_ATOM = re.compile(
    rf"(?:(?:(?<![\w.]){_NUMBER}\s?%\s)?{_LABEL}{_LABEL_LINK})?"
    rf"(?:(?<![\w.])|(?<=[{_DASH}]))(?:{_VALUE}{_CONT}*)",
    re.UNICODE,
)
# Comparators joining a value to what it is compared with.
_COMPARATOR = (
    r"(?:vs\.?|versus|v\.|compared (?:with|to)|in comparison (?:with|to)|relative to|"
    r"than|over|against|with|in|among|for|of)"
)
# A trailing comparator phrase: "vs placebo", "versus 31.1% with terbutaline",
# "compared with the control group". It stops at punctuation or after six words. A "than"
# may come after up to three words that make the value a comparative ("2.7-fold more
# virologic failures than those on first-line regimens", "3 times higher than").
_TRAILING_COMPARISON = re.compile(
    rf"\s{{0,2}}\(?(?:(?:[^\s,;:.()\[\]]+\s+){{1,3}}?than|{_COMPARATOR})"
    rf"\s+(?:[^\s,;:.()\[\]]+(?:\s+|$)){{0,4}}(?:[^\s,;:.()\[\]]+)",
    re.IGNORECASE,
)
# A leading measure: "FEV1 improved by 120 mL", "HbA1c was 7.1%", "ORR 37.1%", "sensitivity
# 92.3%", "adjusted OR", "< 50 copies/mL".
_LEADING_MEASURE = re.compile(
    r"(?:(?:[^\s,;:.()\[\]]+\s){1,2}(?:by|of|was|were|is|are|at|reached|from|to)\s"
    r"|(?:[A-Z][A-Za-z0-9]{1,5}|sensitivity|specificity|accuracy|change|reduction|increase|"
    r"decrease|difference|incidence|prevalence|mean|median|fold change|rate|ratio|adjusted|"
    r"unadjusted|pooled|crude)\s"
    r"|[<>≤≥]\s?)$"
)
_RESPECTIVELY = re.compile(r"\s{0,2},?\s?respectively\b", re.IGNORECASE)
# Two values belong to one claim when little text separates them ("34.4% vs. 31.1%",
# "0.20 with terbutaline, 0.07 with budesonide-formoterol, and 0.09 with ...").
_MAX_JOIN_GAP = 60
_GAP_BREAKS = re.compile(r"[;]|[.!?]\s+[A-Z]")
# A gap that is only a ";", perhaps after the closing brackets of an interval the bracket rule
# did not see ("(95% CI: 7.42-19.4); P=0.001").
_SEMICOLON_GAP = re.compile(r"[)\]\s]*;\s*")
# A p-value ("P = .003", "(p<0.05)") belongs to the value before it in its sentence however
# far it trails, up to this many characters ("higher thresholds than control subjects (p =
# .03)"); a p-value after a p-value keeps the ordinary gap.
_MAX_P_VALUE_GAP = 200
_P_VALUE = re.compile(r"[(\[]?\s?[pP]\s?(?:[ -]?values?)?\s?(?:[<>=≤≥]|<=|>=)")
# ...except a ";" followed by the value's own interval or p-value ("0.74; 95% CI, 0.65 to
# 0.85; P<0.001"), which NEJM-style abstracts print outside brackets.
_STATISTIC_AFTER_SEMICOLON = re.compile(
    r"\s?(?:\d{2,3}\s?%\s?)?(?:CI|CrI|confidence interval|credible interval|[pP]\b|"
    r"[pP][ -]value|IQR|SD|SE)"
)

# Results-bearing patterns for `has_numeric_result`: effect measures with values, intervals,
# p-values, percentages, and sample sizes. A bare year or a dose alone is not a result.
_RESULT_PATTERNS = re.compile(
    r"(?:\b(?:a?HR|a?OR|a?RR|IRR|RD|ARR|NNT|NNH|MD|SMD|WMD|AUC)\b\s?[,:=]?\s?\(?[\d.]"
    r"|\b(?:hazard|odds|risk|rate) ratios?\b[^.;]{0,40}?\d"
    r"|\b(?:relative risk|mean difference|risk difference|effect size)\b[^.;]{0,40}?\d"
    r"|\b\d{2,3}\s?%\s?(?:CI|confidence interval|CrI)\b"
    r"|\b(?:CI|confidence interval)\b[^.;]{0,15}?\d"
    r"|(?<![\w])[pP]\s?(?:value)?\s?(?:[<>=≤≥]|<=|>=)\s?0?[.\u00b7]\d"
    r"|\d(?:[.\u00b7]\d+)?\s?%"
    r"|\b[nN]\s?=\s?\d"
    r"|\b\d[\d,]*\s(?:patients|participants|subjects|individuals|women|men|children|adults|"
    r"mice|rats|cases)\b"
    r"|\d\s?±\s?\d)",
)


def numeric_atoms(text: str) -> list[tuple[int, int]]:
    """Spans of labelled values in `text` ("HR 0.74", "95% CI 0.61-0.90", "1.5 mg/kg",
    "p = 0.03", "n = 1,234", "−12.4%"), in order, without overlaps."""
    spans: list[tuple[int, int]] = []
    for match in _ATOM.finditer(text):
        start, end = match.span()
        # Strip the trailing whitespace the optional pieces may have swallowed.
        while end > start and text[end - 1].isspace():
            end -= 1
        if end > start and any(ch.isdigit() for ch in text[start:end]):
            spans.append((start, end))
    return spans


def bracket_pairs(text: str) -> list[tuple[int, int]]:
    """Spans of the matched (...) and [...] pairs of `text`, inner pairs included, sorted.

    An opener that is never closed, or a closer with no opener, is left out rather than
    guessed at: one stray "(" in an abstract ("range: a total ...") must not make the rest of
    the section count as bracketed. A closer pairs with the nearest open bracket of its kind;
    openers of the other kind left open above it are dropped.
    """
    pairs: list[tuple[int, int]] = []
    stack: list[tuple[str, int]] = []
    closers = {")": "(", "]": "["}
    for i, ch in enumerate(text):
        if ch in "([":
            stack.append((ch, i))
        elif ch in closers:
            for depth in range(len(stack) - 1, -1, -1):
                if stack[depth][0] == closers[ch]:
                    pairs.append((stack[depth][1], i + 1))
                    del stack[depth:]
                    break
    return sorted(pairs)


def _bracket_spans(text: str) -> list[tuple[int, int]]:
    """Outermost matched (...) and [...] groups that contain a digit: "(95% CI, 0.61 to
    0.90)"."""
    spans: list[tuple[int, int]] = []
    for start, end in bracket_pairs(text):
        if spans and end <= spans[-1][1]:
            continue  # inside the previous outermost group
        spans.append((start, end))
    return [(a, b) for a, b in spans if any(c.isdigit() for c in text[a:b])]


def merge_spans(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Union of overlapping or touching spans, sorted."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def claim_spans(text: str) -> list[tuple[int, int]]:
    """Spans of `text` that no chunk boundary may cut, sorted and disjoint.

    Built in four steps, each a rule a reviewer can check:

    1. every labelled value (`numeric_atoms`) and every bracketed group holding a digit;
    2. values joined into one claim when at most 60 characters separate them (200 when the
       second is a p-value) and no ";" or sentence end lies between ("34.4% vs. 31.1%",
       "0.20 with A, 0.07 with B", "300 msec ... than control subjects (p = .03)"), or when only
       a ";", perhaps after closing brackets, precedes the value's interval or p-value
       ("0.74; 95% CI, 0.65 to 0.85", "(95% CI: 7.42-19.4); P=0.001");
    3. a claim extended backward over a measure tied to it by a linking word ("FEV1 improved
       by", "HbA1c was"), and forward, at most twice, over a trailing comparison of up to five
       words that stops at punctuation ("vs placebo", "compared with the control group",
       "with terbutaline", "more virologic failures than those on ..."), and over a trailing
       "respectively";
    4. overlapping results merged.
    """
    pieces = merge_spans([*numeric_atoms(text), *_bracket_spans(text)])
    if not pieces:
        return []
    joined: list[tuple[int, int]] = [pieces[0]]
    for start, end in pieces[1:]:
        prev_start, prev_end = joined[-1]
        gap = text[prev_end:start]
        after_semicolon = _SEMICOLON_GAP.fullmatch(gap) and _STATISTIC_AFTER_SEMICOLON.match(
            text, start + (text[start] in "([")
        )
        p_value_of_a_value = _P_VALUE.match(text, start) and not _P_VALUE.match(text, prev_start)
        limit = _MAX_P_VALUE_GAP if p_value_of_a_value else _MAX_JOIN_GAP
        if len(gap) <= limit and (after_semicolon or not _GAP_BREAKS.search(gap)):
            joined[-1] = (prev_start, end)
        else:
            joined.append((start, end))
    extended: list[tuple[int, int]] = []
    for start, end in joined:
        for _ in range(2):  # "adjusted" + "OR"; a measure, not the whole clause
            lead = _LEADING_MEASURE.search(text, max(0, start - 60), start)
            if not lead:
                break
            start = lead.start()
        for _ in range(2):  # "vs placebo" + "in adults"; never a whole sentence
            comparison = _TRAILING_COMPARISON.match(text, end)
            if comparison and comparison.end() > end:
                end = comparison.end()
                continue
            tail = _RESPECTIVELY.match(text, end)
            if tail and tail.end() > end:
                end = tail.end()
                continue
            break
        extended.append((start, end))
    return merge_spans(extended)


def has_numeric_result(text: str) -> bool:
    """True when `text` reports a quantitative result: an effect measure with a value
    (HR, OR, RR, mean difference...), a confidence interval, a p-value, a percentage, a
    sample size ("n = 120", "348 patients"), or a mean ± SD."""
    return _RESULT_PATTERNS.search(text) is not None
