"""Derived facts, one way, backed by the matrix: used by the engine, triage, recommend and verify alike.

- nccl: which NCCL copy a process loads, and whether a version has a behaviour (nccl_features rows)
- settings: an NCCL setting as the process sees it (log env > image Env > /etc/nccl.conf)
- stack: what a node's RDMA stack offers (kernel_rdma_features rows; memory_peers inferred when unseen)
- gpudirect: the DMA-BUF / peer-memory path NCCL takes on a node
- cuda: the driver floor for a CUDA toolkit (cuda_minor_compat rows)
- providers: which libibverbs provider a node's RDMA device needs

No version number, threshold or driver floor is written here: each is a sourced matrix row.
Pure: facts and a Matrix in, answers out (True | False | None with words saying why).
"""

from __future__ import annotations

from functools import lru_cache

from ..matrix import Matrix, load_matrix

# Rows the knowledge functions look up by key for triage and verify (the rule families declare their own).
NEEDS = {
    "thresholds": {
        "memlock_low_kib",
        "ckpt_crc32_segfault_driver_branch",
        "cumem_min_cuda",
        "cumem_old_driver_below",
        "nccl_ib_retry_cnt_max",
        "memory_peers_sysfs_last_seen_ofed_series",
        "mlnx_ofed_last_series",
    },
    "nccl_features": {"relaxed_ordering_iova2", "gdr_module_sysfs_check", "dmabuf"},
    "kernel_rdma_features": {
        ("dmabuf_mr", "inbox"),
        ("dmabuf_mr", "mlnx_ofed"),
        ("peer_memory_api", "inbox"),
        ("peer_memory_api", "mlnx_ofed"),
        ("memory_peers_sysfs_removed", "mlnx_ofed"),
    },
    "rdma_core_functions": {"ibv_reg_dmabuf_mr", "ibv_reg_mr_iova2"},
}


@lru_cache(maxsize=1)
def shipped() -> Matrix:
    """The packaged matrix, for callers (triage, verify) that are not handed one."""
    return load_matrix()
