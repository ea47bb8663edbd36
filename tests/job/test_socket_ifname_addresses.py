"""Interface addresses and routes from /proc/net (fib_trie, route, if_inet6, ipv6_route as the kernel prints them,
in the RoCE fixture root), and NCCL_SOCKET_IFNAME checked for an address NCCL accepts, not only a name."""

from __future__ import annotations

import dataclasses
import os
import shutil

import pytest
from engine_facts import committed_facts, matrix, with_nccl

from imgcheck.engine import evaluate
from imgcheck.job import EnvVar, load_job_spec
from imgcheck.node.probe import probe

HERE = os.path.dirname(__file__)
SPEC = os.path.join(HERE, "specs", "pod-roce-hostnetwork.yaml")
ROCE_ROOT = os.path.join(HERE, "..", "node", "fixtures", "inbox-ubuntu2204")
RULE = "ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE"


def pod(**env):
    (job,) = load_job_spec(SPEC)
    keep = tuple(v for v in job.env if v.name not in env)
    return dataclasses.replace(job, env=keep + tuple(EnvVar(k, v) for k, v in env.items() if v is not None))


def judge(node, value):
    image = with_nccl(committed_facts("bookworm"), "2.21.5")
    result = evaluate(image, node, matrix(), job=pod(NCCL_SOCKET_IFNAME=value, NCCL_IB_GID_INDEX="5"))
    return [f for f in result.findings if f.id == RULE], [u for u in result.unknowns if u.rule == RULE]


@pytest.fixture(scope="module")
def roce():
    return probe(ROCE_ROOT)


def test_addresses_and_routes_as_proc_net_shows_them(roce):
    by = {i.name: i for i in roce.net_interfaces}
    assert by["ens1f0np0"].ipv4 == ("172.19.0.60/24",)
    assert by["ens1f0np0"].routes == ("default via 172.19.0.1", "172.19.0.0/24", "fe80::/64")
    assert by["ens1f0np0"].ipv6 == ("fe80::e42:a1ff:fe5d:4db8/64 link", "fe80::1186:a6b1:3f0b:c441/64 link")
    assert by["ens2f0np0"].ipv4 == () and by["ens2f0np0"].ipv6 == ("fe80::e42:a1ff:fe5d:4dc0/64 link",)
    assert by["lo"].ipv4 == ("127.0.0.1/8",) and by["lo"].ipv6 == ("::1/128 host",)
    assert by["docker0"].ipv4 == ("172.17.0.1/16",)


def test_an_interface_with_an_ipv4_address_passes(roce):
    assert judge(roce, "=ens1f0np0") == ([], [])


def test_link_local_only_interface_warns(roce):
    (f,), _ = judge(roce, "=ens2f0np0")
    assert f.severity == "warning" and "ens2f0np0" in f.title and "ens2f0np0: IPv6 link-local only" in f.mechanism


def test_no_address_at_all_fails(tmp_path):
    root = tmp_path / "node"
    shutil.copytree(ROCE_ROOT, root, symlinks=True)
    inet6 = root / "proc/4242/net/if_inet6"
    inet6.write_text("".join(l + "\n" for l in inet6.read_text().splitlines() if not l.endswith("ens2f0np0")))
    (f,), _ = judge(probe(str(root)), "=ens2f0np0")
    assert f.severity == "error" and f.predicted_error == "NCCL WARN Bootstrap : no socket interface found"
    assert "ens2f0np0: no IP address" in f.mechanism


def test_unreadable_proc_net_is_unknown(tmp_path):
    root = tmp_path / "node"
    shutil.copytree(ROCE_ROOT, root, symlinks=True)
    os.unlink(root / "proc/4242/net/fib_trie")
    node = probe(str(root))
    assert all(i.ipv4 is None for i in node.net_interfaces) and "net_interfaces.ipv4" in node.unknown
    found, (u,) = judge(node, "=ens2f0np0")
    assert found == [] and "addresses are unknown" in u.reason


GLOO = "ENV-GLOO-SOCKET-IFNAME-NO-ADDRESS"


