"""`biomcp doctor`'s checks that open the stores, the embedding model and the network, each
bounded in time; an error is the check's failure, with what to do about it."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from biomcp.entrypoints.cli.commands.doctor.checks import (
    NCBI_KEY_URL,
    Check,
    Status,
    ncbi_settings_check,
    stores_in_data_folder,
    without_credentials,
)
from biomcp.entrypoints.cli.common import clip, describe, iso

if TYPE_CHECKING:
    from biomcp.entrypoints.services import Services
    from biomcp.entrypoints.settings import Settings
    from biomcp.ports.jobs import SyncJob

__all__ = ["Doctor"]

#: How long one check may take (the model's first load is the slowest, a few seconds).
CHECK_TIMEOUT_S = 60.0
#: How many stored records are derived again to see whether their tiers and scores are current.
DRIFT_SAMPLE = 2_000
#: The sentence the embedder is asked to embed.
PROBE_TEXT = "Aspirin versus placebo for the secondary prevention of myocardial infarction."


class Doctor:
    """The checks that need the services; each records its own findings."""

    def __init__(self, services: Services, settings: Settings, *, offline: bool) -> None:
        self.services = services
        self.settings = settings
        self.offline = offline
        self.checks: list[Check] = []
        self.embedder_ok = False
        self.metadata_ok = False
        self.records = 0
        self.stats: Any = None

    def add(self, name: str, status: Status, detail: str, hint: str | None = None) -> None:
        self.checks.append(Check(name, status, detail, hint))

    async def guarded(self, name: str, check: Callable[[], Awaitable[None]]) -> None:
        """Run `check`; an error or a timeout is its failure, described as the CLI would,
        with what to do about it."""
        try:
            await asyncio.wait_for(check(), CHECK_TIMEOUT_S)
        except TimeoutError:
            self.add(name, "fail", f"no answer within {CHECK_TIMEOUT_S:g} s", self.remedy(name, ""))
        except Exception as exc:
            code, message, _ = describe(exc, self.settings)
            self.add(name, "fail", f"[{code}] {message}", self.remedy(name, message))

    def remedy(self, name: str, message: str) -> str | None:
        """What to do when the check `name` failed with `message`."""
        settings = self.settings
        if name == "metadata":
            if settings.biomcp_database_url is None:
                return "a damaged or foreign SQLite file? move it aside and sync again"
            if "biomcp db upgrade" in message:
                return None
            return "check BIOMCP_DATABASE_URL and that the database server answers"
        if name == "vector store":
            if settings.biomcp_vector_backend == "weaviate":
                return "check WEAVIATE_URL (and WEAVIATE_GRPC_PORT) and that Weaviate runs"
            return "biomcp index rebuild rebuilds the index from the metadata database"
        if name == "embedder":
            return (
                f"BIOMCP_EMBEDDINGS={settings.biomcp_embeddings}: install what it needs "
                "(onnx: a plain `pip install bio-mcp`; hf: bio-mcp[torch]; openai: "
                "bio-mcp[openai] and OPENAI_API_KEY)"
            )
        if name == "ncbi":
            if "NCBI_API_KEY" in message:
                return f"copy the key again from {NCBI_KEY_URL} (API Key Management)"
            return (
                "check the network, a proxy (HTTPS_PROXY) or NCBI_EUTILS_BASE_URL; "
                "`biomcp doctor --offline` checks the rest"
            )
        return None

    async def run(self) -> list[Check]:
        settings = self.settings
        if stores_in_data_folder(settings) and not settings.biomcp_data_dir.exists():
            for name in ("metadata", "vector store", "corpus"):
                self.add(name, "skip", "nothing stored yet (no data folder)")
        else:
            await self.guarded("metadata", self.metadata)
            # without the database, what compares the stores with it would only fail again
            self.metadata_ok = self.checks[-1].status == "ok"
            await self.guarded("vector store", self.vectors)
            if self.metadata_ok:
                await self.guarded("derived data", self.derived)
        await self.guarded("embedder", self.embedder)
        if self.stats is not None and self.embedder_ok:
            await self.guarded("corpus model", self.corpus_model)
        self.checks.append(ncbi_settings_check(settings))
        if self.offline:
            self.add("ncbi", "skip", "not contacted (--offline)")
        else:
            await self.guarded("ncbi", self.ncbi)
        return self.checks

    async def metadata(self) -> None:
        from biomcp.entrypoints.backends import database_schema

        settings = self.settings
        schema = await asyncio.to_thread(
            database_schema, settings.biomcp_database_url, settings.biomcp_data_dir
        )
        # SQLite migrates itself here; PostgreSQL must be at head.
        health = await self.services.diagnostics.metadata_health()
        problems = health.problems
        if problems:
            shown = "; ".join(problems[:3]) + (
                f"; and {len(problems) - 3} more" if len(problems) > 3 else ""
            )
            self.add(
                "metadata",
                "fail",
                f"{schema.database}: its integrity check failed: {clip(shown, 300)}",
                "restore it from a backup, or move it aside and sync again",
            )
            return
        documents = self.records = health.records or 0
        revision = (
            f"at revision {schema.head} (head)"
            if schema.current in (None, schema.head)
            else f"migrated from {schema.current} to {schema.head}"
        )
        self.add("metadata", "ok", f"{schema.database}: {revision}; {documents:,} records")

    async def vectors(self) -> None:
        settings = self.settings
        backend = (
            "Weaviate at "
            + ", ".join(without_credentials(url) for url in settings.weaviate_url.split(","))
            if settings.biomcp_vector_backend == "weaviate"
            else "embedded index"
        )
        stats = await self.services.diagnostics.corpus_stats()
        if stats is None:
            self.add("vector store", "ok", f"{backend}: no corpus collection yet")
            self.add("corpus", "ok", "empty (biomcp sync -k KEY -t 'PubMed query' fills it)")
            return
        self.stats = stats
        if not self.metadata_ok:
            self.add("vector store", "ok", f"{backend}: {self.stats.count:,} chunks")
            return
        status = await self.services.maintenance.status()
        if status.needs_rebuild:
            self.add("vector store", "warn", f"{backend}: {status.describe()}")
        else:
            self.add("vector store", "ok", f"{backend}: {self.stats.count:,} chunks")
        saved = await self.services.saved_queries.every()
        self.add(
            "corpus",
            "ok",
            f"{self.records:,} records, {self.stats.count:,} chunks, {len(saved)} saved "
            f"quer{'y' if len(saved) == 1 else 'ies'} (biomcp checkpoint list)",
        )
        await self.unfinished_syncs([q.last_job for q in saved if q.last_job is not None])
        self.untracked_records(
            sorted(q.query_key for q in saved if q.checkpoint and not q.checkpoint.records_tracked)
        )

    def untracked_records(self, keys: list[str]) -> None:
        """Saved queries synced before bio-mcp recorded which query brought each record (a
        corpus from an earlier version): counted short, not searchable on their own, and
        they stop `checkpoint delete --records` until a rescan records them."""
        if not keys:
            return
        more = f" and {len(keys) - 5} more" if len(keys) > 5 else ""
        self.add(
            "query records",
            "warn",
            f"{len(keys)} saved quer{'y was' if len(keys) == 1 else 'ies were'} synced before "
            f"bio-mcp recorded which query brought each record: {', '.join(keys[:5])}{more} "
            "(their record counts are lower bounds; searching within one of them, and "
            "deleting a query's records, are refused until then)",
            "rescan them once: biomcp sync --all --rescan (or biomcp sync -k KEY --rescan)",
        )

    async def unfinished_syncs(self, latest: list[SyncJob]) -> None:
        """A sync run by cron fails where nobody reads it: the keys whose latest job failed,
        was interrupted, or still reads queued or running while its process is gone (killed)."""
        unfinished: list[tuple[SyncJob, str]] = []
        for job in latest:
            if job.status in ("failed", "interrupted"):
                unfinished.append((job, job.status))
            elif job.status in ("queued", "running"):
                # Recorded as interrupted when its process is gone (SyncJobs.settle).
                settled = await self.services.jobs.settle(job)
                if settled.status == "interrupted":
                    unfinished.append((job, "stopped"))  # "stopped" says all its error would
        if unfinished:
            shown = "; ".join(
                f"{job.query_key} ({status} {iso(job.started_at)}"
                + (f": {clip(job.error, 160)})" if job.error else ")")
                for job, status in unfinished[:5]
            )
            more = f"; and {len(unfinished) - 5} more" if len(unfinished) > 5 else ""
            self.add(
                "saved queries",
                "warn",
                f"the latest sync of {len(unfinished)} saved quer"
                f"{'y' if len(unfinished) == 1 else 'ies'} did not complete: {shown}{more}",
                "sync them again (biomcp sync --all, or biomcp sync -k KEY); "
                "biomcp checkpoint delete KEY --yes forgets one made by mistake",
            )

    async def derived(self) -> None:
        drift = await self.services.maintenance.drift(DRIFT_SAMPLE)
        if not drift.checked:
            return
        scope = (
            f"of the first {drift.checked:,} records"
            if drift.checked < self.records
            else f"of the {drift.checked:,} records"
        )
        if drift.recency:
            self.add(
                "score recency",
                "warn",
                f"{drift.recency:,} stored quality scores were counted in an earlier "
                "calendar year, or before bio-mcp recorded the year (recency is a record's "
                "age in years)",
                "the next sync brings them up to date (biomcp sync --all), or "
                "biomcp index rebuild --rederive",
            )
        if not drift.stale:
            self.add(
                "derived data",
                "ok",
                f"tiers, designs and scores {scope} follow this version's rules",
            )
            return
        found = []
        if drift.classification:
            shown = ", ".join(f"pmid:{p}" for p in drift.examples[:3])
            found.append(
                f"{drift.classification:,} would get another tier or design (e.g. {shown})"
            )
        if drift.quality:
            found.append(f"{drift.quality:,} another quality score")
        self.add(
            "derived data",
            "warn",
            f"{scope.capitalize()}, {' and '.join(found)} under this version's rules "
            "(an upgrade changed a rule)",
            "biomcp index rebuild --rederive (derives them again, then re-indexes through "
            "the embedding cache)",
        )

    async def embedder(self) -> None:
        embedder = self.services.embedder
        model = getattr(embedder, "inner", embedder)  # past the cache: run the model itself
        began = time.perf_counter()
        load = getattr(model, "load", None)
        if load is not None:
            await asyncio.to_thread(load)
        vectors = await model.embed([PROBE_TEXT])
        took = time.perf_counter() - began
        runtime = getattr(embedder, "runtime", type(model).__name__)
        detail = f"{embedder.model_id} ({embedder.dim}-d), {runtime}; ready in {took:.1f} s"
        vector = vectors[0] if len(vectors) == 1 else []
        norm = math.sqrt(math.fsum(x * x for x in vector))
        if len(vector) != embedder.dim or not math.isfinite(norm) or abs(norm - 1.0) > 1e-3:
            self.add(
                "embedder",
                "fail",
                f"{detail}: it returned {len(vectors)} vectors, the first of {len(vector)} "
                f"values and norm {norm:.3g} (expected one unit vector of {embedder.dim})",
                "a bug or a broken model file: please report it",
            )
            return
        self.embedder_ok = True
        if self.settings.hashing_embeddings:
            self.add(
                "embedder",
                "warn",
                detail,
                f"BIOMCP_EMBEDDINGS={self.settings.biomcp_embeddings} matches words, not "
                "meanings: unset it for semantic search",
            )
        else:
            self.add("embedder", "ok", detail)

    async def corpus_model(self) -> None:
        from biomcp.ports.vectors import EmbeddingMismatchError

        try:
            await self.services.search.check_model()  # what every search checks first
        except EmbeddingMismatchError as mismatch:
            _, message, _ = describe(mismatch, self.settings)
            self.add("corpus model", "fail", message)
        else:
            self.add("corpus model", "ok", f"the corpus was embedded by {self.stats.model_id}")

    async def ncbi(self) -> None:
        began = time.perf_counter()
        count = await self.services.diagnostics.ncbi_count()
        took = time.perf_counter() - began
        self.add(
            "ncbi",
            "ok",
            f"ESearch answered in {took:.2f} s ({count:,} records match 'pubmed')",
        )
