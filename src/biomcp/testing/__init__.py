"""What tests, demos and benchmarks run against, shipped apart from the product.

* `eutils`: the fake NCBI E-utilities server (`biomcp fake-eutils`), with fault injection.
* `openai_server`: an OpenAI-compatible embeddings server for the `openai` embedder's tests.
* `serving`: runs an ASGI app on a loopback port in a background thread.

Nothing in the product (domain, ports, use cases, adapters, eval) imports this package; an
import-linter contract enforces it.
"""
