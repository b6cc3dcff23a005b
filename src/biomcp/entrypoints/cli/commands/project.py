"""`biomcp project ...`: the project collections of spec 02 from a terminal.

    biomcp project create ID [--no-hybrid]
    biomcp project list
    biomcp project store ID FILE          (JSON: an array of items, or JSON Lines; - for stdin;
                                           sent in batches of at most 500)
    biomcp project find ID QUERY [--top-k N] [--tag T]... [--hybrid] [--full-text]
    biomcp project inspect ID [--sample N]

Answers are the tools' JSON with `--json`, readable lines otherwise; errors follow
`cli.common` (spec 02's codes, exit 1; VALIDATION exits 2).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from biomcp.entrypoints.cli.common import (
    EXIT_VALIDATION,
    JsonOption,
    cli_settings,
    clip,
    emit_json,
    execute,
    group_app,
    terminal_width,
)

if TYPE_CHECKING:
    from biomcp.entrypoints.services import Services

__all__ = ["app"]

app = group_app(
    "project", "Project collections: your own chunks per project, searched by vector or hybrid."
)

_MAX_INPUT_BYTES = 64_000_000


def _read_items(source: str) -> list[dict[str, Any]]:
    """Items from a JSON array or JSON Lines, from a file or stdin (`-`)."""
    try:
        if source == "-":
            text = sys.stdin.read(_MAX_INPUT_BYTES + 1)
        else:
            path = Path(source)
            if path.stat().st_size > _MAX_INPUT_BYTES:
                raise ValueError(f"larger than {_MAX_INPUT_BYTES} bytes")
            text = path.read_text(encoding="utf-8")
        if len(text) > _MAX_INPUT_BYTES:
            raise ValueError(f"larger than {_MAX_INPUT_BYTES} bytes")
        stripped = text.lstrip()
        if stripped.startswith("["):
            items = json.loads(stripped)
        else:
            items = [json.loads(line) for line in text.splitlines() if line.strip()]
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise ValueError("expected a JSON array of objects, or one object per line")
    except (OSError, ValueError) as exc:
        typer.echo(f"error [VALIDATION]: cannot read items from {source}: {exc}", err=True)
        raise typer.Exit(code=EXIT_VALIDATION) from None
    return items


async def _store_in_batches(
    services: Services, project_id: str, items: list[dict[str, Any]]
) -> dict[str, Any]:
    """`store_chunks` of `items` in order, at most the per-call limit at a time: its answer
    with the totals and a `batches` count. The error of a failed batch names its items' range
    in the file and what the batches before it wrote."""
    from biomcp.usecases.errors import UseCaseError

    size = services.projects.limits.max_items
    starts = range(0, len(items), size) if items else range(1)  # none: the use case says why
    answer: dict[str, Any] = {"chunks_written": 0, "warnings": []}
    for start in starts:
        batch = items[start : start + size]
        try:
            stored = await services.projects.store_chunks(project_id, batch)
        except UseCaseError as exc:
            if len(items) > size:
                written = answer["chunks_written"]
                exc.message = (
                    f"items {start + 1} to {start + len(batch)} of {len(items)}: {exc.message} "
                    f"({written} chunks of the items before them were written; storing the "
                    "file again is safe)"
                )
                exc.args = (exc.message,)
            raise
        answer.update(
            chunks_written=answer["chunks_written"] + stored["chunks_written"],
            project=stored["project"],
            embed_model=stored["embed_model"],
            warnings=answer["warnings"] + stored["warnings"],
        )
    return {**answer, "batches": len(starts)}


@app.command("create")
def create(
    project_id: Annotated[str, typer.Argument(metavar="ID", help="e.g. citeloom/clean-arch")],
    no_hybrid: Annotated[
        bool, typer.Option("--no-hybrid", help="Vector search only (no BM25 index use).")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """Create a project on this server's embedding model (an existing one is kept)."""
    settings = cli_settings(json_output)

    async def work(services: Services) -> dict[str, Any]:
        made = await services.projects.create_project(project_id, hybrid=not no_hybrid)
        return {
            "id": made.project_id,
            "collection": made.collection,
            "embed_model": made.model_id,
            "hybrid_enabled": made.hybrid,
        }

    answer = execute(settings, work, json_output=json_output)
    if json_output:
        emit_json(answer)
    else:
        typer.echo(
            f"project {answer['id']}: collection {answer['collection']}, "
            f"{answer['embed_model']}, hybrid {'on' if answer['hybrid_enabled'] else 'off'}"
        )


