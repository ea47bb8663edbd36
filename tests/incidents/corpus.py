"""Load the incident corpus: profiles + per-case overrides -> (ImageFacts, NodeFacts), and what each case expects.

Rule ids in `expect` / `must_not` / `absent` are real rule ids, or placeholders (`@name`) for a mechanism whose
rule is named in PLACEHOLDERS; a placeholder mapped to None is a known gap.
"""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass

from imgcheck.model.image import ImageFacts
from imgcheck.model.image_io import parse_image_facts
from imgcheck.model.node_io import parse_node_facts

HERE = os.path.dirname(__file__)

# Mechanisms the corpus names before (or without) a rule: placeholder -> rule id, or None while imgcheck has no
# rule for it (the case is then a known gap, scored and xfailed strictly).
PLACEHOLDERS: dict[str, str | None] = {
    "@gpu-class-no-gdr": "NODE-GPU-NO-GDR",
    "@peermem-stale-build": "NODE-PEERMEM-STALE-BUILD",
    "@nccl-wheel-not-torch-pin": "NCCL-WHEEL-NOT-TORCH-PIN",
    "@nccl-wheels-two-cuda-majors": "NCCL-WHEELS-TWO-CUDA-MAJORS",
    "@efa-libfabric-cuda-sync-memops": "EFA-LIBFABRIC-CUDA-SYNC-MEMOPS",
    "@cuda-forward-compat-consumer-gpu": "CUDA-FORWARD-COMPAT-UNSUPPORTED-GPU",
    "@pcie-acs-redirects-p2p": "NODE-PCI-ACS-REDIRECT",
    "@ucx-tls-no-internode": "UCX-TLS-NO-INTERNODE",
    "@nccl-release-known-issue": "NCCL-RELEASE-KNOWN-ISSUE",
    "@job-shm-too-small": "JOB-SHM-TOO-SMALL",
    "@nccl-lacks-gpu-arch": "NCCL-LACKS-GPU-ARCH",
    "@env-ib-hca-matches-no-device": "ENV-NCCL-IB-HCA-NO-DEVICE",
    "@env-ib-hca-prefix-matches-more": "ENV-NCCL-IB-HCA-PREFIX",
    "@ofed-built-for-other-kernel": "NODE-OFED-NOT-RUNNING",
    "@driver-module-userspace-mismatch": "NODE-DRIVER-USERSPACE-MISMATCH",
    "@nccl-too-old-for-gpu": "NCCL-TOO-OLD-FOR-GPU",
    "@efa-node-image-lacks-ofi-plugin": "EFA-NO-OFI-PLUGIN",
    "@kernel-known-bad-pinning": None,
    "@job-shm-proxy-ops-pool": None,
    "@job-rdma-devices-not-exposed": "JOB-RDMA-DEVICES-NOT-EXPOSED",
    "@env-socket-ifname-allows-lo": "ENV-NCCL-SOCKET-IFNAME-ALLOWS-LO",
    "@ofi-plugin-libfabric-too-old": "OFI-PLUGIN-LIBFABRIC-TOO-OLD",
    "@ofi-plugin-dependency-missing": "NCCL-NET-PLUGIN-DEPENDENCY-MISSING",
}

SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


def deep_merge(base, patch):
    """JSON merge: dicts merge key by key, anything else (lists included) is replaced, so a variant's
    `providers: []` means no providers. An image patch that names a `profile` is that profile plus its own keys, not
    a patch of the failing image: a working variant `{"profile": "rdma-core-39-mlx5"}` is the stock image, without
    the failing case's overrides (its `rdma.providers: []`). A null stays a value (job facts give `shm_size_mib:
    null` a meaning), so a variant drops a key by naming the profile again."""
    if isinstance(base, dict) and isinstance(patch, dict):
        if "profile" in patch:
            base = {}
        out = dict(base)
        for key, value in patch.items():
            out[key] = deep_merge(base.get(key), value) if key in base else copy.deepcopy(value)
        return out
    return copy.deepcopy(patch)


def _load(name: str) -> dict:
    with open(os.path.join(HERE, name)) as fh:
        return json.load(fh)


PROFILES = _load("profiles.json")["images"]
CASES = _load("cases.json")["cases"]


def image_doc(spec: dict, case_id: str) -> dict:
    spec = dict(spec)
    profile = spec.pop("profile", None)
    doc = deep_merge(PROFILES[profile], spec) if profile else spec
    doc.setdefault("reference", f"incident:{case_id}")
    return doc


def image_facts(doc: dict, where: str) -> ImageFacts:
    return parse_image_facts(doc, where)  # what a case leaves out is unknown, as in a facts: file


def node_facts(doc: dict, where: str):
    return parse_node_facts(doc, where)


def job_facts(doc: dict | None, where: str):
    """The launch the thread describes (imgcheck.job facts), or None when the case states none."""
    from imgcheck.job.facts_io import parse_job_facts

    return None if doc is None else parse_job_facts(doc, where)


@dataclass(frozen=True)
class Resolved:
    rule: str | None  # None: a placeholder without a rule yet
    name: str  # as written in the case


def resolve(rule: str) -> Resolved:
    if rule.startswith("@"):
        return Resolved(PLACEHOLDERS[rule], rule)
    return Resolved(rule, rule)


def gaps(case: dict) -> list[str]:
    """Why imgcheck cannot name this case's mechanism yet (empty when it can)."""
    missing = [w["id"] for w in case.get("expect", ()) if resolve(w["id"]).rule is None]
    if not missing:
        return []
    return [
        f"no rule for {', '.join(missing)}" + (f": {case['gap_if_unmapped']}" if case.get("gap_if_unmapped") else "")
    ]
