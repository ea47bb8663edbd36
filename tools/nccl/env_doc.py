"""Which NCCL_* variables NVIDIA documents, and in which section: the index of the NCCL "Environment Variables" page
(https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html, its _sources/env.rst.txt, read at the 2.30
documentation), written down by hand because the page is not in the NCCL repository and no tag carries it.

The page (since 2.23) has two sections. "System configuration": settings that make NCCL follow the system and may be
kept in scripts. "Debugging": settings that "should not be used in production nor retained in scripts, or only as
workaround, and removed as soon as the issue is resolved. Keeping them set may result in sub-optimal behavior,
crashes, or hangs." A variable NCCL reads that the page does not list is internal: NVIDIA does not document or
support it (2.30's typed parameter registry says the same with NCCL_PARAM_FLAG_PUBLISHED, "public parameters in
NCCL doc", src/include/param/common.h).

Re-check against the page when a new NCCL release is documented: add the new headings, move any that changed
section, and re-run tools/nccl/gen_params.py (docs/knowledge-coverage.md).

Each entry: name -> (section, the page's "(since ...)" note or None, the page's deprecation / removal / caution note
or None).
"""

from __future__ import annotations

PAGE = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html"
SOURCE = f"{PAGE} (_sources/env.rst.txt of the 2.30 documentation)"
SYSTEM = "system configuration"
DEBUGGING = "debugging"
DEBUGGING_NOTE = (
    "should not be used in production nor retained in scripts, or only as workaround, and removed as soon as the "
    "issue is resolved. Keeping them set may result in sub-optimal behavior, crashes, or hangs."
)

_SYSTEM: dict[str, tuple[str | None, str | None]] = {
    "NCCL_SOCKET_IFNAME": (None, None),
    "NCCL_SOCKET_FAMILY": (None, None),
    "NCCL_SOCKET_MAGIC": (None, None),
    "NCCL_SOCKET_RETRY_CNT": ("2.24", None),
    "NCCL_SOCKET_RETRY_SLEEP_MSEC": ("2.24", None),
    "NCCL_SOCKET_POLL_TIMEOUT_MSEC": ("2.28", None),
    "NCCL_SOCKET_NTHREADS": ("2.4.8", "1 to 16; the product with NCCL_NSOCKS_PERTHREAD cannot exceed 64"),
    "NCCL_NSOCKS_PERTHREAD": ("2.4.8", "the product with NCCL_SOCKET_NTHREADS cannot exceed 64"),
    "NCCL_CROSS_NIC": (None, None),
    "NCCL_IB_HCA": (None, None),
    "NCCL_IB_TIMEOUT": (None, "values 0-31; 0 or >= 32 gives an infinite timeout"),
    "NCCL_IB_RETRY_CNT": ("2.1.15", "valid values 0-7"),
    "NCCL_IB_GID_INDEX": ("2.1.4", "the Global ID index used in RoCE mode"),
    "NCCL_IB_ADDR_FAMILY": ("2.21", None),
    "NCCL_IB_ADDR_RANGE": ("2.21", None),
    "NCCL_IB_ROCE_VERSION_NUM": ("2.21", None),
    "NCCL_IB_SL": ("2.1.4", None),
    "NCCL_IB_TC": ("2.1.15", None),
    "NCCL_IB_FIFO_TC": ("2.22.3", None),
    "NCCL_IB_RETURN_ASYNC_EVENTS": ("2.23", None),
    "NCCL_OOB_NET_ENABLE": ("2.23", None),
    "NCCL_OOB_NET_IFNAME": ("2.23", None),
    "NCCL_UID_STAGGER_THRESHOLD": ("2.23", "a strictly positive integer"),
    "NCCL_UID_STAGGER_RATE": ("2.23", "a strictly positive integer"),
    "NCCL_NET": ("2.10", None),
    "NCCL_NET_PLUGIN": ("2.11", None),
    "NCCL_TUNER_PLUGIN": (None, None),
    "NCCL_PROFILER_PLUGIN": (None, None),
    "NCCL_ENV_PLUGIN": ("2.28", None),
    "NCCL_IGNORE_CPU_AFFINITY": ("2.4.6", None),
    "NCCL_CONF_FILE": ("2.23", None),
    "NCCL_DEBUG": (None, None),
    "NCCL_DEBUG_FILE": ("2.2.12", None),
    "NCCL_DEBUG_SUBSYS": ("2.3.4", None),
    "NCCL_DEBUG_TIMESTAMP_FORMAT": ("2.26", None),
    "NCCL_DEBUG_TIMESTAMP_LEVELS": ("2.26", None),
    "NCCL_COLLNET_ENABLE": ("2.6", None),
    "NCCL_COLLNET_NODE_THRESHOLD": ("2.9.9", None),
    "NCCL_CTA_POLICY": ("2.29", "legacy numeric values since 2.27"),
    "NCCL_NETDEVS_POLICY": ("2.28", None),
    "NCCL_MULTI_RANK_GPU_ENABLE": (
        "2.30",
        "experimental: 'It is not compatible with all configurations. It may exhaust resources and lock NCCL.'",
    ),
    "NCCL_TOPO_FILE": ("2.6", None),
    "NCCL_TOPO_DUMP_FILE": ("2.6", None),
    "NCCL_SET_THREAD_NAME": ("2.12", None),
}

