"""The real Debian bookworm rdma image pushed to a real registry reads like its docker-archive."""

from __future__ import annotations

import pytest
from registrypush import Pusher, push_rootfs_image

from imgcheck import api
from imgcheck.sources.read_options import ReadOptions

pytestmark = [pytest.mark.registry, pytest.mark.e2e]


def test_bookworm_from_registry_matches_archive(registry, rootfs, debian_archive):
    digest = push_rootfs_image(Pusher(registry.url), "rdma/bookworm", "latest", rootfs("bookworm"))
    facts = api.inspect_image(f"{registry.host}/rdma/bookworm:latest", ReadOptions(use_cache=False))
    reference = api.inspect_image(f"docker-archive:{debian_archive('bookworm')}")
    assert facts.digest == digest and facts.platform == "linux/amd64"
    lib = facts.rdma.libibverbs
    assert (lib.version, lib.rdma_core, lib.private_abi) == ("1.14.44.0", "44.0", 34)
    assert facts.ucx.version.startswith("1.13.1")
    # the same bytes whatever the transport: identical facts, layers named by the same diff_id
    assert facts.rdma == reference.rdma and facts.ucx == reference.ucx and facts.os == reference.os
    assert facts.packages == reference.packages and facts.env == reference.env
    assert [l.diff_id for l in facts.layers] == [l.diff_id for l in reference.layers]
