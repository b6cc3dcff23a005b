"""The default tier-1 journal list used by the quality scorer's journal component.

Major general-medical journals and the leading journal of the specialties the corpus is most
often used for (oncology, cardiology, metabolism, respiratory, infection, neurology,
gastroenterology, haematology), plus the top basic-science titles. Each entry gives the full
title as the NLM catalogue prints it, its ISO abbreviation, and its print / electronic ISSNs.
A record matches by ISSN first and by normalized title or abbreviation otherwise, so a
mis-typed ISSN here still leaves the name match working. Operators replace or extend the list
through `JournalTiers`.

`journal_name` turns NLM's catalogue title into the name a reference list prints (APA 7, MLA 9),
see its docstring for the rule.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["DEFAULT_TIER1_JOURNALS", "journal_name", "title_case"]

# (title, ISO abbreviation, print ISSN, electronic ISSN)
DEFAULT_TIER1_JOURNALS: tuple[tuple[str, str, str | None, str | None], ...] = (
    ("The New England journal of medicine", "N Engl J Med", "0028-4793", "1533-4406"),
    ("Lancet (London, England)", "Lancet", "0140-6736", "1474-547X"),
    ("JAMA", "JAMA", "0098-7484", "1538-3598"),
    ("BMJ (Clinical research ed.)", "BMJ", "0959-8138", "1756-1833"),
    ("Annals of internal medicine", "Ann Intern Med", "0003-4819", "1539-3704"),
    ("PLoS medicine", "PLoS Med", "1549-1277", "1549-1676"),
    ("Nature medicine", "Nat Med", "1078-8956", "1546-170X"),
    ("JAMA internal medicine", "JAMA Intern Med", "2168-6106", "2168-6114"),
    (
        "The Cochrane database of systematic reviews",
        "Cochrane Database Syst Rev",
        "1469-493X",
        "1361-6137",
    ),
    ("Nature", "Nature", "0028-0836", "1476-4687"),
    ("Science (New York, N.Y.)", "Science", "0036-8075", "1095-9203"),
    ("Cell", "Cell", "0092-8674", "1097-4172"),
    ("Nature biotechnology", "Nat Biotechnol", "1087-0156", "1546-1696"),
    ("Journal of clinical oncology", "J Clin Oncol", "0732-183X", "1527-7755"),
    ("The Lancet. Oncology", "Lancet Oncol", "1470-2045", "1474-5488"),
    ("JAMA oncology", "JAMA Oncol", "2374-2437", "2374-2445"),
    ("Annals of oncology", "Ann Oncol", "0923-7534", "1569-8041"),
    ("Cancer cell", "Cancer Cell", "1535-6108", "1878-3686"),
    ("Cancer discovery", "Cancer Discov", "2159-8274", "2159-8290"),
    ("Circulation", "Circulation", "0009-7322", "1524-4539"),
    ("European heart journal", "Eur Heart J", "0195-668X", "1522-9645"),
    (
        "Journal of the American College of Cardiology",
        "J Am Coll Cardiol",
        "0735-1097",
        "1558-3597",
    ),
    ("Diabetes care", "Diabetes Care", "0149-5992", "1935-5548"),
    (
        "The lancet. Diabetes & endocrinology",
        "Lancet Diabetes Endocrinol",
        "2213-8587",
        "2213-8595",
    ),
    ("The lancet. Respiratory medicine", "Lancet Respir Med", "2213-2600", "2213-2619"),
    (
        "American journal of respiratory and critical care medicine",
        "Am J Respir Crit Care Med",
        "1073-449X",
        "1535-4970",
    ),
    ("The Lancet. Infectious diseases", "Lancet Infect Dis", "1473-3099", "1474-4457"),
    ("The Lancet. Neurology", "Lancet Neurol", "1474-4422", "1474-4465"),
    ("Gastroenterology", "Gastroenterology", "0016-5085", "1528-0012"),
    ("Gut", "Gut", "0017-5749", "1468-3288"),
    ("Journal of hepatology", "J Hepatol", "0168-8278", "1600-0641"),
    ("Blood", "Blood", "0006-4971", "1528-0020"),
)


# --- the journal's name as a reference list prints it ----------------------------------------

# Words kept lower case inside a title-cased name: English articles, coordinating conjunctions
# and prepositions of three letters or fewer (APA 7, 6.17), plus the function words of the
# languages NLM catalogue titles use most (Latin, French, Spanish, Portuguese, Italian, German,
# Dutch, Scandinavian).
APA_MINOR_WORDS = frozenset(
    (  # noqa: SIM905 - a word list reads better as one string
        "a an the and but or nor for so yet as at by in of off on per to up via "
        "et de del della di da das do dos du des la le les los el y e en und der die für "
        "van von voor og och i den det"
    ).split()
)
# MLA 9 (1.2.1) also lowers every preposition whatever its length and the `to` of infinitives.
MLA_MINOR_WORDS = APA_MINOR_WORDS | frozenset(
    (  # noqa: SIM905
        "about above across after against along among around before behind below beneath "
        "beside between beyond during except from inside into like near onto out outside over "
        "past since than through throughout toward towards under underneath until upon versus "
        "vs with within without"
    ).split()
)

_OPENERS = "\"'“‘(["
_WORD = re.compile(r"[^\s]+")
# A break after which the next word starts a new part (a subtitle or a sentence).
_PART_BREAK = re.compile(r"[.:?!—]$")


def _capitalize(part: str) -> str:
    """First letter upper case when the word is written all in lower case Latin letters;
    `miRNA`, `p53`, `β-lactams`, `PLoS` are left as written."""
    lead = len(part) - len(part.lstrip(_OPENERS))
    core = part[lead:]
    if not core or any(ch.isdigit() or ch.isupper() for ch in core):
        return part
    first = core[0]
    if not (first.isalpha() and "LATIN" in unicodedata.name(first, "")):
        return part
    return part[:lead] + first.upper() + core[1:]


def _lower_minor(part: str) -> str:
    """A minor word written `Of` becomes `of`; `OF` (an acronym?) and a lone capital (`Y` in
    `drug X on outcome Y`, `E` in `hepatitis E`) are left alone."""
    lead = len(part) - len(part.lstrip(_OPENERS))
    core = part[lead:]
    bare = core.rstrip('"”’)],;:.?!')
    if len(bare) > 1 and bare == bare.capitalize():
        return part[:lead] + core.lower()
    return part


def title_case(text: str, minor: frozenset[str] = APA_MINOR_WORDS) -> str:
    """Title case as the style guides write it: every word capitalized except `minor` words,
    which stay lower case unless they open the text or a part after `.`, `:`, `?` or `!`; the
    last word is capitalized too. Each part of a hyphenated compound follows the same rule
    (`First-in-Human`). Words already holding a capital or a digit (acronyms, gene names,
    `miRNA`, `p53`) are left as written."""
    words = _WORD.findall(text)
    out: list[str] = []
    starts_part = True
    for index, word in enumerate(words):
        last = index == len(words) - 1
        parts = word.split("-")
        cased = []
        for j, part in enumerate(parts):
            bare = part.strip(_OPENERS + '"”’)],;:.?!').lower()
            forced = (starts_part and j == 0) or (last and j == len(parts) - 1)
            if bare in minor and not forced:
                cased.append(_lower_minor(part))
            else:
                cased.append(_capitalize(part))
        out.append("-".join(cased))
        starts_part = bool(_PART_BREAK.search(word))
    return " ".join(out)


# NLM's place / date qualifier at the end of a catalogue title: `Science (New York, N.Y.)`,
# `Journal of magnetic resonance (San Diego, Calif. : 1997)`.
_QUALIFIER = re.compile(r"\s*\([^()]*\)\s*$")


def journal_name(title: str | None, iso_abbreviation: str | None = None) -> str:
    """The journal's name for APA 7 and MLA 9, built from NLM's catalogue title (the ISO
    abbreviation cannot be expanded without the ISSN portal's word list, so it is the
    fallback only when the record has no title):

    1. the trailing parenthetical qualifier NLM adds to tell same-named journals apart is
       dropped (`Social justice (San Francisco, Calif.)` -> `Social justice`);
    2. the cataloguing subtitle after ` : ` is dropped (`Tidsskrift for den Norske
       laegeforening : tidsskrift for praktisk medicin, ny raekke` -> `Tidsskrift for den
       Norske laegeforening`);
    3. the rest is title-cased by `title_case` with the APA minor words (`The American
       psychologist` -> `The American Psychologist`, `Biochimica et biophysica acta` ->
       `Biochimica et Biophysica Acta`); capitals already there are kept (`PLoS`, `JAMA`).
    """
    name = (title or "").strip()
    if not name:
        return (iso_abbreviation or "").strip()
    while _QUALIFIER.search(name) and _QUALIFIER.sub("", name):
        name = _QUALIFIER.sub("", name)
    name = name.split(" : ")[0].strip().rstrip(".")
    return title_case(name, APA_MINOR_WORDS)
