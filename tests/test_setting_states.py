"""Unset by the launch is not unknown (issue 32): a setting has three states when a launch spec is given, and the
rules that reason on a default decide on them (engine/facts.py UNSET_BY_LAUNCH, engine/hypothesis.py).

The launch specs are real public ones (tests/job/specs/real, URLs in SOURCES.md): the OCI Volcano nccl-tests
MPIJob (mpirun -x NCCL_IB_GID_INDEX=3, NCCL_SOCKET_IFNAME=eth0, hostNetwork) and the JobSet PyTorch ResNet
example (no NCCL variable at all). The RoCE node is the probe of the committed inbox-ubuntu2204 root (a
ConnectX-6 GID table as show_gids lists it: link-local v1/v2 pairs at 0-3, the IPv4 pair at 4-5)."""

from __future__ import annotations

import dataclasses
import os

import pytest
from engine_facts import committed_facts, with_nccl
from engine_facts import matrix as load_matrix

from imgcheck.engine import evaluate, facts
from imgcheck.engine.context import Ctx
from imgcheck.job import load_job_spec
from imgcheck.job.facts_io import parse_job_facts
from imgcheck.node.probe import probe

HERE = os.path.dirname(__file__)
REAL = os.path.join(HERE, "job", "specs", "real")
ROCE_ROOT = os.path.join(HERE, "node", "fixtures", "inbox-ubuntu2204")
LINK_LOCAL = "ENV-NCCL-IB-GID-INDEX-LINK-LOCAL"
NO_GID = "ENV-NCCL-IB-GID-INDEX-NO-GID"
NCCL = facts.NCCL.name
UNSET_WORDS = "the image does not set"


@pytest.fixture(scope="module")
def matrix():
    return load_matrix()


@pytest.fixture(scope="module")
def roce():
    return probe(ROCE_ROOT)


def spec(name: str, role: str | None = None):
    return next(j for j in load_job_spec(os.path.join(REAL, name)) if role is None or j.role == role)


def env_unread(image):
    """The image with its Env not read (a facts file or catalog row without `env`)."""
    return dataclasses.replace(image, env={}, nccl_conf={}, unknown={**image.unknown, "env": "not stated"})


def state(fact, image, node, job, matrix):
    return fact.state(Ctx(image, node, matrix, job))


# ---------- the three states ----------


def test_three_states_of_a_setting(matrix, roce):
    ifname = facts.setting("NCCL_SOCKET_IFNAME")
    image = with_nccl(committed_facts("bookworm"), "2.21.5")
    oci = spec("oci-volcano-BM.GPU.H100.8-nccl-test.yaml", "mpiworker")
    resnet = spec("jobset-pytorch-resnet.yaml")
    # set by the launch (mpirun -x NCCL_SOCKET_IFNAME=eth0), whatever is known of the image
    assert state(ifname, env_unread(image), roce, oci, matrix) is facts.State.KNOWN
    # unset everywhere: the image's Env read, the launch sets no NCCL variable
    assert state(ifname, image, roce, resnet, matrix) is facts.State.ABSENT
    # unset by the launch, the image's Env not read: the default unless the image sets it
    assert state(ifname, env_unread(image), roce, resnet, matrix) is facts.State.UNSET_BY_LAUNCH
    why = ifname.why(Ctx(env_unread(image), roce, matrix, resnet))
    assert why is not None and "does not set it" in why and "not stated" in why
    # no launch given, or one whose env is not all shown: unknown, not unset
    assert state(ifname, env_unread(image), roce, None, matrix) is facts.State.UNKNOWN
    incomplete = dataclasses.replace(resnet, env_incomplete=True)
    assert state(ifname, env_unread(image), roce, incomplete, matrix) is facts.State.UNKNOWN
    # a launch that sets it from a secret or the host (value not in the spec) does not leave it unset
    from_secret = parse_job_facts({"runtime": "kubernetes", "env": {"NCCL_SOCKET_IFNAME": None}}, "pod.yaml")
    assert state(ifname, env_unread(image), roce, from_secret, matrix) is facts.State.UNKNOWN


