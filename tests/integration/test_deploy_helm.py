"""deploy/helm/bio-mcp: `helm lint` and `helm template` accept the chart with its default values
and with ingress and autoscaling on, and the rendered manifests run what matters: the replica
count, the probes, the environment from the values (every name a setting), non-root."""

from __future__ import annotations

import base64
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from biomcp.entrypoints.http.gate import bind_refusal
from biomcp.entrypoints.settings import Settings, unknown_variables
from tests.conftest import REPO_ROOT
from tests.support.deploy_tools import helm

pytestmark = pytest.mark.integration

CHART = REPO_ROOT / "deploy" / "helm" / "bio-mcp"
#: Read by the PostgreSQL driver and by Python, not bio-mcp settings.
NOT_SETTINGS = {"PGPASSWORD", "PYTHONDONTWRITEBYTECODE"}
SCALED = {
    "ingress": {
        "enabled": True,
        "className": "nginx",
        "hosts": [{"host": "mcp.example.org", "paths": [{"path": "/", "pathType": "Prefix"}]}],
        "tls": [{"secretName": "mcp-tls", "hosts": ["mcp.example.org"]}],
    },
    "autoscaling": {"enabled": True, "minReplicas": 3, "maxReplicas": 8},
}

Manifests = dict[tuple[str, str], dict[str, Any]]


def _values_file(tmp_path: Path, values: dict[str, Any]) -> Path:
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump(values), encoding="utf-8")
    return path


def _render(*args: str | Path) -> Manifests:
    done = helm("template", "bio-mcp", CHART, "--namespace", "mcp", *args)
    assert done.returncode == 0, done.stderr
    documents = [d for d in yaml.safe_load_all(done.stdout) if d]
    return {(d["kind"], d["metadata"]["name"]): d for d in documents}


def _pod(manifests: Manifests) -> dict[str, Any]:
    return dict(manifests["Deployment", "bio-mcp"]["spec"]["template"]["spec"])


def _environment(manifests: Manifests) -> dict[str, str]:
    """What the pod's environment holds: the ConfigMap, then the Secret (which wins)."""
    env: dict[str, str] = {}
    for source in _pod(manifests)["containers"][0]["envFrom"]:
        if "configMapRef" in source:
            env.update(manifests["ConfigMap", source["configMapRef"]["name"]]["data"])
        else:
            secret = manifests["Secret", source["secretRef"]["name"]]
            env.update({k: base64.b64decode(v).decode() for k, v in secret["data"].items()})
    return env


