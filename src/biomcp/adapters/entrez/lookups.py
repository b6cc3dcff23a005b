"""Readers for the two NCBI lookup services that do not answer E-utility XML: the PMC ID
converter (JSON) and ECitMatch (pipe-separated text lines, whatever `retmode` says).

Formats, as NCBI documents them:

* ID converter (`.../tools/idconv/api/v1/articles/?ids=...&idtype=...&format=json`):
  `{"status": "ok", "responseDate": ..., "request": ..., "records": [{"requested-id": ...,
  "pmcid": "PMC...", "pmid": ..., "doi": ..., "versions": [{"pmcid": "PMC....1"}]}, ...]}`;
  an id without a match is a record with `"status": "error"` and an `errmsg`. A request NCBI
  refuses as a whole answers `"status": "error"` with a `message`.
* ECitMatch (`ecitmatch.cgi?db=pubmed&retmode=xml&bdata=...`): one line per `bdata` line, its
  six fields followed by the PMID, `NOT_FOUND` (possibly with reasons) or `AMBIGUOUS`
  (possibly with candidate PMIDs).

Both readers raise the port's errors: `EntrezResponseError` for an answer of the wrong shape
(an HTML page, truncated JSON, lines missing: worth a retry), `EntrezRequestError` /
`EntrezUnavailableError` for an error NCBI states (see `classify_ncbi_error`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from typing import Any

from biomcp.adapters.entrez.xmlsafe import classify_ncbi_error
from biomcp.domain.citematch import CitMatchAnswer, read_citmatch_line
from biomcp.domain.identifiers import IdConversion
from biomcp.ports.entrez import EntrezResponseError

__all__ = ["IDCONV_MAX_IDS", "parse_ecitmatch", "parse_idconv"]

#: NCBI's ID converter takes at most this many ids per request.
IDCONV_MAX_IDS = 200
_ERROR_ELEMENT = re.compile(rb"<ERROR>(.*?)</ERROR>", re.DOTALL | re.IGNORECASE)


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value.strip() or None
    return None


def _refuse_markup(body: bytes, what: str) -> None:
    head = body.lstrip()[:300].lower()
    if not head.startswith(b"<"):
        return
    error = _ERROR_ELEMENT.search(body[:4096])
    if error is not None:
        raise classify_ncbi_error(error.group(1).decode("utf-8", "replace"))
    raise EntrezResponseError(f"expected {what}, received markup (an HTML error page?)")


def parse_idconv(body: bytes) -> tuple[IdConversion, ...]:
    """The records of one ID converter JSON answer.

    Raises:
        EntrezResponseError: not JSON (an HTML page, a truncated body) or not the documented
            shape.
        EntrezRequestError, EntrezUnavailableError: NCBI refused the request as a whole.
    """
    _refuse_markup(body, "ID converter JSON")
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise EntrezResponseError("the ID converter's answer is not JSON (truncated?)") from None
    if not isinstance(data, Mapping):
        raise EntrezResponseError("the ID converter's answer is not a JSON object")
    records = data.get("records")
    if str(data.get("status", "ok")).lower() == "error" and not records:
        message = _text(data.get("message")) or _text(data.get("errmsg")) or "status error"
        raise classify_ncbi_error(message)
    if not isinstance(records, list):
        raise EntrezResponseError("the ID converter's answer has no records list")
    return tuple(_record(r) for r in records if isinstance(r, Mapping))


def _record(raw: Mapping[str, Any]) -> IdConversion:
    versions = raw.get("versions")
    listed = (
        tuple(v for v in (_text(x.get("pmcid")) for x in versions if isinstance(x, Mapping)) if v)
        if isinstance(versions, list)
        else ()
    )
    failed = str(raw.get("status", "")).lower() == "error"
    return IdConversion(
        requested_id=_text(raw.get("requested-id")) or "",
        pmid=_text(raw.get("pmid")),
        pmcid=_text(raw.get("pmcid")),
        doi=_text(raw.get("doi")),
        versions=listed,
        error=(_text(raw.get("errmsg")) or "no match") if failed else None,
    )


def parse_ecitmatch(body: bytes, keys: Collection[str]) -> tuple[CitMatchAnswer, ...]:
    """The answers of one ECitMatch reply, in the order of its lines; every key of `keys`
    must be answered.

    Raises:
        EntrezResponseError: markup instead of text, or a key without its answer line
            (a truncated reply).
        EntrezRequestError, EntrezUnavailableError: an `<ERROR>` from NCBI.
    """
    _refuse_markup(body, "ECitMatch text lines")
    text = body.decode("utf-8", "replace").replace("\r\n", "\n")
    # Only whole lines count: a reply cut inside a line could end in a shortened PMID.
    complete = text.split("\n")[:-1]
    answers: dict[str, CitMatchAnswer] = {}
    for line in complete:
        answer = read_citmatch_line(line)
        if answer is not None and answer.key in keys:
            answers.setdefault(answer.key, answer)
    missing = [k for k in keys if k not in answers]
    if missing:
        raise EntrezResponseError(
            f"ECitMatch answered {len(answers)} of {len(keys)} citations (truncated?)"
        )
    return tuple(answers.values())
