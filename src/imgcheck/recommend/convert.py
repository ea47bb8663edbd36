"""A shipped catalog row -> the ImageFacts the engine needs, so candidates are judged by the same rules as images.

The row says which rdma-core, NCCL and CUDA the image carries; the rest follows from the matrix's own
rdma-core catalog (library file name, provider ABI, first release of ibv_reg_mr_iova2 / ibv_reg_dmabuf_mr).
An upstream rdma-core build ships libibverbs and its providers (mlx5 among them) from one tree, so they share
one PABI. Where the row leaves a deciding fact open (flavor null), every reading is returned and a candidate
must come out clean under all of them. A row without the facts to decide (no rdma-core and no 'none') gives
no facts at all: such an image is never recommended.
"""

from __future__ import annotations

from typing import Any

from packaging.version import InvalidVersion, Version

from ..matrix import Matrix
from ..model.image import (
    FLAVOR_DOCA,
    FLAVOR_INBOX,
    FLAVOR_MLNX_OFED,
    FLAVOR_NONE,
    Cuda,
    Hpcx,
    ImageFacts,
    Libibverbs,
    Nccl,
    OsRelease,
    Package,
    Provider,
    RdmaFacts,
    Ucx,
)
from ..versions.ecosystems import at_least, numeric_tuple

FLAVORS = (FLAVOR_INBOX, FLAVOR_MLNX_OFED, FLAVOR_DOCA, FLAVOR_NONE)
CATALOG_PATH = "compat_matrix/catalogs/base_images.json"
CATALOG_TABLES = ("base_images", "cuda_images")  # same row shape; cuda_images: the nvidia/cuda tags


class NotCheckable(Exception):
    """The row lacks a fact the engine needs; the message says which."""


def reference_of(row: dict[str, Any]) -> str:
    """What to pull: the tag when the row names one (NGC '24.05-py3'), else the release."""
    return f"{row['image']}:{row.get('tag') or row['release']}"


def rdma_release(matrix: Matrix, rdma_core: str) -> dict[str, Any] | None:
    """The rdma_core_releases row of the same major (e.g. '39.0' for 39.0; stable 39.x share its ABI)."""
    nums = numeric_tuple(rdma_core)
    return matrix.row("rdma_core_releases", version=f"{nums[0]}.0") if nums else None


def _first_release(matrix: Matrix, function: str) -> str | None:
    row = matrix.row("rdma_core_functions", function=function)
    return row["first_release"] if row else None


def _libibverbs(matrix: Matrix, rdma_core: str, where: str) -> tuple[Libibverbs, Provider]:
    rel = rdma_release(matrix, rdma_core)
    if rel is None:
        raise NotCheckable(f"rdma-core {rdma_core} is not in the matrix's rdma_core_releases")
    file_version = rel["libibverbs_file"].split(".so.", 1)[-1]
    iova2, dmabuf = _first_release(matrix, "ibv_reg_mr_iova2"), _first_release(matrix, "ibv_reg_dmabuf_mr")
    pabi = rel["pabi"]
    lib = Libibverbs(
        version=file_version,
        rdma_core=rdma_core,
        private_abi=pabi,
        symbol_versions=(rel["newest_ibverbs_symbol_version"],),
        has_reg_mr_iova2=bool(iova2 and at_least(rdma_core, iova2)),
        has_reg_dmabuf_mr=bool(dmabuf and at_least(rdma_core, dmabuf)),
        soname="libibverbs.so.1",
        path=where,
    )
    provider = Provider(name="mlx5", pabi=pabi, path=f"libmlx5-rdmav{pabi}.so ({where})", private_abi_needed=pabi)
    return lib, provider


_FRAMEWORK_PACKAGES = {
    "pytorch": "torch",
    "tensorflow": "tensorflow",
    "mxnet": "mxnet",
    "paddlepaddle": "paddlepaddle",
    "jax": "jax",
}


