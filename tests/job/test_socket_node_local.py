"""Which interfaces NCCL's bootstrap and socket transport take, simulated per release (compat_matrix
nccl_socket_select, generated from every tag's ncclFindInterfaces), and whether other nodes can reach them
(loopback, link-local, node-local bridges: compat_matrix node_local_interfaces). The node is the RoCE fixture
root with the EKS Pod Identity Agent's link added as a host lays it out in /sys/class/net and /proc/net."""

from __future__ import annotations

import dataclasses
import os
import shutil

import pytest
from engine_facts import committed_facts, matrix, with_nccl

from imgcheck.engine import evaluate
from imgcheck.job import EnvVar, load_job_spec
from imgcheck.model.node import NetInterface
from imgcheck.node.probe import probe

HERE = os.path.dirname(__file__)
SPEC = os.path.join(HERE, "specs", "pod-roce-hostnetwork.yaml")
ROCE_ROOT = os.path.join(HERE, "..", "node", "fixtures", "inbox-ubuntu2204")
RULE = "ENV-NCCL-SOCKET-NODE-LOCAL"
# the agent's IPv6 listen address fd00:ec2::23 (docs.aws.amazon.com/eks/latest/userguide/pod-id-agent-setup.html)
# as /proc/net/if_inet6 prints it: address, ifindex, prefix length, scope (00 global), flags (80 permanent), name
POD_ID_INET6 = "fd000ec2000000000000000000000023 05 80 00 80 pod-id-link0\n"


def pod(host_network=True, **env):
    (job,) = load_job_spec(SPEC)
    keep = tuple(v for v in job.env if v.name not in env and v.name != "NCCL_SOCKET_IFNAME")
    extra = tuple(EnvVar(k, v) for k, v in env.items() if v is not None)
    return dataclasses.replace(job, env=keep + extra, host_network=host_network)


def judge(node, nccl="2.21.5", job=None):
    image = with_nccl(committed_facts("bookworm"), nccl)
    result = evaluate(image, node, matrix(), job=job if job is not None else pod())
    return [f for f in result.findings if f.id == RULE], [u for u in result.unknowns if u.rule == RULE]


@pytest.fixture(scope="module")
def eks(tmp_path_factory):
    root = tmp_path_factory.mktemp("eks") / "node"
    shutil.copytree(ROCE_ROOT, root, symlinks=True)
    link = root / "sys/class/net/pod-id-link0"
    link.mkdir()
    (link / "operstate").write_text("unknown\n")
    for inet6 in {(root / f"proc/{pid}/net/if_inet6").resolve() for pid in ("4242", "self")}:
        if inet6.exists():
            inet6.write_text(inet6.read_text() + POD_ID_INET6)
    return probe(str(root))


def test_the_probe_reads_the_pod_identity_link(eks):
    by = {i.name: i for i in eks.net_interfaces}
    assert by["pod-id-link0"].operstate == "unknown" and by["pod-id-link0"].ipv6 == ("fd00:ec2::23/128 global",)


def test_default_order_takes_the_pod_identity_link_and_a_link_local_only_port(eks):
    (f,), _ = judge(eks)  # NCCL_SOCKET_IFNAME unset: "ib" finds nothing, "^docker,lo" takes the rest
    assert f.severity == "warning" and "pod-id-link0" in f.title and "ens2f0np0" in f.title
    assert "ens1f0np0" in f.mechanism and "^docker,lo" in f.mechanism
    assert "Connection refused" in f.predicted_error


def test_an_exclusion_list_that_leaves_the_link_in(eks):
    (f,), _ = judge(eks, job=pod(NCCL_SOCKET_IFNAME="^lo,docker,veth,eni"))
    assert "pod-id-link0" in f.title and "'^' list" in f.fixes[0]
    fixed = pod(NCCL_SOCKET_IFNAME="^lo,docker,veth,eni,pod-id-link,ens2")
    assert judge(eks, job=fixed) == ([], [])
    assert judge(eks, job=pod(NCCL_SOCKET_IFNAME="=ens1f0np0")) == ([], [])


def test_a_prefix_that_selects_only_node_local_links_is_an_error(eks):
    (f,), _ = judge(eks, job=pod(NCCL_SOCKET_IFNAME="pod-id"))
    assert f.severity == "error" and "bootstrap can only pick" in f.title


def test_the_containers_own_network_namespace_is_not_judged_on_the_nodes_links(eks):
    assert judge(eks, job=pod(host_network=False)) == ([], [])  # decided: NCCL takes the pod's eth0
    _, (u,) = judge(eks, job=pod(host_network=False, NCCL_SOCKET_IFNAME="^lo"))
    assert "own interfaces" in u.reason


def test_names_alone_decide_for_documented_node_local_links():
    """A node described by names only (no addresses read): the catalog's documented link decides."""
    node = dataclasses.replace(
        probe(ROCE_ROOT),
        net_interfaces=(NetInterface("lo"), NetInterface("enp73s0", "up"), NetInterface("pod-id-link0", "unknown")),
    )
    (f,), _ = judge(node, job=pod(NCCL_SOCKET_IFNAME="^lo,docker,veth,eni"))
    assert "169.254.170.23" in f.title
    assert judge(node, job=pod(NCCL_SOCKET_IFNAME="^lo,docker,veth,eni,pod-id-link0")) == ([], [])