@app.command("list")
def list_(json_output: JsonOption = False) -> None:
    """Every project: its collection, embedding model and hybrid flag."""
    settings = cli_settings(json_output)

    async def work(services: Services) -> dict[str, Any]:
        return await services.projects.list_projects()

    answer = execute(settings, work, json_output=json_output)
    if json_output:
        emit_json(answer)
        return
    if not answer["projects"]:
        typer.echo("no projects yet: `biomcp project create ID`")
    for p in answer["projects"]:
        hybrid = "hybrid" if p["hybrid_enabled"] else "vector only"
        typer.echo(f"{p['id']}\t{p['collection']}\t{p['embed_model']}\t{hybrid}")


@app.command("store")
def store(
    project_id: Annotated[str, typer.Argument(metavar="ID")],
    source: Annotated[
        str,
        typer.Argument(metavar="FILE", help="JSON array or JSON Lines of items; - reads stdin."),
    ],
    json_output: JsonOption = False,
) -> None:
    """Store items ({id, text, metadata?, embedding?}) in a project, in batches of at most
    the per-call limit (500), each all or none. A failed batch stops the command; storing
    the file again is safe, as an item overwrites the chunk of its id."""
    settings = cli_settings(json_output)
    items = _read_items(source)

    async def work(services: Services) -> dict[str, Any]:
        return await _store_in_batches(services, project_id, items)

    answer = execute(settings, work, json_output=json_output)
    if json_output:
        emit_json(answer)
    else:
        batches = f" in {answer['batches']} batches" if answer["batches"] > 1 else ""
        typer.echo(f"{answer['chunks_written']} chunks written to {answer['project']}{batches}")
        for warning in answer["warnings"]:
            typer.echo(f"warning: {warning}", err=True)


@app.command("find")
def find(
    project_id: Annotated[str, typer.Argument(metavar="ID")],
    query: Annotated[str, typer.Argument(metavar="QUERY")],
    top_k: Annotated[int | None, typer.Option("--top-k", "-k", min=1, max=20)] = None,
    tags: Annotated[list[str] | None, typer.Option("--tag", help="Only chunks with a tag.")] = None,
    hybrid: Annotated[bool, typer.Option("--hybrid", help="BM25 + vector fusion.")] = False,
    full_text: Annotated[bool, typer.Option("--full-text")] = False,
    json_output: JsonOption = False,
) -> None:
    """Search a project's chunks (vector search; --hybrid for BM25 + vector)."""
    settings = cli_settings(json_output)
    filters = {"tags": tags} if tags else None

    async def work(services: Services) -> dict[str, Any]:
        search = services.projects.query_hybrid if hybrid else services.projects.find_chunks
        return await search(project_id, query, top_k=top_k, filters=filters, full_text=full_text)

    answer = execute(settings, work, json_output=json_output)
    if json_output:
        emit_json(answer)
        return
    width = terminal_width()
    for rank, item in enumerate(answer["items"], 1):
        cite = item["citekey"] or item["id"]
        where = f" {item['section']}" if item["section"] else ""
        typer.echo(f"{rank:>2}. [{item['score']:.3f}] {cite}{where}")
        typer.echo("    " + clip(item["render_text"], width - 4))
    if not answer["items"]:
        typer.echo("no matching chunks")


@app.command("inspect")
def inspect(
    project_id: Annotated[str, typer.Argument(metavar="ID")],
    sample: Annotated[int, typer.Option("--sample", min=0, max=5)] = 0,
    json_output: JsonOption = False,
) -> None:
    """A project's collection: size, model, payload keys, indexes, sample payloads."""
    settings = cli_settings(json_output)

    async def work(services: Services) -> dict[str, Any]:
        return await services.projects.inspect_collection(project_id, sample)

    answer = execute(settings, work, json_output=json_output)
    if json_output:
        emit_json(answer)
        return
    for key in ("project", "collection", "size", "embed_model", "payload_keys", "indexes"):
        typer.echo(f"{key}: {answer[key]}")
    for payload in answer["sample"]:
        typer.echo(json.dumps(payload, ensure_ascii=False))
