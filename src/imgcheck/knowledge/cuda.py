"""The NVIDIA driver a CUDA toolkit needs (cuda_minor_compat rows), compared over version ranges."""

from __future__ import annotations

from ..matrix import Matrix
from ..versions import ranges
from ..versions.ecosystems import numeric_tuple


def cuda_major(version: str | None) -> int | None:
    nums = numeric_tuple(version or "")
    return nums[0] if nums else None


def minimum_driver(matrix: Matrix, cuda_version: str | None) -> str | None:
    """The minimum driver for the toolkit: its major's floor under minor-version compatibility (CUDA 11 on),
    else the floor of its own minor release (cuda_toolkit_drivers); None when the matrix has no row."""
    major = cuda_major(cuda_version)
    if major is None:
        return None
    row = matrix.row("cuda_minor_compat", cuda_major=major)
    if row is None:
        nums = numeric_tuple(cuda_version or "")
        minor = f"{nums[0]}.{nums[1]}" if len(nums) >= 2 else None
        row = matrix.row("cuda_toolkit_drivers", cuda=minor) if minor else None
    return row["minimum_driver"] if row else None


def driver_meets(matrix: Matrix, driver: str | None, cuda_version: str | None) -> tuple[bool | None, str]:
    """Whether `driver` runs CUDA `cuda_version` without forward-compat libraries."""
    if not cuda_version or cuda_major(cuda_version) is None:
        return None, "the image's CUDA version is unknown"
    if not driver or not numeric_tuple(driver):
        return None, "the node's driver version is unknown"
    floor = minimum_driver(matrix, cuda_version)
    if floor is None:
        return None, f"the matrix has no minimum driver for CUDA {cuda_version}"
    ok = ranges.at_least(driver, floor)
    if ok is None:
        return None, f"CUDA {cuda_version} needs driver >= {floor}; driver {driver} may or may not be"
    return ok, f"CUDA {cuda_version} needs driver >= {floor}; driver {driver} is {'new enough' if ok else 'older'}"


def branch(driver: str | None) -> str | None:
    nums = numeric_tuple(driver or "")
    return str(nums[0]) if nums else None
