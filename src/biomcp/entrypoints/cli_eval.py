"""`biomcp eval beir|gold`: retrieval evaluation from the command line.

* `eval beir` indexes a BEIR data set into a throwaway embedded store (a temporary folder,
  removed afterwards unless `--keep-index`) with the configured embedder behind a persistent
  embedding cache (`--cache`, default `$BIOMCP_DATA_DIR/eval/embeddings.sqlite3`), so a second
  run embeds nothing; then it scores each search mode (`usecases.evaluate`).
* `eval gold` asks the questions of a gold JSONL file of the configured corpus (sync first).

Each writes `<name>.json` (the report) and `<name>.md` (a short table) into `--out` (default:
the current directory), and with `--plot` `<name>.svg`, a bar chart. The table goes to stdout,
or with `--json` the report. Failures follow `cli_corpus`: one line on stderr,
`error [CODE]: message`, exit 2 for `VALIDATION`, 1 for everything else.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any
from xml.sax.saxutils import escape

import typer

from biomcp.entrypoints.cli_corpus import JsonOption, _emit_json, _execute, _fail, _settings

if TYPE_CHECKING:
    from biomcp.entrypoints.container import Services
    from biomcp.usecases.evaluate import GoldReport

__all__ = ["bar_chart_svg", "beir_markdown", "gold_markdown", "register"]

_METRICS: tuple[tuple[str, str], ...] = (
    ("ndcg@10", "nDCG@10"),
    ("recall@10", "Recall@10"),
    ("recall@100", "Recall@100"),
    ("mrr@10", "MRR@10"),
)
_COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1")


# --- rendering ---------------------------------------------------------------------------------


def _f(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _md_table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[int]) -> str:
    """A markdown table; the columns in `numeric` are right-aligned."""
    align = ["---:" if i in numeric else "---" for i in range(len(headers))]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def beir_markdown(report: dict[str, Any]) -> str:
    """A short markdown summary of a BEIR report (`BeirReport.as_dict()`)."""
    modes = report["modes"]
    queries = modes[0]["queries"] if modes else 0
    index = report["index"]
    chunking = report["chunking"]
    head = (
        f"# BEIR {report['dataset']} ({report['split']}): {queries} queries, "
        f"{index['documents']} documents"
    )
    setup = (
        f"Embedder `{report['embedder']}`; chunks of at most {chunking['max_tokens']} tokens "
        f"(target {chunking['target_tokens']}, overlap {chunking['overlap_tokens']}): "
        f"{index['chunks']} chunks; each query ranks {report['depth_chunks']} chunks "
        f"(oversample {report['oversample']}), aggregated to documents by their best chunk."
    )
    rows = [
        [
            f"{m['mode']}",
            f"{m['alpha']:g}",
            m["fusion"],
            *(_f(m["metrics"][key]) for key, _ in _METRICS),
            f"{m['queries_per_s']:.1f}",
        ]
        for m in modes
    ]
    table = _md_table(
        ["mode", "alpha", "fusion", *(label for _, label in _METRICS), "queries/s"],
        rows,
        range(3, 4 + len(_METRICS)),
    )
    timings = ", ".join(f"{k} {v:.1f} s" for k, v in index["timings"].items())
    foot = f"Indexing {index['seconds']:.1f} s ({timings}); query embedding "
    foot += f"{report['query_embedding_seconds']:.1f} s."
    cache = report.get("embedding_cache")
    if cache:
        foot += (
            f" Embedding cache: {cache['misses']} texts (chunks and queries) computed by the "
            f"model, {cache['hits']} answered from the cache."
        )
    parts = [head, "", setup, "", table, "", foot]
    if report.get("warnings"):
        parts += ["", *(f"- warning: {w}" for w in report["warnings"])]
    return "\n".join(parts) + "\n"


def gold_markdown(report: dict[str, Any], source: str) -> str:
    """A short markdown summary of a gold report (`GoldReport.as_dict()`)."""
    k = report["top_k"]
    bias = "quality-biased" if report["quality_bias"] else "no quality bias"
    headers = [
        "topic",
        "questions",
        f"Recall@{k}",
        "numeric share (efficacy)",
        "numeric found (required)",
        "clinical",
        "preclinical+basic",
        "mixed",
    ]

    def row(name: str, s: dict[str, Any]) -> list[str]:
        return [
            name,
            str(s["questions"]),
            _f(s["recall"]),
            _f(s["numeric_share_efficacy"]),
            _f(s["numeric_found"]),
            _f(s["clinical_share"]),
            _f(s["basic_share"]),
            _f(s["mixed_share"]),
        ]

    rows = [row(t, s) for t, s in report["topics"].items()] + [row("**all**", report["overall"])]
    details = [
        [
            q["id"],
            q["topic"],
            q["intent"],
            _f(q["recall"]),
            ", ".join(q["missing"]) or "-",
            ", ".join(f"{kind} {n}" for kind, n in q["evidence"].items()) or "-",
        ]
        for q in report["questions"]
    ]
    return (
        "\n".join(
            [
                f"# Gold questions: {source} (top {k}, {bias})",
                "",
                _md_table(headers, rows, range(1, len(headers))),
                "",
                _md_table(
                    ["id", "topic", "intent", f"Recall@{k}", "missing", "top documents"],
                    details,
                    [3],
                ),
            ]
        )
        + "\n"
    )


def bar_chart_svg(
    title: str, groups: Sequence[str], series: Sequence[tuple[str, Sequence[float | None]]]
) -> str:
    """A grouped bar chart (values in [0, 1]) as a standalone SVG document: one group of bars
    per entry of `groups`, one bar per series in each, a legend and value labels."""
    width, height = 760, 380
    left, right, top, bottom = 48, 16, 40, 70
    plot_w, plot_h = width - left - right, height - top - bottom
    n = max(1, len(series))
    group_w = plot_w / max(1, len(groups))
    bar_w = min(48.0, group_w * 0.8 / n)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2:.1f}" y="22" text-anchor="middle" font-size="14" '
        f'font-weight="bold">{escape(title)}</text>',
    ]
    for tick in range(6):
        value = tick / 5
        y = top + plot_h * (1 - value)
        out.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" '
            f'stroke="#ddd"/><text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">'
            f"{value:.1f}</text>"
        )
    for g, group in enumerate(groups):
        x0 = left + g * group_w + (group_w - bar_w * n) / 2
        for s, (_, values) in enumerate(series):
            found = values[g] if g < len(values) else None
            if found is None:
                continue
            value = float(found)
            clipped = min(1.0, max(0.0, value))
            x, h = x0 + s * bar_w, plot_h * clipped
            out.append(
                f'<rect x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{bar_w - 2:.1f}" '
                f'height="{h:.1f}" fill="{_COLORS[s % len(_COLORS)]}"/>'
                f'<text x="{x + (bar_w - 2) / 2:.1f}" y="{top + plot_h - h - 3:.1f}" '
                f'text-anchor="middle" font-size="9">{value:.3f}</text>'
            )
        out.append(
            f'<text x="{left + (g + 0.5) * group_w:.1f}" y="{top + plot_h + 16}" '
            f'text-anchor="middle">{escape(group)}</text>'
        )
    out.append(
        f'<line x1="{left}" y1="{top + plot_h}" x2="{width - right}" y2="{top + plot_h}" '
        f'stroke="#333"/>'
    )
    legend_y = height - 22
    step = plot_w / n
    for s, (name, _) in enumerate(series):
        x = left + s * step
        out.append(
            f'<rect x="{x:.1f}" y="{legend_y - 9}" width="12" height="12" '
            f'fill="{_COLORS[s % len(_COLORS)]}"/><text x="{x + 16:.1f}" y="{legend_y + 1}">'
            f"{escape(name)}</text>"
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"


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


def register(app: typer.Typer) -> None:
    """Add `biomcp eval beir|gold` to `app`."""
    eval_app = typer.Typer(
        name="eval",
        help="Measure retrieval quality: BEIR data sets and gold questions (spec 03 §12).",
        no_args_is_help=True,
    )
    app.add_typer(eval_app)

    @eval_app.command("beir")
    def beir(
        data: Annotated[
            Path,
            typer.Option(
                "--data", help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv."
            ),
        ],
        split: Annotated[
            str, typer.Option("--split", help="The qrels split: train (tune) or test (report).")
        ] = "test",
        mode: Annotated[
            list[str] | None,
            typer.Option(
                "--mode",
                "-m",
                help="bm25, vector, hybrid, hybrid+rerank or all (repeatable; default all).",
            ),
        ] = None,
        alpha: Annotated[
            float | None,
            typer.Option(
                "--alpha", min=0.0, max=1.0, help="Hybrid alpha (default BIOMCP_SEARCH_ALPHA)."
            ),
        ] = None,
        fusion: Annotated[
            str | None,
            typer.Option(
                "--fusion", help="relative_score or ranked (default BIOMCP_SEARCH_FUSION)."
            ),
        ] = None,
        depth: Annotated[
            int, typer.Option("--depth", min=1, help="Chunks ranked per query.")
        ] = 200,
        chunk_tokens: Annotated[
            int | None,
            typer.Option(
                "--chunk-tokens",
                min=16,
                help="Chunk budget (max tokens); default: the embedder window's budget.",
            ),
        ] = None,
        title: Annotated[
            str,
            typer.Option(
                "--title",
                help="every: the title heads every chunk (the product's default); first: the "
                "first chunk only (for comparison).",
            ),
        ] = "every",
        max_queries: Annotated[
            int | None,
            typer.Option("--max-queries", min=1, help="Score only the first N queries."),
        ] = None,
        cache: Annotated[
            Path | None,
            typer.Option(
                "--cache",
                help="Embedding cache file (default $BIOMCP_DATA_DIR/eval/embeddings.sqlite3).",
            ),
        ] = None,
        no_cache: Annotated[
            bool, typer.Option("--no-cache", help="Embed everything, keep nothing.")
        ] = False,
        keep_index: Annotated[
            Path | None,
            typer.Option("--keep-index", help="Build the index in this folder and keep it."),
        ] = None,
        out: Annotated[
            Path | None,
            typer.Option("--out", "-o", help="Folder of the report files (default: here)."),
        ] = None,
        plot: Annotated[bool, typer.Option("--plot", help="Also write an SVG chart.")] = False,
        per_query: Annotated[
            bool, typer.Option("--per-query", help="Keep every query's metrics in the JSON.")
        ] = False,
        quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress.")] = False,
        json_output: JsonOption = False,
    ) -> None:
        """Index a BEIR data set through the product's chunk -> embed -> index path into a
        throwaway store and score every search mode (nDCG@10, Recall@10/100, MRR@10)."""
        from biomcp.ports.vectors import Fusion
        from biomcp.usecases.errors import InvalidRequestError
        from biomcp.usecases.evaluate import (
            BeirEvaluation,
            budget_chunking,
            load_beir,
            modes_for,
        )

        settings = _settings(json_output)
        say = _say(quiet or json_output)
        try:
            chosen = Fusion(fusion or settings.biomcp_search_fusion)
        except ValueError:
            raise _fail(
                InvalidRequestError(f"unknown fusion {fusion!r}: use relative_score or ranked"),
                settings,
                json_output,
            ) from None
        if title not in ("every", "first"):
            raise _fail(
                InvalidRequestError(f"unknown --title {title!r}: use every or first"),
                settings,
                json_output,
            )
        if keep_index is not None and keep_index.exists() and any(keep_index.iterdir()):
            raise _fail(
                InvalidRequestError(f"--keep-index {keep_index} is not empty: give a new folder"),
                settings,
                json_output,
            )
        cache_path = (
            None if no_cache else cache or settings.biomcp_data_dir / "eval" / "embeddings.sqlite3"
        )

        async def work(services: Services) -> dict[str, Any]:
            from biomcp.adapters.embeddings import CachingEmbedder
            from biomcp.adapters.vectors import EmbeddedVectorStore
            from biomcp.entrypoints.container import build_services

            dataset = load_beir(data, split, max_queries=max_queries)
            modes = modes_for(
                mode or ["all"],
                alpha=settings.biomcp_search_alpha if alpha is None else alpha,
                fusion=chosen,
            )
            plain = build_services(settings.model_copy(update={"biomcp_embedding_cache": False}))
            caching: CachingEmbedder | None = None
            with tempfile.TemporaryDirectory(prefix="biomcp-eval-") as scratch:
                root = keep_index or Path(scratch)
                store = EmbeddedVectorStore(root / "vectors")
                try:
                    embedder = plain.container.embedder()
                    if cache_path is not None:
                        caching = CachingEmbedder(embedder, cache_path)
                        embedder = caching
                    evaluation = BeirEvaluation(
                        store,
                        embedder,
                        chunking=budget_chunking(chunk_tokens) if chunk_tokens else None,
                        title_every_chunk=title == "every",
                        search=services.search.config,
                        depth=depth,
                    )
                    say(
                        f"{dataset.name}/{split}: {len(dataset.documents)} documents, "
                        f"{len(dataset.queries)} queries; embedder {embedder.model_id}"
                    )
                    report = await evaluation.run(dataset, modes, progress=say)
                finally:
                    await store.aclose()
                    if caching is not None:
                        await caching.aclose()
                    await plain.aclose()
            payload = report.as_dict(per_query=per_query)
            if caching is not None:
                payload["embedding_cache"] = {
                    "path": str(cache_path),
                    "hits": caching.hits,
                    "misses": caching.misses,
                }
            return payload

        payload = _execute(settings, work, json_output=json_output)
        name = _slug(f"eval-beir-{payload['dataset']}-{payload['split']}")
        svg = None
        if plot:
            svg = bar_chart_svg(
                f"{payload['dataset']} {payload['split']}: retrieval by mode",
                [label for _, label in _METRICS],
                [(m["mode"], [m["metrics"][key] for key, _ in _METRICS]) for m in payload["modes"]],
            )
        markdown = beir_markdown(payload)
        written = _write(out or Path.cwd(), name, payload, markdown, svg)
        if json_output:
            _emit_json(payload)
        else:
            typer.echo(markdown.rstrip())
            typer.echo("wrote " + ", ".join(str(p) for p in written))

    @eval_app.command("gold")
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
        out: Annotated[
            Path | None,
            typer.Option("--out", "-o", help="Folder of the report files (default: here)."),
        ] = None,
        plot: Annotated[bool, typer.Option("--plot", help="Also write an SVG chart.")] = False,
        json_output: JsonOption = False,
    ) -> None:
        """Ask the gold questions of FILE of the synced corpus: Recall@K, numeric claims
        for efficacy questions, clinical vs basic balance."""
        from biomcp.usecases.evaluate import GoldEvaluation, load_gold

        settings = _settings(json_output)

        async def work(services: Services) -> GoldReport:
            questions = load_gold(file)
            evaluation = GoldEvaluation(
                services.search, top_k=top_k, quality_bias=not no_quality_bias
            )
            return await evaluation.run(questions)

        report = _execute(settings, work, json_output=json_output)
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
            _emit_json(payload)
        else:
            typer.echo(markdown.rstrip())
            typer.echo("wrote " + ", ".join(str(p) for p in written))
