"""Which libraries of an image open RDMA devices and pin memory with them (NCCL, UCX, libfabric, Open MPI, ...).

Read from the rdma_consumers rows (compat_matrix/catalogs/rdma_consumers.json). Every one of them is held to
RLIMIT_MEMLOCK by the kernel (ib_umem_get) unless the process has CAP_IPC_LOCK, so a launch rule about memlock or
RDMA devices names the consumers the image really carries instead of assuming NCCL.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..matrix import Matrix
from ..model.image import ImageFacts
from .package_names import first_package

TABLE = "rdma_consumers"
NCCL = "nccl"


@dataclass(frozen=True)
class Consumer:
    consumer: str  # the row's key
    display: str
    how: str  # what in the image shows it ("image.ucx 1.15.0", "package openmpi-bin 4.1.2")
    symptom: str | None  # what it prints when the memlock limit is hit (None: not read)


@dataclass(frozen=True)
class Consumers:
    found: tuple[Consumer, ...]
    unread: tuple[str, ...]  # consumers whose presence the image facts do not show either way ("UCX: not read")

    def words(self) -> str:
        return ", ".join(f"{c.display} ({c.how})" for c in self.found)

    def symptom(self) -> str | None:
        return next((c.symptom for c in self.found if c.symptom), None)


def _by_fact(fact: str, image: ImageFacts) -> str | None:
    """What the image fact `fact` shows of the consumer (None: not there)."""
    if fact == "nccl":
        return f"image.nccl {image.nccl[0].version or '(version unknown)'}" if image.nccl else None
    if fact == "ucx":
        return f"image.ucx {image.ucx.version or '(version unknown)'}" if image.ucx is not None else None
    if fact == "hpcx":
        return f"image.hpcx {image.hpcx.version or '(version unknown)'}" if image.hpcx is not None else None
    if fact == "libfabric":
        fabric = image.libfabric
        if fabric is None:
            return None
        verbs = [p for p in (*fabric.builtin_providers, *fabric.dl_providers) if p in ("efa", "verbs")]
        if not verbs and not fabric.needs_ibverbs:
            return None  # a libfabric without a verbs-based provider (tcp, shm) opens no RDMA device
        return f"image.libfabric {fabric.path} (providers {', '.join(verbs) or 'linking libibverbs'})"
    raise ValueError(f"rdma_consumers: unknown fact {fact}")


def consumers_in(matrix: Matrix, image: ImageFacts, nccl_ib_off: bool, table: str = TABLE) -> Consumers:
    """Every consumer of the table the image shows, in table order; NCCL only while its IB transport is on. `table`:
    another catalog of the same shape (cuda_ipc_consumers: who maps a peer GPU's memory by CUDA IPC)."""
    found: list[Consumer] = []
    unread: list[str] = []
    for row in matrix.rows(table):
        if row["consumer"] == NCCL and nccl_ib_off:
            continue  # NCCL_IB_DISABLE / NCCL_NET=Socket: NCCL itself opens no verbs device
        fact = row.get("fact")
        how = _by_fact(fact, image) if fact else None
        if how is None:
            package = first_package(row, image)
            how = f"package {package.name} {package.version}" if package is not None else None
        if how is not None:
            found.append(Consumer(row["consumer"], row["display"], how, row.get("symptom")))
        elif fact and image.unknown_reason(fact):
            unread.append(f"{row['display']}: {image.unknown_reason(fact)}")
    return Consumers(tuple(found), tuple(unread))
