"""Which libraries of an image register CUDA memory with the RDMA NIC, and what each does without GPUDirect RDMA.

Read from the gpu_memory_registrars rows (compat_matrix/catalogs/gpu_memory_registrars.json). NCCL stages through
host memory when neither nvidia-peermem nor DMA-BUF is usable; Mooncake, NVSHMEM and DeepEP fail at registration
instead, so a rule or report that names the GPUDirect consequence names the library the image really carries.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..matrix import Matrix
from ..model.image import ImageFacts, Package
from .package_names import first_package

TABLE = "gpu_memory_registrars"
NCCL = "nccl"  # the row of NCCL itself, whose fallback the GDR rules describe
FAILS = "fails"
FALLS_BACK = "falls-back"
PEER_MEMORY_ONLY = "peer-memory"


@dataclass(frozen=True)
class Registrar:
    """One library of the table, and the package of the image that shows it."""

    registrar: str
    display: str
    registration: str
    without_gdr: str | None
    symptom: str | None
    package: Package
    note: str | None

    def words(self) -> str:
        return f"{self.display} ({self.package.name} {self.package.version})"


def registrars_in(matrix: Matrix, image: ImageFacts) -> list[Registrar]:
    """Every registrar of the table among the image's packages, in table order, each once."""
    found: list[Registrar] = []
    for row in matrix.rows(TABLE):
        package = first_package(row, image)
        if package is not None:
            found.append(
                Registrar(
                    row["registrar"],
                    row["display"],
                    row["registration"],
                    row["without_gdr"],
                    row["symptom"],
                    package,
                    row.get("note"),
                )
            )
    return found


def names(found: list[Registrar]) -> str:
    return ", ".join(r.words() for r in found)