def _framework_package(row: dict[str, Any], where: str) -> tuple[Package, ...]:
    """The framework's pip package as the row states it (torch 2.4.0a0+07cecf4168), so an image described by a
    row is ranked and compared like an inspected one; nothing when the version is not a PEP 440 version."""
    name = _FRAMEWORK_PACKAGES.get(row.get("framework") or "")
    version = row.get("framework_version")
    if not name or not version:
        return ()
    try:
        Version(version)
    except InvalidVersion:
        return ()
    return (Package(name, version, "pip", path=where),)


def _unknown_of(row: dict[str, Any], catalog: str) -> dict[str, str]:
    """What a catalog row does not say is unknown, never absent (DESIGN.md "Known and unknown"). The framework's
    own package may be stated (framework_version); every other package stays unknown."""
    why = f"not recorded in {catalog}"
    out = {"env": why, "nccl_conf": why, "packages": why}
    if not row.get("cuda_compat_driver"):  # a row that names the image's forward-compat libcuda decides it
        out["cuda.compat_driver"] = why
    for fact in ("cuda", "nccl", "ucx", "hpcx"):
        if not row.get(fact):
            out[fact] = why
    return out


def facts_of_row(row: dict[str, Any], matrix: Matrix, catalog: str = CATALOG_PATH) -> list[ImageFacts]:
    """Every reading of the row as ImageFacts (one, or one per possible flavor); NotCheckable if none is possible."""
    reference = reference_of(row)
    where = f"catalog: {row.get('source')}"
    flavor = row.get("rdma_flavor")
    if flavor is not None and flavor not in FLAVORS:
        raise NotCheckable(f"unknown rdma_flavor {flavor!r}")
    rdma_core = row.get("rdma_core")
    if flavor != FLAVOR_NONE and not rdma_core:
        raise NotCheckable("the catalog does not know its rdma-core / libibverbs")
    distro_id, _, distro_version = (row.get("distro") or "").partition(" ")
    common: dict[str, Any] = dict(
        reference=reference,
        os=OsRelease(id=distro_id or None, version_id=distro_version or None),
        ucx=Ucx(row["ucx"], path=where, origin="catalog") if row.get("ucx") else None,
        nccl=(Nccl(row["nccl"], path=where, origin=row.get("nccl_origin") or "library"),) if row.get("nccl") else (),
        cuda=Cuda(
            version=row["cuda"],
            path=where,
            origin="catalog",
            compat_driver=row.get("cuda_compat_driver"),
            compat_path=f"/usr/local/cuda/compat ({where})" if row.get("cuda_compat_driver") else None,
        )
        if row.get("cuda")
        else None,
        hpcx=Hpcx(row["hpcx"], path=where) if row.get("hpcx") else None,
        packages=_framework_package(row, where),
        notes=(f"facts from {catalog}, not read from the image",)
        + ((row["note"],) if row.get("rdma_flavor") == FLAVOR_NONE and row.get("note") else ()),  # why none
        unknown=_unknown_of(row, catalog),
    )
    if flavor == FLAVOR_NONE:
        return [ImageFacts(rdma=RdmaFacts(flavor=FLAVOR_NONE), **common)]
    assert rdma_core  # checked above: only the 'none' flavor goes without one
    lib, provider = _libibverbs(matrix, rdma_core, where)
    ofed = row.get("mlnx_ofed")  # a DOCA suite version (e.g. 3.2.0) is not a DOCA-OFED release: left unknown
    readings = [flavor] if flavor else [FLAVOR_INBOX, FLAVOR_DOCA if row.get("doca") else FLAVOR_MLNX_OFED]
    out = []
    for reading in readings:
        rdma = RdmaFacts(
            libibverbs=lib,
            providers=(provider,),
            flavor=reading,
            ofed_version=ofed if reading in (FLAVOR_MLNX_OFED, FLAVOR_DOCA) else None,
            ofed_source=where if ofed and reading != FLAVOR_INBOX else None,
        )
        out.append(ImageFacts(rdma=rdma, **common))
    return out
