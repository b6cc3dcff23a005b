"""Tools the deployment-description tests check with: the Compose Specification's schema (from
the `compose-go` Go module), Compose's variable interpolation, `helm` (built by `scripts/helm.sh`)
and `haproxy`. Each is skipped when missing, or failed under CI."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, NoReturn

import pytest

from tests.conftest import REPO_ROOT

__all__ = [
    "COMPOSE_GO",
    "compose_schema",
    "go_module_dir",
    "haproxy_binary",
    "helm",
    "helm_binary",
    "interpolate",
]

#: The Go module whose `schema/compose-spec.json` Docker Compose validates files against.
COMPOSE_GO = "github.com/compose-spec/compose-go/v2@v2.16.2"


def _missing(what: str, hint: str) -> NoReturn:
    if os.environ.get("CI"):
        pytest.fail(f"{what} but CI is set: {hint}")
    pytest.skip(f"{what}: {hint}")


def _go() -> str | None:
    found = shutil.which("go")
    if found is None and Path("/usr/local/go/bin/go").is_file():
        found = "/usr/local/go/bin/go"
    return found


@cache
def go_module_dir(module: str) -> Path:
    """The folder of `module@version` in Go's module cache, downloaded on first use."""
    go = _go()
    if go is None:
        _missing("no go toolchain", "install Go to download the Compose schema")
    done = subprocess.run(  # noqa: S603 (the Go toolchain, a fixed module)
        [go, "mod", "download", "-json", module],
        capture_output=True, text=True, timeout=600, check=False, cwd=REPO_ROOT,
    )  # fmt: skip
    if done.returncode != 0:
        _missing(f"`go mod download {module}` failed", done.stdout[-500:] + done.stderr[-500:])
    return Path(json.loads(done.stdout)["Dir"])


def compose_schema() -> dict[str, Any]:
    """The Compose Specification's JSON Schema, as the pinned compose-go release holds it."""
    path = go_module_dir(COMPOSE_GO) / "schema" / "compose-spec.json"
    return dict(json.loads(path.read_text(encoding="utf-8")))


_VARIABLE = re.compile(r"\$\$|\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?P<op>:?[-?+])?(?P<arg>[^}]*)\}")


def interpolate(value: Any, env: Mapping[str, str]) -> Any:
    """`value` (a loaded Compose file or part of it) with `${VAR}`, `${VAR:-default}`,
    `${VAR-default}`, `${VAR:?error}`, `${VAR?error}`, `${VAR:+other}` and `$$` replaced as
    Compose does.

    Raises:
        KeyError: a required variable (`?`) is unset (or empty, with `:?`); its message.
    """
    if isinstance(value, dict):
        return {key: interpolate(item, env) for key, item in value.items()}
    if isinstance(value, list):
        return [interpolate(item, env) for item in value]
    if not isinstance(value, str):
        return value

    def one(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name, op, arg = match.group("name"), match.group("op") or "", match.group("arg")
        current = env.get(name)
        unset = current is None or (op.startswith(":") and current == "")
        if op.endswith("-"):
            return arg if unset else str(current)
        if op.endswith("?"):
            if unset:
                raise KeyError(f"{name}: {arg}")
            return str(current)
        if op.endswith("+"):
            return "" if unset else arg
        return current or ""

    return _VARIABLE.sub(one, value)


@cache
def helm_binary() -> Path:
    """`helm`, built once by `scripts/helm.sh` into ~/.cache/bio-mcp."""
    done = subprocess.run(  # noqa: S603 (the project's own script)
        [str(REPO_ROOT / "scripts" / "helm.sh"), "--path"],
        capture_output=True, text=True, timeout=1800, check=False,
    )  # fmt: skip
    path = Path(done.stdout.strip())
    if done.returncode != 0 or not path.is_file():
        _missing("no helm", f"scripts/helm.sh --path failed: {done.stderr[-800:]}")
    return path


def helm(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """`helm ARGS` (output captured, never raising on its exit status)."""
    return subprocess.run(  # noqa: S603 (the pinned helm, arguments of the tests)
        [str(helm_binary()), *map(str, args)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def haproxy_binary() -> str:
    """Debian's `haproxy` (apt-get install haproxy)."""
    found = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/usr/local/sbin")
    if found is None:
        _missing("no haproxy", "apt-get install -y haproxy")
    return found
