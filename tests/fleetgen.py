"""Generated fleets: many nodes in a few distinct configurations, shaped like real nodes."""

from __future__ import annotations

import dataclasses
import itertools
import os

from imgcheck.model.node_io import load_node_facts

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "engine_nodes")
BASES = (
    "inbox-5.15-proprietary-535.json",
    "inbox-6.8-open-570.json",
    "mofed-23.10-open-550-peermem.json",
    "doca-24.10-open-580-peermem.json",
    "mofed-5.8-470-peermem.json",
)
MEMLOCK = (-1, 8192, 65536, 1048576)  # KiB; 8192 and 65536 have been reported failing (nccl-tests#206, cudf-spark#7632)


def configurations(count: int):
    """`count` distinct node configurations: real-shaped bases x memlock limits."""
    bases = [load_node_facts(os.path.join(FIXTURES, name)) for name in BASES]
    configs = []
    for base, memlock in itertools.product(bases, MEMLOCK):
        configs.append(dataclasses.replace(base, limits=dataclasses.replace(base.limits, memlock_kib=memlock)))
    assert count <= len(configs)
    return configs[:count]


def fleet(nodes: int, distinct: int):
    configs = configurations(distinct)
    return [
        dataclasses.replace(
            configs[i % distinct],
            name=f"gpu-{i:05d}",
            labels={"rack": f"r{i // 40}"},
            collected_at=f"2026-12-01T00:{i % 60:02d}:00Z",
        )
        for i in range(nodes)
    ]
