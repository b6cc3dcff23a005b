"""The MCP handshake over stdio, answered while the SDK is still loading.

Importing the MCP SDK takes most of a second on a small machine (it builds the pydantic models
of two protocol generations), and a client waits for `initialize` and `tools/list` before it
can do anything. Those answers depend only on this code, the SDK and the settings, so the
server records the answers the SDK gives (`AnswerBook`, a JSON file in the data folder) and,
on a later start with the same code, SDK and settings (`fingerprint`, a digest of their
contents), replays them at once:

* A reader thread owns stdin for the whole session (`StdioPrelude`), from process start. It
  loads the book first, then, until the SDK is serving, answers from it a well-formed
  `initialize` (the protocol version negotiated exactly as the SDK does, from the SDK's own
  version table), then `tools/list` and `prompts/list` without a cursor. Every early answer is
  checked: the `initialize` is passed on to the SDK (so its session is initialized as usual),
  and each list request is passed on under a private id. The SDK's answers to those are
  dropped (`DroppingWriter`) after being compared with the early ones. Every other message, and
  everything once the SDK serves, goes to the SDK, in order.
* The first message the prelude cannot answer ends the early answers (so no answer overtakes an
  earlier request's).
* The SDK's answers to those three methods are recorded, with a checksum, for the next start.
  A book of other code, SDK or settings is ignored and rewritten; so is a damaged one
  (unreadable, oversized, or failing its checksum), with a warning.
* A checked answer that differs from the early one is logged and rewrites the book. For a list,
  the client is told the list changed (`listChanged`, advertised over stdio), so it lists again.

Nothing here imports the SDK before it serves: the server's own modules are what it waits for.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import queue
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, BinaryIO

__all__ = [
    "EARLY_METHODS",
    "AnswerBook",
    "DroppingWriter",
    "StdioPrelude",
    "fingerprint",
    "handshake_versions",
]

_log = logging.getLogger("biomcp.server.prelude")

EARLY_METHODS = ("initialize", "tools/list", "prompts/list")
_EARLY_METHOD_BYTES = tuple(f'"{method}"'.encode() for method in EARLY_METHODS)
#: The capability that announces a list's changes, and the notice a client gets when the list
#: it was replayed differs from the SDK's.
_LIST_CHANGED = {
    "tools/list": ("tools", "notifications/tools/list_changed"),
    "prompts/list": ("prompts", "notifications/prompts/list_changed"),
}
_CHECK_ID = "biomcp-prelude-check-{n}"  # the id of a list request passed on to be checked
BOOK_FORMAT = 2
MAX_BOOK_BYTES = 4 << 20
MAX_LINE_BYTES = 64 << 20  # a longer line is passed on as it is (the SDK refuses it)
_FINGERPRINTED = ("biomcp", "mcp", "mcp_types")


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)  # a top-level package: found, not imported
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def fingerprint(settings_json: str) -> str:
    """What the recorded answers depend on: the settings, and the contents of every source and
    data file of this package and of the SDK (an edit that keeps a file's size and modification
    time still counts).

    Raises:
        OSError: a file of those packages cannot be read.
    """
    digest = hashlib.sha256(settings_json.encode("utf-8"))
    for name in _FINGERPRINTED:
        root = _package_dir(name)
        digest.update(f"\0{name}:{root}".encode())
        if root is None:
            continue
        for path in sorted(_files(root)):
            content = path.read_bytes()
            digest.update(f"\n{path.relative_to(root)}|{len(content)}|".encode())
            digest.update(content)
    return digest.hexdigest()


def _files(root: Path) -> Iterable[Path]:
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for file in files:
            if not file.endswith((".pyc", ".pyo")):
                yield Path(folder, file)


def handshake_versions() -> tuple[tuple[str, ...], str] | None:
    """The SDK's handshake protocol versions and its default, from `mcp_types/version.py`
    loaded on its own (it imports nothing; the `mcp_types` package would build every protocol
    model); None when it cannot be read."""
    root = _package_dir("mcp_types")
    spec = importlib.util.spec_from_file_location(
        "_biomcp_sdk_versions", root / "version.py" if root is not None else ""
    )
    if root is None or spec is None or spec.loader is None:
        return None
    try:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        versions = tuple(str(v) for v in module.HANDSHAKE_PROTOCOL_VERSIONS)
        latest = str(module.LATEST_HANDSHAKE_VERSION)
    except (OSError, SyntaxError, AttributeError, TypeError, ImportError) as exc:
        _log.debug("no early handshake: cannot read the SDK's protocol versions: %s", exc)
        return None
    return versions, latest


def negotiate(requested: str, versions: tuple[str, ...], latest: str) -> str:
    """The SDK's rule: the client's version when the server speaks it, else the latest."""
    return requested if requested in versions else latest


def _checksum(fingerprint: Any, answers: Any) -> str:
    body = json.dumps(
        {"format": BOOK_FORMAT, "fingerprint": fingerprint, "answers": answers},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


class AnswerBook:
    """Answers the SDK gave, per negotiated protocol version and method, for one fingerprint."""

    def __init__(self, path: Path, fingerprint: str) -> None:
        self.path = path
        self.fingerprint = fingerprint
        self._answers: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def load(self) -> AnswerBook:
        """Read the book; one of another fingerprint is left empty, and one that is damaged
        too, with a warning (either is rewritten by the answers the SDK gives)."""
        try:
            if self.path.stat().st_size > MAX_BOOK_BYTES:
                _log.warning("the recorded MCP answers are too large; recording them again")
                return self
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return self
        except (OSError, ValueError) as exc:
            _log.warning("cannot read the recorded MCP answers (%s); recording them again", exc)
            return self
        if not isinstance(data, dict) or data.get("format") != BOOK_FORMAT:
            return self  # another version's book
        answers = data.get("answers")
        if not isinstance(answers, dict) or data.get("checksum") != _checksum(
            data.get("fingerprint"), answers
        ):
            _log.warning(
                "the recorded MCP answers in %s fail their checksum; recording them again",
                self.path,
            )
            return self
        if data.get("fingerprint") == self.fingerprint:
            self._answers = {
                str(version): dict(methods)
                for version, methods in answers.items()
                if isinstance(methods, dict)
            }
        return self

    def answer(self, version: str, method: str) -> dict[str, Any] | None:
        with self._lock:
            found = self._answers.get(version, {}).get(method)
        return found if isinstance(found, dict) else None

    def record(self, version: str, method: str, result: Mapping[str, Any]) -> bool:
        """Keep an answer; True when it was new or different (then `save`)."""
        with self._lock:
            methods = self._answers.setdefault(version, {})
            if methods.get(method) == result:
                return False
            methods[method] = dict(result)
            return True

    def forget(self, version: str, method: str) -> bool:
        """Drop an answer; True when there was one (then `save`)."""
        with self._lock:
            return self._answers.get(version, {}).pop(method, None) is not None

    def save(self) -> None:
        with self._lock:
            body = json.dumps(
                {
                    "format": BOOK_FORMAT,
                    "fingerprint": self.fingerprint,
                    "answers": self._answers,
                    "checksum": _checksum(self.fingerprint, self._answers),
                },
                separators=(",", ":"),
            )
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            temporary.write_text(body, encoding="utf-8")
            temporary.replace(self.path)
        except OSError as exc:
            _log.warning("cannot save the recorded MCP answers: %s", exc)


class StdioPrelude:
    """Reads stdin from process start; answers the handshake early from an `AnswerBook`.

    `open_book` is called first thing in the reader thread (reading the book and digesting the
    installed files overlaps the imports); None, or a book that cannot be opened, means no
    early answers and nothing recorded."""

    def __init__(
        self,
        open_book: Callable[[], AnswerBook] | None,
        versions: tuple[tuple[str, ...], str] | None,
        *,
        stdin: BinaryIO,
        stdout_fd: int = 1,
    ) -> None:
        self.book: AnswerBook | None = None
        self._open_book = open_book
        self._versions = versions
        self._stdin = stdin
        self._stdout_fd = stdout_fd
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._lock = threading.Lock()
        self._live = False  # the SDK serves: everything goes to it
        self._early = False  # set once the book is open
        self.version: str | None = None  # negotiated by the early initialize
        self.capabilities: dict[str, Any] = {}  # those of the early initialize
        #: id of a request the SDK answers to be checked -> (method, the early result)
        self.answered: dict[str, tuple[str, dict[str, Any]]] = {}
        self.asked: dict[Any, str] = {}  # id -> method, for requests the SDK answers
        self.early_answers = 0
        self._heard = threading.Event()
        self._on_first: list[Callable[[], None]] = []
        self._thread = threading.Thread(target=self._read, name="biomcp-stdin", daemon=True)

    def start(self) -> StdioPrelude:
        self._thread.start()
        return self

    def when_heard(self, callback: Callable[[], None]) -> None:
        """Run `callback` once the first line arrives (at once if it has): the warm-up starts
        there, while the SDK is still loading."""
        with self._lock:
            if not self._heard.is_set():
                self._on_first.append(callback)
                return
        callback()

    def go_live(self) -> None:
        """From now on the SDK answers everything (call before it starts writing)."""
        with self._lock:
            self._live = True

    def next_line(self) -> bytes | None:
        """The next line for the SDK (blocking); None at the end of stdin."""
        return self._lines.get()

    def end(self) -> None:
        """End the lines for the SDK now (a shutdown): a waiting `next_line` gets None."""
        self._lines.put(None)

    # -- the reader thread ---------------------------------------------------------------------

    def _read(self) -> None:
        self._open()
        try:
            while True:
                line = self._stdin.readline(MAX_LINE_BYTES)
                if not line:
                    break
                self._first_heard()
                if not self._answered_early(line):
                    self._lines.put(line)
        except (OSError, ValueError) as exc:  # stdin closed under us
            _log.debug("stdin ended: %s", exc)
        finally:
            self._lines.put(None)  # the end of stdin

    def _open(self) -> None:
        if self._open_book is None:
            return
        try:
            book = self._open_book()
        except Exception as exc:  # the shortcut must never stop the server from serving
            _log.warning("no early handshake: cannot open the recorded MCP answers: %s", exc)
            return
        with self._lock:
            self.book = book
            self._early = self._versions is not None

    def _first_heard(self) -> None:
        if self._heard.is_set():
            return
        with self._lock:
            self._heard.set()
            callbacks, self._on_first = self._on_first, []
        for callback in callbacks:
            try:
                callback()
            except Exception:  # a warm-up that cannot start is the first call's to report
                _log.exception("could not start the warm-up")

    def _answered_early(self, line: bytes) -> bool:
        """Answer `line` now if the book can; False passes it on (the initialize both)."""
        with self._lock:
            if self._live or not self._early:
                self._note_request(line)
                return False
            message = _parse(line)
            method = message.get("method") if message else None
            if message is None or "id" not in message or method not in EARLY_METHODS:
                if method != "notifications/initialized":
                    self._early = False
                self._note_request(line, message)
                return False
            result = self._early_result(method, message)
            if result is None:
                self._early = False
                self._note_request(line, message)
                return False
            self._write({"jsonrpc": "2.0", "id": message["id"], "result": result})
            self.early_answers += 1
            if method == "initialize":
                self.answered[_key(message["id"])] = (method, result)
                capabilities = result.get("capabilities")
                self.capabilities = capabilities if isinstance(capabilities, dict) else {}
                return False  # the SDK initializes its session from it too
            check = {**message, "id": _CHECK_ID.format(n=self.early_answers)}
            self.answered[_key(check["id"])] = (method, result)
            self._lines.put(json.dumps(check, separators=(",", ":")).encode() + b"\n")
            return True

    def _early_result(self, method: str, message: dict[str, Any]) -> dict[str, Any] | None:
        book, versions = self.book, self._versions
        params = message.get("params")
        if book is None or versions is None:
            return None
        if method == "initialize":
            if self.version is not None or not isinstance(params, dict):
                return None
            if not _valid_initialize(params):
                return None
            version = negotiate(params["protocolVersion"], *versions)
            result = book.answer(version, method)
            if result is not None:
                self.version = version
            return result
        if self.version is None or (isinstance(params, dict) and params.get("cursor")):
            return None
        if params is not None and not isinstance(params, dict):
            return None
        return book.answer(self.version, method)

    def _note_request(self, line: bytes, message: dict[str, Any] | None = None) -> None:
        """Remember the id of a request whose answer is to be recorded. Once the SDK serves,
        this is on every message's path: a line naming none of the methods is not parsed."""
        if self.book is None:
            return
        if message is None and not any(method in line for method in _EARLY_METHOD_BYTES):
            return
        message = message if message is not None else _parse(line)
        if message and message.get("method") in EARLY_METHODS and "id" in message:
            params = message.get("params")
            if isinstance(params, dict) and params.get("cursor"):
                return
            self.asked[_key(message["id"])] = str(message["method"])

    def _write(self, payload: dict[str, Any]) -> None:
        data = (json.dumps(payload, separators=(",", ":"), ensure_ascii=False) + "\n").encode()
        view = memoryview(data)
        while view:
            written = os.write(self._stdout_fd, view)
            view = view[written:]


