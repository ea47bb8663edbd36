"""deploy/service-pg/: the multi-replica service manifests are valid Kubernetes objects, wired together
(selectors, Secret keys, probe paths, the config) the way the running service needs."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest

from imgcheck.errors import BadInputError

kubernetes = pytest.importorskip("kubernetes", reason="the optional kubernetes client (imgcheck[k8s]) is not installed")
yaml = pytest.importorskip("yaml")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BASE = os.path.join(REPO, "deploy", "service-pg")
MODELS = {
    "ConfigMap": "V1ConfigMap",
    "Secret": "V1Secret",
    "Deployment": "V1Deployment",
    "Service": "V1Service",
    "PodDisruptionBudget": "V1PodDisruptionBudget",
    "NetworkPolicy": "V1NetworkPolicy",
}
AUTOSCALING = os.path.join(REPO, "deploy", "service-pg-autoscaling")


def _resources() -> dict[str, dict]:
    with open(os.path.join(BASE, "kustomization.yaml"), encoding="utf-8") as fh:
        kustomization = yaml.safe_load(fh)
    docs = {}
    for name in kustomization["resources"]:
        with open(os.path.join(BASE, name), encoding="utf-8") as fh:
            for doc in yaml.safe_load_all(fh):
                docs[doc["kind"]] = doc
    return docs


@pytest.fixture(scope="module")
def docs():
    return _resources()


def test_every_resource_round_trips_through_the_kubernetes_models(docs):
    """The client's models drop fields they do not know: a typo or misplaced key makes the round trip differ."""
    from kubernetes import client

    api = client.ApiClient()
    assert set(docs) == set(MODELS)
    for kind, doc in docs.items():
        model = api.deserialize(json.dumps(doc), MODELS[kind], "application/json")
        assert api.sanitize_for_serialization(model) == doc, kind


def _pod(docs) -> dict:
    return docs["Deployment"]["spec"]["template"]


def test_replicas_are_spread_and_disruptions_bounded(docs):
    deployment = docs["Deployment"]["spec"]
    labels = _pod(docs)["metadata"]["labels"]
    assert deployment["replicas"] >= 2 and deployment["strategy"]["type"] == "RollingUpdate"
    assert deployment["selector"]["matchLabels"].items() <= labels.items()
    pdb = docs["PodDisruptionBudget"]["spec"]
    assert pdb["selector"]["matchLabels"].items() <= labels.items()
    assert pdb.get("maxUnavailable", 0) < deployment["replicas"]  # a drain never takes every replica
    service = docs["Service"]["spec"]
    assert service["selector"].items() <= labels.items()
    (container,) = _pod(docs)["spec"]["containers"]
    ports = {p["name"] for p in container["ports"]}
    assert {p["targetPort"] for p in service["ports"]} <= ports
    assert {"cpu", "memory"} <= set(container["resources"]["requests"])


def test_probes_use_routes_that_exist_and_readiness_is_not_liveness(docs):
    pytest.importorskip("starlette")
    from imgcheck.service.app import create_app
    from imgcheck.service.config import parse_config

    config = parse_config(
        {
            "server": {"database": "/x/db"},
            "registries": {"r": {"host": "h", "secret": "s"}},
            "fleets": {"f": {"node_facts": ["/n"]}},
        },
        "/x/c.toml",
        {},
    )
    routes = {r.path for r in create_app(config, start_workers=False).routes}
    (container,) = _pod(docs)["spec"]["containers"]
    paths = {k: container[k]["httpGet"]["path"] for k in ("readinessProbe", "livenessProbe", "startupProbe")}
    assert set(paths.values()) <= routes
    assert paths["readinessProbe"] == "/readyz" and paths["livenessProbe"] == "/livez"


def test_the_config_map_is_a_valid_shared_database_config(docs, tmp_path):
    """The ConfigMap's TOML, with the Secret's values in the environment the Deployment sets, loads."""
    from imgcheck.service.config import load_config

    cfg = tmp_path / "imgcheck.toml"
    cfg.write_text(docs["ConfigMap"]["data"]["imgcheck.toml"])
    secret = docs["Secret"]["stringData"]
    (container,) = _pod(docs)["spec"]["containers"]
    env = {"IMGCHECK_HOME": str(tmp_path / "home")}
    for var in container["env"]:
        ref = var.get("valueFrom", {}).get("secretKeyRef")
        if ref:
            assert ref["name"] == docs["Secret"]["metadata"]["name"] and ref["key"] in secret, var
            env[var["name"]] = secret[ref["key"]]
    # applied unchanged, the example's placeholders stop the start with one line
    with pytest.raises(BadInputError, match="placeholder 'change-me'"):
        load_config(str(cfg), env=env)
    env = {k: v.replace("change-me", f"real-{k.lower()}") for k, v in env.items()}
    config = load_config(str(cfg), env=env)
    assert config.database_url == env["IMGCHECK_DATABASE_URL"] and config.database_url.startswith("postgresql://")
    # TLS that verifies the server, and the facts cache under its own role (cache-role.sql)
    for key in ("database-url", "cache-url"):
        assert "sslmode=verify-full" in secret[key] and "sslrootcert=/etc/imgcheck/pg-ca/" in secret[key]
    assert env["IMGCHECK_CACHE_URL"].startswith("postgresql://imgcheck_cache:")
    assert env["IMGCHECK_CACHE_URL"].split("@")[1] == env["IMGCHECK_DATABASE_URL"].split("@")[1]
    assert config.registries["main"].secret == env["IMGCHECK_WEBHOOK_SECRET"]
    assert config.lease_seconds <= 120  # a dead replica's job waits at most this long for a taker
    # the config reads the URL from the environment, and the env var comes from the Secret
    assert "postgresql://" not in docs["ConfigMap"]["data"]["imgcheck.toml"]


