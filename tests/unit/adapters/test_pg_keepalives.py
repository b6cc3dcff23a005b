"""The keepalive arguments of a PostgreSQL connection: both ends drop a vanished peer within
seconds, and a URL's own arguments keep the last word."""

from __future__ import annotations

from sqlalchemy import make_url

from biomcp.adapters.sql.engine import (
    PG_KEEPALIVE_COUNT,
    PG_KEEPALIVE_IDLE_S,
    PG_KEEPALIVE_INTERVAL_S,
    pg_keepalives,
)


def _query(url: str) -> dict[str, object]:
    return dict(make_url(url).query)


def test_a_plain_url_gets_client_keepalives_and_server_settings() -> None:
    arguments = pg_keepalives(_query("postgresql+psycopg://u@db/biomcp"))

    assert {k: v for k, v in arguments.items() if k != "options"} == {
        "keepalives": 1,
        "keepalives_idle": PG_KEEPALIVE_IDLE_S,
        "keepalives_interval": PG_KEEPALIVE_INTERVAL_S,
        "keepalives_count": PG_KEEPALIVE_COUNT,
    }
    settings = arguments["options"].split(" -c ")
    assert [s.removeprefix("-c ").split("=")[0] for s in settings] == [
        "tcp_keepalives_idle",
        "tcp_keepalives_interval",
        "tcp_keepalives_count",
        "client_connection_check_interval",
    ]
    # The whole-death bound: idle, then every probe unanswered.
    assert PG_KEEPALIVE_IDLE_S + PG_KEEPALIVE_INTERVAL_S * PG_KEEPALIVE_COUNT <= 10


def test_the_urls_own_arguments_and_options_win() -> None:
    url = "postgresql+psycopg://u@db/biomcp?keepalives_idle=30&options=-csearch_path%3Dmine"

    arguments = pg_keepalives(_query(url))

    assert "keepalives_idle" not in arguments  # libpq reads the URL's
    assert arguments["keepalives_count"] == PG_KEEPALIVE_COUNT
    assert arguments["options"].startswith("-c tcp_keepalives_idle=")
    assert arguments["options"].endswith(" -csearch_path=mine")  # after ours: it wins


def test_keepalives_off_in_the_url_turns_every_setting_off() -> None:
    assert pg_keepalives(_query("postgresql+psycopg://u@db/biomcp?keepalives=0")) == {}
