"""`biomcp eval beir|pubmedqa|gold`: retrieval evaluation from the command line.

* `eval beir` indexes a BEIR data set into a throwaway embedded store (a temporary folder,
  removed afterwards unless `--keep-index`) with the configured embedder behind a persistent
  embedding cache (`--cache`, default `$BIOMCP_DATA_DIR/eval/embeddings.sqlite3`), so a second
  run embeds nothing; then it scores each search mode (`biomcp.eval.beir`). With
  `--store weaviate` the index is a collection of its own in the configured Weaviate instead,
  dropped afterwards: a team's deployment measured on the same chunks and vectors.
* `eval pubmedqa` does the same with PubMedQA's questions, each searching for its own abstract
  among all PQA-L abstracts and a BEIR corpus as distractors (`biomcp.eval.pubmedqa`).
* `eval gold` asks the questions of a gold JSONL file of the configured corpus (sync first).

Each writes `<name>.json` (the report) and `<name>.md` (a short table) into `--out` (default:
the current directory), and with `--plot` `<name>.svg`, a bar chart. The table goes to stdout,
or with `--json` the report. Failures follow `cli.common`: one line on stderr,
`error [CODE]: message`, exit 2 for `VALIDATION`, 1 for everything else.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from biomcp.entrypoints.cli.common import (
    JsonOption,
    cli_settings,
    emit_json,
    execute,
    fail,
    group_app,
)
from biomcp.eval.report import METRICS, bar_chart_svg, beir_markdown, gold_markdown

if TYPE_CHECKING:
    from biomcp.entrypoints.services import Services
    from biomcp.entrypoints.settings import Settings
    from biomcp.eval.beir import BeirDataset, BeirEvaluation, BeirReport, Mode
    from biomcp.eval.gold import GoldReport
    from biomcp.ports.embeddings import Embedder
    from biomcp.ports.vectors import Fusion, VectorStore

__all__ = ["app"]

app = group_app(
    "eval",
    "Measure retrieval quality: BEIR data sets, PubMedQA and gold questions (spec 03 §12).",
)

OutOption = Annotated[
    Path | None, typer.Option("--out", "-o", help="Folder of the report files (default: here).")
]
PlotOption = Annotated[bool, typer.Option("--plot", help="Also write an SVG chart.")]

# `eval beir`'s options
DataOption = Annotated[
    Path,
    typer.Option("--data", help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv."),
]
ModeOption = Annotated[
    list[str] | None,
    typer.Option(
        "--mode",
        "-m",
        help=(
            "bm25, vector, hybrid, hybrid+rerank or all (repeatable; default all); "
            "hybrid-chunks and hybrid-chunks+rerank leave out the best-sentence arm; "
            "hybrid+rerank-unsmoothed leaves out neighbour smoothing."
        ),
    ),
]
AlphaOption = Annotated[
    float | None,
    typer.Option("--alpha", min=0.0, max=1.0, help="Hybrid alpha (default BIOMCP_SEARCH_ALPHA)."),
]
FusionOption = Annotated[
    str | None,
    typer.Option("--fusion", help="relative_score or ranked (default BIOMCP_SEARCH_FUSION)."),
]
ChunkTokensOption = Annotated[
    int | None,
    typer.Option(
        "--chunk-tokens",
        min=16,
        help="Chunk budget (max tokens); default: the embedder window's budget.",
    ),
]
TitleOption = Annotated[
    str,
    typer.Option(
        "--title",
        help="every: the title heads every chunk (the product's default); first: the "
        "first chunk only (for comparison).",
    ),
]
MaxQueriesOption = Annotated[
    int | None,
    typer.Option("--max-queries", min=1, help="Score only the first N queries."),
]
CacheOption = Annotated[
    Path | None,
    typer.Option(
        "--cache",
        help="Embedding cache file (default $BIOMCP_DATA_DIR/eval/embeddings.sqlite3).",
    ),
]
KeepIndexOption = Annotated[
    Path | None,
    typer.Option("--keep-index", help="Build the index in this folder and keep it."),
]
NoCacheOption = Annotated[bool, typer.Option("--no-cache", help="Embed everything, keep nothing.")]
StoreOption = Annotated[
    str,
    typer.Option(
        "--store",
        help="embedded (a throwaway store) or weaviate (a throwaway collection in WEAVIATE_URL).",
    ),
]
DepthOption = Annotated[int, typer.Option("--depth", min=1, help="Chunks ranked per query.")]
PerQueryOption = Annotated[
    bool, typer.Option("--per-query", help="Keep every query's metrics in the JSON.")
]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress.")]
EmbeddingsOption = Annotated[
    str | None,
    typer.Option(
        "--embeddings",
        help="onnx, hf, openai, hashing or deterministic (default BIOMCP_EMBEDDINGS).",
    ),
]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "eval"


def _write(
    out: Path, name: str, report: dict[str, Any], markdown: str, svg: str | None
) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = [out / f"{name}.json", out / f"{name}.md"]
    written[0].write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", "utf-8")
    written[1].write_text(markdown, "utf-8")
    if svg is not None:
        written.append(out / f"{name}.svg")
        written[2].write_text(svg, "utf-8")
    return written


def _say(quiet: bool) -> Any:
    def progress(message: str) -> None:
        if not quiet:
            sys.stderr.write(f"eval: {message}\n")
            sys.stderr.flush()

    return progress


# --- the commands ------------------------------------------------------------------------------


@app.command("beir")
def beir(
    data: DataOption,
    split: Annotated[
        str, typer.Option("--split", help="The qrels split: train (tune) or test (report).")
    ] = "test",
    mode: ModeOption = None,
    alpha: AlphaOption = None,
    fusion: FusionOption = None,
    depth: DepthOption = 200,
    chunk_tokens: ChunkTokensOption = None,
    title: TitleOption = "every",
    max_queries: MaxQueriesOption = None,
    cache: CacheOption = None,
    no_cache: NoCacheOption = False,
    keep_index: KeepIndexOption = None,
    store: StoreOption = "embedded",
    out: OutOption = None,
    plot: PlotOption = False,
    per_query: PerQueryOption = False,
    quiet: QuietOption = False,
    json_output: JsonOption = False,
) -> None:
    """Index a BEIR data set through the product's chunk -> embed -> index path into a
    throwaway store and score every search mode (nDCG@10, Recall@10/100, MRR@10)."""
    from biomcp.eval.beir import BeirEvaluation, budget_chunking, load_beir, modes_for

    settings = cli_settings(json_output)
    say = _say(quiet or json_output)
    chosen = _beir_fusion(settings, fusion, title, keep_index, store, json_output=json_output)
    cache_path = _cache_path(settings, cache, no_cache)

    async def work(services: Services) -> dict[str, Any]:
        dataset = load_beir(data, split, max_queries=max_queries)
        modes = modes_for(
            mode or ["all"],
            alpha=settings.biomcp_search_alpha if alpha is None else alpha,
            fusion=chosen,
        )

        def evaluation(vectors: VectorStore, embedder: Embedder, collection: str) -> BeirEvaluation:
            return BeirEvaluation(
                vectors,
                embedder,
                collection=collection,
                chunking=budget_chunking(chunk_tokens) if chunk_tokens else None,
                title_every_chunk=title == "every",
                search=services.search.config,
                depth=depth,
            )

        report, cache_stats = await _evaluate(
            settings, keep_index, cache_path, evaluation, dataset, modes, say, store=store
        )
        payload = report.as_dict(per_query=per_query)
        payload["store"] = store
        if cache_stats is not None:
            payload["embedding_cache"] = {"path": str(cache_path), **cache_stats}
        return payload

    _show_beir(execute(settings, work, json_output=json_output), out, plot, json_output=json_output)


def _cache_path(settings: Settings, cache: Path | None, no_cache: bool) -> Path | None:
    """The embedding cache file of an evaluation (None with `--no-cache`)."""
    if no_cache:
        return None
    return cache or settings.biomcp_data_dir / "eval" / "embeddings.sqlite3"


async def _evaluate(
    settings: Settings,
    keep_index: Path | None,
    cache_path: Path | None,
    evaluation: Callable[[VectorStore, Embedder, str], BeirEvaluation],
    dataset: BeirDataset,
    modes: list[Mode],
    say: Callable[[str], None],
    *,
    store: str = "embedded",
) -> tuple[BeirReport, dict[str, int] | None]:
    """Run `evaluation` over a throwaway index in `store` (an embedded one kept in
    `keep_index` when given); returns the report and the embedding cache's hits and misses."""
    from biomcp.entrypoints.backends import EvaluationIndex

    with tempfile.TemporaryDirectory(prefix="biomcp-eval-") as scratch:
        index = EvaluationIndex(settings, keep_index or Path(scratch), cache_path, store=store)
        try:
            say(
                f"{dataset.name}/{dataset.split}: {len(dataset.documents)} documents, "
                f"{len(dataset.queries)} queries; embedder {index.embedder.model_id}; "
                f"store {store}"
            )
            report = await evaluation(index.vectors, index.embedder, index.collection).run(
                dataset, modes, progress=say
            )
        finally:
            await index.aclose()
    return report, index.cache_stats


