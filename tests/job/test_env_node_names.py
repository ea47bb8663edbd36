"""ENV-NCCL-IB-GID-INDEX-* and ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE: a real Pod manifest's env judged against the
facts `node probe` reads from the RoCE fixture root (a ConnectX GID table as show_gids prints it), in memory and
end to end through the CLI."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest
from engine_facts import committed_facts, matrix, with_nccl

from imgcheck.cli.main import main
from imgcheck.engine import evaluate
from imgcheck.formats.json_format import render_facts
from imgcheck.job import EnvVar, load_job_spec
from imgcheck.model.node import GidEntry
from imgcheck.model.node_io import dump_node_facts
from imgcheck.node.probe import probe

HERE = os.path.dirname(__file__)
SPEC = os.path.join(HERE, "specs", "pod-roce-hostnetwork.yaml")
ROCE_ROOT = os.path.join(HERE, "..", "node", "fixtures", "inbox-ubuntu2204")
IB_ROOT = os.path.join(HERE, "..", "node", "fixtures", "inbox-ubuntu2404-open")
MATRIX = matrix()
GID, V1, IFNAME = "ENV-NCCL-IB-GID-INDEX-NO-GID", "ENV-NCCL-IB-GID-INDEX-ROCE-V1", "ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE"


@pytest.fixture(scope="module")
def roce():
    return probe(ROCE_ROOT)  # mlx5_0:1 entries 0-5 (v1/v2 pairs), mlx5_1:1 entries 0-1; table of 256


def pod(**env):
    (job,) = load_job_spec(SPEC)
    keep = tuple(v for v in job.env if v.name not in env)
    return dataclasses.replace(job, env=keep + tuple(EnvVar(k, v) for k, v in env.items() if v is not None))


def image(nccl="2.21.5", **env):
    return with_nccl(committed_facts("bookworm"), nccl, env=env)


def ids(result, rule):
    return [f for f in result.findings if f.id == rule], [u for u in result.unknowns if u.rule == rule]


def test_the_manifest_as_written_fails_on_gid_and_interface(roce):
    result = evaluate(image(), roce, MATRIX, job=pod())
    (gid,), _ = ids(result, GID)
    assert gid.severity == "error" and "mlx5_1:1 (entry 3 unused)" in gid.title and "mlx5_0" not in gid.title
    assert any(e.fact == "job.env.NCCL_IB_GID_INDEX" and e.path == SPEC for e in gid.evidence)
    assert "NCCL >= 2.21.5" in gid.fixes[0]  # this NCCL chooses by itself: unsetting is the fix
    (ifn,), _ = ids(result, IFNAME)
    assert ifn.predicted_error == "NCCL WARN Bootstrap : no socket interface found"
    assert "ens1f0np0 (up)" in ifn.title


def test_an_index_every_port_has_and_an_interface_prefix_pass(roce):
    result = evaluate(image(), roce, MATRIX, job=pod(NCCL_IB_GID_INDEX="1", NCCL_SOCKET_IFNAME="ens"))
    assert ids(result, GID) == ([], []) and ids(result, V1) == ([], []) and ids(result, IFNAME) == ([], [])


def test_beyond_the_table_and_the_hca_selection(roce):
    (f,), _ = ids(evaluate(image(), roce, MATRIX, job=pod(NCCL_IB_GID_INDEX="300")), GID)
    assert "mlx5_0:1 (table of 256)" in f.title and "mlx5_1:1 (table of 256)" in f.title
    # NCCL_IB_HCA leaves only mlx5_0, where entry 3 is RoCE v2: nothing to say
    result = evaluate(image(), roce, MATRIX, job=pod(NCCL_IB_HCA="=mlx5_0"))
    assert ids(result, GID) == ([], []) and ids(result, V1) == ([], [])


def test_a_roce_v1_entry_warns_and_old_nccl_gets_a_pinning_fix(roce):
    (f,), _ = ids(evaluate(image(nccl="2.18.5"), roce, MATRIX, job=pod(NCCL_IB_GID_INDEX="0")), V1)
    assert f.severity == "warning" and "IB/RoCE v1" in f.title
    assert "mlx5_0:1 1, 3, 5; mlx5_1:1 1" in f.fixes[0] and "unset" not in f.fixes[0]


def test_unset_auto_and_infiniband_ports_are_not_judged(roce):
    for value in (None, "-1", "abc"):
        assert ids(evaluate(image(), roce, MATRIX, job=pod(NCCL_IB_GID_INDEX=value)), GID) == ([], [])
    ib = probe(IB_ROOT)  # NCCL does not use the index on InfiniBand ports (and this fixture has no GID table)
    assert ids(evaluate(image(), ib, MATRIX, job=pod()), GID) == ([], [])


def test_no_gid_table_in_the_facts_is_unknown_never_a_guess(roce):
    devices = tuple(
        dataclasses.replace(
            d, ports=tuple(dataclasses.replace(p, gid_table_len=None, gids_read=None, gids=None) for p in d.ports)
        )
        for d in roce.rdma.devices
    )
    handwritten = dataclasses.replace(roce, rdma=dataclasses.replace(roce.rdma, devices=devices))
    found, (u,) = ids(evaluate(image(), handwritten, MATRIX, job=pod()), GID)
    assert not found and "mlx5_0:1" in u.reason and "mlx5_1:1" in u.reason
    # past the entries read the table is unknown too, however long it is
    capped = dataclasses.replace(
        roce.rdma.devices[0].ports[0], gid_table_len=1000, gids_read=256, gids=(GidEntry(0, "RoCE v2"),)
    )
    assert capped.gid_entry(500) == ("unknown", None) and capped.gid_entry(1000) == ("beyond", None)
    assert capped.gid_entry(7) == ("zero", None) and capped.gid_entry(0)[0] == "entry"


def test_interfaces_count_only_in_the_hosts_network_namespace(roce):
    own_netns = dataclasses.replace(pod(), host_network=False)
    found, (u,) = ids(evaluate(image(), roce, MATRIX, job=own_netns), IFNAME)
    assert not found and "its own network namespace" in u.reason
    found, (u,) = ids(evaluate(image(NCCL_SOCKET_IFNAME="eth0"), roce, MATRIX), IFNAME)  # no --job
    assert not found and "--job" in u.reason
    unread = dataclasses.replace(roce, net_interfaces=None, unknown={"net_interfaces": "not visible"})
    assert "not visible" in ids(evaluate(image(), unread, MATRIX, job=pod()), IFNAME)[1][0].reason


def test_enroot_jobs_are_judged_on_the_nodes_interfaces(roce, tmp_path):
    """enroot shares the host's network namespace unless ENROOT_UNSHARE_NET=yes leaves only lo (enroot
    doc/cmd/start.md): a name none of the node's interfaces has fails either way, so a Pyxis step is judged."""
    spec = open(os.path.join(HERE, "specs", "pyxis-nccl-tests.sbatch")).read()
    bad = tmp_path / "bad.sbatch"
    bad.write_text(spec.replace("export NCCL_DEBUG=INFO", "export NCCL_DEBUG=INFO\nexport NCCL_SOCKET_IFNAME=eth0"))
    (job,) = load_job_spec(str(bad))
    (f,), unknowns = ids(evaluate(image(), roce, MATRIX, job=job), IFNAME)
    assert not unknowns and "runs under enroot" in f.mechanism and "ENROOT_UNSHARE_NET" in f.mechanism
    good = tmp_path / "good.sbatch"
    good.write_text(bad.read_text().replace("NCCL_SOCKET_IFNAME=eth0", "NCCL_SOCKET_IFNAME=ens1"))
    (job,) = load_job_spec(str(good))
    assert ids(evaluate(image(), roce, MATRIX, job=job), IFNAME) == ([], [])


