"""`biomcp fake-eutils`: the fake NCBI E-utilities (`biomcp.testing`) for tests and demos."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, FaultInjector

__all__ = ["fake_eutils"]


def fake_eutils(
    paths: list[Path] = typer.Argument(  # noqa: B008 - typer's declaration style
        None, help="PubmedArticleSet files or folders to serve (same as --records)."
    ),
    records: list[Path] = typer.Option(  # noqa: B008
        [], "--records", help="A PubmedArticleSet file or folder (repeatable)."
    ),
    host: str = typer.Option("127.0.0.1", help="Address to bind (loopback unless --allow-remote)."),
    port: int = typer.Option(0, help="Port to bind; 0 picks a free one (the URL is printed)."),
    relations: Path | None = typer.Option(  # noqa: B008
        None, help="JSON link table for ELink: {linkname: {pmid: [pmid or [pmid, score]]}}."
    ),
    synthetic: int = typer.Option(0, help="Also serve this many synthetic articles."),
    synthetic_seed: int = typer.Option(0, help="Seed of the synthetic articles."),
    synthetic_pmc: float = typer.Option(
        0.0, help="Share (0-1) of the synthetic articles that name a PMC id (synthetic JATS)."
    ),
    pmc_dir: Path | None = typer.Option(  # noqa: B008
        None,
        help="Serve this folder's JATS files (*.nxml) under their PMC ids, each with a PubMed "
        "record carrying the keyword 'fake pmc twin'; or BIOMCP_FAKE_PMC_DIR.",
    ),
    fault_sequence: str = typer.Option(
        "", help="Faults for the first requests, comma-separated (429,503,slow,truncated...)."
    ),
    fault_endpoint: str | None = typer.Option(
        None, help="Only requests to this endpoint (efetch, esearch...) consume the sequence."
    ),
    retry_after: float = typer.Option(1.0, help="Retry-After seconds sent with 429 faults."),
    slow_delay: float = typer.Option(1.0, help="Seconds a 'slow' fault waits."),
    fault_probability: float = typer.Option(0.0, help="Fail each request with this probability."),
    fault_kinds: str = typer.Option("429,503", help="Kinds drawn by --fault-probability."),
    fault_seed: int | None = typer.Option(None, help="Seed of the random faults."),
    api_key: list[str] = typer.Option(  # noqa: B008
        [],
        "--api-key",
        help="Accept only this NCBI API key (repeatable): another key gets NCBI's HTTP 400 "
        "'API key invalid', as a mistyped NCBI_API_KEY would; requests without a key pass.",
    ),
    allow_remote: bool = typer.Option(
        False, "--allow-remote", help="Allow a non-loopback --host (the fake has admin endpoints)."
    ),
) -> None:
    """Serve a fake NCBI E-utilities (esearch, efetch, esummary, elink, einfo) over local
    PubMed records, for tests and offline demos. Point NCBI_EUTILS_BASE_URL at the printed URL.
    Runs until interrupted."""
    from biomcp.testing.eutils import FakeEutilsServer, load_relations

    _refuse_remote(host, allow_remote)
    try:
        corpus = _corpus([*(paths or []), *records], synthetic, synthetic_seed, synthetic_pmc)
        table = load_relations(relations) if relations is not None else None
        faults = _faults(
            fault_sequence,
            fault_endpoint,
            retry_after=retry_after,
            slow_delay=slow_delay,
            probability=fault_probability,
            kinds=fault_kinds,
            seed=fault_seed,
        )
        server = FakeEutilsServer(
            corpus,
            relations=table,
            host=host,
            port=port,
            faults=faults,
            warm=True,
            api_keys=api_key or None,
            pmc_dir=pmc_dir,
        )
    except (OSError, ValueError) as exc:
        typer.echo(f"fake-eutils: {exc}", err=True)
        raise typer.Exit(code=2) from exc
    _report(corpus.problems)
    _run(server, len(corpus))


def _refuse_remote(host: str, allowed: bool) -> None:
    """Exit with code 2 for a non-loopback `host` unless `allowed`."""
    from biomcp.testing.eutils import is_loopback

    if not is_loopback(host) and not allowed:
        typer.echo(
            f"refusing to serve on {host}: the fake has unauthenticated admin endpoints; "
            "pass --allow-remote to do it anyway",
            err=True,
        )
        raise typer.Exit(code=2)


def _report(problems: list[str]) -> None:
    """Print the first 20 loading problems, and how many more there are."""
    for problem in problems[:20]:
        typer.echo(f"fake-eutils: {problem}", err=True)
    if len(problems) > 20:
        typer.echo(f"fake-eutils: ... and {len(problems) - 20} more problems", err=True)


def _run(server: FakeEutilsServer, records: int) -> None:
    """Serve until SIGINT or SIGTERM, after printing the URL."""
    import signal
    import threading

    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    with server:
        typer.echo(f"fake E-utilities serving {records} records at {server.base_url}")
        sys.stdout.flush()
        while not stop.wait(0.5):
            pass


def _corpus(paths: list[Path], synthetic: int, seed: int, pmc_share: float) -> FakeCorpus:
    """The records of `paths`, and `synthetic` generated articles of the last two years (a
    share `pmc_share` of them naming a PMC id)."""
    from datetime import date

    from biomcp.testing.eutils import FakeCorpus, generate_articles

    corpus = FakeCorpus.from_paths(paths)
    if synthetic:
        today = date.today()
        start = date(today.year - 2, 1, 1)
        corpus.add(
            generate_articles(synthetic, start=start, end=today, seed=seed, pmc_share=pmc_share),
            source="<synthetic>",
        )
    return corpus


def _faults(
    sequence: str,
    endpoint: str | None,
    *,
    retry_after: float,
    slow_delay: float,
    probability: float,
    kinds: str,
    seed: int | None,
) -> FaultInjector:
    """The faults the options ask for: a sequence for the first requests, then random ones."""
    from biomcp.testing.eutils import FaultInjector

    faults = FaultInjector(retry_after=retry_after, delay=slow_delay)
    chosen = [k for k in sequence.split(",") if k.strip()]
    if chosen:
        faults.sequence(chosen, endpoint=endpoint)
    if probability:
        faults.random(probability, kinds.split(","), seed)
    return faults
