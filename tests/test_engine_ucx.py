"""UCX-TLS-NO-INTERNODE on the real bookworm image (UCX 1.13.1 from Debian) with UCX_TLS in its Env."""

from __future__ import annotations

import dataclasses

import pytest
from engine_facts import node, real_facts, run, unknown_rules

from imgcheck.engine.ucx import allowed_internode
from imgcheck.sources.read_options import ReadOptions

RULE = "UCX-TLS-NO-INTERNODE"


def _with_tls(facts, value):
    return dataclasses.replace(facts, env=dict(facts.env, UCX_TLS=value))


@pytest.mark.parametrize("value", ["sm,self", "shm,self,cuda_copy,cuda_ipc", "self,posix,sysv,cma", "mm,cuda"])
def test_only_intra_node_transports_fail(debian_archive, value):
    facts = _with_tls(real_facts(debian_archive("bookworm")), value)
    result = run(facts, node("inbox-6.8-open-570"))
    [finding] = [f for f in result.findings if f.id == RULE]
    assert finding.severity == "error" and "Destination is unreachable" in finding.predicted_error
    assert {e.fact for e in finding.evidence} >= {"image.env.UCX_TLS", "image.ucx.version"}
    assert value in finding.title


@pytest.mark.parametrize("value", ["rc,sm,self", "all", "ud_x,self", "tcp", "^tcp", "^sm", "ib,cuda", "dc_x,sm", ""])
def test_a_network_transport_left_is_fine(debian_archive, value):
    facts = _with_tls(real_facts(debian_archive("bookworm")), value)
    result = run(facts, node("inbox-6.8-open-570"))
    assert RULE not in {f.id for f in result.findings} and RULE not in unknown_rules(result)


def test_unknown_transport_name_is_unknown_not_ok(debian_archive):
    facts = _with_tls(real_facts(debian_archive("bookworm")), "sm,self,rc_mlx5_future")
    result = run(facts, node("inbox-6.8-open-570"))
    assert RULE in unknown_rules(result) and RULE not in {f.id for f in result.findings}


def test_no_ucx_in_the_image_no_rule(debian_archive):
    facts = dataclasses.replace(_with_tls(real_facts(debian_archive("bookworm")), "sm,self"), ucx=None)
    result = run(facts, node("inbox-6.8-open-570"))
    assert RULE not in {f.id for f in result.findings}


def test_negated_list_that_removes_every_network_transport():
    assert allowed_internode("^ib,tcp,ugni") == (set(), set())
    assert allowed_internode("^ib,tcp")[0] == {"ugni_smsg", "ugni_rdma", "ugni_udt"}


# -- a newer UCX tree (trixie's UCX 1.18.1, real files) on bullseye's rdma-core 33.2 ------------------


@pytest.fixture(scope="module")
def newer_ucx_layer(tmp_path_factory):
    import os
    import tarfile

    from rootfs import build_rootfs

    lib = "usr/lib/x86_64-linux-gnu/"
    out = str(tmp_path_factory.mktemp("ucx") / "ucx.tar")
    with tarfile.open(build_rootfs("trixie")) as src, tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as dst:
        for member in src:
            name = member.name.lstrip("./")
            rel = name[len(lib) :] if name.startswith(lib) else None
            if rel and (
                rel.startswith("ucx/") or os.path.basename(rel).startswith(("libucp.", "libucs", "libuct.", "libucm."))
            ):
                member.name = "opt/ucx/lib/" + rel
                dst.addfile(member, src.extractfile(member) if member.isfile() else None)
    return out


def _inspect(tmp_path, layers, env=None):
    from imagebuild import write_docker_archive

    from imgcheck import api

    path = str(tmp_path / "image.tar")
    write_docker_archive(path, [], env=env, layer_files=layers)
    return api.inspect_image(f"docker-archive:{path}", ReadOptions(use_cache=False))


def test_newer_ucx_modules_need_versions_old_rdma_core_lacks(tmp_path, newer_ucx_layer):
    from rootfs import build_rootfs

    facts = _inspect(
        tmp_path,
        [build_rootfs("bullseye"), newer_ucx_layer],
        env=["PATH=/usr/bin:/bin", "LD_LIBRARY_PATH=/opt/ucx/lib"],
    )
    ucx = facts.ucx
    # the loader's copy is the /opt/ucx tree, so neither the version nor the modules are the package's
    assert ucx.path.startswith("/opt/ucx/lib/libucp.so.0") and ucx.origin == "library" and ucx.version is None
    assert ucx.module_dir == "/opt/ucx/lib/ucx"
    by_name = {m.name: m for m in ucx.modules}
    assert "IBVERBS_1.12" in by_name["uct_ib"].needs_ibverbs and "MLX5_1.19" in by_name["uct_ib_mlx5"].needs_mlx5
    result = run(facts, node("inbox-6.8-open-570"))
    found = {f.evidence[0].path: f for f in result.findings if f.id == "UCX-IB-MODULE-VERSIONS"}
    ib = found["/opt/ucx/lib/ucx/libuct_ib.so.0.0.0"]
    # the line ldd prints for this file in a real bullseye chroot
    assert ib.predicted_error == (
        "/usr/lib/x86_64-linux-gnu/libibverbs.so.1: version `IBVERBS_1.12' not found "
        "(required by /opt/ucx/lib/ucx/libuct_ib.so.0.0.0)"
    )
    assert ib.evidence[0].value == "IBVERBS_1.12"  # 1.10 and 1.8 exist in rdma-core 33.2
    mlx5 = found["/opt/ucx/lib/ucx/libuct_ib_mlx5.so.0.0.0"]
    assert "MLX5_1.19" in mlx5.evidence[0].value and "libmlx5.so.1: version `MLX5_1.19'" in mlx5.predicted_error


def test_package_ucx_on_its_own_rdma_core_is_fine(tmp_path, newer_ucx_layer):
    from rootfs import build_rootfs

    facts = _inspect(tmp_path, [build_rootfs("bullseye"), newer_ucx_layer])
    assert facts.ucx.version == "1.10.0" and facts.ucx.module_dir == "/usr/lib/x86_64-linux-gnu/ucx"
    assert any(not c.loaded and c.path.startswith("/opt/ucx/") for c in facts.ucx.copies)
    result = run(facts, node("inbox-6.8-open-570"))
    assert "UCX-IB-MODULE-VERSIONS" not in {f.id for f in result.findings}