def test_exclusions_exact_names_and_interfaces_that_are_down(roce):
    assert ids(evaluate(image(), roce, MATRIX, job=pod(NCCL_SOCKET_IFNAME="^docker,lo")), IFNAME)[0] == []
    (f,), _ = ids(evaluate(image(), roce, MATRIX, job=pod(NCCL_SOCKET_IFNAME="=ens1")), IFNAME)
    assert "selects none" in f.title
    # NCCL skips interfaces without IFF_RUNNING from 2.28.3 (nccl_socket_select): then docker0, down, is not used
    (f,), _ = ids(evaluate(image("2.28.3"), roce, MATRIX, job=pod(NCCL_SOCKET_IFNAME="docker")), IFNAME)
    assert "down (docker0)" in f.title
    # before, NCCL 2.21.5 takes docker0 (it has an address): the interface exists, but no other node reaches it
    result = evaluate(image(), roce, MATRIX, job=pod(NCCL_SOCKET_IFNAME="docker"))
    assert ids(result, IFNAME)[0] == []
    (f,), _ = ids(result, "ENV-NCCL-SOCKET-NODE-LOCAL")
    assert f.severity == "error" and "docker0" in f.title and "2.5.6..2.27.7" in f.mechanism
    # an unknown NCCL version straddles 2.28.3: whether docker0 counts is asked, not guessed
    _, (u,) = ids(evaluate(image(None), roce, MATRIX, job=pod(NCCL_SOCKET_IFNAME="docker")), IFNAME)
    assert "2.28.3" in u.reason
    assert ids(evaluate(image(), roce, MATRIX, job=pod(NCCL_SOCKET_IFNAME="e")), IFNAME) == ([], [])  # NCCL ignores it


