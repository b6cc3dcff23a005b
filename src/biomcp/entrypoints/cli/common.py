"""What every `biomcp` command shares: settings at the edge, one use case per event loop, the
error line (or envelope) and exit codes, the search filters `search` and `export` take, and
terminal helpers.

A failure is one line on stderr, `error [CODE]: message`, with spec 01's codes (see
`errors.classify`), and exit status 2 for `VALIDATION`, 1 for everything else (130 when
interrupted). With `--json` the error envelope is printed on stdout instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import shutil
import signal
import textwrap
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from pydantic import ValidationError
from typer.core import TyperGroup

from biomcp.entrypoints.runtime import load_or_exit, warn_unknown_variables
from biomcp.entrypoints.settings import Settings, format_settings_error, load_settings

if TYPE_CHECKING:
    from typer._click import Command, Context  # typer >= 0.29 carries its own click

    from biomcp.entrypoints.services import Services
    from biomcp.ports.vectors import SearchFilters

__all__ = [
    "EXIT_FAILURE",
    "EXIT_INTERRUPTED",
    "EXIT_VALIDATION",
    "CommandGroup",
    "DesignOption",
    "EvidenceTypeOption",
    "JournalOption",
    "JsonOption",
    "MinQualityOption",
    "YearMaxOption",
    "YearMinOption",
    "cli_settings",
    "clip",
    "describe",
    "emit_json",
    "execute",
    "execute_and_show",
    "fail",
    "group_app",
    "iso",
    "search_filters",
    "stop_on_sigterm",
    "table_width",
    "terminal_width",
    "text_table",
    "wrap_cell",
]


class CommandGroup(TyperGroup):
    """A command group that lists each command by the first paragraph of its help, reflowed.

    Typer's rich help keeps the single line breaks of a docstring in the list of commands, so
    a help paragraph wrapped in the source showed as ragged lines in `biomcp --help`; a
    command's own `--help` was already reflowed. Pass it as `typer.Typer(cls=CommandGroup)`.
    """

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is not None and command.short_help is None and command.help:
            first = inspect.cleandoc(command.help).partition("\f")[0].partition("\n\n")[0]
            command.short_help = " ".join(first.split())
        return command


T = TypeVar("T")

EXIT_FAILURE = 1
EXIT_VALIDATION = 2
EXIT_INTERRUPTED = 130

JsonOption = Annotated[
    bool, typer.Option("--json", help="Print JSON on stdout (the error envelope on failure).")
]


def emit_json(payload: Any) -> None:
    typer.echo(json.dumps(payload, indent=2, ensure_ascii=False))


def cli_settings(json_output: bool) -> Settings:
    """The settings, or exit 2: one line per bad variable on stderr (and the envelope on
    stdout with `--json`)."""
    if not json_output:
        return load_or_exit()
    warn_unknown_variables()
    try:
        return load_settings()
    except ValidationError as exc:
        message = format_settings_error(exc)
        details = [
            {
                "variable": ".".join(str(part) for part in error["loc"]).upper(),
                "message": error["msg"],
            }
            for error in exc.errors()
        ]
        emit_json({"error": {"code": "VALIDATION", "message": message, "details": details}})
        typer.echo(message, err=True)
        raise typer.Exit(code=EXIT_VALIDATION) from exc


def describe(exc: BaseException, settings: Settings) -> tuple[str, str, Any]:
    """`exc` as spec 01 classifies it, for a CLI user: (code, message, details)."""
    from biomcp.entrypoints.errors import classify

    code, message, details = classify(exc, vector_backend=settings.biomcp_vector_backend)
    if code == "UNKNOWN":
        # classify() logged the traceback; a CLI user wants the cause, not the server's words.
        message = f"unexpected {type(exc).__name__}: {exc} (a bug: please report it)"
    return code, message, details


def fail(exc: BaseException, settings: Settings, json_output: bool) -> typer.Exit:
    """Report `exc` as spec 01 classifies it; the exit to raise."""
    code, message, details = describe(exc, settings)
    if json_output:
        emit_json({"error": {"code": code, "message": message, "details": details}})
    typer.echo(f"error [{code}]: {message}", err=True)
    return typer.Exit(code=EXIT_VALIDATION if code == "VALIDATION" else EXIT_FAILURE)


def stop_on_sigterm() -> None:
    """Make SIGTERM cancel the running main task, as SIGINT does: a sync it stops records
    itself as interrupted, and the stores close, instead of the process dying mid-write."""
    task = asyncio.current_task()
    if task is None:
        return
    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not main thread
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)


def execute(
    settings: Settings, work: Callable[[Services], Awaitable[T]], *, json_output: bool
) -> T:
    """Run `work` on the services of `settings`, closing them whatever happens."""
    from biomcp.entrypoints.services import build_services

    async def main() -> T:
        stop_on_sigterm()
        services = build_services(settings)
        try:
            return await work(services)
        finally:
            await services.aclose()

    try:
        return asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        typer.echo("interrupted", err=True)
        raise typer.Exit(code=EXIT_INTERRUPTED) from None
    except Exception as exc:
        raise fail(exc, settings, json_output) from None


def execute_and_show(
    settings: Settings,
    work: Callable[[Services], Awaitable[T]],
    view: Callable[[T], str],
    *,
    json_output: bool,
) -> None:
    """`execute` `work`, then print its answer: as JSON with `--json`, else through `view`."""
    answer = execute(settings, work, json_output=json_output)
    if json_output:
        emit_json(answer)
    else:
        typer.echo(view(answer))


# --- search's filters, shared by the commands that take them ------------------------------------

EvidenceTypeOption = Annotated[
    list[str] | None,
    typer.Option(
        "--evidence-type",
        "-e",
        help="Keep only this evidence type (repeatable): clinical, preclinical, basic, other.",
    ),
]
YearMinOption = Annotated[int | None, typer.Option("--year-min", help="Earliest publication year.")]
YearMaxOption = Annotated[int | None, typer.Option("--year-max", help="Latest publication year.")]
MinQualityOption = Annotated[
    float | None, typer.Option("--min-quality", help="Lowest quality total (0-10).")
]
JournalOption = Annotated[
    list[str] | None,
    typer.Option("--journal", help="Keep only this journal title (repeatable)."),
]
#: The values of `StudyDesign`, written out so the command line starts without the domain.
DesignOption = Annotated[
    list[str] | None,
    typer.Option(
        "--design",
        "-d",
        help="Keep only this study design (repeatable): rct, nonrandomized_trial, "
        "observational, case_report, systematic_review, narrative_review, guideline, animal, "
        "in_vitro, computational, other.",
    ),
]


def search_filters(
    evidence_type: list[str] | None,
    year_min: int | None,
    year_max: int | None,
    min_quality: float | None,
    journal: list[str] | None,
) -> SearchFilters:
    """The options above as the vector store's filters (evidence types lower-cased)."""
    from biomcp.ports.vectors import SearchFilters

    types = [t.strip().casefold() for t in evidence_type or [] if t.strip()]
    return SearchFilters(
        evidence_types=frozenset(types) or None,
        year_min=year_min,
        year_max=year_max,
        min_quality=min_quality,
        journals=frozenset(journal) if journal else None,
    )


