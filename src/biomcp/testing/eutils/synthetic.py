"""Deterministic synthetic PubMed articles for tests and offline demos.

The articles are small but valid `PubmedArticle` elements in NCBI's shape, built from a few
fixed vocabularies so that searches over them are meaningful ("asthma[mh]", "randomized
controlled trial[pt]", "2021[dp]"...). The output is bytes of a whole `PubmedArticleSet`, ready
for `FakeCorpus.from_xml_bytes` or to be written to a file.
"""

from __future__ import annotations

import hashlib
import random
from datetime import date, timedelta
from xml.sax.saxutils import escape

__all__ = ["generate_articles"]

_HEADER = (
    '<?xml version="1.0" ?>\n'
    '<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2025//EN" '
    '"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">\n'
    "<PubmedArticleSet>\n"
)
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

# (condition words in text, MeSH descriptor, descriptor UI)
_CONDITIONS = (
    ("asthma", "Asthma", "D001249"),
    ("type 2 diabetes", "Diabetes Mellitus, Type 2", "D003924"),
    ("hypertension", "Hypertension", "D006973"),
    ("breast cancer", "Breast Neoplasms", "D001943"),
    ("COVID-19", "COVID-19", "D000086382"),
    ("Alzheimer disease", "Alzheimer Disease", "D000544"),
    ("ischemic stroke", "Ischemic Stroke", "D000083242"),
    ("obesity", "Obesity", "D009765"),
    ("major depression", "Depressive Disorder, Major", "D003865"),
    ("sepsis", "Sepsis", "D018805"),
    ("heart failure", "Heart Failure", "D006333"),
    ("chronic kidney disease", "Renal Insufficiency, Chronic", "D051436"),
)
_INTERVENTIONS = (
    ("metformin", "Metformin", "D008687"),
    ("aspirin", "Aspirin", "D001241"),
    ("vitamin D supplementation", "Vitamin D", "D014807"),
    ("exercise training", "Exercise Therapy", "D005081"),
    ("cognitive behavioural therapy", "Cognitive Behavioral Therapy", "D015928"),
    ("inhaled corticosteroids", "Adrenal Cortex Hormones", "D000305"),
    ("statin therapy", "Hydroxymethylglutaryl-CoA Reductase Inhibitors", "D019161"),
    ("mediterranean diet", "Diet, Mediterranean", "D055088"),
)
_OUTCOMES = (
    "mortality",
    "hospital readmission",
    "quality of life",
    "blood pressure",
    "glycated haemoglobin",
    "symptom burden",
    "inflammatory markers",
    "functional decline",
)
# (publication type, UI, title lead) - weights below make RCTs common but not dominant.
_DESIGNS = (
    ("Randomized Controlled Trial", "D016449", "A randomized controlled trial of"),
    ("Meta-Analysis", "D017418", "A meta-analysis of"),
    ("Review", "D016454", "A review of"),
    ("Observational Study", "D064888", "An observational study of"),
    ("Clinical Trial", "D016430", "A clinical trial of"),
    (None, None, "Effects of"),
)
_DESIGN_WEIGHTS = (3, 1, 2, 2, 1, 5)
_TRIAL_TYPES = frozenset({"Randomized Controlled Trial", "Clinical Trial"})
_JOURNALS = (
    ("The New England journal of medicine", "N Engl J Med", "0028-4793", "1533-4406"),
    ("Lancet (London, England)", "Lancet", "0140-6736", "1474-547X"),
    ("BMJ (Clinical research ed.)", "BMJ", "0959-8138", "1756-1833"),
    ("PloS one", "PLoS One", None, "1932-6203"),
    ("Scientific reports", "Sci Rep", None, "2045-2322"),
    ("Journal of clinical medicine", "J Clin Med", "2077-0383", "2077-0383"),
    ("Nutrients", "Nutrients", None, "2072-6643"),
    ("Frontiers in immunology", "Front Immunol", None, "1664-3224"),
)
_LAST_NAMES = (
    "Smith", "Garcia", "Chen", "Müller", "Okafor", "Rossi", "Tanaka", "Kowalski",
    "Nguyen", "Johansson", "Haddad", "Silva", "Patel", "Novak", "Dubois", "Kim",
)  # fmt: skip
_FORE_NAMES = (
    "Anna", "Ben", "Carla", "David", "Elena", "Farid", "Grace", "Hiro",
    "Ines", "Jonas", "Kwame", "Lena", "Marco", "Nadia", "Omar", "Priya",
)  # fmt: skip
_PMC_OFFSET = 100_000_000
_CITIES = ("Boston, MA, USA", "Lyon, France", "Kyoto, Japan", "Lagos, Nigeria", "Milan, Italy")


