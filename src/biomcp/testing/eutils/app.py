"""The fake E-utilities as a Starlette app.

`/esearch.fcgi`, `/efetch.fcgi`, `/esummary.fcgi`, `/elink.fcgi` and `/einfo.fcgi` answer GET
and POST (form-encoded body, same parameters), both at the root and under `/entrez/eutils/`, so
either `http://HOST:PORT` or `http://HOST:PORT/entrez/eutils` works as the base URL.
`/ecitmatch.cgi` (both places too) and the PMC ID converter at `/tools/idconv/api/v1/articles/`
answer from the same corpus (`citmatch`, `idconv`). The settings derive the converter's URL from
`NCBI_EUTILS_BASE_URL`, so pointing that one setting at the fake serves every lookup here.

Admin endpoints (not logged, never faulted):

* `GET /_fake/status`: record count and settings;
* `POST /_fake/faults`: `{"sequence": [{"kind": "429", "retry_after": 1}, "503"],
  "endpoint": "efetch"}` and/or `{"probability": 0.2, "kinds": ["429", "503"], "seed": 1}`;
  `GET /_fake/faults` shows the plan, `DELETE /_fake/faults` clears it;
* `POST /_fake/retract`: `{"pmid": "30000001", "notice_pmid": "39000001", "source": "...",
  "revised": "2024-08-01"}` marks an article retracted after the fact (`FakeCorpus.retract`);
* `POST /_fake/pmc/revise`: `{"pmcid": "PMC123"}` serves a synthetic PMC article's next
  version (`pmc.PmcStore.revise`);
* `POST /_fake/withhold`: `{"pmids": ["30000001"]}`: EFetch leaves those PMIDs out of its
  answers (ESearch still finds them) until the next call; `{"pmids": []}` ends it;
* `GET /_fake/log`: every E-utility request as JSON `{t, mono, endpoint, method, params,
  has_api_key, status, fault}` (`t` Unix time, `mono` the system's monotonic clock; the API key
  masked), `DELETE /_fake/log` empties it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from datetime import date
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from biomcp.testing.eutils.citmatch import citmatch_routes
from biomcp.testing.eutils.corpus import FakeCorpus
from biomcp.testing.eutils.faults import ENDPOINTS, FaultInjector
from biomcp.testing.eutils.handlers import Params, Reply, handle
from biomcp.testing.eutils.idconv import idconv_routes
from biomcp.testing.eutils.pmc import pmc_routes
from biomcp.testing.eutils.render import error_xml
from biomcp.testing.eutils.routes import request_route
from biomcp.testing.eutils.state import ServerState

__all__ = ["create_app"]

_PREFIXES = ("", "/entrez/eutils")
_MASKED = "***"
_ROOTS = {
    "esearch": "eSearchResult",
    "efetch": "eFetchResult",
    "esummary": "eSummaryResult",
    "elink": "eLinkResult",
    "einfo": "eInfoResult",
    "espell": "eSpellResult",
}


def create_app(
    corpus: FakeCorpus,
    *,
    relations: Mapping[str, Any] | None = None,
    faults: FaultInjector | None = None,
    state: ServerState | None = None,
) -> Starlette:
    """The fake E-utilities app over `corpus`. Pass `state` to share it with the caller
    (`app.state.fake` holds it either way)."""
    state = state or ServerState(corpus, relations=relations, faults=faults)
    routes = [
        Route(f"{prefix}/{name}.fcgi", _eutility(state, name), methods=["GET", "POST"])
        for prefix in _PREFIXES
        for name in ENDPOINTS
    ]
    routes += idconv_routes(state) + citmatch_routes(state, _PREFIXES) + pmc_routes(state)
    routes += [
        Route("/_fake/status", _status(state), methods=["GET"]),
        Route("/_fake/faults", _faults(state), methods=["GET", "POST", "DELETE"]),
        Route("/_fake/log", _log(state), methods=["GET", "DELETE"]),
        Route("/_fake/retract", _retract(state), methods=["POST"]),
        Route("/_fake/withhold", _withhold(state), methods=["POST"]),
    ]
    app = Starlette(routes=routes)
    app.state.fake = state
    return app


def _eutility(state: ServerState, endpoint: str) -> Callable[[Request], Awaitable[Response]]:
    def answer(state: ServerState, params: Params) -> Reply:
        return handle(state, endpoint, params)

    def error(message: str) -> Reply:
        return Reply(error_xml(_ROOTS[endpoint], message))

    return request_route(state, endpoint, answer, error)


# --------------------------------------------------------------------------- admin


def _status(state: ServerState) -> Callable[[Request], Awaitable[Response]]:
    async def status(request: Request) -> Response:
        return JSONResponse(
            {
                "records": len(state.corpus),
                "problems": len(state.corpus.problems),
                "build": state.build,
                "faults": state.faults.describe(),
            }
        )

    return status


def _faults(state: ServerState) -> Callable[[Request], Awaitable[Response]]:
    async def faults(request: Request) -> Response:
        if request.method == "DELETE":
            state.faults.clear()
        elif request.method == "POST":
            try:
                plan = json.loads(await request.body() or b"{}")
                if not isinstance(plan, dict):
                    raise ValueError("the fault plan must be a JSON object")
                _apply_plan(state.faults, plan)
            except (ValueError, TypeError, KeyError) as exc:
                return JSONResponse({"error": str(exc)}, status_code=400)
        return JSONResponse(state.faults.describe())

    return faults


def _apply_plan(injector: FaultInjector, plan: dict[str, Any]) -> None:
    unknown = set(plan) - {"sequence", "endpoint", "probability", "kinds", "seed"}
    if unknown:
        raise ValueError(f"unknown fault plan key(s): {sorted(unknown)}")
    if "sequence" not in plan and "probability" not in plan:
        raise ValueError("a fault plan needs 'sequence' or 'probability'")
    if "sequence" in plan:
        if not isinstance(plan["sequence"], list):
            raise ValueError("'sequence' must be a list of faults")
        injector.sequence(plan["sequence"], endpoint=plan.get("endpoint"))
    if "probability" in plan:
        kinds = plan.get("kinds", ["429", "503"])
        seed = plan.get("seed")
        injector.random(float(plan["probability"]), kinds, None if seed is None else int(seed))


def _retract(state: ServerState) -> Callable[[Request], Awaitable[Response]]:
    async def retract(request: Request) -> Response:
        try:
            body = json.loads(await request.body() or b"{}")
            if not isinstance(body, dict):
                raise ValueError("the body must be a JSON object")
            unknown = set(body) - {"pmid", "notice_pmid", "source", "revised"}
            if unknown:
                raise ValueError(f"unknown key(s): {sorted(unknown)}")
            if not {"pmid", "notice_pmid"} <= set(body):
                raise ValueError("give 'pmid' and 'notice_pmid'")
            revised = body.get("revised")
            state.corpus.retract(
                str(body["pmid"]),
                str(body["notice_pmid"]),
                source=body.get("source"),
                revised=date.fromisoformat(revised) if revised else None,
            )
        except KeyError as exc:
            return JSONResponse({"error": str(exc.args[0])}, status_code=404)
        except (ValueError, TypeError) as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        return JSONResponse({"pmid": str(body["pmid"]), "retracted": True})

    return retract


def _withhold(state: ServerState) -> Callable[[Request], Awaitable[Response]]:
    async def withhold(request: Request) -> Response:
        try:
            body = json.loads(await request.body() or b"{}")
            if not isinstance(body, dict) or set(body) != {"pmids"}:
                raise ValueError('the body must be {"pmids": [...]}')
            pmids = body["pmids"]
            if not isinstance(pmids, list) or not all(isinstance(p, str | int) for p in pmids):
                raise ValueError("'pmids' must be a list of PMIDs")
        except ValueError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        state.withhold(str(p) for p in pmids)
        return JSONResponse({"withheld": sorted(state.withheld)})

    return withhold


def _log(state: ServerState) -> Callable[[Request], Awaitable[Response]]:
    async def log(request: Request) -> Response:
        if request.method == "DELETE":
            state.clear_log()
            return JSONResponse([])
        return JSONResponse(state.log)

    return log
