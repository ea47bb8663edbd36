"""The few facts about an image that a person compares when choosing a base image, and their differences.

One Summary shape for inspected ImageFacts and for shipped catalog rows, so `recommend` and `diff` say
"rdma-core 44.0 -> 50.0, NCCL 2.19.3 -> 2.21.5, CUDA 12.3 -> 12.4" the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..model.image import ImageFacts, Package
from ..versions.ecosystems import compare_numeric, numeric_tuple

# Framework words, from the image name or the Python package that identifies it.
_NAME_WORDS = (
    ("pytorch", "pytorch"),
    ("tensorflow", "tensorflow"),
    ("mxnet", "mxnet"),
    ("paddle", "paddlepaddle"),
    ("jax", "jax"),
    ("cuda-dl", "cuda-dl"),
    ("cuda", "cuda"),
)
_PACKAGE_WORDS = (
    ("torch", "pytorch"),
    ("tensorflow", "tensorflow"),
    ("mxnet", "mxnet"),
    ("paddlepaddle", "paddlepaddle"),
    ("jax", "jax"),
)


@dataclass(frozen=True)
class Summary:
    framework: str | None = None
    distro: str | None = None
    cuda: str | None = None
    nccl: str | None = None
    rdma_core: str | None = None
    pabi: int | None = None
    flavor: str | None = None
    ofed: str | None = None
    ucx: str | None = None
    hpcx: str | None = None
    # the framework's own version string: a PyPI release, or an NGC a0+<commit> build
    framework_version: str | None = None
    python: str | None = None  # "3.10"


def _repository(reference: str) -> str:
    """'nvcr.io/nvidia/pytorch:24.05-py3' -> 'pytorch' (the last path part, no tag or digest)."""
    ref = reference.split("@", 1)[0]
    if ":" in ref and "/" in ref.split(":", 1)[1]:  # a scheme word (docker-archive:/x/y.tar): use the file name
        ref = ref.split(":", 1)[1]
    last = ref.rstrip("/").rsplit("/", 1)[-1]
    return last.split(":", 1)[0].lower()


_PYTHON_DIR = re.compile(r"/python(\d+\.\d+)/")


def framework_package(facts: ImageFacts) -> Package | None:
    """The pip package that identifies the framework (torch, tensorflow, ...), or None."""
    by_name = {p.name.lower(): p for p in facts.packages if p.db == "pip"}
    for package, _word in _PACKAGE_WORDS:
        if package in by_name:
            return by_name[package]
    return None


def python_of(facts: ImageFacts) -> str | None:
    """The Python the framework is installed for, from its site-packages path (.../python3.10/...)."""
    pkg = framework_package(facts)
    paths = [pkg.path] if pkg is not None and pkg.path else [p.path for p in facts.packages if p.db == "pip" and p.path]
    for path in paths:
        m = _PYTHON_DIR.search(path or "")
        if m:
            return m.group(1)
    return None


def framework_of(facts: ImageFacts) -> str | None:
    names = {p.name.lower() for p in facts.packages}
    for package, word in _PACKAGE_WORDS:
        if package in names:
            return word
    repo = _repository(facts.reference)
    for needle, word in _NAME_WORDS:
        if needle in repo:
            return word
    return None


def chosen_nccl(facts: ImageFacts) -> str | None:
    """The NCCL the engine considers loaded (same order as engine.context.NCCL_ORIGIN_ORDER)."""
    from ..engine.context import NCCL_ORIGIN_ORDER

    rank = {o: i for i, o in enumerate(NCCL_ORIGIN_ORDER)}
    found = sorted(
        (n for n in facts.nccl if n.version and numeric_tuple(n.version)),
        key=lambda n: rank.get(n.origin or "", len(rank)),
    )
    return found[0].version if found else None


def summary_of_facts(facts: ImageFacts) -> Summary:
    lib = facts.rdma.libibverbs
    distro = " ".join(x for x in (facts.os.id, facts.os.version_id) if x) or None
    return Summary(
        framework=framework_of(facts),
        distro=distro,
        cuda=facts.cuda.version if facts.cuda else None,
        nccl=chosen_nccl(facts),
        rdma_core=lib.rdma_core if lib else None,
        pabi=lib.private_abi if lib else None,
        flavor=facts.rdma.flavor,
        ofed=facts.rdma.ofed_version,
        ucx=facts.ucx.version if facts.ucx else None,
        hpcx=facts.hpcx.version if facts.hpcx else None,
        framework_version=pkg.version if (pkg := framework_package(facts)) is not None else None,
        python=python_of(facts),
    )


def summary_of_row(row: dict[str, Any], pabi: int | None = None) -> Summary:
    return Summary(
        framework=row.get("framework"),
        distro=row.get("distro"),
        cuda=row.get("cuda"),
        nccl=row.get("nccl"),
        rdma_core=row.get("rdma_core"),
        pabi=pabi,
        flavor=row.get("rdma_flavor"),
        ofed=row.get("mlnx_ofed") or row.get("doca"),
        ucx=row.get("ucx"),
        hpcx=row.get("hpcx"),
        framework_version=row.get("framework_version"),
        python=row.get("python"),
    )


_LABELS = (
    ("rdma_core", "rdma-core"),
    ("pabi", "provider ABI (PABI)"),
    ("flavor", "RDMA flavor"),
    ("ofed", "MLNX/DOCA userspace"),
    ("nccl", "NCCL"),
    ("cuda", "CUDA"),
    ("ucx", "UCX"),
    ("hpcx", "HPC-X"),
    ("distro", "distro"),
    ("framework", "framework"),
    ("framework_version", "framework version"),
    ("python", "Python"),
)


# Facts a missing value does not mean "absent" for: the Python and framework version of an image imgcheck
# could not tie to a package (catalog rows, hand-written facts).
_NOT_READ_AS_NONE = ("python", "framework_version")


def _text(value: object, missing: str = "none") -> str:
    return missing if value is None else str(value)


def differences(old: Summary, new: Summary, new_missing: str = "none") -> tuple[str, ...]:
    """'rdma-core 44.0 -> 50.0' lines for every fact that differs, most decisive first. `new_missing` is how a
    null on the new side reads: 'none' for inspected facts, 'not listed' for a published row that omits it."""
    out = []
    for field, label in _LABELS:
        a, b = getattr(old, field), getattr(new, field)
        if a == b:
            continue
        if field == "flavor":
            a, b = a or "unknown", b or "unknown"
        gone = "none" if field in ("rdma_core", "pabi") and new.flavor == "none" else new_missing  # no libibverbs
        was = "unknown" if field in _NOT_READ_AS_NONE else "none"
        out.append(f"{label} {_text(a, was)} -> {_text(b, gone)}")
    return tuple(out)


def major(version: str | None) -> int | None:
    nums = numeric_tuple(version or "")
    return nums[0] if nums else None


def newer_first_key(version: str | None) -> tuple[int, tuple[int, ...]]:
    """Sort key putting higher dotted versions first and unknown last."""
    nums = numeric_tuple(version or "")
    return (0, tuple(-n for n in nums)) if nums else (1, ())


def compare_versions(a: str | None, b: str | None) -> int:
    if not a or not b:
        return 0
    return compare_numeric(a, b)
