"""NUMA nodes from /sys/devices/system/node: CPUs and memory per node, CPU-less (memory-only) nodes recorded."""

from __future__ import annotations

import os
import shutil

from imgcheck.node.numa import cpu_count
from imgcheck.node.probe import probe

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")


def test_cpulist_counts():
    assert cpu_count("0-63") == 64 and cpu_count("0-3,8,10-11") == 7 and cpu_count("") == 0
    assert cpu_count("0-x") is None


def test_fixture_node_has_one_numa_node_with_cpus():
    facts = probe(os.path.join(FIXTURES, "inbox-ubuntu2204"))
    (node,) = facts.numa_nodes
    assert (node.index, node.cpulist, node.cpus, node.memory_kib) == (0, "0-63", 64, 263856412)


def test_memory_only_node(tmp_path):
    # a coherent-GPU or CXL layout: node1 has memory and an empty cpulist (the kernel prints just a newline)
    root = tmp_path / "node"
    shutil.copytree(os.path.join(FIXTURES, "inbox-ubuntu2204"), root, symlinks=True)
    node1 = root / "sys/devices/system/node/node1"
    node1.mkdir()
    (node1 / "cpulist").write_text("\n")
    (node1 / "meminfo").write_text("Node 1 MemTotal:       100663296 kB\nNode 1 MemFree:        100000000 kB\n")
    facts = probe(str(root))
    assert [(n.index, n.cpus, n.memory_kib) for n in facts.numa_nodes] == [(0, 64, 263856412), (1, 0, 100663296)]


def test_no_node_directory_is_unknown(tmp_path):
    root = tmp_path / "node"
    shutil.copytree(os.path.join(FIXTURES, "inbox-ubuntu2204"), root, symlinks=True)
    shutil.rmtree(root / "sys/devices/system/node")
    facts = probe(str(root))
    assert facts.numa_nodes is None and "/sys/devices/system/node" in facts.unknown["numa_nodes"]
