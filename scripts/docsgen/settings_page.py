"""The settings page, from the pydantic `Settings` class: every field, its variable and default.

A field's description is the `#:` comment above it in `settings.py`. A field without one takes
its words from `NOTES` below; the build fails when a field has neither, or a note names no field.
"""

from __future__ import annotations

import ast
import inspect
import re
from typing import Any, Literal, get_args, get_origin

from pydantic import SecretStr
from pydantic.fields import FieldInfo

from biomcp.entrypoints.settings import Settings, old_names
from docsgen.markdown import code, table

__all__ = ["NOTES", "SettingsDocError", "field_comments", "settings_page"]

#: Words for the fields whose source carries no `#:` comment.
NOTES: dict[str, str] = {
    "mcp_transport_type": (
        "The transport `biomcp serve` speaks; `biomcp serve-http` always speaks HTTP."
    ),
    "mcp_http_host": (
        "The address `biomcp serve-http` listens on. Off loopback, every request needs a token."
    ),
    "mcp_http_port": "The port `biomcp serve-http` listens on (0: any free port).",
    "mcp_allowed_origins": (
        "Comma-separated browser origins allowed to call `/mcp` besides the server's own."
    ),
    "mcp_auth_secret_key": "The HS256 shared secret for bearer tokens (at least 32 characters).",
    "mcp_auth_jwks_url": (
        "OAuth mode: the JWKS address. Unset, it is the one the issuer's metadata names."
    ),
    "mcp_log_level": "The least severe log line written to stderr.",
    "ncbi_api_key": "Your NCBI API key. With it the client makes 10 requests a second, else 3.",
    "ncbi_tool_identifier": "The `tool` name NCBI sees on every request (default: bio-mcp).",
    "ncbi_admin_email": "The contact address NCBI sees on every request. NCBI asks for one.",
    "ncbi_request_delay_ms": "An extra pause before each NCBI request, in milliseconds.",
    "ncbi_max_retries": "How many times a failed NCBI request is tried again.",
    "biomcp_data_dir": "The folder that holds the SQLite file, the embedded index and the caches.",
    "biomcp_database_url": (
        "A SQLAlchemy URL for the metadata database. Unset: SQLite in the data folder."
    ),
    "biomcp_vector_backend": "Where chunks are indexed: the embedded store, or Weaviate.",
    "weaviate_grpc_port": "The gRPC port of Weaviate nodes whose URL names none.",
    "weaviate_api_key": "The API key Weaviate asks for, if any.",
    "biomcp_hf_model": "The sentence-transformers model of the `hf` embedder.",
    "biomcp_hf_quantize": "Whether the `hf` embedder runs its model in int8.",
    "biomcp_hf_device": "The PyTorch device of the `hf` embedder.",
    "openai_api_key": "The OpenAI key, needed by the `openai` embedder.",
    "openai_base_url": "Another OpenAI-compatible embeddings server.",
    "biomcp_openai_model": "The OpenAI embedding model.",
    "biomcp_openai_dimensions": "Fewer dimensions to ask the OpenAI model for.",
    "biomcp_embedding_cache": (
        "Keep each text's embedding, so a rebuild or a replay embeds nothing again."
    ),
    "biomcp_sync_batch_size": "Records fetched and stored per batch in a sync.",
    "biomcp_sync_lock_timeout_s": (
        "How long a sync waits for another sync of the same key to finish."
    ),
    "biomcp_search_fusion": (
        "How the keyword and vector arms are fused: by relative score or by rank."
    ),
    "biomcp_search_oversample": (
        "Each arm returns this many times `top_k` candidates before fusion."
    ),
    "weaviate_write_consistency": "How many copies must acknowledge a write.",
    "biomcp_project_find_timeout_s": "Spec 02's time limit of `find_chunks`, in seconds.",
    "biomcp_project_hybrid_timeout_s": "Spec 02's time limit of `query_hybrid`, in seconds.",
    "biomcp_project_inspect_timeout_s": "Spec 02's time limit of `inspect_collection`, in seconds.",
    "biomcp_project_list_timeout_s": "Spec 02's time limit of `list_projects`, in seconds.",
}


