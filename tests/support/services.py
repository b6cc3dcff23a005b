"""Where the real services of the tests are: PostgreSQL and Weaviate.

`scripts/services.sh start` runs them and prints the variables to export. Without a variable
a test that needs the service is skipped, with the reason; when the `CI` variable is set it
fails instead, because CI starts every service and must skip none.
"""

from __future__ import annotations

import os

import pytest

__all__ = ["POSTGRES_URL_ENV", "WEAVIATE_URL_ENV", "postgres_url", "require_env", "weaviate_url"]

POSTGRES_URL_ENV = "BIOMCP_TEST_POSTGRES_URL"
WEAVIATE_URL_ENV = "BIOMCP_TEST_WEAVIATE_URL"


def require_env(name: str, service: str) -> str:
    """The value of `name`; skip the calling test when it is unset (fail when CI is set)."""
    value = os.environ.get(name, "").strip()
    if value:
        return value
    hint = f'start {service} with `eval "$(scripts/services.sh start {service})"`'
    if os.environ.get("CI"):
        pytest.fail(f"{name} is not set but CI is: CI must run the {service} tests ({hint})")
    pytest.skip(f"{name} is not set: {hint} to run the {service} tests")


def postgres_url() -> str:
    """The SQLAlchemy URL of the test PostgreSQL database (`BIOMCP_TEST_POSTGRES_URL`)."""
    return require_env(POSTGRES_URL_ENV, "postgres")


def weaviate_url() -> str:
    """The HTTP URL of the test Weaviate (`BIOMCP_TEST_WEAVIATE_URL`)."""
    return require_env(WEAVIATE_URL_ENV, "weaviate")
