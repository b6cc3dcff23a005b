"""Spelling variants the BM25 arm folds together, the same way at index and query time.

A paper and a question often name one thing in two spellings. The lexical arm matches words,
so it folds each pair to one form before tokenizing:

* Greek letters are spelled out, as PubMed spells them in its older records: `TNF-α` becomes
  `TNF-alpha`, `NF-κB` becomes `NF-kappaB`. Mu is left alone, since it is mostly the micro of
  a unit (`μg`).
* British spellings become American, as PubMed's own search maps them: `tumour`, `oesophageal`,
  `haemorrhage`, `paediatric` and `randomised` meet `tumor`, `esophageal`, `hemorrhage`,
  `pediatric` and `randomized`.

The British rules are a curated list of word parts, not a dictionary. A part is folded wherever
it occurs (`antitumour`, `hyperglycaemia`), so it must never occur inside an unrelated word:
`our` alone would turn `four` into `for`. Folding applies to both sides, so a word the rules
change by accident still meets itself; only two distinct words folded into one would do harm.
The `-ise` and `-yse` endings are folded by suffix, since the English stemmer leaves
`randomised` as `randomis` but reduces `randomized` to `random`.

Why hand-written: the British-American word lists on PyPI are general English (no `ischaemia`,
`oedema` or `haematopoietic`), and the variants that matter here are biomedical word parts.
"""

from __future__ import annotations

import re

__all__ = ["fold_spellings", "spell_american", "spell_greek"]

_GREEK_NAMES = {
    "alpha": "αΑ", "beta": "βΒϐ", "gamma": "γΓ", "delta": "δΔ", "epsilon": "εΕϵ",
    "zeta": "ζΖ", "eta": "ηΗ", "theta": "θΘϑ", "iota": "ιΙ", "kappa": "κΚϰ", "lambda": "λΛ",
    "nu": "νΝ", "xi": "ξΞ", "omicron": "οΟ", "pi": "πΠ", "rho": "ρΡ", "sigma": "σςΣ",
    "tau": "τΤ", "upsilon": "υΥ", "phi": "φΦϕ", "chi": "χΧ", "psi": "ψΨ", "omega": "ωΩ",
}  # fmt: skip
_SPELL_GREEK = str.maketrans(
    {letter: name for name, letters in _GREEK_NAMES.items() for letter in letters}
)

#: British word parts and their American spelling, folded wherever they occur in a word.
_PARTS = {
    # -our: only whole stems, since "our" alone is inside four, hour, journal, your.
    "tumour": "tumor", "behaviour": "behavior", "colour": "color", "favour": "favor",
    "labour": "labor", "odour": "odor", "vapour": "vapor", "flavour": "flavor",
    "honour": "honor", "humour": "humor", "rumour": "rumor", "neighbour": "neighbor",
    "vigour": "vigor", "rigour": "rigor", "harbour": "harbor", "savour": "savor",
    "fervour": "fervor", "endeavour": "endeavor", "armour": "armor",
    # ae and oe in medical roots (haem also covers ischaemia; aem covers -aemia, -aemic).
    "haem": "hem", "aem": "em", "paed": "ped", "aetiol": "etiol", "anaesth": "anesth",
    "gynaec": "gynec", "faec": "fec", "caec": "cec", "caesar": "cesar", "palaeo": "paleo",
    "oedem": "edem", "oesoph": "esoph", "oestr": "estr", "foet": "fet", "coeli": "celi",
    "rrhoea": "rrhea", "pnoea": "pnea", "homoeo": "homeo", "amoeb": "ameb",
    "manoeuvre": "maneuver", "manoeuvr": "maneuver", "leucocyt": "leukocyt",
    # -tre, -ogue, -ence and a few single words.
    "centred": "centered", "centre": "center", "metre": "meter", "litre": "liter",
    "fibre": "fiber", "theatre": "theater", "calibre": "caliber", "logue": "log",
    "defence": "defense", "offence": "offense", "licence": "license",
    "sulph": "sulf", "aluminium": "aluminum", "mould": "mold",
    "enrolment": "enrollment", "fulfilment": "fulfillment",
}  # fmt: skip
_PART = re.compile("|".join(sorted(map(re.escape, _PARTS), key=len, reverse=True)))
#: Whole words only: `grey` (not inside another word), `programme` (not `programmed`),
#: `enrol` and `enrols` (the stemmer keeps `enroll` apart).
_WORDS = {"grey": "gray", "programme": "program", "programmes": "programs", "enrol": "enroll",
          "enrols": "enrolls"}  # fmt: skip
_WORD = re.compile(r"\b(?:" + "|".join(_WORDS) + r")\b")
#: -ise and -yse verbs and their derivatives; two letters before `is` spare `rise` and `wise`.
_ISE = re.compile(r"(?<=[a-z]{2})is(e|es|ed|ing|er|ers|able|ation|ations|ational)\b")
_YSE = re.compile(r"(?<=[a-z]ly)s(e|es|ed|ing|er|ers)\b")


def spell_greek(text: str) -> str:
    """`text` with every Greek letter but mu spelled out in Latin letters (`β2` -> `beta2`)."""
    return text.translate(_SPELL_GREEK)


def spell_american(text: str) -> str:
    """Lower-case `text` with its British spellings made American (`tumours` -> `tumors`)."""
    text = _PART.sub(lambda m: _PARTS[m.group()], text)
    text = _WORD.sub(lambda m: _WORDS[m.group()], text)
    text = _ISE.sub(r"iz\1", text)
    return _YSE.sub(r"z\1", text)


def fold_spellings(text: str) -> str:
    """`text` lower-cased, Greek letters spelled out and British spellings made American."""
    return spell_american(spell_greek(text).lower())