def terminal_width() -> int:
    return max(60, shutil.get_terminal_size((120, 24)).columns)


def clip(text: str, width: int) -> str:
    """`text` on one line of at most `width` characters. A longer one ends with "…" after its
    last whole word, so a number is never shown cut short ("37" as "3…")."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    head = flat[: max(0, width - 1)]
    if flat[len(head)] != " " and " " in head:  # the cut falls inside a word: drop it
        head = head.rsplit(" ", 1)[0]
    return head.rstrip() + "…"


def iso(value: Any) -> str | None:
    """A datetime as ISO 8601 UTC (`Z`), None as None."""
    from biomcp.usecases.payloads import iso_utc

    return iso_utc(value)


#: The least room the last column of a table keeps beside the others; with less, it goes
#: below its row, indented, on lines of its own.
_MIN_LAST_COLUMN = 24
_BELOW_INDENT = "    "


def table_width() -> int:
    """The columns a table may fill: the terminal's (`COLUMNS` first), 120 when unknown."""
    return max(20, shutil.get_terminal_size((120, 24)).columns)


def wrap_cell(text: str, width: int) -> list[str]:
    """`text` on lines of at most `width` characters, whitespace folded. A word is never
    split (a longer one gets a line of its own), so a number stays whole."""
    flat = " ".join(text.split())
    lines = textwrap.wrap(flat, width=max(1, width), break_long_words=False, break_on_hyphens=False)
    return lines or [""]


def text_table(
    headers: list[str], rows: list[list[str]], *, right: frozenset[int], width: int | None = None
) -> str:
    """Columns aligned on the widest cell. The last column (the text) wraps within `width`
    (default: `table_width()`) instead of being cut. Its lines start under its header. When
    the other columns leave it too little room, its lines go below their row, indented, and
    its header is left out."""
    total = width or table_width()
    last = len(headers) - 1
    widths = [max([len(headers[i]), *(len(row[i]) for row in rows)]) for i in range(last)]
    indent = sum(widths) + 2 * last
    beside = total - indent >= _MIN_LAST_COLUMN

    def line(cells: list[str], tail: str) -> str:
        out = [
            cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
            for i, cell in enumerate(cells[:last])
        ]
        return "  ".join([*out, tail]).rstrip()

    lines = [line(headers, headers[last] if beside else "")]
    for row in rows:
        if beside:
            first, *more = wrap_cell(row[last], total - indent)
            lines.append(line(row, first))
            lines.extend(" " * indent + text for text in more)
        else:
            lines.append(line(row, ""))
            below = wrap_cell(row[last], total - len(_BELOW_INDENT))
            lines.extend(_BELOW_INDENT + text for text in below if text)
    return "\n".join(lines)


def group_app(name: str, help: str) -> typer.Typer:
    """A group of commands `biomcp NAME ...` (its bare name prints its help)."""
    return typer.Typer(cls=CommandGroup, name=name, help=help, no_args_is_help=True)
