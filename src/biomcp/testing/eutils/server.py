"""Run the fake E-utilities on a real port, in a background thread.

    with FakeEutilsServer(FakeCorpus.from_paths(["records/"])) as server:
        client = HttpEntrezClient(EntrezSettings(base_url=server.base_url))
        server.faults.sequence(["429", "503"], endpoint="efetch")
        ...
        assert server.log[-1]["status"] == 200

`async with` works the same way (start and stop run off the event loop).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from os import PathLike
from typing import Any, Self

from biomcp.testing.eutils.app import create_app
from biomcp.testing.eutils.corpus import FakeCorpus
from biomcp.testing.eutils.faults import FaultInjector
from biomcp.testing.eutils.pmc import load_pmc_directory, pmc_store
from biomcp.testing.eutils.state import ServerState
from biomcp.testing.serving import BackgroundServer, ServerLifecycle

__all__ = ["FakeEutilsServer", "is_loopback"]

_START_TIMEOUT = 15.0


def is_loopback(host: str) -> bool:
    """True for `localhost` and loopback addresses (127.0.0.0/8, ::1)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class FakeEutilsServer(ServerLifecycle):
    """The fake E-utilities served by uvicorn on `host`:`port` (0: a free port, bound here so
    the port is known before serving starts). With `api_keys`, a request carrying another
    `api_key` gets NCBI's HTTP 400 "API key invalid" (requests without a key are served).
    With `pmc_dir` (or `BIOMCP_FAKE_PMC_DIR`), its JATS files are served by PMC id and get
    PubMed records (`pmc.load_pmc_directory`).

    Attributes:
        corpus: the records served (adding to it is seen by the next request).
        state: the server's state (history, link table, fault plan, log).
        faults: the fault API: `.sequence([...], endpoint=None)`, `.random(probability,
            kinds, seed)`, `.clear()`.
    """

    def __init__(
        self,
        corpus: FakeCorpus,
        *,
        relations: Mapping[str, Any] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        faults: FaultInjector | None = None,
        log_level: str = "critical",
        warm: bool = False,
        api_keys: Iterable[str] | None = None,
        pmc_dir: str | PathLike[str] | None = None,
    ) -> None:
        self.corpus = corpus
        self.state = ServerState(corpus, relations=relations, faults=faults, api_keys=api_keys)
        pmc_store(self.state)  # now: the PMC files named in the environment are searchable
        if pmc_dir is not None:
            load_pmc_directory(self.state, pmc_dir)
        self.app = create_app(corpus, state=self.state)
        self.host = host
        self._serving = BackgroundServer(
            self.app, host=host, port=port, name="fake-eutils", log_level=log_level
        )
        self._warm = warm

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> Self:
        """Bind, start serving in a background thread, and return once connections are
        accepted.

        Raises:
            RuntimeError: when the server is already running or did not come up in time.
            OSError: when the address cannot be bound.
        """
        if self._serving.running:
            raise RuntimeError("the fake E-utilities server is already running")
        if self._warm:
            self.state.index()
        self._serving.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the thread and the socket (idempotent)."""
        self._serving.stop()
        self.state.close()

    # -- access ------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound port (the requested one until started)."""
        return self._serving.port

    @property
    def base_url(self) -> str:
        """`http://host:port`, the value for `NCBI_EUTILS_BASE_URL` (the `/entrez/eutils`
        prefix works too)."""
        host = f"[{self.host.strip('[]')}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def faults(self) -> FaultInjector:
        return self.state.faults

    @property
    def log(self) -> list[dict[str, Any]]:
        """The E-utility requests served so far (a copy), oldest first."""
        return self.state.log

    def clear_log(self) -> None:
        self.state.clear_log()

    def withhold(self, pmids: Iterable[str]) -> None:
        """EFetch leaves `pmids` out of its answers from now on, ESearch still finds them
        (replacing any earlier set; empty: none)."""
        self.state.withhold(pmids)
