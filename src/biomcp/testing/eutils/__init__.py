"""A fake NCBI E-utilities server for tests and offline demos.

It answers like NCBI (same URLs, parameters and XML shapes) over a corpus of PubMed records
loaded from PubmedArticleSet files, and fails on demand (`faults`). See `FakeEutilsServer`.
"""

from biomcp.testing.eutils.app import create_app
from biomcp.testing.eutils.corpus import CorpusEntry, FakeCorpus
from biomcp.testing.eutils.faults import FAULT_KINDS, Fault, FaultInjector
from biomcp.testing.eutils.medline import ArticleExtras, article_extras, to_medline
from biomcp.testing.eutils.server import FakeEutilsServer, is_loopback
from biomcp.testing.eutils.state import load_relations, normalize_relations
from biomcp.testing.eutils.synthetic import generate_articles

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
