"""PubMedQA PQA-L abstracts (../shared/data/pubmedqa/ori_pqal.json) as domain records: the
product's own loader (`biomcp.eval.distribution.load_pubmedqa`), one place for the tests."""

from __future__ import annotations

from biomcp.eval.distribution import load_pubmedqa

__all__ = ["load_pubmedqa"]
