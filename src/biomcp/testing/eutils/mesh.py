"""ESearch and ESummary for `db=mesh` in the fake E-utilities, over a small built-in vocabulary.

SYNTHETIC DATA. The vocabulary below is written for tests, not copied from NLM's MeSH: two
dozen records around the topics of the test fixtures (obesity and GLP-1, non-small-cell lung
cancer and KRAS, myocardial infarction, asthma, depression...). Names and UIs follow MeSH's
conventions and are mostly MeSH's own, but the tree numbers, entry terms, scope notes and
qualifier lists are abridged or invented and must not be read as NLM's data.

The answers follow NCBI's documented shapes: ESearch an `eSearchResult` (Count, RetMax,
RetStart, IdList, TranslationSet, QueryTranslation, ErrorList / WarningList when nothing
matches); ESummary version 2.0 an `eSummaryResult/DocumentSummarySet/DocumentSummary uid=...`
with the `DS_*` elements of NCBI's `eSummary_mesh` DTD (`DS_MeshTerms/string`,
`DS_IdxLinks/LinksType/TreeNum`, `DS_Subheading/string`...) plus `DS_MeshUI` and
`DS_RecordType`; an unknown uid gets NCBI's per-uid `<error>`.

Search: field tags (`[mh]`, `[mesh]`...) and double quotes are ignored; a MeSH UI (`D009203`,
optionally `[mhui]`) finds its record; otherwise a record matches when every word of the term
is a word of its name or of one of its entry terms. Matches come in vocabulary order, which,
like NCBI's, does not put the exact heading first ("obesity" finds Anti-Obesity Agents before
Obesity).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

from biomcp.testing.eutils import render

__all__ = ["VOCABULARY", "MeshEntry", "mesh_esearch", "mesh_esummary"]

_DISEASE = (
    "blood",
    "classification",
    "complications",
    "diagnosis",
    "diagnostic imaging",
    "diet therapy",
    "drug therapy",
    "economics",
    "epidemiology",
    "etiology",
    "genetics",
    "history",
    "immunology",
    "metabolism",
    "mortality",
    "pathology",
    "physiopathology",
    "prevention & control",
    "psychology",
    "rehabilitation",
    "surgery",
    "therapy",
)
_NEOPLASM = (*_DISEASE, "radiotherapy", "secondary", "chemically induced")
_DRUG = (
    "administration & dosage",
    "adverse effects",
    "analogs & derivatives",
    "chemistry",
    "pharmacokinetics",
    "pharmacology",
    "therapeutic use",
    "toxicity",
)
_PROTEIN = (
    "agonists",
    "antagonists & inhibitors",
    "chemistry",
    "genetics",
    "metabolism",
    "physiology",
)
_ORGANISM = ("anatomy & histology", "genetics", "physiology", "psychology")
_PROCESS = ("drug effects", "genetics", "immunology", "physiology", "radiation effects")


@dataclass(frozen=True, slots=True)
class MeshEntry:
    """One synthetic `db=mesh` record."""

    ui: str
    name: str
    entry_terms: tuple[str, ...] = ()
    tree_numbers: tuple[str, ...] = ()
    scope_note: str = ""
    qualifiers: tuple[str, ...] = ()
    year: str = ""
    mapped_to: str = ""

    @property
    def uid(self) -> str:
        return f"{ord(self.ui[0])}{self.ui[1:]}"

    @property
    def record_type(self) -> str:
        return {"D": "descriptor", "C": "supplementary", "Q": "qualifier"}[self.ui[0]]


def _e(
    ui: str,
    name: str,
    terms: tuple[str, ...],
    trees: tuple[str, ...],
    note: str,
    qualifiers: tuple[str, ...] = (),
    year: str = "",
    mapped_to: str = "",
) -> MeshEntry:
    return MeshEntry(ui, name, terms, trees, f"(synthetic) {note}", qualifiers, year, mapped_to)


#: The synthetic vocabulary, in the order searches return it.
VOCABULARY: tuple[MeshEntry, ...] = (
    _e(
        "D019440",
        "Anti-Obesity Agents",
        ("Antiobesity Agents", "Anti-Obesity Drugs", "Obesity Agents, Anti"),
        ("D27.505.954.427.210.100",),
        "Agents that reduce body weight in obesity.",
        _DRUG,
        "1999",
    ),
    _e(
        "D009765",
        "Obesity",
        ("Obesities",),
        ("C18.654.726.500", "C23.888.144.699.500"),
        "A condition of excess body fat relative to lean mass.",
        _DISEASE,
        "1966",
    ),
    _e(
        "D015431",
        "Weight Loss",
        ("Loss, Weight", "Weight Reduction", "Losses, Weight"),
        ("G07.345.249.410.750", "C23.888.144.243.963"),
        "A decrease in existing body weight.",
        _PROCESS,
        "1989",
    ),
    _e(
        "D000067757",
        "Glucagon-Like Peptide-1 Receptor",
        ("GLP-1 Receptor", "GLP-1 Receptors", "Glucagon-Like Peptide 1 Receptor", "GLP1R"),
        ("D12.776.543.750.695.321.500", "D12.776.543.750.710.321.500"),
        "A G-protein-coupled receptor for glucagon-like peptide 1.",
        _PROTEIN,
        "2016",
    ),
    _e(
        "D000097789",
        "Glucagon-Like Peptide-1 Receptor Agonists",
        ("GLP-1 Receptor Agonists", "GLP-1 Agonists", "Incretin Mimetics"),
        ("D27.505.696.399.450.500",),
        "Drugs that activate the GLP-1 receptor.",
        _DRUG,
        "2024",
    ),
    _e(
        "C000591245",
        "semaglutide",
        ("Ozempic", "Wegovy", "Rybelsus"),
        (),
        "A long-acting GLP-1 analog.",
        (),
        "",
        "*Glucagon-Like Peptides",
    ),
    _e(
        "D003924",
        "Diabetes Mellitus, Type 2",
        (
            "Type 2 Diabetes",
            "Type 2 Diabetes Mellitus",
            "Diabetes Mellitus, Noninsulin-Dependent",
            "NIDDM",
            "Adult-Onset Diabetes Mellitus",
        ),
        ("C18.452.394.750.149", "C19.246.300"),
        "A subclass of diabetes with insulin resistance.",
        _DISEASE,
        "1966",
    ),
    _e(
        "D009203",
        "Myocardial Infarction",
        (
            "Heart Attack",
            "Heart Attacks",
            "Myocardial Infarct",
            "Infarction, Myocardial",
            "Cardiovascular Stroke",
        ),
        ("C14.280.647.500", "C14.907.585.500", "C23.550.513.355.750", "C23.550.717.489.750"),
        "Necrosis of the myocardium from an interruption of its blood supply.",
        _DISEASE,
        "1966",
    ),
    _e(
        "D006973",
        "Hypertension",
        ("High Blood Pressure", "Blood Pressure, High"),
        ("C14.907.489",),
        "Persistently high systemic arterial blood pressure.",
        _DISEASE,
        "1966",
    ),
    _e(
        "D002289",
        "Carcinoma, Non-Small-Cell Lung",
        (
            "Non-Small-Cell Lung Carcinoma",
            "Non-Small Cell Lung Cancer",
            "NSCLC",
            "Carcinoma, Non Small Cell Lung",
        ),
        (
            "C04.557.470.200.240",
            "C04.588.894.797.520.109.220.249",
            "C08.381.540.140.500",
            "C08.785.520.100.220.500",
        ),
        "A heterogeneous group of lung carcinomas other than small-cell carcinoma.",
        _NEOPLASM,
        "1990",
    ),
    _e(
        "D008175",
        "Lung Neoplasms",
        ("Lung Cancer", "Pulmonary Neoplasms", "Cancer of Lung", "Neoplasms, Lung"),
        ("C04.588.894.797.520", "C08.381.540", "C08.785.520"),
        "Tumors or cancer of the lung.",
        _NEOPLASM,
        "1966",
    ),
    _e(
        "D016283",
        "Proto-Oncogene Proteins p21(ras)",
        ("KRAS protein", "p21 ras Protein", "ras Proteins p21"),
        ("D12.644.360.450.500", "D12.776.476.563.375"),
        "Small GTPases encoded by the ras proto-oncogenes.",
        _PROTEIN,
        "1991",
    ),
    _e(
        "D000077143",
        "Docetaxel",
        ("Taxotere", "Docetaxel Anhydrous"),
        ("D02.455.326.271.665.202.500",),
        "A semisynthetic taxane antineoplastic agent.",
        _DRUG,
        "2017",
    ),
    _e(
        "D000082082",
        "Immune Checkpoint Inhibitors",
        ("Checkpoint Inhibitors, Immune", "Immune Checkpoint Blockade"),
        ("D27.505.954.248.179.500",),
        "Drugs that block inhibitory immune checkpoint proteins.",
        _DRUG,
        "2021",
    ),
    _e(
        "D019008",
        "Drug Resistance, Neoplasm",
        ("Antineoplastic Drug Resistance", "Neoplasm Drug Resistance"),
        ("G06.225.500.500", "G07.690.773.968.500"),
        "The ability of tumors to withstand antineoplastic agents.",
        _PROCESS,
        "1997",
    ),
    _e(
        "D001943",
        "Breast Neoplasms",
        ("Breast Cancer", "Breast Tumors", "Mammary Carcinoma, Human"),
        ("C04.588.180", "C17.800.090.500"),
        "Tumors or cancer of the human breast.",
        _NEOPLASM,
        "1966",
    ),
    _e(
        "D001249",
        "Asthma",
        ("Bronchial Asthma", "Asthma, Bronchial"),
        ("C08.127.108", "C08.381.495.108", "C08.674.095", "C20.543.480.680.095"),
        "A form of bronchial disorder with reversible airway obstruction.",
        _DISEASE,
        "1966",
    ),
    _e(
        "D003863",
        "Depression",
        ("Depressive Symptoms", "Emotional Depression"),
        ("F01.145.126.350",),
        "Depressive states usually of moderate intensity.",
        ("psychology", "etiology", "therapy"),
        "1966",
    ),
    _e(
        "D010195",
        "Pancreatitis",
        ("Pancreatitides",),
        ("C06.689.750",),
        "Inflammation of the pancreas.",
        _DISEASE,
        "1966",
    ),
    _e(
        "D005746",
        "Gastric Emptying",
        ("Emptying, Gastric", "Stomach Emptying"),
        ("G10.261.390.430",),
        "The emptying of the stomach into the duodenum.",
        _PROCESS,
        "1966",
    ),
    _e(
        "D015398",
        "Signal Transduction",
        ("Cell Signaling", "Signal Pathways", "Signaling Pathway"),
        ("G02.111.820", "G04.835"),
        "Intracellular transfer of information from the cell surface.",
        _PROCESS,
        "1992",
    ),
    _e(
        "D006801",
        "Humans",
        ("Human", "Homo sapiens", "Man (Taxonomy)"),
        ("B01.050.150.900.649.313.988.400.112.400.400",),
        "Members of the species Homo sapiens.",
        (),
        "1966",
    ),
    _e(
        "D051379",
        "Mice",
        ("Mouse", "Mus"),
        ("B01.050.150.900.649.313.992.635.505.500",),
        "Murine rodents of the genus Mus.",
        _ORGANISM,
        "2006",
    ),
    _e(
        "Q000188",
        "drug therapy",
        ("chemotherapy", "pharmacotherapy"),
        ("Y04.010",),
        "Used with diseases for their treatment by drugs.",
        (),
        "1966",
    ),
)

_DECLARATION = '<?xml version="1.0" encoding="UTF-8" ?>\n'
_DOCTYPE = (
    '<!DOCTYPE eSummaryResult PUBLIC "-//NLM//DTD eSummaryResult//EN" '
    '"http://www.ncbi.nlm.nih.gov/entrez/query/DTD/eSummaryDTD/eSummary_mesh.dtd">'
)
_BY_UID = {entry.uid: entry for entry in VOCABULARY}
_BY_UI = {entry.ui: entry for entry in VOCABULARY}
_TAG = re.compile(r"\[[^\]]*\]")
_UI = re.compile(r"[DCQ]\d{6,9}")
_WORD = re.compile(r"[a-z0-9]+")


def mesh_esearch(term: str, retstart: int, retmax: int) -> bytes:
    """An ESearch answer for `term` in the synthetic vocabulary."""
    plain = " ".join(_TAG.sub(" ", term).replace('"', " ").split())
    matches = _search(plain)
    ids = [m.uid for m in matches]
    exact = next((m for m in matches if _exact(m, plain)), None)
    if exact is not None:
        translation = f'"{exact.name.lower()}"[MeSH Terms] OR {plain}[Text Word]'
    else:
        translation = f"{plain}[All Fields]"
    errors = [] if ids else [("PhraseNotFound", plain)]
    warnings = [] if ids else [("OutputMessage", "No items found.")]
    return render.esearch_xml(
        count=len(ids),
        retstart=retstart,
        ids=ids[retstart : retstart + retmax],
        translation=translation,
        errors=errors,
        warnings=warnings,
    )


def mesh_esummary(uids: list[str]) -> bytes:
    """An ESummary version 2.0 answer for numeric `db=mesh` uids (unknown ones get NCBI's
    per-uid error)."""
    parts = ['\n<DocumentSummarySet status="OK">\n', "<DbBuild>Build-synthetic</DbBuild>\n"]
    for uid in uids:
        entry = _BY_UID.get(uid)
        if entry is None:
            parts.append(
                f"<DocumentSummary uid={quoteattr(uid)}>"
                "<error>cannot get document summary</error></DocumentSummary>\n"
            )
        else:
            parts.append(_summary(entry))
    parts.append("</DocumentSummarySet>\n")
    return f"{_DECLARATION}{_DOCTYPE}\n<eSummaryResult>{''.join(parts)}</eSummaryResult>\n".encode()


def _search(plain: str) -> list[MeshEntry]:
    ui = plain.upper()
    if _UI.fullmatch(ui):
        return [_BY_UI[ui]] if ui in _BY_UI else []
    words = set(_WORD.findall(plain.lower()))
    if not words:
        return []
    return [
        entry
        for entry in VOCABULARY
        if words <= {w for t in (entry.name, *entry.entry_terms) for w in _WORD.findall(t.lower())}
    ]


def _exact(entry: MeshEntry, plain: str) -> bool:
    wanted = plain.casefold()
    return any(t.casefold() == wanted for t in (entry.name, *entry.entry_terms))


def _summary(entry: MeshEntry) -> str:
    def strings(values: tuple[str, ...]) -> str:
        return "".join(f"\t\t<string>{escape(v)}</string>\n" for v in values)

    links = "".join(
        f"\t\t<LinksType>\n\t\t\t<Parent>0</Parent>\n\t\t\t<TreeNum>{escape(t)}</TreeNum>\n"
        "\t\t\t<Children>\n\t\t\t</Children>\n\t\t</LinksType>\n"
        for t in entry.tree_numbers
    )
    return (
        f"<DocumentSummary uid={quoteattr(entry.uid)}>\n"
        f"\t<DS_YearIntroduced>{escape(entry.year)}</DS_YearIntroduced>\n"
        f"\t<DS_ScopeNote>{escape(entry.scope_note)}</DS_ScopeNote>\n"
        "\t<DS_RegistryNumber>0</DS_RegistryNumber>\n"
        f"\t<DS_HeadingMappedTo>{escape(entry.mapped_to)}</DS_HeadingMappedTo>\n"
        f"\t<DS_MeshTerms>\n{strings((entry.name, *entry.entry_terms))}\t</DS_MeshTerms>\n"
        f"\t<DS_Subheading>\n{strings(entry.qualifiers)}\t</DS_Subheading>\n"
        "\t<DS_PaPx>\n\t</DS_PaPx>\n"
        "\t<DS_PreviousIndexing>\n\t</DS_PreviousIndexing>\n"
        "\t<DS_SeeRelated>\n\t</DS_SeeRelated>\n"
        "\t<DS_PaList>\n\t</DS_PaList>\n"
        f"\t<DS_IdxLinks>\n{links}\t</DS_IdxLinks>\n"
        "\t<DS_EntryDate>1999/01/01 00:00</DS_EntryDate>\n"
        "\t<DS_RevisionDate>2024/01/01 00:00</DS_RevisionDate>\n"
        f"\t<DS_MeshUI>{escape(entry.ui)}</DS_MeshUI>\n"
        f"\t<DS_RecordType>{entry.record_type}</DS_RecordType>\n"
        "</DocumentSummary>\n"
    )