def test_a_prefix_is_not_whole_while_the_image_env_is_unread(matrix, roce):
    """The Env lints read every NCCL_* variable: the launch setting some does not make the image's others known."""
    image = env_unread(with_nccl(committed_facts("bookworm"), "2.21.5"))
    oci = spec("oci-volcano-BM.GPU.H100.8-nccl-test.yaml", "mpiworker")
    assert state(facts.setting_prefix("NCCL_"), image, roce, oci, matrix) is facts.State.PARTIAL


# ---------- rules on a default: conditional with the image's Env unread, outright with it read ----------


def test_default_reasoning_is_conditional_on_the_image_not_setting_it(matrix, roce):
    """NCCL 2.21.5 picks the GID itself when NCCL_IB_GID_INDEX is unset (nccl_features roce_gid_auto); on mlx5_1,
    whose netdev has no IPv4 address, it keeps the link-local entry 0. With the image's Env read that is a finding;
    with it unread the same finding assumes the image sets neither NCCL_IB_GID_INDEX nor the choice's settings."""
    image = with_nccl(committed_facts("bookworm"), "2.21.5")
    resnet = dataclasses.replace(spec("jobset-pytorch-resnet.yaml"), host_network=True)
    known = [f for f in evaluate(image, roce, matrix, job=resnet).findings if f.id == LINK_LOCAL]
    assert known and not known[0].assumes
    unread = [f for f in evaluate(env_unread(image), roce, matrix, job=resnet).findings if f.id == LINK_LOCAL]
    assert unread, "the default is judged, not left unknown"
    (words,) = [a for a in unread[0].assumes if a.startswith(UNSET_WORDS)]
    assert "NCCL_IB_GID_INDEX" in words and "NCCL_IB_ADDR_FAMILY" in words and "not stated" in words
    assert "setting.NCCL_IB_GID_INDEX" in unread[0].assumed_facts
    assert unread[0].severity == known[0].severity


def test_a_setting_the_launch_sets_is_no_assumption(matrix, roce):
    """The OCI spec pins NCCL_IB_GID_INDEX=3 and names the devices with NCCL_IB_HCA (mlx5_0, mlx5_1, ...); this
    node's mlx5_1 has no entry 3. Both settings NO-GID reasons on are the launch's: nothing is assumed about the
    image's Env."""
    image = env_unread(with_nccl(committed_facts("bookworm"), "2.21.5"))
    oci = spec("oci-volcano-BM.GPU.H100.8-nccl-test.yaml", "mpiworker")
    (f,) = [f for f in evaluate(image, roce, matrix, job=oci).findings if f.id == NO_GID]
    assert "NCCL_IB_GID_INDEX=3" in f.title and f.severity == "error"
    assert f.assumes == ()


# ---------- the NCCL gate: a pinned GID index is judged without the version ----------


def test_pinned_gid_index_decides_with_the_nccl_version_unknown(matrix, roce):
    oci = spec("oci-volcano-BM.GPU.H100.8-nccl-test.yaml", "mpiworker")
    image = with_nccl(committed_facts("bookworm"), "2.21.5")
    vague = facts.NCCL.vague(image, roce, oci)[0]  # NCCL there, its version not read
    result = evaluate(vague, roce, matrix, job=oci)
    (f,) = [f for f in result.findings if f.id == NO_GID]
    assert f.assumed_facts == ("image.nccl.version",)  # only the range, from nccl_params
    assert "releases that read NCCL_IB_GID_INDEX" in f.assumes[0] and "2.3.5" in f.assumes[0]
    # the other GID rules are decided too: the version would not change what the table says
    asked = {u.rule for u in result.unknowns}
    assert not {LINK_LOCAL, "ENV-NCCL-IB-GID-INDEX-ROCE-V1"} & asked


def test_pinned_gid_index_with_nccl_unread_is_one_conditional_finding(matrix, roce):
    oci = spec("oci-volcano-BM.GPU.H100.8-nccl-test.yaml", "mpiworker")
    image = facts.NCCL.blank(with_nccl(committed_facts("bookworm"), "2.21.5"), roce, oci)[0]
    result = evaluate(image, roce, matrix, job=oci)
    (f,) = [f for f in result.findings if f.id == NO_GID]
    assert f.assumes[0].startswith("the image ships NCCL") and NCCL in f.assumed_facts
    assert any("releases that read NCCL_IB_GID_INDEX" in a for a in f.assumes)
    (u,) = [u for u in result.unknowns if u.rule == NO_GID]
    assert u.gated_by == (NCCL,) and "conditional finding" in u.reason