def gloo(node, value):
    image = with_nccl(committed_facts("bookworm"), "2.21.5")  # has torch (pip) beside NCCL
    result = evaluate(image, node, matrix(), job=pod(GLOO_SOCKET_IFNAME=value))
    return [f for f in result.findings if f.id == GLOO], [u for u in result.unknowns if u.rule == GLOO]


def test_gloo_needs_an_exact_name_with_an_address(roce, tmp_path):
    assert gloo(roce, "ens1f0np0") == ([], [])
    assert gloo(roce, "ens2f0np0") == ([], [])  # a link-local IPv6 address is an address to Gloo
    (f,), _ = gloo(roce, "^lo,docker")  # NCCL's syntax is a literal name to Gloo
    assert f.predicted_error == "Unable to find address for: ^lo" and "NCCL's list syntax" in f.title
    root = tmp_path / "node"
    shutil.copytree(ROCE_ROOT, root, symlinks=True)
    inet6 = root / "proc/4242/net/if_inet6"
    inet6.write_text("".join(l + "\n" for l in inet6.read_text().splitlines() if not l.endswith("ens2f0np0")))
    (f,), _ = gloo(probe(str(root)), "ens2f0np0")  # a bond slave: up, no address
    assert f.predicted_error == "Unable to find address for: ens2f0np0" and "no IPv4 or IPv6 address" in f.title


def test_gloo_without_host_network_is_unknown(roce):
    image = with_nccl(committed_facts("bookworm"), "2.21.5", env={"GLOO_SOCKET_IFNAME": "eth0"})
    result = evaluate(image, roce, matrix())
    assert [u for u in result.unknowns if u.rule == GLOO] and not [f for f in result.findings if f.id == GLOO]


UCX_DEV = "ENV-UCX-NET-DEVICES-NOT-ON-NODE"


def ucx_devices(node, value, job=True):
    image = with_nccl(committed_facts("bookworm"), "2.21.5")  # Debian's UCX 1.13.1 is in the image
    result = evaluate(image, node, matrix(), job=pod(UCX_NET_DEVICES=value) if job else None)
    if not job:
        image = dataclasses.replace(image, env=dict(image.env, UCX_NET_DEVICES=value))
        result = evaluate(image, node, matrix())
    return [f for f in result.findings if f.id == UCX_DEV], [u for u in result.unknowns if u.rule == UCX_DEV]


@pytest.mark.parametrize("value", ["mlx5_0:1", "mlx5_0:1,mlx5_1:1", "ens1f0np0", "all"])
def test_ucx_devices_the_node_has(roce, value):
    assert ucx_devices(roce, value) == ([], [])


def test_ucx_devices_none_or_some_missing(roce):
    (f,), _ = ucx_devices(roce, "mlx5_4:1")
    assert f.severity == "error" and f.predicted_error == "no usable transports/devices"
    assert "mlx5_0:1, mlx5_1:1" in f.title
    (f,), _ = ucx_devices(roce, "mlx5_0:1,mlx5_9:1")
    assert f.severity == "warning" and "mlx5_9:1" in f.title


def test_ucx_netdev_without_the_namespace_is_unknown(roce):
    found, (u,) = ucx_devices(roce, "eth0", job=False)
    assert found == [] and "not known without --job" in u.reason


def test_nodes_differing_only_in_addresses_share_a_fleet_group(roce, tmp_path):
    # a second node of the same kind: other IPv4 address, other GID values; same shapes
    from imgcheck.engine.report import group_nodes

    root = tmp_path / "node2"
    shutil.copytree(ROCE_ROOT, root, symlinks=True)
    fib = root / "proc/4242/net/fib_trie"
    fib.write_text(fib.read_text().replace("172.19.0.60", "172.19.0.61"))
    gid = root / "sys/class/infiniband/mlx5_0/ports/1/gids/5"
    gid.write_text(gid.read_text().replace("003c", "003d"))
    other = probe(str(root), name="gpu-node-2")
    assert other.net_interfaces != roce.net_interfaces
    assert len(group_nodes([roce, other])) == 1
