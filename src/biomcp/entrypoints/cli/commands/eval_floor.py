"""`biomcp eval floor`: calibrate the relevance floor of the configured embedder.

Indexes the gold records and a BEIR data set (SciFact) into a throwaway embedded store, asks
the gold, off-topic and BEIR questions through the product's search (`biomcp.eval.floor`),
and reports the fitted floor with each set's pass rate and similarity quantiles. Writes
`eval-floor.json` and `eval-floor.md` into `--out`, as the other eval commands do.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from biomcp.entrypoints.cli.common import JsonOption, cli_settings, emit_json, execute

if TYPE_CHECKING:
    from biomcp.domain.records import PubMedRecord
    from biomcp.entrypoints.services import Services
    from biomcp.entrypoints.settings import Settings
    from biomcp.eval.beir import BeirDataset
    from biomcp.eval.data import Progress
    from biomcp.eval.floor import FloorSet, OfftopicQuestion
    from biomcp.eval.gold import GoldQuestion
    from biomcp.usecases.search import SearchConfig

__all__ = ["floor"]

_GOLD = Path("tests/fixtures/gold")
#: The embedding cache's file name under `$BIOMCP_DATA_DIR/eval`, shared with `eval beir`.
EMBED_CACHE = "embeddings.sqlite3"


def floor(
    gold: Annotated[
        Path, typer.Option("--gold", help="Gold questions (JSONL), answered by --records.")
    ] = _GOLD / "questions.jsonl",
    records: Annotated[
        Path, typer.Option("--records", help="The gold corpus: a PubmedArticleSet file.")
    ] = _GOLD / "records.xml",
    offtopic: Annotated[
        Path, typer.Option("--offtopic", help="Off-topic questions (JSONL) for --records.")
    ] = _GOLD / "offtopic.jsonl",
    data: Annotated[
        Path | None,
        typer.Option("--data", help="BEIR folder (SciFact): its claims with and without answers."),
    ] = None,
    split: Annotated[str, typer.Option("--split", help="The BEIR qrels split.")] = "train",
    max_queries: Annotated[
        int | None, typer.Option("--max-queries", min=1, help="Ask only N BEIR queries.")
    ] = None,
    top_k: Annotated[
        int, typer.Option("--top-k", "-n", min=1, max=100, help="Hits judged per question.")
    ] = 10,
    min_keep: Annotated[
        float,
        typer.Option("--min-keep", min=0.5, max=1.0, help="Share of each keep set to pass."),
    ] = 0.95,
    cache: Annotated[
        Path | None,
        typer.Option("--cache", help="Embedding cache (default $BIOMCP_DATA_DIR/eval/...)."),
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Embed everything.")] = False,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Report folder.")] = None,
    per_query: Annotated[
        bool, typer.Option("--per-query", help="Keep every question's scores in the JSON.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress.")] = False,
    json_output: JsonOption = False,
) -> None:
    """Fit the relevance floor: the highest cosine that lets --min-keep of the gold questions
    (and of the BEIR claims with their answers) pass, turning away the most off-topic ones."""
    from biomcp.eval.beir import load_beir
    from biomcp.eval.floor import FloorReport, load_offtopic, read_records
    from biomcp.eval.gold import load_gold

    settings = cli_settings(json_output)
    cache_path = None if no_cache else cache or settings.biomcp_data_dir / "eval" / EMBED_CACHE

    def say(message: str) -> None:
        if not (quiet or json_output):
            typer.echo(f"eval: {message}", err=True)

    async def work(services: Services) -> dict[str, Any]:
        asked = _Asked(load_gold(gold), load_offtopic(offtopic), read_records(records))
        dataset = load_beir(data, split, max_queries=max_queries) if data else None
        sets, model_id, cache_stats = await _measure(
            settings, cache_path, services.search.config, top_k, asked, dataset, say
        )
        warnings = dataset.warnings if dataset is not None else ()
        report = FloorReport(model_id, top_k, min_keep, tuple(sets), warnings)
        payload = report.as_dict(per_query=per_query)
        if cache_stats is not None:
            payload["embedding_cache"] = cache_stats
        return payload

    _show(execute(settings, work, json_output=json_output), out, json_output=json_output)


@dataclass(frozen=True, slots=True)
class _Asked:
    gold: list[GoldQuestion]
    offtopic: list[OfftopicQuestion]
    records: list[PubMedRecord]


async def _measure(
    settings: Settings,
    cache_path: Path | None,
    search: SearchConfig,
    top_k: int,
    asked: _Asked,
    dataset: BeirDataset | None,
    say: Progress,
) -> tuple[list[FloorSet], str, dict[str, int] | None]:
    """The sets of the calibration, measured in a throwaway store with the configured embedder;
    the embedder's model id; the embedding cache's hits and misses."""
    from biomcp.entrypoints.backends import EvaluationIndex
    from biomcp.eval.floor import FloorEvaluation

    with tempfile.TemporaryDirectory(prefix="biomcp-eval-") as scratch:
        index = EvaluationIndex(settings, Path(scratch), cache_path)
        try:
            evaluation = FloorEvaluation(index.vectors, index.embedder, search=search, top_k=top_k)
            sets = await evaluation.gold_sets(asked.records, asked.gold, asked.offtopic)
            if dataset is not None:
                say(f"{dataset.name}/{dataset.split}: {len(dataset.queries)} queries")
                sets += await evaluation.scifact_sets(dataset, say)
        finally:
            await index.aclose()
    return sets, index.embedder.model_id, index.cache_stats


def _show(payload: dict[str, Any], out: Path | None, *, json_output: bool) -> None:
    """Write `eval-floor.json` and `eval-floor.md`, then print the table (or the report)."""
    from biomcp.eval.floor import floor_markdown

    markdown = floor_markdown(payload)
    folder = out or Path.cwd()
    folder.mkdir(parents=True, exist_ok=True)
    written = [folder / "eval-floor.json", folder / "eval-floor.md"]
    written[0].write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", "utf-8")
    written[1].write_text(markdown, "utf-8")
    if json_output:
        emit_json(payload)
    else:
        typer.echo(markdown.rstrip())
        typer.echo("wrote " + ", ".join(str(p) for p in written))
