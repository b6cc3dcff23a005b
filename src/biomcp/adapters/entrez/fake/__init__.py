"""A fake NCBI E-utilities server for tests and offline demos.

It answers like NCBI (same URLs, parameters and XML shapes) over a corpus of PubMed records
loaded from PubmedArticleSet files, and fails on demand (`faults`). See `FakeEutilsServer`.
"""

from biomcp.adapters.entrez.fake.app import create_app
from biomcp.adapters.entrez.fake.corpus import CorpusEntry, FakeCorpus
from biomcp.adapters.entrez.fake.faults import FAULT_KINDS, Fault, FaultInjector
from biomcp.adapters.entrez.fake.medline import ArticleExtras, article_extras, to_medline
from biomcp.adapters.entrez.fake.server import FakeEutilsServer, is_loopback
from biomcp.adapters.entrez.fake.state import load_relations, normalize_relations
from biomcp.adapters.entrez.fake.synthetic import generate_articles

__all__ = [
    "FAULT_KINDS",
    "ArticleExtras",
    "CorpusEntry",
    "FakeCorpus",
    "FakeEutilsServer",
    "Fault",
    "FaultInjector",
    "article_extras",
    "create_app",
    "generate_articles",
    "is_loopback",
    "load_relations",
    "normalize_relations",
    "to_medline",
]