def _settings(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Settings:
    for field in Settings.model_fields:
        monkeypatch.delenv(field.upper(), raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return Settings(_env_file=None)


def test_helm_lint_accepts_the_chart_with_its_default_values() -> None:
    done = helm("lint", "--strict", CHART)
    assert done.returncode == 0, done.stdout + done.stderr


def test_helm_lint_accepts_the_chart_with_ingress_and_autoscaling(tmp_path: Path) -> None:
    done = helm("lint", "--strict", CHART, "-f", _values_file(tmp_path, SCALED))
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_default_render_runs_two_non_root_replicas_probed_on_readyz() -> None:
    manifests = _render()
    assert manifests["Deployment", "bio-mcp"]["spec"]["replicas"] == 2
    pod = _pod(manifests)
    container = pod["containers"][0]
    assert container["image"] == "bio-mcp:latest"
    assert container["args"] == ["serve-http"]
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert container["livenessProbe"]["httpGet"] == {"path": "/health", "port": "http"}
    assert container["ports"] == [{"name": "http", "containerPort": 8000, "protocol": "TCP"}]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    for each in [container, *pod["initContainers"]]:
        assert each["securityContext"]["readOnlyRootFilesystem"] is True
        assert each["securityContext"]["allowPrivilegeEscalation"] is False
        assert {m["mountPath"] for m in each["volumeMounts"]} == {"/data", "/tmp"}  # noqa: S108 (mount paths)
    assert [c["args"] for c in pod["initContainers"]] == [["db", "upgrade"]]
    service = manifests["Service", "bio-mcp"]["spec"]
    assert service["ports"][0]["targetPort"] == "http"
    assert (
        service["selector"] == manifests["Deployment", "bio-mcp"]["spec"]["selector"]["matchLabels"]
    )
    assert ("Ingress", "bio-mcp") not in manifests
    assert ("HorizontalPodAutoscaler", "bio-mcp") not in manifests


def test_every_variable_the_chart_sets_is_a_setting_and_the_replica_loads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    env = _environment(_render())
    assert unknown_variables(env) == []
    known = {name.upper() for name in Settings.model_fields}
    assert sorted(set(env) - known - NOT_SETTINGS) == []
    settings = _settings(env, monkeypatch)
    assert settings.mcp_http_stateless is True
    assert settings.biomcp_vector_backend == "weaviate"
    assert settings.weaviate_replication_factor == 3
    assert (settings.weaviate_read_consistency, settings.weaviate_write_consistency) == (
        "QUORUM",
        "QUORUM",
    )
    # No key given: one is generated, strong enough for HS256, so the pods bind 0.0.0.0.
    assert settings.auth_mode == "hs256"
    assert bind_refusal(settings, insecure=False) is None


def test_the_values_reach_the_pods_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    nodes = "http://w-0.w:8080,http://w-1.w:8080,http://w-2.w:8080"
    manifests = _render(
        "--set", "replicaCount=4",
        "--set", "database.url=postgresql+psycopg://mcp@pg.db:5432/mcp",
        "--set", "database.password=pg-secret",
        "--set", f"weaviate.url={nodes.replace(',', chr(92) + ',')}",
        "--set", "weaviate.apiKey=w-secret",
        "--set", "weaviate.readConsistency=ALL",
        "--set", "auth.secretKey=" + "s" * 32,
        "--set", "http.stateless=false",
        "--set-string", "extraEnv.BIOMCP_SEARCH_ALPHA=0.5",
    )  # fmt: skip
    assert manifests["Deployment", "bio-mcp"]["spec"]["replicas"] == 4
    env = _environment(manifests)
    assert env["PGPASSWORD"] == "pg-secret"
    assert "pg-secret" not in str(manifests["ConfigMap", "bio-mcp"])
    settings = _settings(env, monkeypatch)
    assert settings.biomcp_database_url == "postgresql+psycopg://mcp@pg.db:5432/mcp"
    assert settings.weaviate_url == nodes
    assert settings.weaviate_api_key is not None
    assert settings.weaviate_api_key.get_secret_value() == "w-secret"
    assert settings.weaviate_read_consistency == "ALL"
    assert settings.mcp_auth_secret_key is not None
    assert settings.mcp_auth_secret_key.get_secret_value() == "s" * 32
    assert settings.mcp_http_stateless is False
    assert settings.biomcp_search_alpha == 0.5


def test_ingress_and_autoscaling_render_when_enabled(tmp_path: Path) -> None:
    manifests = _render("-f", _values_file(tmp_path, SCALED))
    assert "replicas" not in manifests["Deployment", "bio-mcp"]["spec"]
    hpa = manifests["HorizontalPodAutoscaler", "bio-mcp"]["spec"]
    assert (hpa["minReplicas"], hpa["maxReplicas"]) == (3, 8)
    assert hpa["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "bio-mcp",
    }
    ingress = manifests["Ingress", "bio-mcp"]["spec"]
    assert ingress["ingressClassName"] == "nginx"
    assert ingress["tls"] == [{"secretName": "mcp-tls", "hosts": ["mcp.example.org"]}]
    rule = ingress["rules"][0]
    assert rule["host"] == "mcp.example.org"
    backend = rule["http"]["paths"][0]["backend"]["service"]
    assert backend == {"name": "bio-mcp", "port": {"name": "http"}}


def test_an_oauth_setup_carries_no_shared_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    manifests = _render(
        "--set", "auth.issuer=https://id.example.org",
        "--set", "auth.audience=https://mcp.example.org/mcp",
        "--set", "auth.resourceUrl=https://mcp.example.org/mcp",
    )  # fmt: skip
    env = _environment(manifests)
    assert "MCP_AUTH_SECRET_KEY" not in env
    assert _settings(env, monkeypatch).auth_mode == "oauth"


def test_an_existing_secret_replaces_the_charts_own() -> None:
    manifests = _render("--set", "existingSecret=mine", "--set", "weaviate.apiKey=ignored")
    assert not [name for kind, name in manifests if kind == "Secret"]
    for each in [*_pod(manifests)["containers"], *_pod(manifests)["initContainers"]]:
        assert {"secretRef": {"name": "mine"}} in each["envFrom"]


@pytest.mark.parametrize(
    ("setting", "named"),
    [
        ("weaviate.readConsistency=MOST", "readConsistency"),
        ("database.url=mysql://x@y/z", "url"),
        ("auth.secretKey=short", "secretKey"),
    ],
)
def test_a_bad_value_is_refused_with_its_name(setting: str, named: str) -> None:
    done = helm("template", "bio-mcp", CHART, "--set", setting)
    assert done.returncode != 0
    assert named in done.stderr


def _notes(tmp_path: Path, *args: str) -> str:
    """NOTES.txt as `helm install` prints it (rendered through a copy of the chart, since
    `helm template` skips it and `helm install --dry-run` needs a cluster)."""
    chart = tmp_path / "chart"
    shutil.copytree(CHART, chart)
    shutil.copy(chart / "templates" / "NOTES.txt", chart / "notes.src")
    (chart / "templates" / "zz-notes.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n"
        '  text: {{ tpl (.Files.Get "notes.src") . | toJson }}\n',
        encoding="utf-8",
    )
    done = helm("template", "demo", chart, "-n", "mcp", "-s", "templates/zz-notes.yaml", *args)
    assert done.returncode == 0, done.stderr
    return str(yaml.safe_load(done.stdout)["data"]["text"])


def test_the_notes_name_the_stores_without_a_password(tmp_path: Path) -> None:
    notes = _notes(tmp_path, "--set", "database.url=postgresql+psycopg://u:pa55@pg:5432/d")
    assert "postgresql+psycopg://u:***@pg:5432/d" in notes
    assert "pa55" not in notes
    assert "http://weaviate.weaviate.svc.cluster.local:8080 (replication factor 3" in notes
    assert "kubectl get secret demo-bio-mcp -n mcp" in notes  # where the generated key is
    assert "WARNING" not in notes


def test_the_notes_warn_when_several_replicas_keep_sessions(tmp_path: Path) -> None:
    notes = _notes(tmp_path, "--set", "http.stateless=false")
    assert "WARNING: http.stateless is off with several replicas" in notes
    assert "no password set" in notes
    assert "WARNING" not in _notes(tmp_path / "one", "--set", "http.stateless=false",
                                   "--set", "replicaCount=1")  # fmt: skip