def test_unset_gid_index_still_asks_the_version(matrix, roce):
    """Unset, NCCL's GID is entry 0 before 2.21.5 and its own choice after: the version decides."""
    resnet = dataclasses.replace(spec("jobset-pytorch-resnet.yaml"), host_network=True)
    image = facts.NCCL.vague(with_nccl(committed_facts("bookworm"), "2.21.5"), roce, resnet)[0]
    result = evaluate(image, roce, matrix, job=resnet)
    assert LINK_LOCAL not in {f.id for f in result.findings}
    assert any(u.rule == LINK_LOCAL and NCCL in u.facts for u in result.unknowns)


# ---------- /dev/shm: the need is NCCL's SHM transport using /dev/shm at all ----------


def _docker():
    """A docker run with no --shm-size (Docker's 64 MiB default: shm_size_mib null) and 8 ranks, as a facts file
    states it, with NCCL's P2P transport off (so the ranks use its SHM transport whatever the node's topology)."""
    doc = {"runtime": "docker", "kind": "docker run", "gpus": 8, "ranks_per_node": 8, "shm_size_mib": None}
    return parse_job_facts({**doc, "env": {"NCCL_P2P_DISABLE": "1"}}, "run.sh")


def _driver(node, version: str):
    return dataclasses.replace(node, gpu=dataclasses.replace(node.gpu, driver_version=version))


@pytest.mark.parametrize(
    ("nccl", "driver", "fires"),
    [
        ("2.21.5", "570.133.20", True),  # before cumem_host_shm: /dev/shm segments whatever the driver
        ("2.26.2", "550.54.15", True),  # a driver for CUDA 12.4: NCCL keeps the /dev/shm implementation
        ("2.27.3", "570.133.20", False),  # CUDA 12.8 driver: cuMem host memory, not /dev/shm
    ],
)
def test_shm_need_follows_nccl_and_the_driver(matrix, roce, nccl, driver, fires):
    image = with_nccl(committed_facts("bookworm"), nccl)
    result = evaluate(image, _driver(roce, driver), matrix, job=_docker())
    found = [f for f in result.findings if f.id == "JOB-SHM-TOO-SMALL"]
    if fires:
        assert found and not found[0].assumes
    else:
        assert not found
        (u,) = [u for u in result.unknowns if u.rule == "JOB-SHM-TOO-SMALL"]
        assert "cuMem host memory" in u.reason and "falls back" in u.reason


def test_shm_cumem_host_off_is_dev_shm_again(matrix, roce):
    image = with_nccl(committed_facts("bookworm"), "2.27.3", env={"NCCL_CUMEM_HOST_ENABLE": "0"})
    result = evaluate(image, _driver(roce, "570.133.20"), matrix, job=_docker())
    assert any(f.id == "JOB-SHM-TOO-SMALL" and not f.assumes for f in result.findings)


def test_shm_with_the_nccl_version_unknown_assumes_the_older_behaviour(matrix, roce):
    image = facts.NCCL.vague(with_nccl(committed_facts("bookworm"), "2.27.3"), roce, None)[0]
    result = evaluate(image, _driver(roce, "570.133.20"), matrix, job=_docker())
    (f,) = [f for f in result.findings if f.id == "JOB-SHM-TOO-SMALL"]
    assert f.assumed_facts == ("image.nccl.version",) and "cumem_host_shm" in f.assumes[0]


def test_bare_metal_launch_sees_the_host_shm_and_network(matrix, roce):
    job = parse_job_facts({"runtime": "bare-metal", "kind": "torchrun", "ranks_per_node": 8}, "run.sh")
    assert job.host_network is True and job.host_ipc is True
    image = with_nccl(committed_facts("bookworm"), "2.21.5")
    result = evaluate(image, roce, matrix, job=job)
    assert "JOB-SHM-TOO-SMALL" not in {f.id for f in result.findings} | {u.rule for u in result.unknowns}