_DEBUGGING: dict[str, tuple[str | None, str | None]] = {
    "NCCL_P2P_DISABLE": (None, None),
    "NCCL_P2P_LEVEL": ("2.3.4", None),
    "NCCL_P2P_DIRECT_DISABLE": (None, None),
    "NCCL_SHM_DISABLE": (None, None),
    "NCCL_BUFFSIZE": (None, None),
    "NCCL_NTHREADS": (None, "the values allowed are 64, 128, 256 and 512"),
    "NCCL_MAX_NCHANNELS": ("2.5.0", "deprecated in 2.17 in favor of NCCL_MAX_CTAS"),
    "NCCL_MAX_NRINGS": (
        "2.0.5",
        "old name of NCCL_MAX_NCHANNELS (used until 2.4), ignored if NCCL_MAX_NCHANNELS is set",
    ),
    "NCCL_MIN_NCHANNELS": ("2.5.0", "deprecated in 2.17 in favor of NCCL_MIN_CTAS"),
    "NCCL_MIN_NRINGS": (
        "2.2.0",
        "old name of NCCL_MIN_NCHANNELS (used until 2.4), ignored if NCCL_MIN_NCHANNELS is set",
    ),
    "NCCL_CHECKS_DISABLE": ("2.0.5", "deprecated in 2.2.12"),
    "NCCL_CHECK_POINTERS": ("2.2.12", "deprecated in 2.29.7: replaced by NCCL_CHECK_MODE=DEBUG_LOCAL"),
    "NCCL_CHECK_MODE": ("2.29.7", None),
    "NCCL_LAUNCH_MODE": ("2.1.0", "GROUP is deprecated in 2.9 and may be removed in future versions"),
    "NCCL_IB_DISABLE": (None, None),
    "NCCL_IB_AR_THRESHOLD": ("2.6", None),
    "NCCL_IB_OOO_RQ": ("2.30", None),
    "NCCL_IB_QPS_PER_CONNECTION": ("2.10", "a number between 1 and 128"),
    "NCCL_IB_SPLIT_DATA_ON_QPS": ("2.18", None),
    "NCCL_IB_CUDA_SUPPORT": (None, "removed in 2.4.0, see NCCL_NET_GDR_LEVEL"),
    "NCCL_IB_PCI_RELAXED_ORDERING": ("2.12", None),
    "NCCL_IB_ADAPTIVE_ROUTING": ("2.16", None),
    "NCCL_IB_ECE_ENABLE": ("2.23", None),
    "NCCL_MEM_SYNC_DOMAIN": ("2.16", None),
    "NCCL_CUMEM_ENABLE": ("2.18", None),
    "NCCL_CUMEM_HOST_ENABLE": ("2.23", None),
    "NCCL_NET_GDR_LEVEL": ("2.3.4", "named NCCL_IB_GDR_LEVEL before 2.4.0"),
    "NCCL_IB_GDR_LEVEL": ("2.3.4", "renamed NCCL_NET_GDR_LEVEL in 2.4.0"),
    "NCCL_NET_GDR_C2C": ("2.26", None),
    "NCCL_NET_GDR_READ": (None, None),
    "NCCL_GDRCOPY_ENABLE": (None, None),
    "NCCL_GDRCOPY_FIFO_ENABLE": (None, None),
    "NCCL_GDRCOPY_SYNC_ENABLE": (None, None),
    "NCCL_GDRCOPY_FLUSH_ENABLE": (None, None),
    "NCCL_NET_SHARED_BUFFERS": ("2.8", None),
    "NCCL_NET_SHARED_COMMS": ("2.12", None),
    "NCCL_IGNORE_NET_MISMATCH": ("2.30", None),
    "NCCL_IGNORE_COLLNET_MISMATCH": ("2.30", None),
    "NCCL_SINGLE_RING_THRESHOLD": ("2.1", "removed in 2.3"),
    "NCCL_LL_THRESHOLD": ("2.1", "removed in 2.5"),
    "NCCL_TREE_THRESHOLD": ("2.4", "removed in 2.5"),
    "NCCL_ALGO": ("2.5", None),
    "NCCL_PROTO": (
        "2.5",
        "'Users are discouraged from setting this variable, with the exception of disabling a specific protocol in "
        "case a bug in NCCL is suspected. In particular, enabling LL128 on platforms that don't support it can lead "
        "to data corruption.'",
    ),
    "NCCL_NVB_DISABLE": ("2.11", None),
    "NCCL_PXN_DISABLE": ("2.12", None),
    "NCCL_P2P_PXN_LEVEL": ("2.12", None),
    "NCCL_PXN_C2C": ("2.27", None),
    "NCCL_RUNTIME_CONNECT": ("2.22", None),
    "NCCL_GRAPH_REGISTER": ("2.11", None),
    "NCCL_LOCAL_REGISTER": ("2.19", None),
    "NCCL_LEGACY_CUDA_REGISTER": ("2.24", None),
    "NCCL_WIN_ENABLE": ("2.27", None),
    "NCCL_SET_STACK_SIZE": ("2.9", None),
    "NCCL_GRAPH_MIXING_SUPPORT": ("2.13", None),
    "NCCL_GRAPH_STREAM_ORDERING": ("2.30", None),
    "NCCL_DMABUF_ENABLE": ("2.13", None),
    "NCCL_P2P_NET_CHUNKSIZE": ("2.14", None),
    "NCCL_P2P_LL_THRESHOLD": ("2.14", None),
    "NCCL_ALLOC_P2P_NET_LL_BUFFERS": ("2.14", None),
    "NCCL_COMM_BLOCKING": ("2.14", None),
    "NCCL_CGA_CLUSTER_SIZE": ("2.16", "0 to 8"),
    "NCCL_MAX_CTAS": ("2.17", "a positive integer up to 64 (32 prior to 2.25)"),
    "NCCL_MIN_CTAS": ("2.17", "a positive integer up to 64 (32 prior to 2.25)"),
    "NCCL_NVLS_ENABLE": ("2.17", None),
    "NCCL_IB_MERGE_NICS": ("2.20", None),
    "NCCL_NET_MERGE_POLICY": ("2.30.5", None),
    "NCCL_MNNVL_ENABLE": ("2.21", None),
    "NCCL_MNNVL_UUID": ("2.25", "normally assigned by the Fabric Manager; it should not need to be overridden"),
    "NCCL_MNNVL_CLIQUE_ID": ("2.25", None),
    "NCCL_RAS_ENABLE": ("2.24", None),
    "NCCL_RAS_ADDR": ("2.24", None),
    "NCCL_RAS_TIMEOUT_FACTOR": ("2.24", None),
    "NCCL_LAUNCH_ORDER_IMPLICIT": ("2.26", None),
    "NCCL_LAUNCH_RACE_FATAL": ("2.26", None),
    "NCCL_IPC_USE_ABSTRACT_SOCKET": ("2.29", None),
    "NCCL_SYM_GIN_KERNELS_ENABLE": ("2.29", None),
}

DOCUMENTED: dict[str, tuple[str, str | None, str | None]] = {
    **{n: (SYSTEM, *v) for n, v in _SYSTEM.items()},
    **{n: (DEBUGGING, *v) for n, v in _DEBUGGING.items()},
}