def _beir_fusion(
    settings: Settings,
    fusion: str | None,
    title: str,
    keep_index: Path | None,
    store: str = "embedded",
    *,
    json_output: bool,
) -> Fusion:
    """The fusion `beir` runs, once its options are found sound (else the exit to raise)."""
    from biomcp.ports.vectors import Fusion
    from biomcp.usecases.errors import InvalidRequestError

    try:
        chosen = Fusion(fusion or settings.biomcp_search_fusion)
    except ValueError:
        raise fail(
            InvalidRequestError(f"unknown fusion {fusion!r}: use relative_score or ranked"),
            settings,
            json_output,
        ) from None
    if title not in ("every", "first"):
        raise fail(
            InvalidRequestError(f"unknown --title {title!r}: use every or first"),
            settings,
            json_output,
        )
    if store not in ("embedded", "weaviate"):
        raise fail(
            InvalidRequestError(f"unknown --store {store!r}: use embedded or weaviate"),
            settings,
            json_output,
        )
    if store == "weaviate" and keep_index is not None:
        raise fail(
            InvalidRequestError("--keep-index keeps an embedded store: drop it with --store"),
            settings,
            json_output,
        )
    if keep_index is not None and keep_index.exists() and any(keep_index.iterdir()):
        raise fail(
            InvalidRequestError(f"--keep-index {keep_index} is not empty: give a new folder"),
            settings,
            json_output,
        )
    return chosen


