"""NUMA topology: each node's CPUs and memory, from /sys/devices/system/node (Documentation/ABI/stable/sysfs-devices-node).

A node whose cpulist is empty is CPU-less (memory-only): CXL or HBM memory exposed as NUMA nodes, the GPU memory
nodes of coherent GPU systems (GH200, GB200), or nodes whose CPUs are offline. NCCL reads a device's NUMA node
(its PCI numa_node) to place the device under a CPU of its topology and sets thread affinity from that node's
cpumap (src/graph/xml.cc, src/graph/topo.cc); from 2.23 its host-memory buffers are cuMem allocations of type
CU_MEM_LOCATION_TYPE_HOST_NUMA on the GPU's CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID (node 0 when the driver says -1;
src/include/alloc.h, src/misc/cudawrap.cc), enabled by default from 2.24 with a CUDA 12.6+ driver and tested
(falling back to /dev/shm) from 2.26.3. Which NUMA node the driver names, and how a CPU-less one behaves there,
is the driver's: the facts are recorded, no rule judges them (docs/node-probe.md says why).
"""

from __future__ import annotations

import re

from ..model.node import NumaNode
from .hostroot import HostReadError, HostRoot

NODE_DIR = "/sys/devices/system/node"
_NODE = re.compile(r"node(\d+)$")
_MEM_TOTAL = re.compile(r"MemTotal:\s+(\d+)\s+kB")
MAX_NODES = 1024  # a bound on probe work; Linux's MAX_NUMNODES is at most 1024 on x86-64


def cpu_count(cpulist: str) -> int | None:
    """How many CPUs a cpulist ("0-3,8,10-11", "" for none) names; None when malformed."""
    total = 0
    for part in filter(None, (p.strip() for p in cpulist.split(","))):
        lo, _, hi = part.partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()):
            return None
        total += (int(hi) - int(lo) + 1) if hi else 1
    return total


def scan_numa(host: HostRoot, unknown: dict[str, str]) -> tuple[NumaNode, ...] | None:
    if not host.is_dir(NODE_DIR):
        unknown["numa_nodes"] = f"{NODE_DIR} is not visible under the probe root (a kernel without NUMA, or /sys)"
        return None
    try:
        names = host.listdir(NODE_DIR)
    except HostReadError as exc:
        unknown["numa_nodes"] = str(exc)
        return None
    ids = sorted(int(m.group(1)) for n in names if (m := _NODE.fullmatch(n)))
    if len(ids) > MAX_NODES:
        unknown["numa_nodes"] = f"{len(ids)} NUMA nodes, more than the {MAX_NODES} read"
        return None
    nodes = []
    for node_id in ids:
        base = f"{NODE_DIR}/node{node_id}"
        try:
            cpulist = host.read_text(f"{base}/cpulist", 64 * 1024)
        except HostReadError:
            cpulist = None
        cpulist = cpulist.strip() if cpulist is not None else None
        try:
            meminfo = host.read_text(f"{base}/meminfo", 64 * 1024)
        except HostReadError:
            meminfo = None
        match = _MEM_TOTAL.search(meminfo or "")
        nodes.append(
            NumaNode(
                index=node_id,
                cpulist=cpulist,
                cpus=cpu_count(cpulist) if cpulist is not None else None,
                memory_kib=int(match.group(1)) if match else None,
            )
        )
    return tuple(nodes)
