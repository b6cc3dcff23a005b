"""Local embedding throughput: all-MiniLM-L6-v2 through `HfEmbedder`, fp32 vs int8, and the
default `OnnxEmbedder` (ONNX Runtime, int8) beside them at 256 tokens (its speed against torch
int8 and its cosine to fp32: the embedder's speed figures).

Embeds the first --texts SciFact abstracts (title + text, ../shared/data/scifact/corpus.jsonl;
synthetic biomedical text when absent) at max_seq_length 256 and 128, in fp32 and with torch
dynamic int8 quantization (per-channel weights, the adapter's `quantize=True`). Reports
texts/s and tokens/s (tokens actually read by the model: min(tokenized length, window), special
tokens included), the int8/fp32 speed-up, and the cosine agreement of int8 with fp32 vectors
(mean, 5th percentile, min). fp32 and int8 runs alternate and the best of --repeat counts, so
other load on the machine hurts both alike (the load average is reported).

Explorations (skipped by --quick unless --explore): threads (1 vs all), batch size, global
length sorting (what sentence-transformers does) vs batches in input order, int8 per-tensor vs
per-channel weight scales. `--ndcg SPLIT` adds SciFact nDCG@10 on the whole corpus for fp32 and
int8 at 256 tokens (slow: the corpus is embedded twice; tune on `train`, report `test`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.machine import describe

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared/data/scifact"
MODEL = "all-MiniLM-L6-v2"

_VOCABULARY = (
    "patients randomized trial placebo mortality cohort cardiovascular diabetes insulin "
    "hazard ratio confidence interval tumour expression receptor kinase inhibitor dose "
    "adverse events follow-up months outcome significant reduction baseline analysis "
    "mice cells protein gene mutation pathway signalling infection vaccine antibody "
    "p-value 95% CI meta-analysis systematic review observational prevalence incidence"
)
_WORDS = _VOCABULARY.split()


def synthetic_texts(count: int, seed: int = 13) -> list[str]:
    """Abstract-like texts of 120..320 words (deterministic)."""
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        words = [rng.choice(_WORDS) for _ in range(rng.randint(120, 320))]
        texts.append(" ".join(words).capitalize() + ".")
    return texts


def load_corpus(folder: Path) -> list[tuple[str, str]]:
    """(doc id, title + " " + text) of SciFact's corpus, in file order."""
    docs = []
    with (folder / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            item = json.loads(line)
            text = f"{item.get('title', '')} {item.get('text', '')}".strip()
            docs.append((str(item["_id"]), text))
    return docs


def load_texts(folder: Path, count: int) -> tuple[list[str], str]:
    if (folder / "corpus.jsonl").is_file():
        return [text for _, text in load_corpus(folder)[:count]], "scifact"
    return synthetic_texts(count), "synthetic"


def _set_offline() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _token_count(model: Any, texts: Sequence[str], window: int) -> int:
    encoded = model.tokenizer(
        list(texts), add_special_tokens=True, truncation=False, verbose=False
    )["input_ids"]
    return sum(min(len(ids), window) for ids in encoded)


def _best_times(runs: dict[str, Callable[[], Any]], repeat: int) -> dict[str, float]:
    """Alternate the runs `repeat` times (after one warm-up each); the best time of each."""
    for run in runs.values():
        run()
    best = dict.fromkeys(runs, math.inf)
    for _ in range(repeat):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def _agreement(a: list[list[float]], b: list[list[float]]) -> dict[str, float]:
    cosines = sorted(
        math.fsum(x * y for x, y in zip(u, v, strict=True)) for u, v in zip(a, b, strict=True)
    )
    p5 = cosines[max(0, math.ceil(0.05 * len(cosines)) - 1)]
    return {
        "mean": round(statistics.fmean(cosines), 5),
        "p5": round(p5, 5),
        "min": round(cosines[0], 5),
    }


def _grid(texts: list[str], seqs: Sequence[int], batch: int, repeat: int) -> dict[str, Any]:
    from biomcp.adapters.embeddings.hf import HfEmbedder

    out: dict[str, Any] = {}
    for seq in seqs:
        fp32 = HfEmbedder(MODEL, batch_size=batch, max_seq_length=seq)
        int8 = HfEmbedder(MODEL, batch_size=batch, max_seq_length=seq, quantize=True)
        tokens = _token_count(fp32.model, texts, seq)
        arms: dict[str, Callable[[], Any]] = {
            "fp32": partial(fp32.embed_sync, texts),
            "int8": partial(int8.embed_sync, texts),
        }
        onnx = _onnx(precision="fp32") if seq == ONNX_WINDOW else None
        onnx_int8 = _onnx(precision="int8", uint8_weights=False) if onnx is not None else None
        # the weights as uint8: what int8 runs on a CPU without VNNI (exact products there)
        onnx_uint8 = _onnx(precision="int8", uint8_weights=True) if onnx is not None else None
        unfused = _onnx(fuse=False) if onnx is not None else None
        if onnx is not None and onnx_int8 is not None and onnx_uint8 and unfused is not None:
            arms["onnx"] = partial(onnx.embed_sync, texts)
            arms["onnx_int8"] = partial(onnx_int8.embed_sync, texts)
            arms["onnx_int8_uint8"] = partial(onnx_uint8.embed_sync, texts)
            arms["onnx_unfused"] = partial(unfused.embed_sync, texts)
        times = _best_times(arms, repeat)
        row: dict[str, Any] = {"tokens": tokens}
        for name, seconds in times.items():
            row[name] = {
                "seconds": round(seconds, 3),
                "texts_per_s": round(len(texts) / seconds, 1),
                "tokens_per_s": round(tokens / seconds),
            }
        row["int8_speedup"] = round(times["fp32"] / times["int8"], 2)
        reference, quantized = fp32.embed_sync(texts), int8.embed_sync(texts)
        row["int8_cosine_to_fp32"] = _agreement(reference, quantized)
        row["model_ids"] = {"fp32": fp32.model_id, "int8": int8.model_id}
        if onnx is not None and onnx_int8 is not None and onnx_uint8 is not None:
            from biomcp.adapters.embeddings.onnx import OnnxEmbedder

            vectors = onnx.embed_sync(texts)
            default = OnnxEmbedder().precision
            row["onnx_default_precision"] = default
            row["onnx_fusion"] = str(onnx.fusion)
            row["onnx_speedup_to_int8"] = round(times["int8"] / times["onnx"], 2)
            row["onnx_int8_speedup_to_int8"] = round(times["int8"] / times["onnx_int8"], 2)
            row["onnx_int8_speedup_to_onnx"] = round(times["onnx"] / times["onnx_int8"], 2)
            signed = onnx_int8.embed_sync(texts)
            row["onnx_int8_cosine_to_fp32"] = _agreement(reference, signed)
            row["onnx_int8_uint8_speedup_to_onnx"] = round(
                times["onnx"] / times["onnx_int8_uint8"], 2
            )
            row["onnx_int8_uint8_max_abs_diff_to_int8"] = float(
                max(
                    abs(x - y)
                    for u, v in zip(signed, onnx_uint8.embed_sync(texts), strict=True)
                    for x, y in zip(u, v, strict=True)
                )
            )
            row["default_speedup_to_int8"] = row[
                "onnx_int8_speedup_to_int8" if default == "int8" else "onnx_speedup_to_int8"
            ]
            row["onnx_unfused_speedup_to_int8"] = round(times["int8"] / times["onnx_unfused"], 2)
            row["onnx_cosine_to_fp32"] = _agreement(reference, vectors)
            row["onnx_cosine_to_int8"] = _agreement(quantized, vectors)
            row["model_ids"]["onnx"] = onnx.model_id
        out[str(seq)] = row
    return out


ONNX_WINDOW = 256


def _onnx(*, fuse: bool = True, precision: str = "fp32", uint8_weights: bool | None = None) -> Any:
    """The default embedder (ONNX Runtime, int8 weights, its own batch size) in `precision`,
    loaded; with `fuse=False` the graph as exported. None when it is not installed."""
    from biomcp.adapters.embeddings.onnx import OnnxEmbedder
    from biomcp.ports.embeddings import EmbeddingUnavailableError

    embedder = OnnxEmbedder(fuse=fuse, precision=precision, uint8_weights=uint8_weights)
    try:
        embedder.load()
    except EmbeddingUnavailableError:
        return None
    return embedder


def _explore(texts: list[str], batch: int, repeat: int) -> dict[str, Any]:
    import torch

    from biomcp.adapters.embeddings.hf import HfEmbedder, quantize_int8

    fp32 = HfEmbedder(MODEL, batch_size=batch)
    model = fp32.model
    tokens = _token_count(model, texts, 256)

    def rate(seconds: float) -> dict[str, float]:
        return {
            "texts_per_s": round(len(texts) / seconds, 1),
            "tokens_per_s": round(tokens / seconds),
        }

    def encode(m: Any, size: int) -> Any:
        return m.encode(texts, batch_size=size, normalize_embeddings=True, show_progress_bar=False)

    found: dict[str, Any] = {}
    threads = torch.get_num_threads()
    runs: dict[str, Callable[[], Any]] = {}

    def with_threads(count: int) -> None:
        torch.set_num_threads(count)
        encode(model, batch)

    for count in sorted({1, threads}):
        runs[f"threads_{count}"] = partial(with_threads, count)
    times = _best_times(runs, repeat)
    torch.set_num_threads(threads)
    found["threads"] = {name: rate(t) for name, t in times.items()}

    sizes = (8, 16, 32, 64, 128)
    times = _best_times({f"batch_{s}": partial(encode, model, s) for s in sizes}, repeat)
    found["batch_size"] = {name: rate(t) for name, t in times.items()}

    def in_input_order() -> None:
        for start in range(0, len(texts), batch):
            fp32.embed_sync(texts[start : start + batch])

    times = _best_times(
        {"length_sorted": lambda: fp32.embed_sync(texts), "input_order": in_input_order}, repeat
    )
    found["length_sorting"] = {name: rate(t) for name, t in times.items()}

    reference = encode(model, batch)
    per_tensor = quantize_int8(model, per_channel=False)
    per_channel = quantize_int8(model, per_channel=True)
    times = _best_times(
        {
            "fp32": lambda: encode(model, batch),
            "int8_per_tensor": lambda: encode(per_tensor, batch),
            "int8_per_channel": lambda: encode(per_channel, batch),
        },
        repeat,
    )
    schemes: dict[str, Any] = {name: rate(t) for name, t in times.items()}
    for name, quantized in (("int8_per_tensor", per_tensor), ("int8_per_channel", per_channel)):
        schemes[name]["cosine_to_fp32"] = _agreement(
            reference.tolist(), encode(quantized, batch).tolist()
        )
        schemes[name]["speedup"] = round(times["fp32"] / times[name], 2)
    found["int8_scheme"] = schemes
    found["texts"] = len(texts)
    return found


def _ndcg(folder: Path, split: str, batch: int) -> dict[str, Any]:
    """SciFact nDCG@10 over the whole corpus for fp32 and int8 at 256 tokens."""
    import numpy as np

    from biomcp.adapters.embeddings.hf import HfEmbedder

    docs = load_corpus(folder)
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    with (folder / "qrels" / f"{split}.tsv").open(encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            qid, did, score = line.rstrip("\n").split("\t")
            if int(score) > 0:
                qrels[qid][did] = int(score)
    queries = {}
    with (folder / "queries.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            item = json.loads(line)
            if str(item["_id"]) in qrels:
                queries[str(item["_id"])] = item["text"]
    qids = sorted(queries)
    doc_ids = [d for d, _ in docs]
    result: dict[str, Any] = {"split": split, "queries": len(qids), "docs": len(docs)}
    for name, quantize in (("fp32", False), ("int8", True)):
        embedder = HfEmbedder(MODEL, batch_size=batch, quantize=quantize)
        start = time.perf_counter()
        corpus = np.asarray(embedder.embed_sync([t for _, t in docs]), dtype=np.float32)
        seconds = time.perf_counter() - start
        questions = np.asarray(embedder.embed_sync([queries[q] for q in qids]), dtype=np.float32)
        scores = questions @ corpus.T
        total = 0.0
        for row, qid in enumerate(qids):
            top = np.argsort(-scores[row])[:10]
            relevant = qrels[qid]
            dcg = sum(
                relevant.get(doc_ids[j], 0) / math.log2(rank + 2) for rank, j in enumerate(top)
            )
            ideal = sorted(relevant.values(), reverse=True)[:10]
            idcg = sum(rel / math.log2(rank + 2) for rank, rel in enumerate(ideal))
            total += dcg / idcg if idcg else 0.0
        result[name] = {
            "ndcg_at_10": round(total / len(qids), 4),
            "corpus_seconds": round(seconds, 1),
        }
    result["int8_minus_fp32"] = round(
        result["int8"]["ndcg_at_10"] - result["fp32"]["ndcg_at_10"], 4
    )
    return result


def _goals(grid: dict[str, Any]) -> dict[str, Any]:
    """The goal: the default (ONNX, in the precision `auto` picks on this CPU) embeds at least
    as many tokens/s as torch int8."""
    row = grid.get(str(ONNX_WINDOW), {})
    ratio = row.get("default_speedup_to_int8")
    return {
        "onnx_vs_torch_int8_tokens_per_s": {
            "goal": ">= 1.0x",
            "measured": ratio,
            "met": None if ratio is None else ratio >= 1.0,
        }
    }


def run(quick: bool, argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks embeddings")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="SciFact folder")
    parser.add_argument("--texts", type=int, default=None, help="texts embedded (512; quick 32)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=None, help="timed runs (3; quick 1)")
    parser.add_argument(
        "--seq", type=int, nargs="+", default=None, help="max_seq_length (256 128; quick 256)"
    )
    parser.add_argument("--explore", action="store_true", help="explorations even with --quick")
    parser.add_argument("--no-explore", action="store_true")
    parser.add_argument("--ndcg", metavar="SPLIT", choices=["train", "test"], default=None)
    args = parser.parse_args(argv)
    _set_offline()
    import torch

    count = args.texts or (32 if quick else 512)
    repeat = args.repeat or (1 if quick else 3)
    seqs = args.seq or ([256] if quick else [256, 128])
    texts, source = load_texts(args.data, count)
    load_before = os.getloadavg()
    figures: dict[str, Any] = {
        "seq": _grid(texts, seqs, args.batch_size, repeat),
    }
    if (args.explore or not quick) and not args.no_explore:
        figures["explore"] = _explore(texts[: max(32, count // 2)], args.batch_size, repeat)
    if args.ndcg:
        figures["scifact"] = _ndcg(args.data, args.ndcg, args.batch_size)
    return {
        "benchmark": "embeddings",
        "machine": describe(),
        "config": {
            "quick": quick,
            "model": MODEL,
            "seq": seqs,
            "texts": len(texts),
            "source": source,
            "batch_size": args.batch_size,
            "repeat": repeat,
            "torch": torch.__version__,
            "torch_threads": torch.get_num_threads(),
            "quantized_engine": torch.backends.quantized.engine,
            "loadavg_before_after": [
                round(load_before[0], 2),
                round(os.getloadavg()[0], 2),
            ],
        },
        "goals": _goals(figures["seq"]),
        "figures": figures,
    }
