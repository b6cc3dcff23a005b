"""`open_corpus()` and `open_async_corpus()`: a corpus from settings and keyword overrides."""

from __future__ import annotations

import os
import warnings
from typing import Any

from biomcp.entrypoints.library.async_corpus import AsyncCorpus
from biomcp.entrypoints.library.corpus import Corpus
from biomcp.entrypoints.services import build_services
from biomcp.entrypoints.settings import Settings, load_settings, old_names, unknown_variables

__all__ = ["open_async_corpus", "open_corpus"]


def open_corpus(settings: Settings | None = None, **overrides: Any) -> Corpus:
    """The corpus configured by `settings` (default: the environment and `.env`, like the
    server and the CLI), with `overrides` winning: keyword arguments named like the settings'
    fields, e.g. `open_corpus(biomcp_data_dir="corpus/", biomcp_embeddings="hashing")`.
    Nothing connects until the first call. An environment variable that looks meant for
    bio-mcp but is no setting (`BIOMCP_EMBEDDER`) is named in a `UserWarning`.

    Raises:
        TypeError: an override that names no setting.
        pydantic.ValidationError: a bad value (it names the field and what it accepts).
    """
    return Corpus(build_services(_settings("open_corpus", settings, overrides)))


def open_async_corpus(settings: Settings | None = None, **overrides: Any) -> AsyncCorpus:
    """`open_corpus` for async code: the same settings, an `AsyncCorpus`."""
    return AsyncCorpus(build_services(_settings("open_async_corpus", settings, overrides)))


def _settings(caller: str, settings: Settings | None, overrides: dict[str, Any]) -> Settings:
    fields = Settings.model_fields
    renamed = old_names()
    values = {renamed.get(k.lower(), k.lower()): value for k, value in overrides.items()}
    unknown = sorted(name for name in values if name not in fields)
    if unknown:
        raise TypeError(
            f"{caller}() got unknown settings {', '.join(unknown)}; known: "
            f"{', '.join(sorted(fields))}"
        )
    if settings is None:
        for warning in unknown_variables(os.environ):
            warnings.warn(warning, UserWarning, stacklevel=3)  # the caller of open_corpus
        return load_settings(**values)
    if values:
        return type(settings).model_validate({**settings.model_dump(), **values})
    return settings
