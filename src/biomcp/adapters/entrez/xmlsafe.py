"""One hardened way to read any E-utilities XML answer.

Every E-utilities parser goes through `parse_document`, which owns the document-level safety and
the document-level failure modes, so each parser only deals with its own elements:

* **Safety.** lxml is configured never to resolve entities, never to touch the network and never
  to load a DTD, so the remote DTDs named in NCBI's DOCTYPE lines are not fetched, external
  entities (XXE) are not read and nested entities (billion laughs) are not expanded. A document
  that declares its own entities in an internal DTD subset is refused outright: NCBI never sends
  one, so such a document is hostile or broken.
* **Failure modes.** Malformed or truncated XML, an HTML page served with status 200, an
  unexpected root element become `EntrezResponseError`; NCBI's in-band `<ERROR>` payloads become
  whatever `classify_ncbi_error` says (`EntrezRequestError` or `EntrezUnavailableError`).

Only the port's error classes are raised: callers map errors by kind, never by adapter.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from functools import lru_cache
from typing import Any, cast

from lxml import etree

from biomcp.ports.entrez import (
    EntrezError,
    EntrezRequestError,
    EntrezResponseError,
    EntrezUnavailableError,
)

__all__ = ["MATHML_NS", "XLINK_NS", "classify_ncbi_error", "parse_document"]

MATHML_NS = "http://www.w3.org/1998/Math/MathML"
XLINK_NS = "http://www.w3.org/1999/xlink"

_KNOWN_PREFIXES = {"mml": MATHML_NS, "xlink": XLINK_NS}
_UNDEFINED_PREFIX = re.compile(r"Namespace prefix ([A-Za-z_][\w.-]*) (?:on|for) ")
_HTML_SNIFF = re.compile(rb"<\s*(?:!doctype\s+html|html[\s>])", re.IGNORECASE)
_HTML_TITLE = re.compile(rb"<title[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)
_ENTITY_DECLARATION = re.compile(rb"<!ENTITY", re.IGNORECASE)
_MAX_DETAIL = 300

# NCBI messages that name a permanent problem with the request, even when they also mention the
# backend: "Search Backend failed: Exception: 'retstart' cannot be larger than 9998. ..." is
# PubMed's answer to a retstart past the ESearch cap, and retrying it will never help.
_PERMANENT_MARKERS = (
    "cannot be larger than",
    "'retstart'",
    "invalid",
    "empty result",
    "nothing to do",
    "nothing todo",
    "not specified",
)
# NCBI messages that mean its backend is struggling: the same request may well succeed later.
_TRANSIENT_MARKERS = (
    "search backend failed",
    "temporarily unavailable",
    "unable to obtain query",
    "backend",
    "timeout",
    "timed out",
    "try again",
)

_local = threading.local()


def _parser() -> etree.XMLParser:
    """The hardened parser, one per thread (lxml parsers must not be shared between threads)."""
    parser: etree.XMLParser | None = getattr(_local, "parser", None)
    if parser is None:
        parser = etree.XMLParser(
            resolve_entities=False,
            no_network=True,
            load_dtd=False,
            dtd_validation=False,
            huge_tree=False,
            remove_comments=True,
        )
        _local.parser = parser
    return parser


def classify_ncbi_error(message: str) -> EntrezError:
    """The port error an NCBI `<ERROR>` text stands for (returned, not raised).

    Messages naming a transient backend problem ("Search Backend failed", "temporarily
    unavailable", "Unable to obtain query", "backend", "timeout", "try again"; case-insensitive)
    give `EntrezUnavailableError`, worth retrying later. Everything else (an invalid database or
    id list, "Empty result - nothing to do", ...) gives `EntrezRequestError`. A message that
    names a permanent cause wins over a transient marker: PubMed reports a retstart past the
    ESearch cap as "Search Backend failed: Exception: 'retstart' cannot be larger than 9998",
    which is a request error.

    The error's message is `NCBI error: <text>` with whitespace collapsed.
    """
    text = " ".join(message.split()) or "(empty ERROR element)"
    lowered = text.lower()
    full = f"NCBI error: {text}"
    if any(marker in lowered for marker in _PERMANENT_MARKERS):
        return EntrezRequestError(full)
    if any(marker in lowered for marker in _TRANSIENT_MARKERS):
        return EntrezUnavailableError(full)
    return EntrezRequestError(full)


def parse_document(
    xml: bytes | bytearray | memoryview, *, expected_roots: frozenset[str] | set[str], what: str
) -> etree._Element:
    """Parse an E-utilities answer safely and check it is the document the caller expects.

    Args:
        xml: the raw response body (bytes, so the XML declaration's encoding is honoured;
            bytearray and memoryview are accepted too). Leading whitespace is tolerated.
        expected_roots: the root element names the caller can read (e.g. `{"eSearchResult"}`).
        what: how error messages name the expected document ("an ESearch <eSearchResult>
            document").

    Returns:
        The root element. Comments are removed; nothing was fetched, no entity was expanded.
        Namespace prefixes used without a declaration (`mml:` in PubMed abstracts, which NCBI's
        DTD would have bound) are bound on the expected root element so the document still
        parses.

    Raises:
        EntrezResponseError: empty input, malformed or truncated XML, an HTML page (the message
            carries its title), a document declaring its own entities, or an unexpected root.
        EntrezRequestError, EntrezUnavailableError: NCBI sent an error payload (a root `<ERROR>`,
            an expected root whose only content is `<ERROR>`, or an unexpected root carrying an
            `<ERROR>`); see `classify_ncbi_error`.
    """
    if isinstance(xml, bytearray | memoryview):
        xml = bytes(xml)
    if not isinstance(xml, bytes):
        raise EntrezResponseError(
            f"expected the response body as bytes, got {type(xml).__name__} ({what})"
        )
    if xml[:1].isspace():
        xml = xml.lstrip()  # a stray newline before `<?xml` is a fatal error to libxml2
    if not xml:
        raise EntrezResponseError(f"empty response: no XML at all, expected {what}")
    try:
        root = _fromstring(xml)
    except etree.XMLSyntaxError as exc:
        prefixes = _undefined_prefixes(exc)
        patched = _declare_prefixes(xml, prefixes, expected_roots) if prefixes else None
        if patched is None:
            raise _syntax_error(xml, exc, what) from exc
        try:
            root = _fromstring(patched)
        except (etree.LxmlError, ValueError) as again:
            raise _syntax_error(xml, again, what) from again
    except (etree.LxmlError, ValueError) as exc:
        raise _syntax_error(xml, exc, what) from exc

    if _declares_entities(root):
        raise EntrezResponseError(_ENTITIES_REFUSED)
    tag = root.tag
    if tag == "ERROR":
        raise classify_ncbi_error(_text(root) or "")
    if tag not in expected_roots:
        if isinstance(tag, str) and etree.QName(root).localname.lower() == "html":
            raise EntrezResponseError(f"received an HTML page, not {what}{_html_title(xml)}")
        error = _first_error_text(root)
        if error is not None:
            raise classify_ncbi_error(error)
        raise EntrezResponseError(f"expected {what}, got <{tag}>")
    if _is_error_only(root):
        raise classify_ncbi_error(_first_error_text(root) or "")
    return root


# --------------------------------------------------------------------------- helpers

_ENTITIES_REFUSED = (
    "document declares its own entities (internal DTD subset): refused, NCBI never sends them "
    "and they are the vehicle of XXE and entity-expansion attacks"
)


def _fromstring(xml: bytes) -> etree._Element:
    return etree.fromstring(xml, _parser())


def _undefined_prefixes(exc: etree.XMLSyntaxError) -> list[str]:
    """Prefixes used without a declaration (e.g. `mml:` when the DTD was meant to bind it)."""
    found: list[str] = []
    for entry in cast("Iterable[Any]", exc.error_log):
        match = _UNDEFINED_PREFIX.search(entry.message)
        if match and match.group(1) not in found and match.group(1) != "xmlns":
            found.append(match.group(1))
    return found


@lru_cache(maxsize=32)
def _root_start(roots: frozenset[str]) -> re.Pattern[bytes]:
    names = b"|".join(re.escape(name.encode("utf-8")) for name in sorted(roots))
    return re.compile(rb"<(?:" + names + rb")(?=[\s/>])")


def _declare_prefixes(
    xml: bytes, prefixes: Iterable[str], roots: frozenset[str] | set[str]
) -> bytes | None:
    """Bind undeclared prefixes on the root element, as NCBI's DTD would (None: cannot)."""
    if not roots:
        return None
    match = _root_start(frozenset(roots)).search(xml)
    if match is None:
        return None
    declarations = b"".join(
        f' xmlns:{p}="{_KNOWN_PREFIXES.get(p, "urn:x-biomcp:undeclared:" + p)}"'.encode()
        for p in prefixes
    )
    return xml[: match.end()] + declarations + xml[match.end() :]


def _syntax_error(xml: bytes, exc: Exception, what: str) -> EntrezResponseError:
    head = xml[:4096]
    if _HTML_SNIFF.search(head):
        return EntrezResponseError(f"received an HTML page, not {what}{_html_title(xml)}")
    if _ENTITY_DECLARATION.search(xml):
        # libxml2 stops some entity bombs itself ("entity amplification"): same verdict.
        return EntrezResponseError(_ENTITIES_REFUSED)
    detail = " ".join(str(exc).split())[:_MAX_DETAIL]
    return EntrezResponseError(
        f"not well-formed XML, expected {what} (truncated or corrupted response?): {detail}"
    )


def _html_title(xml: bytes) -> str:
    match = _HTML_TITLE.search(xml[:65536])
    if match is None:
        return ""
    title = " ".join(match.group(1).decode("utf-8", "replace").split())[:200]
    return f": {title!r}" if title else ""


def _declares_entities(root: etree._Element) -> bool:
    dtd = root.getroottree().docinfo.internalDTD
    return dtd is not None and any(True for _ in cast("Any", dtd).iterentities())


def _is_error_only(root: etree._Element) -> bool:
    """True when the root holds an `<ERROR>` child and nothing else of substance (children that
    are empty, like `<IdList/>` or `<TranslationSet/>`, do not count)."""
    has_error = False
    for child in root.iterchildren(tag=etree.Element):
        if child.tag == "ERROR":
            has_error = True
        elif len(child) or (child.text is not None and child.text.strip()):
            return False
    return has_error


def _first_error_text(root: etree._Element) -> str | None:
    """The first non-blank `<ERROR>` text anywhere in the document (eSpell sends empty ones)."""
    for error in root.iter("ERROR"):
        if text := _text(error):
            return text
    return None


def _text(node: etree._Element) -> str | None:
    text = " ".join("".join(cast("Iterable[str]", node.itertext())).split())
    return text or None
