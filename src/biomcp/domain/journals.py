"""The default tier-1 journal list used by the quality scorer's journal component.

Major general-medical journals and the leading journal of the specialties the corpus is most
often used for (oncology, cardiology, metabolism, respiratory, infection, neurology,
gastroenterology, haematology), plus the top basic-science titles. Each entry gives the full
title as the NLM catalogue prints it, its ISO abbreviation, and its print / electronic ISSNs.
A record matches by ISSN first and by normalized title or abbreviation otherwise, so a
mis-typed ISSN here still leaves the name match working. Operators replace or extend the list
through `JournalTiers`.
"""

from __future__ import annotations

__all__ = ["DEFAULT_TIER1_JOURNALS"]

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
