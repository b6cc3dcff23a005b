"""`BIOMCP_TOOLSETS`: which tool families a server offers, read and checked at start."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from biomcp.entrypoints.settings import (
    DEFAULT_TOOLSETS,
    TOOLSETS,
    Settings,
    format_settings_error,
    toolset_names,
)

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BIOMCP_TOOLSETS", raising=False)
    monkeypatch.delenv("BIOMCP_SEARCH_FETCH_TOOLS", raising=False)


def test_groups_expand_and_names_are_tidied(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings(_env_file=None).toolsets == set(DEFAULT_TOOLSETS)
    assert Settings(_env_file=None, biomcp_toolsets="all").toolsets == set(TOOLSETS)
    monkeypatch.setenv("BIOMCP_TOOLSETS", " Projects , default,projects")
    settings = Settings(_env_file=None)
    assert settings.toolsets == {*DEFAULT_TOOLSETS, "projects"}
    assert settings.biomcp_toolsets == "corpus,live,fulltext,mesh,projects"  # listing order
    assert Settings(_env_file=None, biomcp_toolsets="").toolsets == set(DEFAULT_TOOLSETS)
    assert Settings(_env_file=None, biomcp_toolsets="live").toolsets == {"live"}


def test_an_unknown_toolset_is_a_configuration_error_naming_the_known_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BIOMCP_TOOLSETS", "corpus,pubmed")
    with pytest.raises(ValidationError) as raised:
        Settings(_env_file=None)
    message = format_settings_error(raised.value)
    assert "BIOMCP_TOOLSETS" in message
    assert "unknown toolset 'pubmed'" in message
    assert all(name in message for name in TOOLSETS)
    with pytest.raises(ValueError, match="unknown toolset"):
        toolset_names("live,,nope")
    assert toolset_names("All, live,,all") == ["all", "live"]


def test_the_older_search_fetch_switch_adds_or_removes_the_chatgpt_toolset() -> None:
    on = Settings(_env_file=None, biomcp_search_fetch_tools=True)
    assert on.toolsets == {*DEFAULT_TOOLSETS, "chatgpt"}
    off = Settings(_env_file=None, biomcp_toolsets="all", biomcp_search_fetch_tools=False)
    assert off.toolsets == set(TOOLSETS) - {"chatgpt"}
    assert "chatgpt" in Settings(_env_file=None, biomcp_toolsets="all").toolsets