class SettingsDocError(RuntimeError):
    """A field without words, or a note about no field: the page would mislead."""


def field_comments() -> dict[str, str]:
    """Each field's `#:` comment block in the source of `Settings`, joined into one text."""
    source = inspect.getsource(Settings)
    lines = source.splitlines()
    found: dict[str, str] = {}
    for node in ast.parse(source).body[0].body:  # type: ignore[attr-defined]
        if not isinstance(node, ast.AnnAssign) or not isinstance(node.target, ast.Name):
            continue
        block: list[str] = []
        row = node.lineno - 2
        while row >= 0 and lines[row].strip().startswith("#:"):
            block.insert(0, lines[row].strip()[2:].strip())
            row -= 1
        if block:
            found[node.target.id] = " ".join(block)
    return found


def _sections() -> dict[str, str]:
    """Each field's section, from the `# --- name ---` comments of the source."""
    section, found = "General", {}
    for line in inspect.getsource(Settings).splitlines():
        heading = re.match(r"\s*# --- (.+?) -+\s*$", line)
        if heading:
            section = heading.group(1)
        field = re.match(r"\s{4}(\w+):", line)
        if field and field.group(1) in Settings.model_fields:
            found[field.group(1)] = section
    return found


def _default(name: str, field: FieldInfo) -> str:
    if field.default_factory is not None:
        return "the user data folder" if name == "biomcp_data_dir" else "computed"
    value = field.default
    if value is None:
        return "unset"
    if isinstance(value, SecretStr):
        return "set"
    if value == "":
        return "empty"
    if isinstance(value, bool):
        return code(str(value).lower())
    return code(value)


def _accepts(field: FieldInfo) -> str:
    annotation: Any = field.annotation
    args = [a for a in get_args(annotation) if a is not type(None)]
    if get_origin(annotation) is Literal:
        return " | ".join(code(v) for v in get_args(annotation))
    if args and get_origin(args[0]) is Literal:
        return " | ".join(code(v) for v in get_args(args[0]))
    kind = args[0] if args else annotation
    words = {bool: "true / false", int: "integer", float: "number", str: "text"}
    accepted = words.get(kind, getattr(kind, "__name__", str(kind)))
    if kind is SecretStr:
        accepted = "secret text"
    bounds = []
    for rule in field.metadata:
        for attribute, sign in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
            if getattr(rule, attribute, None) is not None:
                bounds.append(f"{sign} {getattr(rule, attribute)}")
    return accepted + (f" ({', '.join(bounds)})" if bounds else "")


def settings_page() -> str:
    """The whole page. Raises `SettingsDocError` when a field has no words or a note is stale."""
    comments = field_comments()
    fields = Settings.model_fields
    stale = sorted(set(NOTES) - set(fields))
    bare = sorted(n for n in fields if n not in comments and n not in NOTES)
    if stale or bare:
        raise SettingsDocError(
            f"settings page: notes for no field {stale}; fields without words {bare}"
        )
    renamed = {field: old for old, field in old_names().items()}
    by_section: dict[str, list[tuple[str, ...]]] = {}
    sections = _sections()
    for name, field in fields.items():
        variable = code(name.upper())
        if name in renamed:
            variable += f" (old name {code(renamed[name].upper())})"
        words = comments.get(name) or NOTES[name]
        row = (variable, _default(name, field), _accepts(field), words)
        by_section.setdefault(sections.get(name, "General"), []).append(row)
    lines = [
        "# Settings\n",
        f"bio-mcp reads {len(fields)} settings from environment variables or a `.env` file.",
        "This page is generated from the `Settings` class at build time, so it lists every one.",
        "A bad value stops start-up with the variable's name and what it accepts.",
        "A variable that looks meant for bio-mcp but is no setting is named on stderr.\n",
    ]
    for section, rows in by_section.items():
        lines.append(f"## {section[0].upper() + section[1:]}\n")
        lines.append(table(["variable", "default", "accepts", "meaning"], rows))
    return "\n".join(lines)
