"""Log redaction (`adapters.entrez.redaction`): the API key never reaches a log line."""

from __future__ import annotations

import logging

import pytest

from biomcp.adapters.entrez.client import EntrezSettings, HttpEntrezClient
from biomcp.adapters.entrez.redaction import REDACTED_LOGGERS, RedactFilter, install_redaction

pytestmark = pytest.mark.unit

URL = "https://eutils.test/esearch.fcgi?db=pubmed&term=asthma&tool=bio-mcp&email={email}&api_key={key}"


def _logged(caplog: pytest.LogCaptureFixture, logger: str, message: str, *args: object) -> str:
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger=logger):
        logging.getLogger(logger).info(message, *args)
    (record,) = [r for r in caplog.records if r.name == logger]
    return record.getMessage()


@pytest.mark.parametrize("logger", REDACTED_LOGGERS)
def test_the_api_key_in_a_logged_request_url_becomes_stars(
    caplog: pytest.LogCaptureFixture, logger: str
) -> None:
    install_redaction(["key-in-url-0123456789"])
    url = URL.format(email="curator@example.org", key="key-in-url-0123456789")
    line = _logged(caplog, logger, 'HTTP Request: GET %s "HTTP/1.1 200 OK"', url)
    assert "key-in-url-0123456789" not in line
    assert "&api_key=***" in line
    assert "term=asthma&tool=bio-mcp" in line  # the rest of the URL is kept


def test_the_api_key_is_redacted_wherever_it_appears_in_the_message(
    caplog: pytest.LogCaptureFixture,
) -> None:
    install_redaction(["key-anywhere-4242"])
    line = _logged(
        caplog, "httpcore", "send_request_headers key-anywhere-4242 %s", "key-anywhere-4242"
    )
    assert line == "send_request_headers *** ***"


def test_the_contact_email_is_not_a_secret_and_stays_in_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    install_redaction(["key-beside-email-77"])
    url = URL.format(email="curator@example.org", key="key-beside-email-77")
    line = _logged(caplog, "httpx", "GET %s", url)
    assert "email=curator@example.org" in line
    assert "key-beside-email-77" not in line


def test_a_record_without_a_secret_keeps_its_arguments_for_lazy_formatting() -> None:
    screen = RedactFilter()
    screen.secrets.add("never-logged-key")
    record = logging.LogRecord("httpx", logging.INFO, __file__, 1, "GET %s", ("/einfo",), None)
    assert screen.filter(record) is True
    assert (record.msg, record.args) == ("GET %s", ("/einfo",))


def test_installing_twice_adds_one_filter_per_logger() -> None:
    install_redaction(["first-key-aaaa"])
    install_redaction(["second-key-bbbb"])
    for name in REDACTED_LOGGERS:
        assert sum(isinstance(f, RedactFilter) for f in logging.getLogger(name).filters) == 1


def test_a_client_with_a_key_redacts_it_from_logs_and_from_error_text(
    caplog: pytest.LogCaptureFixture,
) -> None:
    key = "client key/with+specials"
    client = HttpEntrezClient(EntrezSettings(base_url="http://ncbi.test", api_key=key))
    assert client.redact("failed: api_key=client+key%2Fwith%2Bspecials") == "failed: api_key=***"
    assert client.redact(f"failed: {key}") == "failed: ***"
    assert key not in _logged(caplog, "biomcp.entrez", "retrying %s", key)
