"""Finding a catalog row's component among an image's packages: Python distributions by canonical name, OS
packages (dpkg, rpm, apk) by name. Catalog rows list both as `python_dists` and `os_packages`. A conda package
(db "conda") is a Python distribution under its PyPI name (conda-forge names most Python packages so) or under a
row's `conda_packages` where conda names it otherwise (torch is `pytorch` on conda)."""

from __future__ import annotations

from typing import Any

from ..model.image import ImageFacts, Package

# a Python distribution's db: "python" from the extractor (a dist-info on a site directory); "pip" from facts
# written by recommend's conversions and older facts files
PYTHON_DBS = ("python", "pip")
CONDA_DB = "conda"  # a conda environment's conda-meta record (extractors/conda.py)


def identifies(row: dict[str, Any], package: Package) -> bool:
    name = package.name.lower().replace("_", "-")
    if package.db in PYTHON_DBS:
        return name in row["python_dists"]
    if package.db == CONDA_DB:
        return name in row["python_dists"] or name in (row.get("conda_packages") or ())
    return name in row["os_packages"]


def first_package(row: dict[str, Any], image: ImageFacts) -> Package | None:
    """The image's first package that shows the row's component, if any."""
    return next((p for p in image.packages if identifies(row, p)), None)
