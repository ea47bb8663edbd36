"""Shared builders for the engine tests: committed inspect output of the real Debian images, node fixtures,
and dataclasses.replace helpers for NCCL/CUDA variants of real facts."""

from __future__ import annotations

import dataclasses
import os
from functools import cache, lru_cache

from imgcheck import api
from imgcheck.engine import REQUIRED_ROWS, evaluate
from imgcheck.matrix import load_matrix
from imgcheck.model.image import Cuda, ImageFacts, Nccl, Package
from imgcheck.model.node_io import load_node_facts
from imgcheck.model.serde import to_dict
from imgcheck.sources.read_options import ReadOptions

HERE = os.path.dirname(__file__)
NODES_DIR = os.path.join(HERE, "fixtures", "engine_nodes")
IMAGES_DIR = os.path.join(HERE, "fixtures", "engine_images")
SITE = "/usr/local/lib/python3.11/dist-packages"


def matrix():
    return load_matrix(required=REQUIRED_ROWS)


@cache
def real_facts(archive: str) -> ImageFacts:
    """Facts imgcheck reads from a real Debian rdma image (docker-archive from conftest's debian_archive)."""
    return api.inspect_image(f"docker-archive:{archive}", ReadOptions(use_cache=False))


def fixture_doc(facts: ImageFacts, suite: str) -> dict:
    """inspect's JSON for a Debian image, with the one run-dependent value (the temporary archive path) fixed."""
    doc = to_dict(facts)
    doc["reference"] = (
        f"docker-archive:rdma-{suite}.tar (mmdebstrap --variant=minbase {suite} + libibverbs1 ibverbs-providers libucx0)"
    )
    return doc


@cache
def committed_facts(suite: str) -> ImageFacts:
    """The committed `inspect -o json` facts of a real Debian image (kept current by test_engine_image_fixtures)."""
    return api.load_image_facts(os.path.join(IMAGES_DIR, f"{suite}.json"))


def node(name: str, **changes):
    facts = load_node_facts(os.path.join(NODES_DIR, name + ".json"))
    return dataclasses.replace(facts, **changes) if changes else facts


def replace_in(obj, path: str, value):
    """dataclasses.replace on a nested field: replace_in(node, "gpu.peermem.loaded", False)."""
    head, _, rest = path.partition(".")
    if not rest:
        return dataclasses.replace(obj, **{head: value})
    return dataclasses.replace(obj, **{head: replace_in(getattr(obj, head), rest, value)})


def with_nccl(
    facts: ImageFacts,
    version: str,
    origin: str = "pip",
    *,
    cuda: str | None = "12.4.1",
    compat: str | None = None,
    env: dict | None = None,
    nccl_conf: dict | None = None,
) -> ImageFacts:
    """A torch-style image: the real rdma userspace plus NCCL (pip wheel by default) and a CUDA toolkit."""
    layer = facts.rdma.libibverbs.layer if facts.rdma.libibverbs else None
    path = {
        "pip": f"{SITE}/nvidia_nccl_cu12-{version}.dist-info/METADATA",
        "library": f"/usr/lib/x86_64-linux-gnu/libnccl.so.{version}",
        "torch-requirement": f"{SITE}/torch-2.5.1.dist-info/METADATA",
    }.get(origin, "/var/lib/dpkg/status")
    cuda_facts = None
    if cuda:
        cuda_facts = Cuda(
            version=cuda,
            path="/usr/local/cuda/version.json",
            layer=layer,
            origin="version.json",
            compat_driver=compat,
            compat_path=f"/usr/local/cuda/compat/libcuda.so.{compat}" if compat else None,
        )
    return dataclasses.replace(
        facts,
        nccl=(Nccl(version, path, layer, origin),),
        cuda=cuda_facts,
        env=dict(facts.env, **(env or {})),
        nccl_conf=dict(nccl_conf or {}),
        packages=facts.packages + (Package("torch", "2.5.1", "pip", f"{SITE}/torch-2.5.1.dist-info/METADATA", layer),),
    )


def ids(result) -> list[str]:
    return [f.id for f in result.findings]


def by_id(result, rule: str):
    found = [f for f in result.findings if f.id == rule]
    assert len(found) == 1, f"expected one {rule}, got {[(f.id, f.title) for f in result.findings]}"
    return found[0]


def unknown_rules(result) -> list[str]:
    return [u.rule for u in result.unknowns]


def run(image, node_facts):
    return evaluate(image, node_facts, matrix())
