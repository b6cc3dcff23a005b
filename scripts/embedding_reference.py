"""Write tests/fixtures/embeddings/minilm_fp32.json: fp32 all-MiniLM-L6-v2 vectors of a fixed
set of texts, computed by sentence-transformers on PyTorch (the reference the default ONNX
embedder is held to by tests/contract/test_embedders.py, without PyTorch installed).

Run once with the torch extra installed: `python scripts/embedding_reference.py`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "src")]

from tests.contract.embedder_contract import probe_texts  # noqa: E402

OUT = ROOT / "tests/fixtures/embeddings/minilm_fp32.json"
TEXTS = [
    *probe_texts(16),
    "Aspirin",
    "",
    "HbA1c fell by 0.8% (95% CI 0.5 to 1.1) with metformin versus 0.3% with placebo.",
    "Ø-Bruserud et al. reported résumé-like naïve cells in β-thalassaemia (n = 141).",
    "Mice lacking the receptor developed less inflammation after infection.",
    "Background: " + "Chronic kidney disease progression was tracked over ten years. " * 40,
]


def main() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from biomcp.adapters.embeddings.hf import HfEmbedder

    embedder = HfEmbedder("all-MiniLM-L6-v2", batch_size=8)
    vectors = embedder.embed_sync(TEXTS)
    OUT.write_text(
        json.dumps(
            {
                "model": embedder.model_id,
                "runtime": "sentence-transformers fp32 (PyTorch)",
                "texts": TEXTS,
                "vectors": [[round(x, 6) for x in v] for v in vectors],
            },
            ensure_ascii=False,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"wrote {len(TEXTS)} vectors to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