def test_kube_ipvs0_is_taken_only_by_releases_without_the_running_check():
    """kube-proxy's IPVS dummy interface is down and carries every Service's ClusterIP: NCCL before 2.28.3 takes
    it by default; 2.28.3 and later skip it (IFF_RUNNING); an unknown version is asked about."""
    node = dataclasses.replace(
        probe(ROCE_ROOT),
        net_interfaces=(
            NetInterface("lo", "unknown", ("127.0.0.1/8",), ("::1/128 host",)),
            NetInterface("kube-ipvs0", "down", ("10.96.0.1/32", "10.96.0.10/32"), ()),
            NetInterface("eth0", "up", ("10.0.3.7/24",), ()),
        ),
    )
    (f,), _ = judge(node, nccl="2.21.5")
    assert "kube-ipvs0" in f.title and f.severity == "warning"
    assert judge(node, nccl="2.28.3") == ([], [])
    _, (u,) = judge(node, nccl=None)
    assert "2.5.6..2.27.7" in u.reason


def test_socket_family_inet6_leaves_only_link_local_addresses():
    """NCCL_SOCKET_FAMILY=AF_INET6 (read by every release, nccl_socket_select): the RoCE fixture's ports have IPv4
    on ens1f0np0 but only fe80:: IPv6, so the addresses NCCL advertises are link-local on every selected port."""
    node = probe(ROCE_ROOT)
    job = pod(NCCL_SOCKET_IFNAME="ens", NCCL_SOCKET_FAMILY="AF_INET6")
    (f,), _ = judge(node, job=job)
    assert f.severity == "error" and "ens1f0np0" in f.title and "ens2f0np0" in f.title
    assert judge(node, job=pod(NCCL_SOCKET_IFNAME="ens", NCCL_SOCKET_FAMILY="AF_INET"))[0] == []


def test_a_link_local_only_port_does_not_matter_when_nccl_uses_the_rdma_devices():
    """The RoCE fixture as probed: ens2f0np0 has only an fe80:: address, ens1f0np0 IPv4. NCCL's default takes both,
    but its bootstrap takes the IPv4 entry first and its data goes over the RoCE devices: nothing to report. With
    IB turned off the socket transport uses ens2f0np0 too."""
    node = probe(ROCE_ROOT)
    assert judge(node) == ([], [])
    (f,), _ = judge(node, job=pod(NCCL_IB_DISABLE="1"))
    assert "ens2f0np0" in f.title and f.severity == "warning"


def test_a_slash_32_without_a_connected_route_makes_addresses_unknown_not_absent(tmp_path):
    """The Pod Identity Agent's 169.254.170.23/32 is a LOCAL leaf of fib_trie with no connected route in
    /proc/net/route, so the probe cannot say which interface holds it: interfaces without an IPv4 of their own get
    an unknown IPv4 (never 'none'), and the documented address still decides for pod-id-link0."""
    root = tmp_path / "node"
    shutil.copytree(ROCE_ROOT, root, symlinks=True)
    link = root / "sys/class/net/pod-id-link0"
    link.mkdir()
    (link / "operstate").write_text("unknown\n")
    leaf = "     +-- 169.254.170.23/32 1 0 0\n        |-- 169.254.170.23\n           /32 host LOCAL\n"
    for trie in {(root / f"proc/{pid}/net/fib_trie").resolve() for pid in ("4242", "self")}:
        if trie.exists():
            text = trie.read_text()
            trie.write_text(text.replace("Local:\n  +-- 0.0.0.0/0 3 0 5\n", "Local:\n  +-- 0.0.0.0/0 3 0 5\n" + leaf))
    node = probe(str(root))
    by = {i.name: i for i in node.net_interfaces}
    assert by["pod-id-link0"].ipv4 is None and by["ens2f0np0"].ipv4 is None and by["ens1f0np0"].ipv4
    assert "no connected route" in node.unknown["net_interfaces.ipv4"]
    (f,), _ = judge(node, job=pod(NCCL_SOCKET_IFNAME="^lo,docker,veth,eni"))
    assert "pod-id-link0" in f.title and "169.254.170.23" in f.title


def test_ipv4_alone_decides_when_ipv6_was_not_read():
    """A facts file giving only IPv4 addresses: NCCL keeps each interface's first address and getifaddrs lists IPv4
    first (src/misc/socket.cc findInterfaces), so an IPv4 link-local (169.254/16) interface NCCL's default order
    takes is judged without its IPv6 addresses; one with a routable IPv4 address is fine."""
    node = dataclasses.replace(
        probe(ROCE_ROOT),
        net_interfaces=(
            NetInterface("lo", "unknown", ("127.0.0.1/8",), None),
            NetInterface("enx0a1b2c3d4e5f", "up", ("169.254.3.1/24",), None),
            NetInterface("enp5s0", "up", ("10.1.2.11/24",), None),
        ),
    )
    (f,), _ = judge(node)
    assert "enx0a1b2c3d4e5f" in f.title and "169.254.3.1" in f.title and "link-local" in f.title
    assert judge(node, job=pod(NCCL_SOCKET_IFNAME="enp5s0")) == ([], [])
