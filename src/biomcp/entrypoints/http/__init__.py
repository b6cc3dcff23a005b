"""The Streamable HTTP surface: `app` (the Starlette app), `gate` (Host, Origin, CORS, bind
rules), `auth` (bearer tokens), `probes` (`/health`, `/readyz`, `/`) and `run` (uvicorn)."""
