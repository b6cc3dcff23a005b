"""deploy/compose: the Compose Specification's schema accepts the file, and what the schema
cannot see holds: bio-mcp's variables are settings, the Weaviate nodes form one cluster, start-up
is ordered, no secret is written down, and HAProxy accepts its configuration."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from pydantic import SecretStr
from typer.testing import CliRunner

from biomcp.entrypoints.cli.main import app as cli_app
from biomcp.entrypoints.http.gate import bind_refusal
from biomcp.entrypoints.settings import Settings, old_names, unknown_variables
from biomcp.testing.weaviate_cluster import FLUSH_DIRTY_AFTER_S, FLUSH_SETTING
from tests.conftest import REPO_ROOT
from tests.support.deploy_tools import (
    compose_schema,
    go_module_dir,
    haproxy_binary,
    interpolate,
)

pytestmark = pytest.mark.integration

FOLDER = REPO_ROOT / "deploy" / "compose"
#: The variables a user sets before `docker compose up` (the required ones and some optional).
USER_ENV = {
    "POSTGRES_PASSWORD": "pg-password-for-tests",
    "WEAVIATE_API_KEY": "weaviate-key-for-tests",
    "MCP_AUTH_SECRET_KEY": "k" * 40,
    "NCBI_API_KEY": "",
}
REQUIRED = ("POSTGRES_PASSWORD", "WEAVIATE_API_KEY", "MCP_AUTH_SECRET_KEY")
_DURATION = re.compile(r"^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$")


def _raw() -> dict[str, Any]:
    return dict(yaml.safe_load((FOLDER / "compose.yaml").read_text(encoding="utf-8")))


def _compose(env: dict[str, str] | None = None) -> dict[str, Any]:
    return dict(interpolate(_raw(), USER_ENV if env is None else env))


def _validator() -> jsonschema.protocols.Validator:
    schema = compose_schema()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def _env(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment", {})
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {str(k): "" if v is None else str(v) for k, v in env.items()}


def _biomcp_services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        name: service
        for name, service in compose["services"].items()
        if "bio-mcp" in str(service.get("image", ""))
    }


def _replicas(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        name: service
        for name, service in _biomcp_services(compose).items()
        if service.get("command") == ["serve-http"]
    }


def _weaviate_nodes(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        name: service
        for name, service in compose["services"].items()
        if "semitechnologies/weaviate" in str(service.get("image", ""))
    }


def test_the_compose_file_validates_against_the_compose_specification() -> None:
    validator = _validator()
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(_compose())]
    assert errors == []


def test_the_schema_check_catches_a_misspelt_key_and_a_misspelt_condition() -> None:
    validator = _validator()
    broken = _compose()
    broken["services"]["db-upgrade"]["depends_on"]["postgres"]["condition"] = "service_healty"
    broken["services"]["balancer"]["depends_on_"] = ["biomcp-1"]
    paths = {tuple(e.absolute_path) for e in validator.iter_errors(broken)}
    assert any(path[:3] == ("services", "db-upgrade", "depends_on") for path in paths)
    assert ("services", "balancer") in paths


def test_every_healthcheck_duration_is_one_compose_reads() -> None:
    # The schema leaves durations to Compose, which reads them as Go's time.ParseDuration.
    checks = {
        name: s["healthcheck"] for name, s in _compose()["services"].items() if "healthcheck" in s
    }
    durations = {
        f"{name}.{key}": value
        for name, check in checks.items()
        for key, value in check.items()
        if key in ("interval", "timeout", "start_period", "start_interval")
    }
    assert len(durations) >= 2 * len(checks)
    assert {k: v for k, v in durations.items() if not _DURATION.match(str(v))} == {}


@pytest.mark.parametrize("name", REQUIRED)
def test_compose_refuses_to_start_without_each_required_secret(name: str) -> None:
    env = {key: value for key, value in USER_ENV.items() if key != name}
    with pytest.raises(KeyError, match=name):
        _compose(env)
    with pytest.raises(KeyError, match=name):
        _compose({**env, name: ""})


def test_no_secret_is_written_in_the_compose_file() -> None:
    secret_names = {
        name.upper()
        for name, field in Settings.model_fields.items()
        if field.annotation is not None and SecretStr in getattr(field.annotation, "__args__", ())
    }
    secret_names |= {"POSTGRES_PASSWORD", "AUTHENTICATION_APIKEY_ALLOWED_KEYS"}
    placeholder = re.compile(r"^\$\{[A-Z_]+(:\?[^}]*|:-)\}$")
    found = {}
    for name, service in _raw()["services"].items():
        for key, value in _env(service).items():
            if key in secret_names:
                found[f"{name}.{key}"] = value
            if key == "BIOMCP_DATABASE_URL":
                password = value.split("://", 1)[1].split("@", 1)[0].split(":", 1)[1]
                found[f"{name}.{key} password"] = password
    assert "biomcp-1.MCP_AUTH_SECRET_KEY" in found
    assert {where: v for where, v in found.items() if not placeholder.match(v)} == {}


def test_every_bio_mcp_variable_is_a_setting_and_the_replicas_load() -> None:
    compose = _compose()
    known = {name.upper() for name in [*Settings.model_fields, *old_names()]}
    services = _biomcp_services(compose)
    assert set(services) == {"db-upgrade", "biomcp-1", "biomcp-2"}
    for name, service in services.items():
        env = _env(service)
        assert sorted(set(env) - known) == [], name
        assert unknown_variables(env) == [], name


def test_the_replicas_run_stateless_over_the_whole_weaviate_cluster(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    compose = _compose()
    nodes = _weaviate_nodes(compose)
    replicas = _replicas(compose)
    assert sorted(replicas) == ["biomcp-1", "biomcp-2"]
    for field in Settings.model_fields:
        monkeypatch.delenv(field.upper(), raising=False)
    for service in replicas.values():
        for key, value in _env(service).items():
            monkeypatch.setenv(key, value)
        settings = Settings(_env_file=None)
        assert settings.mcp_http_stateless is True
        assert settings.biomcp_vector_backend == "weaviate"
        assert settings.weaviate_replication_factor == len(nodes) == 3
        assert settings.weaviate_read_consistency == "QUORUM"
        assert settings.weaviate_write_consistency == "QUORUM"
        assert settings.weaviate_url.split(",") == [f"http://{n}:8080" for n in sorted(nodes)]
        assert settings.biomcp_database_url is not None
        assert "@postgres:5432/" in settings.biomcp_database_url
        assert settings.auth_mode == "hs256"
        assert bind_refusal(settings, insecure=False) is None  # it serves on 0.0.0.0


def test_the_three_weaviate_nodes_name_each_other_consistently() -> None:
    compose = _compose()
    nodes = {name: _env(service) for name, service in _weaviate_nodes(compose).items()}
    assert sorted(nodes) == ["weaviate-1", "weaviate-2", "weaviate-3"]
    raft_ports = {name: env.get("RAFT_PORT", "8300") for name, env in nodes.items()}
    gossip = {name: env.get("CLUSTER_GOSSIP_BIND_PORT", "7946") for name, env in nodes.items()}
    voters = {f"{name}:{port}" for name, port in raft_ports.items()}
    for name, env in nodes.items():
        service = compose["services"][name]
        assert env["CLUSTER_HOSTNAME"] == service["hostname"] == name
        assert set(env["RAFT_JOIN"].split(",")) == voters
        assert int(env["RAFT_BOOTSTRAP_EXPECT"]) == len(nodes)
        peers = {f"{other}:{gossip[other]}" for other in nodes if other != name}
        assert set(env["CLUSTER_JOIN"].split(",")) == peers
        assert "backup-filesystem" in env["ENABLE_MODULES"].split(",")
        assert int(env["REPLICATION_MINIMUM_FACTOR"]) == len(nodes)
        assert env["ASYNC_REPLICATION_DISABLED"] == "false"


def test_the_weaviate_nodes_keep_their_own_data_and_share_the_backup_folder() -> None:
    compose = _compose()
    declared = set(compose["volumes"])
    data, backups = {}, {}
    for name, service in _weaviate_nodes(compose).items():
        env = _env(service)
        mounts = dict(reversed(volume.split(":")[:2]) for volume in service["volumes"])
        data[name] = mounts[env["PERSISTENCE_DATA_PATH"]]
        backups[name] = mounts[env["BACKUP_FILESYSTEM_PATH"]]
    assert len(set(data.values())) == 3
    assert len(set(backups.values())) == 1
    assert set(data.values()) | set(backups.values()) <= declared


def test_the_replicas_and_weaviate_share_one_api_key() -> None:
    compose = _compose()
    keys = {
        _env(s)["AUTHENTICATION_APIKEY_ALLOWED_KEYS"] for s in _weaviate_nodes(compose).values()
    }
    assert keys == {USER_ENV["WEAVIATE_API_KEY"]}
    for service in _replicas(compose).values():
        assert _env(service)["WEAVIATE_API_KEY"] == USER_ENV["WEAVIATE_API_KEY"]
        assert USER_ENV["POSTGRES_PASSWORD"] in _env(service)["BIOMCP_DATABASE_URL"]


def test_every_weaviate_variable_is_one_weaviate_reads() -> None:
    compose = _compose()
    images = {service["image"] for service in _weaviate_nodes(compose).values()}
    assert len(images) == 1
    version = "v" + images.pop().rsplit(":", 1)[1]
    source = go_module_dir(f"github.com/weaviate/weaviate@{version}")
    read = (source / "usecases" / "config" / "environment.go").read_text(encoding="utf-8")
    read += (source / "modules" / "backup-filesystem" / "module.go").read_text(encoding="utf-8")
    for service in _weaviate_nodes(compose).values():
        unread = [name for name in _env(service) if f'"{name}"' not in read]
        assert unread == []


def test_start_up_waits_for_healthy_stores_and_the_migration() -> None:
    services = _compose()["services"]
    for name in ("postgres", *_weaviate_nodes({"services": services}), "biomcp-1", "biomcp-2"):
        assert "healthcheck" in services[name], name
    assert services["db-upgrade"]["command"] == ["db", "upgrade"]
    assert services["db-upgrade"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    for name in ("biomcp-1", "biomcp-2"):
        needs = {k: v["condition"] for k, v in services[name]["depends_on"].items()}
        assert needs == {
            "db-upgrade": "service_completed_successfully",
            "weaviate-1": "service_healthy",
            "weaviate-2": "service_healthy",
            "weaviate-3": "service_healthy",
        }
        assert any("/readyz" in part for part in services[name]["healthcheck"]["test"])
    balancer = {k: v["condition"] for k, v in services["balancer"]["depends_on"].items()}
    assert balancer == {"biomcp-1": "service_healthy", "biomcp-2": "service_healthy"}


def test_each_replica_has_its_own_data_volume() -> None:
    compose = _compose()
    mounts = [service["volumes"] for service in _replicas(compose).values()]
    sources = [volume.split(":")[0] for volumes in mounts for volume in volumes]
    assert all(volume.split(":")[1] == "/data" for volumes in mounts for volume in volumes)
    assert len(sources) == len(set(sources)) == 2
    assert set(sources) <= set(compose["volumes"])


@pytest.mark.parametrize("command", [["db", "upgrade"], ["serve-http"]])
def test_the_commands_the_compose_file_runs_exist(command: list[str]) -> None:
    result = CliRunner().invoke(cli_app, [*command, "--help"])
    assert result.exit_code == 0, result.output


def test_haproxy_balances_round_robin_over_both_replicas_checked_on_readyz() -> None:
    compose = _compose()
    config = (FOLDER / "haproxy.cfg").read_text(encoding="utf-8")
    servers = re.findall(r"^\s*server\s+(\S+)\s+(\S+)", config, flags=re.MULTILINE)
    ports = {name: _env(service)["MCP_HTTP_PORT"] for name, service in _replicas(compose).items()}
    assert sorted(servers) == sorted((name, f"{name}:{port}") for name, port in ports.items())
    assert re.search(r"^\s*balance\s+roundrobin\s*$", config, flags=re.MULTILINE)
    assert re.search(r"^\s*http-check send meth GET uri /readyz\b", config, flags=re.MULTILINE)
    mounted = [v for v in compose["services"]["balancer"]["volumes"] if "haproxy.cfg" in v]
    assert mounted == ["./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro"]


def test_haproxy_accepts_the_balancer_config(tmp_path: Path) -> None:
    done = subprocess.run(  # noqa: S603 (Debian's haproxy, checking a file)
        [haproxy_binary(), "-c", "-f", str(FOLDER / "haproxy.cfg")],
        capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    # The replicas' names resolve only inside the compose network.
    warnings = [line for line in output.splitlines() if "[WARNING]" in line]
    assert all("could not resolve address" in line for line in warnings), warnings


def test_every_weaviate_the_project_starts_flushes_writes_as_soon() -> None:
    """The compose nodes, `scripts/services.sh` and the test clusters flush unflushed writes
    after the same seconds: keyword search over unflushed writes is slow."""
    flush = {_env(s).get(FLUSH_SETTING) for s in _weaviate_nodes(_compose()).values()}
    assert flush == {str(FLUSH_DIRTY_AFTER_S)}
    services = (REPO_ROOT / "scripts" / "services.sh").read_text(encoding="utf-8")
    assert f"{FLUSH_SETTING}={FLUSH_DIRTY_AFTER_S} " in services