def _show_beir(payload: dict[str, Any], out: Path | None, plot: bool, *, json_output: bool) -> None:
    """Write the report files of `beir`, then print the table (or the report with --json)."""
    name = _slug(f"eval-beir-{payload['dataset']}-{payload['split']}")
    svg = None
    if plot:
        svg = bar_chart_svg(
            f"{payload['dataset']} {payload['split']}: retrieval by mode",
            [label for _, label in METRICS],
            [(m["mode"], [m["metrics"][key] for key, _ in METRICS]) for m in payload["modes"]],
        )
    markdown = beir_markdown(payload)
    written = _write(out or Path.cwd(), name, payload, markdown, svg)
    if json_output:
        emit_json(payload)
    else:
        typer.echo(markdown.rstrip())
        typer.echo("wrote " + ", ".join(str(p) for p in written))


@app.command("pubmedqa")
def pubmedqa(
    data: Annotated[
        Path, typer.Option("--data", help="PubMedQA folder holding ori_pqal.json (PQA-L).")
    ],
    distractors: Annotated[
        Path,
        typer.Option("--distractors", help="BEIR folder whose corpus.jsonl adds distractors."),
    ],
    mode: ModeOption = None,
    alpha: AlphaOption = None,
    fusion: FusionOption = None,
    depth: DepthOption = 200,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Ask only the first N questions.")
    ] = None,
    max_distractors: Annotated[
        int | None,
        typer.Option("--max-distractors", min=0, help="Keep only the first N distractors."),
    ] = None,
    embeddings: EmbeddingsOption = None,
    cache: CacheOption = None,
    no_cache: NoCacheOption = False,
    store: StoreOption = "embedded",
    out: OutOption = None,
    plot: PlotOption = False,
    per_query: PerQueryOption = False,
    quiet: QuietOption = False,
    json_output: JsonOption = False,
) -> None:
    """Search each PubMedQA question for its own abstract among every PQA-L abstract and the
    distractors, in every search mode (Recall@1, Recall@10, nDCG@10, MRR@10)."""
    from biomcp.eval.beir import BeirEvaluation, modes_for
    from biomcp.eval.pubmedqa import RECALL_AT, load_pubmedqa_retrieval, pubmedqa_payload

    settings = _with_embedder(cli_settings(json_output), embeddings, json_output=json_output)
    say = _say(quiet or json_output)
    chosen = _beir_fusion(settings, fusion, "every", None, store, json_output=json_output)
    cache_path = _cache_path(settings, cache, no_cache)

    async def work(services: Services) -> dict[str, Any]:
        dataset = load_pubmedqa_retrieval(
            data, distractors, limit=limit, max_distractors=max_distractors
        )
        modes = modes_for(
            mode or ["all"],
            alpha=settings.biomcp_search_alpha if alpha is None else alpha,
            fusion=chosen,
        )

        def evaluation(vectors: VectorStore, embedder: Embedder, collection: str) -> BeirEvaluation:
            return BeirEvaluation(
                vectors,
                embedder,
                collection=collection,
                search=services.search.config,
                depth=depth,
                recall_at=RECALL_AT,
            )

        report, cache_stats = await _evaluate(
            settings, None, cache_path, evaluation, dataset, modes, say, store=store
        )
        payload = pubmedqa_payload(report, dataset, per_query=per_query)
        payload["store"] = store
        if cache_stats is not None:
            payload["embedding_cache"] = {"path": str(cache_path), **cache_stats}
        return payload

    payload = execute(settings, work, json_output=json_output)
    _show_pubmedqa(payload, out, plot, json_output=json_output)