def test_job_check_end_to_end_exit_codes(capsys, tmp_path, roce):
    facts = tmp_path / "node.json"
    facts.write_text(dump_node_facts(roce))
    img = tmp_path / "image.json"
    img.write_text(render_facts(image()))
    argv = ["job", "check", SPEC, "--image", f"facts:{img}", "--node-facts", str(facts), "-o", "json", "-q"]
    assert main(argv) == 1
    doc = json.loads(capsys.readouterr().out)
    assert {GID, IFNAME} <= {f["id"] for f in doc["findings"] if f["severity"] == "error"}
    port = doc["nodes"][0]["rdma"]["devices"][1]["ports"][0]
    assert (port["gid_table_len"], port["gids_read"], [g["index"] for g in port["gids"]]) == (256, 256, [0, 1])
    # the same check through `imgcheck check IMAGE --job FILE`, with the fixed manifest: no finding of either rule
    fixed = tmp_path / "fixed.yaml"
    fixed.write_text(
        open(SPEC, encoding="utf-8")
        .read()
        .replace('value: "3"', 'value: "1"')
        .replace('value: "eth0"', 'value: "ens1f0np0,ens2f0np0"')
    )
    main(["check", f"facts:{img}", "--job", str(fixed), "--node-facts", str(facts), "-o", "json", "-q"])
    doc = json.loads(capsys.readouterr().out)
    assert not {GID, V1, IFNAME} & {f["id"] for f in doc["findings"]}


def test_before_2_21_5_unset_means_entry_0_which_is_roce_v1_here(roce):
    # NVIDIA/nccl#426: NCCL 2.7.8 on RoCE with the default index; NCCL_IB_GID_INDEX=3 fixed it
    (f,), _ = ids(evaluate(image(nccl="2.7.8"), roce, MATRIX, job=pod(NCCL_IB_GID_INDEX=None)), V1)
    assert "NCCL 2.7.8 uses GID entry 0" in f.title and any(e.fact == "image.nccl.version" for e in f.evidence)
    assert "https://github.com/NVIDIA/nccl/issues/426" in f.sources
    # from 2.21.5 NCCL chooses: nothing to say about the default
    assert ids(evaluate(image(), roce, MATRIX, job=pod(NCCL_IB_GID_INDEX=None)), V1) == ([], [])


def test_a_device_without_a_name_or_nccl_straddling_auto_is_asked_never_passed(roce):
    """Issue 31: the GID rule went silent when a device had no name or NCCL's version left its choice open."""
    fine = evaluate(image(), roce, MATRIX, job=pod(NCCL_IB_GID_INDEX="1"))  # entry 1 exists on every port
    assert ids(fine, GID) == ([], [])
    first = dataclasses.replace(roce.rdma.devices[0], name=None)  # the probe could not name mlx5_0
    nameless = dataclasses.replace(roce, rdma=dataclasses.replace(roce.rdma, devices=(first, *roce.rdma.devices[1:])))
    _, (u,) = ids(evaluate(image(), nameless, MATRIX, job=pod(NCCL_IB_GID_INDEX="1")), GID)
    assert "a device without a name" in u.reason
    _, (u,) = ids(evaluate(image(nccl="2.21"), roce, MATRIX, job=pod(NCCL_IB_GID_INDEX=None)), GID)
    assert "picks the RoCE GID itself" in u.reason  # 2.21.0..2.21.4 use entry 0, 2.21.5 on choose
