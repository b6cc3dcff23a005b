"""`StoreBackup`: a backup folder of the stores, and its restoration.

A backup folder holds `manifest.json` and the copies it names with their SHA-256:

* the metadata database: `metadata.sqlite3` (SQLite online backup) or `metadata.pgdump`
  (`pg_dump`, custom format);
* with the embedded vector store, `vectors/<collection>/rows.sqlite` for every collection
  (the corpus and the projects), copied under the writers' turns together with the metadata.
* with Weaviate, `vectors/<collection>.jsonl.gz` for every project collection, written by
  the caller's `export` (see `adapters/vectors/export.py`). The corpus collection is not
  copied: a restore rebuilds it from SQL (`index rebuild`).

Caches (embeddings, E-utilities responses, models), the NCBI budget file and the derived
indexes are skipped: each is rebuilt or refilled when needed. A backup is written to a
hidden sibling folder and renamed into place when complete.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from biomcp.adapters.sql.backup import (
    copy_sqlite,
    dump_postgres,
    is_known_revision,
    metadata_file,
    read_snapshot,
    restore_postgres,
    restore_sqlite,
    sqlite_snapshot,
)
from biomcp.adapters.sql.engine import resolve_url
from biomcp.adapters.sql.migrate import head_revision, upgrade
from biomcp.adapters.vectors.embedded_backup import (
    ROWS,
    chunk_count,
    collection_names,
    drop_collection,
    hold_writers,
)

__all__ = ["FORMAT", "MANIFEST", "BackupError", "Manifest", "StoreBackup"]

FORMAT = 2
MANIFEST = "manifest.json"
SKIPPED = (
    "caches (embeddings, E-utilities responses, model files) and the NCBI budget file: "
    "refilled on use",
    "the lexical and vector index files: rebuilt from the copied rows when first opened",
)


class BackupError(ValueError):
    """A backup or restore refused, for a reason its user can fix (the message says how)."""


#: Writes the project collections into a folder; their names -> (file name, chunks written).
Exporter = Callable[[Path], dict[str, tuple[str, int]]]


@dataclass(frozen=True, slots=True)
class Manifest:
    """What a backup folder holds. `vectors` is `copied` (the rows of `collections` are in the
    folder) or `rebuild` (a restore rebuilds the corpus collection from SQL). `exported`
    names the collection file of each collection carried as an export (format 2)."""

    biomcp_version: str
    created_at: str
    schema_revision: str
    metadata_backend: str
    vector_backend: str
    vectors: str
    corpus_collection: str
    counts: dict[str, int]
    collections: dict[str, int]
    files: dict[str, str]
    skipped: list[str] = field(default_factory=list)
    exported: dict[str, str] = field(default_factory=dict)
    format: int = FORMAT

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def read(cls, folder: Path) -> Manifest:
        """The manifest of `folder`.

        Raises:
            BackupError: no readable manifest, or one of a later format.
        """
        try:
            data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise BackupError(f"not a bio-mcp backup folder: no readable {MANIFEST}") from exc
        if not isinstance(data, dict) or not isinstance(data.get("format"), int):
            raise BackupError(f"{MANIFEST} is not a bio-mcp backup manifest")
        if data["format"] > FORMAT:
            raise BackupError(
                f"the backup has format {data['format']}, newer than this bio-mcp reads "
                f"({FORMAT}): upgrade bio-mcp to restore it"
            )
        try:
            return cls(**data)
        except TypeError as exc:
            raise BackupError(f"{MANIFEST} is incomplete: {exc}") from exc


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


class StoreBackup:
    """Backs up and restores the metadata database at `database_url` (default: the SQLite
    file in `data_dir`) and, when `vector_backend` is `embedded`, the collections under
    `data_dir / "vectors"`."""

    def __init__(
        self,
        *,
        database_url: str | None,
        data_dir: Path,
        vector_backend: str,
        corpus_collection: str,
        version: str,
    ) -> None:
        self._url = resolve_url(database_url, data_dir)
        self._vectors_dir = data_dir / "vectors"
        self._vector_backend = vector_backend
        self._corpus = corpus_collection
        self._version = version

    @property
    def _embedded(self) -> bool:
        return self._vector_backend == "embedded"

    # --- backup -----------------------------------------------------------------------------

    def backup(self, dest: Path, *, export: Exporter | None = None) -> Manifest:
        """Write a backup of the stores to the folder `dest` (absent or empty). With a vector
        server, `export` writes its project collections into the backup's `vectors` folder.

        Raises:
            BackupError: `dest` is not empty, or there is nothing to back up.
            StoreUnavailableError: a database cannot be read or dumped.
            VectorStoreBusyError: a writer kept a collection for the whole wait.
        """
        if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
            raise BackupError("the backup folder exists and is not empty: name a new folder")
        source = metadata_file(self._url)
        if source is not None and not source.is_file():
            raise BackupError("nothing to back up: the metadata database does not exist yet")
        dest.parent.mkdir(parents=True, exist_ok=True)
        work = dest.parent / f".{dest.name}.partial-{os.getpid()}"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        try:
            manifest = self._write(work, source, export)
            if dest.exists():
                dest.rmdir()
            work.rename(dest)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        return manifest

    def _write(self, work: Path, source: Path | None, export: Exporter | None) -> Manifest:
        holding: AbstractContextManager[list[str]] = (
            hold_writers(self._vectors_dir) if self._embedded else nullcontext([])
        )
        with holding as names:  # no chunk is written until both sides are copied
            if source is not None:
                metadata = "metadata.sqlite3"
                copy_sqlite(source, work / metadata)
                snapshot = sqlite_snapshot(work / metadata)
            else:
                metadata = "metadata.pgdump"
                snapshot = dump_postgres(self._url, work / metadata)
            rows = {name: Path("vectors", name, ROWS) for name in names}
            for name, relative in rows.items():
                (work / relative).parent.mkdir(parents=True)
                copy_sqlite(self._vectors_dir / name / ROWS, work / relative)
        if snapshot.revision is None:
            raise BackupError("the metadata database was never migrated: run `biomcp db upgrade`")
        exported: dict[str, tuple[str, int]] = {}
        if export is not None and not self._embedded:
            (work / "vectors").mkdir()
            exported = {
                name: (Path("vectors", file).as_posix(), n)
                for name, (file, n) in export(work / "vectors").items()
            }
        counted = {name: chunk_count(work / path) for name, path in rows.items()}
        counted.update({name: n for name, (_, n) in exported.items()})
        files = [Path(metadata), *rows.values(), *(Path(f) for f, _ in exported.values())]
        manifest = Manifest(
            biomcp_version=self._version,
            created_at=datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
            schema_revision=snapshot.revision,
            metadata_backend="sqlite" if source is not None else "postgresql",
            vector_backend=self._vector_backend,
            vectors="copied" if self._embedded else "rebuild",
            corpus_collection=self._corpus,
            counts=snapshot.counts,
            collections=counted,
            files={path.as_posix(): _sha256(work / path) for path in files},
            skipped=list(SKIPPED),
            exported={name: file for name, (file, _) in exported.items()},
        )
        text = json.dumps(manifest.as_dict(), indent=2, sort_keys=True)
        (work / MANIFEST).write_text(text + "\n", encoding="utf-8")
        return manifest

    # --- restore ----------------------------------------------------------------------------

    def check(self, src: Path) -> Manifest:
        """The manifest of the backup in `src`, once it is known to fit this target.

        Raises:
            BackupError: a newer schema or format, another metadata backend, a damaged file,
                or rows of collections the target's vector backend cannot take.
        """
        manifest = Manifest.read(src)
        if not is_known_revision(manifest.schema_revision):
            raise BackupError(
                f"the backup's schema revision {manifest.schema_revision} is newer than this "
                f"bio-mcp's (head {head_revision()}): upgrade bio-mcp to restore it"
            )
        target = "sqlite" if metadata_file(self._url) is not None else "postgresql"
        if manifest.metadata_backend != target:
            raise BackupError(
                f"the backup holds a {manifest.metadata_backend} database and the configured "
                f"one is {target}: set BIOMCP_DATABASE_URL to the backend it came from"
            )
        if manifest.vectors == "copied" and manifest.collections and not self._embedded:
            raise BackupError(
                "the backup holds embedded collections and the vector backend is "
                f"{self._vector_backend}: restore it with BIOMCP_VECTOR_BACKEND=embedded"
            )
        for relative, digest in manifest.files.items():
            path = src / relative
            if not path.is_file() or _sha256(path) != digest:
                raise BackupError(f"the backup is damaged: {relative} is missing or altered")
        return manifest

    def contents(self) -> dict[str, int]:
        """What the target holds now: the metadata counts and, embedded, chunks by collection."""
        held = dict(read_snapshot(self._url).counts)
        if self._embedded:
            for name in collection_names(self._vectors_dir):
                held[f"chunks in {name}"] = chunk_count(self._vectors_dir / name / ROWS)
        return held

    def restore(self, src: Path, *, force: bool = False) -> Manifest:
        """Replace the target's metadata (and embedded collections) by the backup in `src`
        and migrate it to head. Servers on the target should be stopped. The caller then
        rebuilds the corpus collection when the manifest says `rebuild`, and checks counts.

        Raises:
            BackupError: the backup does not fit (see `check`), or the target holds data
                and `force` is False.
            StoreUnavailableError, VectorStoreBusyError: from the stores.
        """
        manifest = self.check(src)
        held = {what: n for what, n in self.contents().items() if n}
        if held and not force:
            listed = ", ".join(f"{n} {what.replace('_', ' ')}" for what, n in held.items())
            raise BackupError(f"the target is not empty ({listed}): pass --force to replace it")
        if manifest.metadata_backend == "sqlite":
            target = metadata_file(self._url)
            assert target is not None  # noqa: S101 - check() matched the backends
            restore_sqlite(src / "metadata.sqlite3", target)
        else:
            restore_postgres(self._url, src / "metadata.pgdump")
        upgrade(self._url)
        if self._embedded and manifest.vectors == "copied":
            self._restore_rows(src, manifest)
        return manifest

    def _restore_rows(self, src: Path, manifest: Manifest) -> None:
        for name in collection_names(self._vectors_dir):
            drop_collection(self._vectors_dir, name)
        for name in manifest.collections:
            root = self._vectors_dir / name
            root.mkdir(parents=True, exist_ok=True)
            restore_sqlite(src / "vectors" / name / ROWS, root / ROWS)

    def mismatches(self, manifest: Manifest, chunks: dict[str, int]) -> list[str]:
        """How the restored target differs from the manifest's counts (empty: it does not).
        `chunks`: the target's chunk count of each collection the manifest carries."""
        found = read_snapshot(self._url).counts
        wrong = [
            f"{what}: {found.get(what, 0)} restored, {n} in the backup"
            for what, n in manifest.counts.items()
            if found.get(what, 0) != n
        ]
        wrong += [
            f"chunks in {name}: {chunks.get(name, 0)} restored, {n} in the backup"
            for name, n in manifest.collections.items()
            if chunks.get(name, 0) != n
        ]
        return wrong