def _with_embedder(settings: Settings, embeddings: str | None, *, json_output: bool) -> Settings:
    """`settings` with the embedder `--embeddings` names (unchanged without the option)."""
    from typing import get_args

    from biomcp.usecases.errors import InvalidRequestError

    if embeddings is None:
        return settings
    kinds = get_args(type(settings).model_fields["biomcp_embeddings"].annotation)
    problem = None
    if embeddings not in kinds:
        problem = f"unknown --embeddings {embeddings!r}: use {', '.join(kinds)}"
    elif embeddings == "openai" and settings.openai_api_key is None:
        problem = "--embeddings openai needs OPENAI_API_KEY"
    if problem is not None:
        raise fail(InvalidRequestError(problem), settings, json_output)
    return settings.model_copy(update={"biomcp_embeddings": embeddings})


def _show_pubmedqa(
    payload: dict[str, Any], out: Path | None, plot: bool, *, json_output: bool
) -> None:
    """Write the report files of `pubmedqa`, then print the table (or the report with --json)."""
    from biomcp.eval.pubmedqa import pubmedqa_markdown

    columns = [("recall@1", "Recall@1"), ("recall@10", "Recall@10"), ("ndcg@10", "nDCG@10")]
    svg = None
    if plot:
        svg = bar_chart_svg(
            f"PubMedQA ({payload['split']}) as retrieval, by mode",
            [label for _, label in columns],
            [(m["mode"], [m["metrics"][key] for key, _ in columns]) for m in payload["modes"]],
        )
    markdown = pubmedqa_markdown(payload)
    written = _write(out or Path.cwd(), _slug("eval-pubmedqa"), payload, markdown, svg)
    if json_output:
        emit_json(payload)
    else:
        typer.echo(markdown.rstrip())
        typer.echo("wrote " + ", ".join(str(p) for p in written))


@app.command("gold")
def gold(
    file: Annotated[
        Path, typer.Option("--file", "-f", help="Gold questions, one JSON object a line.")
    ],
    top_k: Annotated[
        int, typer.Option("--top-k", "-n", min=1, max=100, help="Results per question.")
    ] = 10,
    no_quality_bias: Annotated[
        bool, typer.Option("--no-quality-bias", help="Rank by relevance only.")
    ] = False,
    out: OutOption = None,
    plot: PlotOption = False,
    json_output: JsonOption = False,
) -> None:
    """Ask the gold questions of FILE of the synced corpus: Recall@K, numeric claims
    for efficacy questions, clinical vs basic balance."""
    from biomcp.eval.gold import GoldEvaluation, load_gold

    settings = cli_settings(json_output)

    async def work(services: Services) -> GoldReport:
        questions = load_gold(file)
        evaluation = GoldEvaluation(services.search, top_k=top_k, quality_bias=not no_quality_bias)
        return await evaluation.run(questions)

    report = execute(settings, work, json_output=json_output)
    payload = report.as_dict()
    name = _slug(f"eval-gold-{file.stem}")
    svg = None
    if plot:
        topics = [*payload["topics"], "all"]
        stats = [*payload["topics"].values(), payload["overall"]]
        svg = bar_chart_svg(
            f"gold questions: {file.name} (top {top_k})",
            topics,
            [
                (f"Recall@{top_k}", [s["recall"] for s in stats]),
                ("numeric share (efficacy)", [s["numeric_share_efficacy"] for s in stats]),
                ("clinical share", [s["clinical_share"] for s in stats]),
                ("preclinical+basic share", [s["basic_share"] for s in stats]),
            ],
        )
    markdown = gold_markdown(payload, file.name)
    written = _write(out or Path.cwd(), name, payload, markdown, svg)
    if json_output:
        emit_json(payload)
    else:
        typer.echo(markdown.rstrip())
        typer.echo("wrote " + ", ".join(str(p) for p in written))
