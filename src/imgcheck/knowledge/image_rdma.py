"""The image's libibverbs as the rules need it: present, absent or unknown, and what it exports.

A facts file that leaves out `has_reg_dmabuf_mr` has not said "no": the answer then follows from
the rdma-core release (rdma_core_functions.first_release) or the symbol versions it lists.
"""

from __future__ import annotations

from typing import Any

from ..matrix import Matrix
from ..model.image import ImageFacts, Libibverbs
from ..versions import ranges

# libibverbs entry point -> the Libibverbs flag inspect sets from the ELF's version definitions
FUNCTION_FLAGS = {"ibv_reg_mr_iova2": "has_reg_mr_iova2", "ibv_reg_dmabuf_mr": "has_reg_dmabuf_mr"}


def libibverbs(image: ImageFacts) -> tuple[Libibverbs | None, str | None]:
    """(libibverbs or None, why it is unknown or None when known). (None, None) means: the image has none."""
    lib = image.rdma.libibverbs
    if lib is not None:
        return lib, None
    reason = image.unknown_reason("rdma.libibverbs")
    return None, (f"whether the image has libibverbs is unknown ({reason})" if reason else None)


def function_row(matrix: Matrix, function: str) -> dict[str, Any]:
    return matrix.need("rdma_core_functions", function=function)


def first_release(matrix: Matrix, function: str) -> str:
    """The rdma-core release that first exports `function`."""
    return str(function_row(matrix, function)["first_release"])


def lib_has(matrix: Matrix, image: ImageFacts, function: str) -> bool | None:
    """Whether the image's libibverbs exports `function` (None: unknown)."""
    lib = image.rdma.libibverbs
    if lib is None:
        return None if image.unknown_reason("rdma.libibverbs") else False
    flag = FUNCTION_FLAGS[function]
    if image.unknown_reason(f"rdma.libibverbs.{flag}") is None:
        value: bool | None = getattr(lib, flag)
        return value
    row = function_row(matrix, function)
    if lib.symbol_versions and image.unknown_reason("rdma.libibverbs.symbol_versions") is None:
        return row["symbol_version"] in lib.symbol_versions
    if lib.rdma_core:
        return ranges.at_least(lib.rdma_core, row["first_release"])
    return None


def provider_loads(image: ImageFacts, name: str) -> bool | None:
    """Would the image's libibverbs load provider `name` (mlx5, efa, ...)? None: the facts cannot say.

    Each provider file carries the extractor's own answer (`Provider.loaded`: directory, driver file,
    PABI); any copy that loads is enough. No copy at all is "no" once the image's providers are known.
    """
    lib, unknown = libibverbs(image)
    if lib is None:
        return None if unknown else False  # no libibverbs: nothing loads
    if image.unknown_reason("rdma.providers"):
        return None
    answers = [p.loaded for p in image.rdma.providers if p.name == name]
    if any(a is True for a in answers):
        return True
    if not answers or all(a is False for a in answers):
        return False
    return None
