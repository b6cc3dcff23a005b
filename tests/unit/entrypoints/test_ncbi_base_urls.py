"""One setting points every NCBI service somewhere else: NCBI_EUTILS_BASE_URL moves the ID
converter with it, unless NCBI_IDCONV_BASE_URL is set."""

from __future__ import annotations

import pytest

from biomcp.entrypoints.settings import NCBI_IDCONV_URL, Settings
from biomcp.testing.eutils.idconv import IDCONV_PATHS


@pytest.fixture(autouse=True)
def _no_ncbi_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NCBI_EUTILS_BASE_URL", "NCBI_IDCONV_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def test_with_nothing_set_both_services_are_ncbis() -> None:
    settings = Settings(_env_file=None)
    assert settings.ncbi_idconv_base_url == NCBI_IDCONV_URL
    assert settings.ncbi_eutils_base_url.startswith("https://eutils.ncbi.nlm.nih.gov/")


@pytest.mark.parametrize(
    ("eutils", "idconv"),
    [
        ("http://127.0.0.1:8765", "http://127.0.0.1:8765/tools/idconv/api/v1/articles/"),
        ("http://127.0.0.1:8765/", "http://127.0.0.1:8765/tools/idconv/api/v1/articles/"),
        (
            "http://127.0.0.1:8765/entrez/eutils",
            "http://127.0.0.1:8765/tools/idconv/api/v1/articles/",
        ),
        (
            "https://mirror.example.org/ncbi/entrez/eutils",
            "https://mirror.example.org/ncbi/tools/idconv/api/v1/articles/",
        ),
    ],
)
def test_another_eutils_base_moves_the_id_converter_beside_it(
    monkeypatch: pytest.MonkeyPatch, eutils: str, idconv: str
) -> None:
    monkeypatch.setenv("NCBI_EUTILS_BASE_URL", eutils)
    assert Settings(_env_file=None).ncbi_idconv_base_url == idconv


def test_the_fake_serves_the_converter_where_the_rule_points() -> None:
    derived = Settings(_env_file=None, ncbi_eutils_base_url="http://127.0.0.1:1")
    assert derived.ncbi_idconv_base_url.removeprefix("http://127.0.0.1:1") in IDCONV_PATHS


def test_an_explicit_id_converter_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NCBI_EUTILS_BASE_URL", "http://127.0.0.1:8765")
    monkeypatch.setenv("NCBI_IDCONV_BASE_URL", "http://127.0.0.1:9999/idconv/")
    assert Settings(_env_file=None).ncbi_idconv_base_url == "http://127.0.0.1:9999/idconv/"


def test_an_explicit_ncbi_converter_stays_with_another_eutils_base() -> None:
    settings = Settings(
        _env_file=None,
        ncbi_eutils_base_url="http://127.0.0.1:8765",
        ncbi_idconv_base_url=NCBI_IDCONV_URL,
    )
    assert settings.ncbi_idconv_base_url == NCBI_IDCONV_URL
