"""Node facts from the Kubernetes API (the `kubernetes` client, optional extra `imgcheck[k8s]`).

A node's facts come from, in order:
1. the annotation `imgcheck.feature.node.kubernetes.io/facts` (the probe's full JSON, `--annotate`);
2. otherwise its labels: imgcheck's NFD features, NFD's kernel/OS labels, GPU Feature Discovery's
   driver labels (nfd.facts_from_labels), with `status.nodeInfo` for the kernel and architecture.
The node's labels are always attached, so `--fleet k8s:SELECTOR` and label checks see them.
"""

from __future__ import annotations

import dataclasses
import json
import os
from types import ModuleType
from typing import Any

from ..errors import BadInputError, UnavailableError, UsageError
from ..model.location import Location
from ..model.node import NodeFacts
from ..model.node_io import dump_node_facts, parse_node_facts
from .cluster_components import from_status_images
from .nfd import PREFIX, facts_from_labels, label_sources

ANNOTATION = PREFIX + "facts"
MAX_ANNOTATION = 256 * 1024  # Kubernetes caps all annotations of an object at 256 KiB together
_PAGE = 500


def _client() -> tuple[ModuleType, ModuleType]:  # kubernetes.client, kubernetes.config
    try:
        from kubernetes import client, config  # heavy; only k8s: selectors and --annotate need it
    except ImportError:
        raise UnavailableError(
            "reading nodes from Kubernetes needs the kubernetes client: pip install 'imgcheck[k8s]'"
        ) from None
    return client, config


def _core_api() -> tuple[Any, Any]:  # a CoreV1Api and its ApiClient
    client, config = _client()
    try:
        config.load_incluster_config()  # inside a pod: the service account
    except config.ConfigException:
        try:
            # outside: $KUBECONFIG (read now: the client reads it once at import) or ~/.kube/config
            config.load_kube_config(config_file=os.environ.get("KUBECONFIG") or None)
        except Exception as exc:  # the loader raises several unrelated types for a missing/bad kubeconfig
            raise UnavailableError(f"no Kubernetes credentials (not in a pod, and kubeconfig: {exc})") from None
    return client.CoreV1Api(), client.ApiClient()


def read_nodes(label_selector: str, api: Any = None) -> list[NodeFacts]:  # api: a CoreV1Api (tests: a fake)
    """Nodes matching a Kubernetes label selector ("" = all), as NodeFacts."""
    if api is None:
        api, api_client = _core_api()
    else:
        api_client = getattr(api, "api_client", None)
    items: list[Any] = []
    cont = None
    try:
        while True:
            page = api.list_node(label_selector=label_selector or None, limit=_PAGE, _continue=cont)
            items.extend(page.items or [])
            meta = page.metadata
            # the attribute is var_continue in the pydantic client (>= 35), _continue before
            cont = (getattr(meta, "var_continue", None) or getattr(meta, "_continue", None)) if meta else None
            if not cont:
                break
    except Exception as exc:  # ApiException, urllib3 connection errors, timeouts
        status = getattr(exc, "status", None)
        if status == 400:
            raise UsageError(
                f"Kubernetes rejected the label selector {label_selector!r}: {getattr(exc, 'reason', exc)}"
            ) from None
        reason = f"HTTP {status} {getattr(exc, 'reason', '')}".strip() if status else str(exc).splitlines()[0]
        raise UnavailableError(f"cannot list Kubernetes nodes: {reason}") from None
    return [facts_from_node(_as_dict(item, api_client)) for item in items]


def nodes_from_list(node_list: Any, api_client: Any = None) -> list[NodeFacts]:
    """A V1NodeList (client model or API JSON dict) -> NodeFacts per node."""
    doc = _as_dict(node_list, api_client)
    return [facts_from_node(item) for item in doc.get("items") or []]


def _as_dict(obj: Any, api_client: Any = None) -> dict[str, Any]:
    """Client models -> the JSON shape the API server sends (camelCase keys)."""
    if isinstance(obj, dict):
        return obj
    if api_client is None:
        client, _ = _client()
        api_client = client.ApiClient()
    doc: dict[str, Any] = api_client.sanitize_for_serialization(obj)
    return doc


def facts_from_node(node: dict[str, Any]) -> NodeFacts:
    meta = node.get("metadata") or {}
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise BadInputError("Kubernetes node without metadata.name")
    labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
    annotations = meta.get("annotations") or {}
    info = (node.get("status") or {}).get("nodeInfo") or {}
    raw = annotations.get(ANNOTATION)
    if raw:
        try:
            facts = parse_node_facts(
                json.loads(raw),
                f"node {name} annotation {ANNOTATION}",
                Location.described(f"Kubernetes annotation {ANNOTATION} of node {name}"),
            )
        except ValueError as exc:
            raise BadInputError(f"node {name}: annotation {ANNOTATION} is not valid JSON ({exc})") from None
        facts = _with_components(facts, (node.get("status") or {}).get("images"))
        return dataclasses.replace(
            facts,
            name=name,
            labels={**facts.labels, **labels},
            arch=facts.arch or info.get("architecture"),
            sources={**facts.sources, **label_sources(labels)},
        )
    facts = facts_from_labels(name, labels, arch=info.get("architecture"), kernel_release=info.get("kernelVersion"))
    return _with_components(facts, (node.get("status") or {}).get("images"))


def _with_components(facts: NodeFacts, images: Any) -> NodeFacts:
    """The node facts with the cluster's GPU components read from status.images (kept when the facts state them)."""
    if facts.cluster_components is not None:
        return facts
    found, why = from_status_images(images)
    unknown = {**facts.unknown, "cluster_components": why} if why and found is None else facts.unknown
    return dataclasses.replace(facts, cluster_components=found, unknown=unknown)


def annotate_node(facts: NodeFacts, api: Any = None) -> None:  # api: a CoreV1Api (tests: a fake)
    """Put the full facts JSON on the node object (needs RBAC: patch on nodes; deploy/rbac-annotate.yaml)."""
    text = json.dumps(json.loads(dump_node_facts(facts)), separators=(",", ":"), sort_keys=True)
    if len(text.encode()) > MAX_ANNOTATION:
        raise BadInputError(
            f"node facts are {len(text)} bytes, over Kubernetes' {MAX_ANNOTATION}-byte annotation limit"
        )
    if api is None:
        api, _ = _core_api()
    try:
        api.patch_node(facts.name, {"metadata": {"annotations": {ANNOTATION: text}}})
    except Exception as exc:
        status = getattr(exc, "status", None)
        reason = f"HTTP {status} {getattr(exc, 'reason', '')}".strip() if status else str(exc).splitlines()[0]
        raise UnavailableError(f"cannot annotate node {facts.name}: {reason}") from None
