"""The weaviate_search benchmark runs a real Weaviate node and reports every figure it names:
search latency after an import, and an older collection's terms derived at its next write."""

from __future__ import annotations

import pytest
from benchmarks import weaviate_search

from tests.support.weaviate_cluster import weaviate_binary

pytestmark = pytest.mark.integration


def test_a_small_run_reports_the_timeline_and_each_store_call() -> None:
    weaviate_binary()  # the benchmark starts its own node from it
    argv = ["--chunks", "60", "--searches", "5", "--watch", "6", "--flush-after", "5"]
    out = weaviate_search.run(True, argv)
    assert out["config"]["chunks"] == 60
    assert list(out["figures"]) == ["flush_after_5s", "terms_refresh"]
    refresh = out["figures"]["terms_refresh"]
    assert (refresh["chunks"], refresh["problems_after"]) == (60, 0)
    figures = out["figures"]["flush_after_5s"]
    starts = [bucket["from_s"] for bucket in figures["after_import_median_ms"]]
    assert starts == list(range(0, 5 * len(starts), 5))
    assert all(bucket["median_ms"] > 0 for bucket in figures["after_import_median_ms"])
    settled = figures["settled"]
    assert set(settled["call_median_ms"]) == {"search_arms", "sentence_scores", "hits"}
    assert 0 < settled["median_ms"] <= settled["p95_ms"]
