"""UCX-NO-IB-TRANSPORT on the real bookworm image (Debian's UCX 1.13.1 ships libuct_ib in libucx0): with its
InfiniBand module removed in a layer on top (what an RPM image without ucx-ib, or a `RUN rm`, leaves), settings
that ask UCX for RDMA fail or fall back; with the module present, nothing is said."""

from __future__ import annotations

import dataclasses

import pytest
from engine_facts import node, real_facts, run, unknown_rules
from imagebuild import Whiteout, make_layer, write_docker_archive
from rootfs import build_rootfs

from imgcheck import api
from imgcheck.sources.read_options import ReadOptions

RULE = "UCX-NO-IB-TRANSPORT"
UCX_DIR = "usr/lib/x86_64-linux-gnu/ucx"


@pytest.fixture(scope="module")
def no_ib(tmp_path_factory):
    """The real bookworm rootfs with a layer deleting UCX's InfiniBand transport module (whiteouts)."""
    top = make_layer({f"{UCX_DIR}/libuct_ib.so.0": Whiteout(), f"{UCX_DIR}/libuct_ib.so.0.0.0": Whiteout()})
    path = str(tmp_path_factory.mktemp("noib") / "image.tar")
    base = build_rootfs("bookworm")
    top_file = str(tmp_path_factory.mktemp("noib-layer") / "top.tar")
    with open(top_file, "wb") as fh:
        fh.write(top)
    write_docker_archive(path, [], layer_files=[base, top_file])
    return api.inspect_image(f"docker-archive:{path}", ReadOptions(use_cache=False))


def _env(facts, **env):
    return dataclasses.replace(facts, env=dict(facts.env, **env))


def _findings(facts):
    return [f for f in run(facts, node("inbox-6.8-open-570")).findings if f.id == RULE]


def test_the_module_list_is_read_without_uct_ib(no_ib):
    assert no_ib.ucx is not None and no_ib.ucx.version == "1.13.1"
    assert [m.name for m in no_ib.ucx.modules] == ["uct_rdmacm"]


@pytest.mark.parametrize(
    "env, severity",
    [
        ({"UCX_TLS": "rc,sm,self"}, "error"),  # only IB reaches another node
        ({"UCX_TLS": "dc_x,self,cuda_copy"}, "error"),
        ({"UCX_NET_DEVICES": "mlx5_0:1"}, "error"),  # an HCA port: only IB transports own it
        ({"UCX_TLS": "rc,tcp,sm"}, "warning"),  # TCP left: falls back
        ({"UCX_NET_DEVICES": "mlx5_0:1,eth0"}, "warning"),
        ({"OMPI_MCA_pml": "ucx"}, "warning"),
    ],
)
def test_rdma_asked_without_the_module(no_ib, env, severity):
    [f] = _findings(_env(no_ib, **env))
    assert f.severity == severity
    facts = {e.fact: e.value for e in f.evidence}
    assert facts["image.ucx.modules"] == "uct_rdmacm" and facts["image.ucx.module_dir"] == f"/{UCX_DIR}"
    if severity == "error":
        assert f.predicted_error == "no usable transports/devices"


@pytest.mark.parametrize("env", [{"UCX_TLS": "tcp,sm,self"}, {"UCX_NET_DEVICES": "eth0"}])
def test_the_job_chose_tcp(no_ib, env):
    assert _findings(_env(no_ib, **env)) == []
    assert RULE not in unknown_rules(run(_env(no_ib, **env), node("inbox-6.8-open-570")))


@pytest.mark.parametrize("env", [{}, {"UCX_TLS": "^rc"}, {"UCX_TLS": "all"}])
def test_nothing_asks_for_rdma_but_the_node_has_it(no_ib, env):
    """UCX_TLS's default (all) on an RDMA node: without libuct_ib UCX silently runs over TCP (a warning)."""
    [f] = _findings(_env(no_ib, **env))
    assert f.severity == "warning" and "only use TCP" in f.title
    facts = {e.fact: e.value for e in f.evidence}
    assert facts["image.ucx.modules"] == "uct_rdmacm" and facts["node.rdma.devices"]


def test_no_rdma_on_the_node_nothing_to_say(no_ib):
    result = run(no_ib, node("cpu-no-rdma"))
    assert RULE not in {f.id for f in result.findings} | set(unknown_rules(result))


def test_with_the_module_nothing_is_said(debian_archive):
    facts = _env(real_facts(debian_archive("bookworm")), UCX_TLS="rc,sm,self", OMPI_MCA_pml="ucx")
    assert _findings(facts) == []
    assert RULE not in unknown_rules(run(facts, node("inbox-6.8-open-570")))


def test_module_dir_unknown_is_unknown(no_ib):
    facts = _env(no_ib, UCX_TLS="rc,sm,self")
    facts = dataclasses.replace(facts, ucx=dataclasses.replace(facts.ucx, module_dir=None))
    result = run(facts, node("inbox-6.8-open-570"))
    assert RULE in unknown_rules(result) and not _findings(facts)
