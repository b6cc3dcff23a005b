"""`SqlProjectRegistry`: the ProjectRegistry port in SQL."""

from __future__ import annotations

from sqlalchemy import (
    Engine,
    select,
    update,
)
from sqlalchemy import exc as sa_exc

from biomcp.adapters.sql.database import SqlDatabase
from biomcp.adapters.sql.engine import (
    dialect_insert,
    writing,
)
from biomcp.adapters.sql.rows import (
    PROJECTS,
    project_from_row,
    project_values,
)
from biomcp.ports.projects import ProjectInfo
from biomcp.ports.store_errors import MetadataStoreError

__all__ = ["SqlProjectRegistry"]


class SqlProjectRegistry(SqlDatabase):
    """The projects agents keep their chunks in (`ProjectRegistry`)."""

    async def register_project(self, project: ProjectInfo) -> ProjectInfo:
        """Create the project, or return the stored one when its id exists (the stored model
        wins: the caller checks for an embedding mismatch).

        Raises:
            MetadataStoreError: when another project already uses the collection.
        """
        now = self._now()

        def work(engine: Engine) -> ProjectInfo:
            with writing(engine) as connection:
                connection.execute(
                    dialect_insert(connection, PROJECTS)
                    .values(project_values(project, now))
                    .on_conflict_do_nothing(index_elements=["project_id"])
                )
                query = select(PROJECTS).where(PROJECTS.c.project_id == project.project_id)
                return project_from_row(connection.execute(query).one())

        try:
            return await self._run("registering a project", work)
        except MetadataStoreError as exc:
            if isinstance(exc.__cause__, sa_exc.IntegrityError):
                raise MetadataStoreError(
                    f"collection {project.collection!r} already belongs to another project"
                ) from exc.__cause__
            raise

    async def get_project(self, project_id: str) -> ProjectInfo | None:
        def work(engine: Engine) -> ProjectInfo | None:
            query = select(PROJECTS).where(PROJECTS.c.project_id == project_id)
            with engine.connect() as connection:
                row = connection.execute(query).first()
            return project_from_row(row) if row is not None else None

        return await self._run("reading a project", work)

    async def set_project_model(self, project_id: str, model_id: str, dim: int) -> ProjectInfo:
        def work(engine: Engine) -> ProjectInfo:
            with writing(engine) as connection:
                connection.execute(
                    update(PROJECTS)
                    .where(PROJECTS.c.project_id == project_id)
                    .values(model_id=model_id, dim=dim)
                )
                query = select(PROJECTS).where(PROJECTS.c.project_id == project_id)
                row = connection.execute(query).first()
            if row is None:
                raise MetadataStoreError(f"no project {project_id!r}")
            return project_from_row(row)

        return await self._run("changing a project's model", work)

    async def list_projects(self) -> list[ProjectInfo]:
        """Every project, by id."""

        def work(engine: Engine) -> list[ProjectInfo]:
            query = select(PROJECTS).order_by(PROJECTS.c.project_id)
            with engine.connect() as connection:
                return [project_from_row(row) for row in connection.execute(query)]

        return await self._run("listing projects", work)
