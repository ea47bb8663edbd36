"""catalogs/nccl_proxy_pool.json (tools/nccl/gen_proxy_pool.py): the /dev/shm segment each local rank's NCCL proxy
maps for its ops pool, sizeof(struct ncclProxyOpsPool) laid out from the definitions at every release tag."""

from __future__ import annotations

from engine_facts import matrix

from imgcheck.versions import ranges


def _row(version):
    return next(
        r
        for r in matrix().rows("nccl_proxy_pool")
        if ranges.at_least(version, r["first"]) and ranges.at_least(r["last"], version)
    )


def test_the_derived_pool_is_the_segment_a_real_log_failed_to_create():
    # pytorch/torchtitan#853, NCCL 2.21.5 in a container with a 16 MB /dev/shm: "Error while creating shared memory
    # segment /dev/shm/nccl-1YsMbG (size 7340384)" (tests/incidents/cases.json torchtitan-853-ci-container-16mb-shm)
    row = _row("2.21.5")
    assert row["pool_bytes"] == 7340384
    assert row["op_bytes"] == 112 and row["ops_per_peer"] == 1024


def test_every_release_is_a_row_and_only_releases_without_the_pool_are_null():
    rows = list(matrix().rows("nccl_proxy_pool"))
    assert rows[0]["first"] == "2.3.5" and rows[-1]["last"] == max(
        (r["release"] for r in matrix().rows("nccl_release_notes")), key=lambda v: tuple(map(int, v.split(".")))
    )
    for prev, row in zip(rows, rows[1:], strict=False):
        assert ranges.below(prev["last"], row["first"])  # contiguous, in order
    nulls = [r for r in rows if r["pool_bytes"] is None]
    # the shared ops pool is first in 2.12.7 (struct ncclProxyOpsPool in src/include/proxy.h)
    assert [r["id"] for r in nulls] == ["2.3.5..2.11.4"] and "no struct ncclProxyOpsPool" in nulls[0]["note"]
    sizes = [r["pool_bytes"] for r in rows if r["pool_bytes"] is not None]
    assert sizes == sorted(sizes)  # ncclProxyOp grew and MAX_OPS_PER_PEER doubled with 64 channels (2.25.1)
