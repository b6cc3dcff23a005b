"""The measuring instrument: retrieval quality through the product's own index and search.

* `beir`: a BEIR data set as a throwaway corpus, every search mode scored (nDCG, Recall, MRR).
* `gold`: hand-written questions per topic asked of the synced corpus.
* `metrics`: the ranking metrics both use.
* `report`: the markdown tables and SVG charts of their reports.

Built on the use cases and ports only; the entry points supply the stores and the embedder.
"""
