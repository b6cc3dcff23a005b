"""The ProjectRegistry port: the projects agents keep their own chunks in (spec 02).

A project is an id chosen by its owner (any printable text up to 128 characters, `/`
included), the vector collection its chunks live in (derived from the id, one per project,
never shared), the embedding model and dimension of its vectors, and whether it offers hybrid
(BM25 + vector) search. Projects come from the projects file or `biomcp project create`; both
end in the registry. Every method raises only `MetadataStoreError`s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

__all__ = ["ProjectInfo", "ProjectRegistry"]


@dataclass(frozen=True, slots=True)
class ProjectInfo:
    project_id: str
    collection: str
    model_id: str
    dim: int
    hybrid: bool = True
    created_at: datetime | None = None
    metadata: dict[str, str] = field(default_factory=dict)


class ProjectRegistry(Protocol):
    async def register_project(self, project: ProjectInfo) -> ProjectInfo:
        """Create the project, or return the stored one when its id exists (the stored model
        wins: the caller checks for an embedding mismatch).

        Raises:
            MetadataStoreError: when another project already uses the collection.
        """
        ...

    async def get_project(self, project_id: str) -> ProjectInfo | None: ...

    async def list_projects(self) -> list[ProjectInfo]:
        """Every project, by id."""
        ...

    async def set_project_model(self, project_id: str, model_id: str, dim: int) -> ProjectInfo:
        """Record that the project's vectors now come from `model_id` (`dim`-d); the caller
        has emptied its collection first.

        Raises:
            MetadataStoreError: when the project does not exist.
        """
        ...