def test_the_pod_is_unprivileged_with_a_read_only_root(docs):
    pod = _pod(docs)["spec"]
    (container,) = pod["containers"]
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["automountServiceAccountToken"] is False
    sc = container["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True and sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"]["drop"] == ["ALL"]
    home = next(e["value"] for e in container["env"] if e["name"] == "IMGCHECK_HOME")
    writable = [m["mountPath"] for m in container["volumeMounts"] if not m.get("readOnly")]
    assert any(home.startswith(p.rstrip("/") + "/") for p in writable)  # /readyz needs it writable


def _quantity(text: str) -> int:
    units = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}
    for unit, factor in units.items():
        if text.endswith(unit):
            return int(text[: -len(unit)]) * factor
    return int(text)


def test_the_volumes_fit_the_ephemeral_storage_limit(docs):
    """The issue found emptyDir limits of 9 Gi under an 8 Gi ephemeral-storage limit: the kubelet evicts
    the pod before a volume reaches its own limit."""
    pod = _pod(docs)["spec"]
    (container,) = pod["containers"]
    volumes = sum(_quantity(v["emptyDir"]["sizeLimit"]) for v in pod["volumes"] if "emptyDir" in v)
    limit = _quantity(container["resources"]["limits"]["ephemeral-storage"])
    assert volumes < limit  # room left for the container's logs
    mounted = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert mounted["pg-ca"] == "/etc/imgcheck/pg-ca"  # where the Secret's sslrootcert points


def test_the_network_policy_selects_the_pods_and_allows_what_they_need(docs):
    spec = docs["NetworkPolicy"]["spec"]
    assert spec["podSelector"]["matchLabels"].items() <= _pod(docs)["metadata"]["labels"].items()
    assert set(spec["policyTypes"]) == {"Ingress", "Egress"}
    assert [p["port"] for r in spec["ingress"] for p in r["ports"]] == [8080]
    egress = {p["port"] for r in spec["egress"] for p in r["ports"]}
    assert {53, 5432, 443} <= egress


def test_alerts_and_autoscaling_use_metrics_the_service_exports():
    from kubernetes import client

    from imgcheck.service.metrics import Metrics

    metrics = Metrics(lambda: {"queued": 0, "running": 0, "done": 0, "failed": 0})
    metrics.store_error("claim")
    metrics.job_errors.labels("failed").inc()
    metrics.checks.labels("f", "ok").inc()
    exported = {line.split("{")[0].split(" ")[0] for line in metrics.render().decode().splitlines() if line[:1] != "#"}
    with open(os.path.join(AUTOSCALING, "prometheusrule.yaml"), encoding="utf-8") as fh:
        rule = yaml.safe_load(fh)
    exprs = [r["expr"] for g in rule["spec"]["groups"] for r in g["rules"]]
    used = {m for e in exprs for m in re.findall(r"\b(imgcheck_[a-z_]+)", e)}
    assert used and used <= exported, used - exported
    assert any('state="queued"' in e for e in exprs) and any('state="running"' in e for e in exprs)
    with open(os.path.join(AUTOSCALING, "hpa.yaml"), encoding="utf-8") as fh:
        hpa = yaml.safe_load(fh)
    api = client.ApiClient()
    model = api.deserialize(json.dumps(hpa), "V2HorizontalPodAutoscaler", "application/json")
    assert api.sanitize_for_serialization(model) == hpa
    assert hpa["spec"]["metrics"][0]["external"]["metric"]["name"] in exported
    docs = _resources()
    assert hpa["spec"]["scaleTargetRef"]["name"] == docs["Deployment"]["metadata"]["name"]


def test_the_cache_role_script_names_the_tables_the_shared_cache_uses():
    from imgcheck import shared_cache

    with open(os.path.join(BASE, "cache-role.sql"), encoding="utf-8") as fh:
        sql = fh.read()
    for table in re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", shared_cache._SCHEMA):
        assert f"CREATE TABLE IF NOT EXISTS {table}" in sql and f"ON {table}" in sql.replace(",", " ON")


def test_kustomize_renders_the_base():
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl (with its built-in kustomize) is not installed")
    out = subprocess.run([kubectl, "kustomize", BASE], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    rendered = [d for d in yaml.safe_load_all(out.stdout) if d]
    assert sorted(d["kind"] for d in rendered) == sorted(MODELS)
    assert {d["metadata"]["namespace"] for d in rendered} == {"imgcheck"}
    deployment = next(d for d in rendered if d["kind"] == "Deployment")
    image = deployment["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == "registry.example.com/tools/imgcheck-serve:0.1.0"
    out = subprocess.run([kubectl, "kustomize", AUTOSCALING], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    kinds = sorted(d["kind"] for d in yaml.safe_load_all(out.stdout) if d)
    assert kinds == sorted([*MODELS, "PrometheusRule", "HorizontalPodAutoscaler"])


def test_the_cache_role_script_creates_the_tables_imgcheck_defines():
    """deploy/service-pg/cache-role.sql repeats shared_cache._SCHEMA so an administrator can create the tables
    before granting on them; the two must not drift."""
    from imgcheck.shared_cache import _SCHEMA

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "deploy", "service-pg", "cache-role.sql"), encoding="utf-8") as fh:
        script = " ".join(fh.read().split())
    for statement in _SCHEMA.split(";"):
        assert " ".join(statement.split()) in script
