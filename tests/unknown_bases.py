"""Realistic (image, node, job) facts for the unknown-contract property tests: every incident case (facts as its
thread states them) and the committed real Debian images on the committed node fixtures."""

from __future__ import annotations

import os
import re
import sys
from functools import cache

HERE = os.path.dirname(__file__)
REAL_SPECS = os.path.join(HERE, "job", "specs", "real")
NCCL_ENV = os.path.join(HERE, "data", "nccl_env")
UPSTREAM_ENV = os.path.join(HERE, "data", "upstream_env")
_EXPORT = re.compile(r"^export ([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
sys.path.insert(0, os.path.join(HERE, "incidents"))

from corpus import CASES, image_doc, image_facts, job_facts, node_facts  # noqa: E402
from engine_facts import IMAGES_DIR, NODES_DIR, committed_facts, node  # noqa: E402


@cache
def bases() -> tuple[tuple[str, object, object, object], ...]:
    out = []
    for case in CASES:
        out.append(
            (
                f"incident {case['id']}",
                image_facts(image_doc(case["image"], case["id"]), case["id"]),
                node_facts(case["node"], case["id"]),
                job_facts(case.get("job"), case["id"]),
            )
        )
    for suite in sorted(f[:-5] for f in os.listdir(IMAGES_DIR) if f.endswith(".json")):
        for name in sorted(f[:-5] for f in os.listdir(NODES_DIR) if f.endswith(".json")):
            out.append((f"{suite} on {name}", committed_facts(suite), node(name), None))
    # Real public launch specs (tests/job/specs/real, each with its URL in SOURCES.md), each container with a real
    # Debian image on an RDMA node: the job-launch rules' realistic inputs.
    from imgcheck.job import load_job_spec

    for spec in sorted(os.listdir(REAL_SPECS)):
        if spec.endswith((".md", ".txt")):
            continue
        try:
            jobs = load_job_spec(os.path.join(REAL_SPECS, spec))
        except Exception:  # noqa: BLE001 - a spec imgcheck refuses (a Helm template) is no base
            continue
        for i, job in enumerate(jobs):
            out.append((f"spec {spec}[{i}]", committed_facts("bookworm"), node("mofed-23.10-open-550-peermem"), job))
    # Real launch scripts' NCCL_* exports (tests/data/nccl_env, each URL in its README) as the Env of an image with
    # NCCL, on an InfiniBand node: the Env lint's realistic inputs.
    from engine_facts import with_nccl

    scripts = [os.path.join(NCCL_ENV, f) for f in os.listdir(NCCL_ENV) if f.endswith(".sh")]
    scripts += [os.path.join(UPSTREAM_ENV, f) for f in os.listdir(UPSTREAM_ENV) if f.endswith(".sh")]
    for path in sorted(scripts):
        script = os.path.basename(path)
        env = _exports(path)
        for version in ("2.18.3", "2.21.5"):
            image = with_nccl(committed_facts("bookworm"), version, env=env)
            out.append((f"script {script} NCCL {version}", image, node("mofed-5.8-proprietary-535-peermem"), None))
    return tuple(out)


def _exports(path: str) -> dict[str, str]:
    with open(path) as fh:
        return dict(m.groups() for line in fh if (m := _EXPORT.match(line.strip())))
