"""Gloo without GLOO_SOCKET_IFNAME binds to what the host name resolves to (PyTorch
ProcessGroupGloo::createDefaultDevice): in the node's network namespace that is the node's /etc/hosts. The node is
the RoCE fixture root with /etc/hosts as Ubuntu's installer writes it (127.0.1.1 HOSTNAME)."""

from __future__ import annotations

import dataclasses
import os
import shutil

from engine_facts import committed_facts, matrix, with_nccl

from imgcheck.engine import evaluate
from imgcheck.job import EnvVar, load_job_spec
from imgcheck.node.hostname import address_kind, addresses_for
from imgcheck.node.probe import probe

HERE = os.path.dirname(__file__)
SPEC = os.path.join(HERE, "specs", "pod-roce-hostnetwork.yaml")
ROCE_ROOT = os.path.join(HERE, "..", "node", "fixtures", "inbox-ubuntu2204")
RULE = "ENV-GLOO-HOSTNAME-LOOPBACK"
# Ubuntu 22.04's /etc/hosts after installation (netcfg writes the 127.0.1.1 line for the host name)
UBUNTU_HOSTS = """127.0.0.1 localhost
127.0.1.1 gpu-roce-01

# The following lines are desirable for IPv6 capable hosts
::1     ip6-localhost ip6-loopback
fe00::0 ip6-localnet
ff00::0 ip6-mcastprefix
ff02::1 ip6-allnodes
ff02::2 ip6-allrouters
"""


def node_with_hosts(tmp_path, text):
    root = tmp_path / "node"
    shutil.copytree(ROCE_ROOT, root, symlinks=True)
    if text is None:
        (root / "etc/hosts").unlink()
    else:
        (root / "etc/hosts").write_text(text)
    return probe(str(root))


def pod(host_network=True, **env):
    (job,) = load_job_spec(SPEC)
    keep = tuple(v for v in job.env if v.name not in env)
    return dataclasses.replace(job, env=keep + tuple(EnvVar(k, v) for k, v in env.items()), host_network=host_network)


def judge(node, job):
    image = with_nccl(committed_facts("bookworm"), "2.21.5")  # has torch (pip) beside NCCL
    result = evaluate(image, node, matrix(), job=job)
    return [f for f in result.findings if f.id == RULE], [u for u in result.unknowns if u.rule == RULE]


def test_hosts_file_lines_naming_the_host():
    assert addresses_for(UBUNTU_HOSTS, "gpu-roce-01") == ("127.0.1.1",)
    assert addresses_for("10.1.2.3 gpu-roce-01.cluster gpu-roce-01 # static\n", "gpu-roce-01.cluster") == ("10.1.2.3",)
    assert addresses_for("127.0.0.1 localhost\n", "gpu-roce-01") == ()
    assert [address_kind(a) for a in ("127.0.1.1", "::1", "169.254.170.23", "fe80::1%eth0", "10.0.3.7")] == [
        "loopback",
        "loopback",
        "link-local",
        "link-local",
        "routable",
    ]


def test_ubuntu_hosts_file_under_host_network_makes_gloo_advertise_loopback(tmp_path):
    node = node_with_hosts(tmp_path, UBUNTU_HOSTS)
    assert node.hostname_in_hosts == "loopback" and node.sources["hostname_in_hosts"].path == "/etc/hosts"
    (f,), _ = judge(node, pod())
    assert f.severity == "warning" and "loopback" in f.title and "connectFullMesh" in f.predicted_error
    # naming the interface, or a container with its own network namespace: the host name's address is not used
    assert judge(node, pod(GLOO_SOCKET_IFNAME="ens1f0np0")) == ([], [])
    assert judge(node, pod(host_network=False)) == ([], [])


def test_a_routable_or_dns_answer_is_fine_and_an_unread_file_is_asked(tmp_path):
    assert judge(node_with_hosts(tmp_path / "a", "172.19.0.60 gpu-roce-01\n"), pod()) == ([], [])
    assert judge(node_with_hosts(tmp_path / "b", "127.0.0.1 localhost\n"), pod()) == ([], [])  # DNS decides
    _, (u,) = judge(node_with_hosts(tmp_path / "c", None), pod())
    assert "host name resolves to" in u.reason and "/etc/hosts" in u.reason


def _with_python_dists(*dists):
    """The bookworm image with its pip-installed torch replaced by the given distributions (canonical names, as
    the Python extractor reads them from `{name}-{version}.dist-info`)."""
    from imgcheck.model.image import Package

    image = with_nccl(committed_facts("bookworm"), "2.21.5")
    keep = tuple(p for p in image.packages if p.db not in ("python", "pip"))
    site = "usr/local/lib/python3.11/dist-packages"
    added = tuple(
        Package(name, version, "python", f"{site}/{name.replace('-', '_')}-{version}.dist-info/METADATA")
        for name, version in dists
    )
    return dataclasses.replace(image, packages=keep + added)


def judge_image(node, image):
    result = evaluate(image, node, matrix(), job=pod())
    return [f for f in result.findings if f.id == RULE], [u for u in result.unknowns if u.rule == RULE]


def test_gloo_use_is_decided_from_the_framework_table_not_from_torch_alone(tmp_path):
    """PaddlePaddle's ProcessGroupGloo binds like torch's (Paddle@12f70db ProcessGroupGloo.cc createDefaultDevice):
    a Paddle image without torch gets the finding, naming Paddle; a TensorFlow-only image has no Gloo (decided);
    JAX's Gloo address choice is not in the table (asked, naming JAX); no framework at all is asked."""
    node = node_with_hosts(tmp_path, UBUNTU_HOSTS)
    (f,), _ = judge_image(node, _with_python_dists(("paddlepaddle-gpu", "2.6.1")))
    assert "PaddlePaddle (paddlepaddle-gpu 2.6.1)" in f.mechanism
    assert any(e.value == "paddlepaddle-gpu 2.6.1" for e in f.evidence)
    # DeepSpeed without the torch package read still runs its groups through torch.distributed
    (f,), _ = judge_image(node, _with_python_dists(("deepspeed", "0.14.4")))
    assert "DeepSpeed" in f.mechanism
    assert judge_image(node, _with_python_dists(("tensorflow", "2.16.1"))) == ([], [])
    _, (u,) = judge_image(node, _with_python_dists(("jax", "0.4.30")))
    assert "JAX (jax 0.4.30)" in u.reason
    _, (u,) = judge_image(node, _with_python_dists())
    assert "no framework" in u.reason
    # torch beside TensorFlow: torch's Gloo decides
    (f,), _ = judge_image(node, _with_python_dists(("tensorflow", "2.16.1"), ("torch", "2.5.1")))
    assert "PyTorch (torch 2.5.1)" in f.mechanism and "TensorFlow" not in f.mechanism


def test_a_facts_file_may_give_the_address_itself(tmp_path):
    """node/hostname.py records the kind; a node facts file written by hand may give the address /etc/hosts maps the
    host name to (as `getent hosts $(hostname)` prints it): it is classified the same way."""
    node = node_with_hosts(tmp_path, UBUNTU_HOSTS)
    (f,), _ = judge(dataclasses.replace(node, hostname_in_hosts="127.0.1.1"), pod())
    assert "loopback" in f.title
    assert judge(dataclasses.replace(node, hostname_in_hosts="10.10.1.21"), pod()) == ([], [])
    _, (u,) = judge(dataclasses.replace(node, hostname_in_hosts="not-an-address"), pod())
    assert "GLOO_SOCKET_IFNAME" in u.reason
