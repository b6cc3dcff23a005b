"""`MemoryProjectRegistry`: the ProjectRegistry port in memory."""

from __future__ import annotations

from dataclasses import replace

from biomcp.ports.projects import ProjectInfo
from biomcp.ports.store_errors import MetadataStoreError
from biomcp.testing.memory.tables import MemoryDatabase

__all__ = ["MemoryProjectRegistry"]


class MemoryProjectRegistry(MemoryDatabase):
    """Projects in a dict, one collection each."""

    async def register_project(self, project: ProjectInfo) -> ProjectInfo:
        with self._transaction() as tables:
            stored = tables.projects.get(project.project_id)
            if stored is not None:
                return stored
            if any(p.collection == project.collection for p in tables.projects.values()):
                raise MetadataStoreError(
                    f"collection {project.collection!r} already belongs to another project"
                )
            created = replace(
                project,
                created_at=project.created_at or self._now(),
                metadata=dict(project.metadata),
            )
            tables.projects[project.project_id] = created
            return created

    async def get_project(self, project_id: str) -> ProjectInfo | None:
        with self._transaction() as tables:
            return tables.projects.get(project_id)

    async def list_projects(self) -> list[ProjectInfo]:
        with self._transaction() as tables:
            return [tables.projects[key] for key in sorted(tables.projects)]

    async def set_project_model(self, project_id: str, model_id: str, dim: int) -> ProjectInfo:
        with self._transaction() as tables:
            stored = tables.projects.get(project_id)
            if stored is None:
                raise MetadataStoreError(f"no project {project_id!r}")
            changed = replace(stored, model_id=model_id, dim=dim)
            tables.projects[project_id] = changed
            return changed