def generate_articles(
    n: int,
    *,
    start: date,
    end: date,
    seed: int = 0,
    pmid_start: int = 30000000,
    revised_after_days: int | None = None,
    pmc_share: float = 0.0,
) -> bytes:
    """A `PubmedArticleSet` of `n` synthetic articles, deterministic for a given `seed`.

    PMIDs run from `pmid_start` upwards; Entrez dates are spread evenly over the days of
    [`start`, `end`] (later PMIDs never have earlier dates), each with a random hour and minute.
    About one article in five is a randomized controlled trial; every article is tagged
    Humans or Animals in MeSH, has a title, a one- or two-section abstract, a journal with an
    ISSN, one to three authors, a DateRevised and a DOI; about half of the trials list an NCT
    id in a DataBankList. The DateRevised (LR, what `mdat`
    searches) is 1-400 days after the Entrez date, or exactly `revised_after_days` after it
    (0: revised the day it appeared, so no record looks revised since a later sync).
    A share `pmc_share` (0 to 1) of the articles, chosen by PMID, name a PMC id
    (`PMC` + PMID + 100,000,000); the fake's PMC serves them SYNTHETIC full text.

    Raises:
        ValueError: when `n` is negative, `end` is before `start` or `pmc_share` is not in
            [0, 1].
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if not 0.0 <= pmc_share <= 1.0:
        raise ValueError(f"pmc_share must be between 0 and 1, got {pmc_share}")
    if end < start:
        raise ValueError(f"end {end} is before start {start}")
    rng = random.Random(seed)  # noqa: S311 - reproducible test data, not secrets
    days = (end - start).days + 1
    parts = [_HEADER]
    for i in range(n):
        day = start + timedelta(days=i * days // n)
        article = _article(rng, pmid_start + i, day, revised_after_days)
        parts.append(_with_pmc(article, pmid_start + i, pmc_share))
    parts.append("</PubmedArticleSet>\n")
    return "".join(parts).encode("utf-8")


def _article(rng: random.Random, pmid: int, edat: date, revised_after_days: int | None) -> str:
    # The draws run in a fixed order: a given seed gives the same articles.
    condition, cond_mesh, cond_ui = rng.choice(_CONDITIONS)
    intervention, int_mesh, int_ui = rng.choice(_INTERVENTIONS)
    outcome = rng.choice(_OUTCOMES)
    pub_type, pt_ui, lead = rng.choices(_DESIGNS, weights=_DESIGN_WEIGHTS)[0]
    title_text, abbrev, issn, eissn = rng.choice(_JOURNALS)
    human = rng.random() < 0.8
    n_patients = rng.randint(20, 5000)
    title = f"{lead} {intervention} on {outcome} in {condition}."
    hour, minute = rng.randint(0, 23), rng.randint(0, 59)
    pub = edat + timedelta(days=rng.randint(0, 60))
    revised = edat + timedelta(days=rng.randint(1, 400))  # drawn either way: same articles
    if revised_after_days is not None:
        revised = edat + timedelta(days=revised_after_days)
    doi = f"10.5555/fake.{pmid}"
    subjects = f"{n_patients} patients" if human else f"{rng.randint(8, 80)} mice"
    abstract = _abstract(rng, intervention, outcome, condition, subjects)
    authors = _authors(rng)
    types = ['<PublicationType UI="D016428">Journal Article</PublicationType>']
    if pub_type is not None:
        types.append(f'<PublicationType UI="{pt_ui}">{pub_type}</PublicationType>')
    mesh = _mesh(
        _heading(cond_mesh, cond_ui, major=True), _heading(int_mesh, int_ui, major=False), human
    )
    return (
        f'<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM">'
        f'<PMID Version="1">{pmid}</PMID>'
        f"<DateRevised><Year>{revised.year}</Year><Month>{revised.month:02d}</Month>"
        f"<Day>{revised.day:02d}</Day></DateRevised>"
        f'<Article PubModel="Print-Electronic"><Journal>{_issns(issn, eissn)}'
        f'<JournalIssue CitedMedium="Internet"><Volume>{rng.randint(1, 400)}</Volume>'
        f"<Issue>{rng.randint(1, 12)}</Issue><PubDate><Year>{pub.year}</Year>"
        f"<Month>{_MONTHS[pub.month - 1]}</Month></PubDate></JournalIssue>"
        f"<Title>{escape(title_text)}</Title><ISOAbbreviation>{abbrev}</ISOAbbreviation>"
        f"</Journal><ArticleTitle>{escape(title)}</ArticleTitle>"
        f"<Pagination><MedlinePgn>{rng.randint(1, 900)}</MedlinePgn></Pagination>"
        f'<ELocationID EIdType="doi" ValidYN="Y">{doi}</ELocationID>'
        f"<Abstract>{abstract}</Abstract>"
        f'<AuthorList CompleteYN="Y">{authors}</AuthorList>'
        f"<Language>eng</Language>{_databanks(pmid, pub_type)}"
        f"<PublicationTypeList>{''.join(types)}</PublicationTypeList>"
        f"</Article><MedlineJournalInfo><Country>United States</Country>"
        f"<MedlineTA>{abbrev}</MedlineTA><NlmUniqueID>{9000000 + len(abbrev)}</NlmUniqueID>"
        f"</MedlineJournalInfo><MeshHeadingList>{mesh}"
        f"</MeshHeadingList></MedlineCitation><PubmedData><History>{_history(edat, hour, minute)}"
        f"</History><PublicationStatus>ppublish</PublicationStatus><ArticleIdList>"
        f'<ArticleId IdType="pubmed">{pmid}</ArticleId><ArticleId IdType="doi">{doi}'
        f"</ArticleId></ArticleIdList></PubmedData></PubmedArticle>"
    )


def _with_pmc(article: str, pmid: int, share: float) -> str:
    """The article with a PMC id in its ArticleIdList when the PMID's hash falls in `share`
    (the shared random stream is not drawn from, so the articles stay the same)."""
    digest = hashlib.sha256(f"pmc:{pmid}".encode()).digest()
    if int.from_bytes(digest[:4]) >= share * 2**32:
        return article
    pmc = f'<ArticleId IdType="pmc">PMC{pmid + _PMC_OFFSET}</ArticleId></ArticleIdList>'
    return article.replace("</ArticleIdList>", pmc, 1)


def _databanks(pmid: int, pub_type: str | None) -> str:
    """A ClinicalTrials.gov `DataBankList` for about half of the trials, its NCT id derived
    from the PMID alone: the shared random stream is not drawn from, so other articles stay
    the same."""
    digest = hashlib.sha256(f"nct:{pmid}".encode()).digest()
    if pub_type not in _TRIAL_TYPES or digest[0] % 2:
        return ""
    nct = f"NCT{int.from_bytes(digest[1:5]) % 10**8:08d}"
    return (
        '<DataBankList CompleteYN="Y"><DataBank><DataBankName>ClinicalTrials.gov'
        f"</DataBankName><AccessionNumberList><AccessionNumber>{nct}</AccessionNumber>"
        "</AccessionNumberList></DataBank></DataBankList>"
    )


def _abstract(
    rng: random.Random, intervention: str, outcome: str, condition: str, subjects: str
) -> str:
    """A structured abstract (background, results with an effect size) or a one-line one."""
    if rng.random() < 0.5:
        return (
            f'<AbstractText Label="BACKGROUND" NlmCategory="BACKGROUND">The effect of '
            f"{escape(intervention)} on {outcome} in {escape(condition)} is uncertain."
            f"</AbstractText>"
            f'<AbstractText Label="RESULTS" NlmCategory="RESULTS">In {subjects}, '
            f"{escape(intervention)} changed {outcome} by {rng.randint(1, 40)}% "
            f"(95% CI {rng.randint(1, 9)} to {rng.randint(10, 50)}).</AbstractText>"
        )
    return (
        f"<AbstractText>We studied {escape(intervention)} in {subjects} with "
        f"{escape(condition)} and measured {outcome}.</AbstractText>"
    )


def _authors(rng: random.Random) -> str:
    """One to three `Author` elements, each with an affiliation."""
    authors = []
    for _ in range(rng.randint(1, 3)):
        last, fore = rng.choice(_LAST_NAMES), rng.choice(_FORE_NAMES)
        authors.append(
            f'<Author ValidYN="Y"><LastName>{last}</LastName><ForeName>{fore}</ForeName>'
            f"<Initials>{fore[0]}</Initials><AffiliationInfo><Affiliation>Department of "
            f"Medicine, {rng.choice(_CITIES)}.</Affiliation></AffiliationInfo></Author>"
        )
    return "".join(authors)


def _mesh(condition: tuple[str, str], intervention: tuple[str, str], human: bool) -> str:
    """The `MeshHeading` elements in descriptor order: the condition, the intervention, and
    Humans, or Animals and Mice."""
    mesh = [
        condition,
        intervention,
        _heading("Humans", "D006801") if human else _heading("Animals", "D000818"),
    ]
    if not human:
        mesh.append(_heading("Mice", "D051379"))
    mesh.sort(key=lambda item: item[0])
    return "".join(m[1] for m in mesh)


def _issns(issn: str | None, eissn: str | None) -> str:
    """The print ISSN, or the electronic one when there is no print ISSN."""
    return "".join(
        f'<ISSN IssnType="{kind}">{value}</ISSN>'
        for kind, value in (("Print", issn), ("Electronic", eissn))
        if value and (kind == "Print" or issn is None)
    )


def _history(edat: date, hour: int, minute: int) -> str:
    """The `entrez` and `pubmed` history dates, both at `edat` `hour`:`minute`."""
    return (
        f'<PubMedPubDate PubStatus="entrez"><Year>{edat.year}</Year><Month>{edat.month}</Month>'
        f"<Day>{edat.day}</Day><Hour>{hour}</Hour><Minute>{minute}</Minute></PubMedPubDate>"
        f'<PubMedPubDate PubStatus="pubmed"><Year>{edat.year}</Year><Month>{edat.month}'
        f"</Month><Day>{edat.day}</Day><Hour>{hour}</Hour><Minute>{minute}</Minute>"
        f"</PubMedPubDate>"
    )


def _heading(name: str, ui: str, *, major: bool = False) -> tuple[str, str]:
    flag = "Y" if major else "N"
    return name, (
        f'<MeshHeading><DescriptorName UI="{ui}" MajorTopicYN="{flag}">{escape(name)}'
        f"</DescriptorName></MeshHeading>"
    )