# ---------- the NCCL gate: what the node rules out for every release is decided without the version ----------


def _cond_node(name: str):
    from imgcheck.model.node_io import load_node_facts

    return load_node_facts(os.path.join(HERE, "fixtures", "conditional_nodes", name + ".json"))


def test_peermem_missing_decides_when_the_node_rules_dmabuf_out_for_every_release(matrix):
    """Kernel 5.10 cannot register dma-buf memory (ib_umem_dmabuf is 5.12), nvidia-peermem is not loaded: no NCCL
    release has a GPUDirect path here, so the version is not asked."""
    node = _cond_node("inbox-5.10-open-535-ib")
    image = with_nccl(committed_facts("bookworm"), "2.21.5")
    known = [f for f in evaluate(image, node, matrix).findings if f.id == "GDR-PEERMEM-MISSING"]
    vague = facts.NCCL.vague(image, node, None)[0]
    result = evaluate(vague, node, matrix)
    (f,) = [f for f in result.findings if f.id == "GDR-PEERMEM-MISSING"]
    assert known and f.severity == known[0].severity and not f.assumes
    assert "GDR-PEERMEM-MISSING" not in {u.rule for u in result.unknowns}


def test_dmabuf_usable_asks_the_version_only_where_the_node_could_do_it(matrix):
    from imgcheck.knowledge.gpudirect import dmabuf_usable

    node = _cond_node("inbox-5.10-open-535-ib")
    assert dmabuf_usable(matrix, node, None, None, (False, "kernel 5.10 < 5.12"))[0] is False
    assert dmabuf_usable(matrix, node, None, None, (True, "the kernel registers dma-buf"))[0] is None
    proprietary = dataclasses.replace(node, gpu=dataclasses.replace(node.gpu, kernel_module="proprietary"))
    assert dmabuf_usable(matrix, proprietary, None, None, (True, "the kernel registers dma-buf"))[0] is False


def test_an_efa_plugin_whose_loading_is_undecided_is_asked_about(matrix):
    """A facts file naming the plugin file without saying whether NCCL loads it: never 'no plugin'."""
    from imgcheck.model.image import NcclNetPlugin

    node = dataclasses.replace(
        _cond_node("inbox-5.10-open-535-ib"),
        rdma=dataclasses.replace(
            _cond_node("inbox-5.10-open-535-ib").rdma,
            devices=(
                dataclasses.replace(
                    _cond_node("inbox-5.10-open-535-ib").rdma.devices[0], name="rdmap0s6", driver="efa"
                ),
            ),
        ),
    )
    plugin = NcclNetPlugin(name="libnccl-net.so", path="/opt/amazon/ofi-nccl/lib/libnccl-net.so")
    image = dataclasses.replace(with_nccl(committed_facts("bookworm"), "2.21.5"), nccl_net_plugins=(plugin,))
    result = evaluate(image, node, matrix)
    assert "EFA-NO-OFI-PLUGIN" not in {f.id for f in result.findings}
    (u,) = [u for u in result.unknowns if u.rule == "EFA-NO-OFI-PLUGIN"]
    assert "libnccl-net.so" in u.reason
    loaded_no = dataclasses.replace(image, nccl_net_plugins=(dataclasses.replace(plugin, loaded=False),))
    assert "EFA-NO-OFI-PLUGIN" in {f.id for f in evaluate(loaded_no, node, matrix).findings}


def test_without_a_launch_a_finding_on_a_default_still_says_what_it_assumes(matrix, roce):
    """No launch spec and the image's Env unread: nothing says the variable is unset, so the rule's finding on
    NCCL's default is conditional on it (not an UNSET_BY_LAUNCH hypothesis: there is no launch to state it)."""
    image = env_unread(with_nccl(committed_facts("bookworm"), "2.21.5"))
    (f,) = [f for f in evaluate(image, roce, matrix).findings if f.id == LINK_LOCAL]
    assert any(a.startswith(UNSET_WORDS) and "NCCL_IB_GID_INDEX" in a for a in f.assumes)