def _key(ident: Any) -> str:
    return json.dumps(ident)


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    if "id" in message and not isinstance(message["id"], (int, str)):
        return None
    return message


def _valid_initialize(params: Any) -> bool:
    """What the SDK's `InitializeRequestParams` requires, checked the same way."""
    if not isinstance(params, dict):
        return False
    info = params.get("clientInfo")
    return (
        isinstance(params.get("protocolVersion"), str)
        and isinstance(params.get("capabilities"), dict)
        and isinstance(info, dict)
        and isinstance(info.get("name"), str)
        and isinstance(info.get("version"), str)
    )


class DroppingWriter:
    """The SDK's write stream, minus its answers to the requests passed on to check the early
    answers; the answers it gives to the early methods are recorded in the book."""

    def __init__(self, stream: Any, prelude: StdioPrelude) -> None:
        self._stream = stream
        self._prelude = prelude

    async def send(self, item: Any) -> None:
        message = getattr(item, "message", None)  # a JSON-RPC request, notification or answer
        ident = getattr(message, "id", None)
        if ident is not None:
            key = _key(ident)
            result = getattr(message, "result", None)
            early = self._prelude.answered.pop(key, None)
            if early is not None:
                await self._check(*early, result)
                return
            method = self._prelude.asked.pop(key, None)
            if method is not None and isinstance(result, dict):
                self._record(method, result)
        await self._stream.send(item)

    async def _check(self, method: str, early: dict[str, Any], result: Any) -> None:
        """The SDK's answer to a request the prelude answered: dropped, after comparing. A
        list that differs is rewritten in the book, and the client told to list again."""
        if result == early:
            return
        if method == "initialize":
            if result is None:
                _log.error("the SDK refused the initialize the prelude had answered")
            else:
                _log.error("the recorded initialize answer was stale; it is rewritten")
                self._record("initialize", result)
            return
        if isinstance(result, dict):
            _log.warning("the recorded %s answer was stale; it is rewritten", method)
            self._record(method, result)
        else:
            _log.warning("the SDK refused the %s the prelude had answered", method)
            book, version = self._prelude.book, self._prelude.version
            if book is not None and version is not None and book.forget(version, method):
                book.save()
        await self._announce(method)

    async def _announce(self, method: str) -> None:
        section, notice = _LIST_CHANGED[method]
        capability = self._prelude.capabilities.get(section)
        if not isinstance(capability, dict) or capability.get("listChanged") is not True:
            _log.warning(
                "the client keeps the stale %s: the server does not announce changes", method
            )
            return
        from mcp.shared.message import SessionMessage  # the SDK serves: it is loaded
        from mcp_types import JSONRPCNotification

        await self._stream.send(SessionMessage(JSONRPCNotification(jsonrpc="2.0", method=notice)))

    def _record(self, method: str, result: dict[str, Any]) -> None:
        book = self._prelude.book
        version = result.get("protocolVersion") if method == "initialize" else None
        version = version if isinstance(version, str) else self._prelude.version
        if book is None or version is None:
            return
        if method == "initialize":
            self._prelude.version = version
        if book.record(version, method, result):
            book.save()

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> DroppingWriter:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
