"""The Env lint (engine/env_nccl_params.py) on real launch scripts, against the generated NCCL parameter catalog."""

from __future__ import annotations

import dataclasses
import os
import re

from engine_facts import committed_facts, matrix, node, run, with_nccl

from imgcheck.engine import evaluate

DATA = os.path.join(os.path.dirname(__file__), "data", "nccl_env")
_EXPORT = re.compile(r"^export ([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
IB_NODE = "mofed-5.8-proprietary-535-peermem"  # two ConnectX ports, link layer InfiniBand


def script_env(name: str) -> dict[str, str]:
    """The `export NAME=value` lines of a real launch script (tests/data/nccl_env/README.md names each URL)."""
    with open(os.path.join(DATA, name)) as f:
        return dict(m.groups() for line in f if (m := _EXPORT.match(line.strip())))


def lint(result, documented: bool = False) -> dict[str, list]:
    """The Env lint's findings by rule; the documentation rule (ENV-NCCL-PARAM-INTERNAL: a debugging or internal
    setting, whatever its value) only when asked for."""
    found: dict[str, list] = {}
    for f in result.findings:
        if f.id.startswith("ENV-NCCL-PARAM") and (documented or f.id != "ENV-NCCL-PARAM-INTERNAL"):
            found.setdefault(f.id, []).append(f)
    return found


def image(version: str | None, env: dict[str, str]):
    facts = with_nccl(committed_facts("bookworm"), version or "2.21.5", env=env)
    if version is None:
        nccl = dataclasses.replace(facts.nccl[0], version=None)
        facts = dataclasses.replace(facts, nccl=(nccl,))
    return facts


def test_catalog_is_generated_from_every_release_and_validates():
    rows = {r["name"]: r for r in matrix().rows("nccl_params")}
    assert len(rows) > 250  # 2.3.5 .. 2.30.7: NCCL_PARAM, getenv/ncclGetEnv and DEFINE_NCCL_PARAM forms
    assert rows["NCCL_IB_HCA"]["form"] == "getenv"
    assert rows["NCCL_CUMEM_ENABLE"]["first"] == "2.18.1"
    assert rows["NCCL_LL_THRESHOLD"]["removed_in"] == "2.5.6"
    assert rows["NCCL_IB_GID_INDEX"]["default_history"] == ["2.3.5: 0", "2.21.5: -1"]
    assert rows["NCCL_DEBUG"]["values"] == ["ABORT", "INFO", "TRACE", "VERSION", "WARN"]
    assert all(r["source"] and r["confidence"] for r in rows.values())


def test_kaggle_script_timeout_is_no_nccl_setting_and_torch_names_are_not_typos():
    env = script_env("litgpt_train_t4x2_kaggle.sh")
    found = lint(run(image("2.21.5", env), node(IB_NODE)))
    unknown = {f.evidence[0].fact: f for f in found["ENV-NCCL-PARAM-UNKNOWN"]}
    assert "image.env.NCCL_TIMEOUT" in unknown
    assert "NCCL_IB_TIMEOUT" in unknown["image.env.NCCL_TIMEOUT"].title  # did you mean
    assert unknown["image.env.NCCL_TIMEOUT"].severity == "warning"
    # NCCL_ASYNC_ERROR_HANDLING is PyTorch's old name: read by another program, not a typo
    assert "image.env.NCCL_ASYNC_ERROR_HANDLING" not in unknown
    assert "image.env.NCCL_IB_TIMEOUT" not in unknown and "image.env.NCCL_P2P_DISABLE" not in unknown


def test_flagai_script_removed_variable_and_unknown_debug_level():
    env = script_env("flagai_run_multi.sh")
    found = lint(run(image("2.18.3", env), node(IB_NODE)))
    removed = found["ENV-NCCL-PARAM-NOT-IN-RELEASE"]
    assert [f.evidence[0].fact for f in removed] == ["image.env.NCCL_IB_CUDA_SUPPORT"]
    assert "no longer reads" in removed[0].title
    words = found["ENV-NCCL-PARAM-VALUE"]
    assert [f.evidence[0].fact for f in words] == ["image.env.NCCL_DEBUG"]  # 'debug' is no NCCL_DEBUG level
    # NCCL_IB_GID_INDEX on InfiniBand ports: NCCL picks the GID itself there
    assert [f.evidence[0].fact for f in found["ENV-NCCL-PARAM-LINK-LAYER"]] == ["image.env.NCCL_IB_GID_INDEX"]


def test_same_script_on_an_nccl_that_still_read_the_variable():
    env = script_env("flagai_run_multi.sh")
    found = lint(run(image("2.3.7", env), node(IB_NODE)))
    assert "ENV-NCCL-PARAM-NOT-IN-RELEASE" not in found


def test_gid_index_matters_on_roce_ports():
    env = script_env("rl2_orz_ppo_multi_nodes.sh")
    ib = node(IB_NODE)
    assert lint(run(image("2.21.5", env), ib))["ENV-NCCL-PARAM-LINK-LAYER"]
    devices = tuple(
        dataclasses.replace(d, ports=tuple(dataclasses.replace(p, link_layer="Ethernet") for p in d.ports))
        for d in ib.rdma.devices
    )
    roce = dataclasses.replace(ib, rdma=dataclasses.replace(ib.rdma, devices=devices))
    assert "ENV-NCCL-PARAM-LINK-LAYER" not in lint(evaluate(image("2.21.5", env), roce, matrix()))


def test_version_unknown_asks_instead_of_answering():
    env = script_env("flagai_run_multi.sh")
    result = run(image(None, env), node(IB_NODE))
    assert "ENV-NCCL-PARAM-NOT-IN-RELEASE" not in lint(result)
    reasons = [u.reason for u in result.unknowns if u.rule == "ENV-NCCL-PARAM-NOT-IN-RELEASE"]
    assert any("NCCL_IB_CUDA_SUPPORT" in r and "image.nccl.version" in r for r in reasons)


def test_newer_nccl_than_the_catalog_is_unknown_for_unlisted_names():
    result = run(image("2.99.1", {"NCCL_TIMEOUT": "300"}), node(IB_NODE))
    assert "ENV-NCCL-PARAM-UNKNOWN" not in lint(result)
    assert "ENV-NCCL-PARAM-UNKNOWN" in [u.rule for u in result.unknowns]


def test_integer_parameter_read_by_strtoll():
    # error path (no public script found with this exact value): a word where NCCL_PARAM wants an integer
    found = lint(run(image("2.21.5", {"NCCL_IB_DISABLE": "true", "NCCL_P2P_DISABLE": "0x1"}), node(IB_NODE)))
    assert [f.evidence[0].fact for f in found["ENV-NCCL-PARAM-VALUE"]] == ["image.env.NCCL_IB_DISABLE"]
    assert "as 0" in found["ENV-NCCL-PARAM-VALUE"][0].title


def test_nccl_conf_and_job_env_are_linted_too():
    facts = with_nccl(committed_facts("bookworm"), "2.21.5", nccl_conf={"NCCL_SOCKET_IFNAMES": "eth0"})
    found = lint(run(facts, node(IB_NODE)))
    assert found["ENV-NCCL-PARAM-UNKNOWN"][0].evidence[0].fact == "image.nccl_conf.NCCL_SOCKET_IFNAMES"
    assert "NCCL_SOCKET_IFNAME" in found["ENV-NCCL-PARAM-UNKNOWN"][0].title


def test_nccl_conf_value_under_an_env_value_is_reported_overridden():
    facts = with_nccl(
        committed_facts("bookworm"), "2.21.5", env={"NCCL_IB_GID_INDEX": "3"}, nccl_conf={"NCCL_IB_GID_INDEX": "0"}
    )
    found = lint(run(facts, node(IB_NODE)))["ENV-NCCL-PARAM-OVERRIDDEN"]
    assert [e.fact for e in found[0].evidence] == ["image.env.NCCL_IB_GID_INDEX", "image.nccl_conf.NCCL_IB_GID_INDEX"]
    same = with_nccl(
        committed_facts("bookworm"), "2.21.5", env={"NCCL_IB_GID_INDEX": "3"}, nccl_conf={"NCCL_IB_GID_INDEX": "3"}
    )
    assert "ENV-NCCL-PARAM-OVERRIDDEN" not in lint(run(same, node(IB_NODE)))


def test_launch_spec_env_is_linted_with_its_own_evidence():
    from imgcheck.job import load_job_spec

    spec = os.path.join(os.path.dirname(__file__), "job", "specs", "pod-roce-hostnetwork.yaml")
    (job,) = load_job_spec(spec)
    result = evaluate(with_nccl(committed_facts("bookworm"), "2.21.5"), node(IB_NODE), matrix(), job=job)
    (f,) = lint(result)["ENV-NCCL-PARAM-LINK-LAYER"]  # the RoCE pod's GID index, run on an InfiniBand node
    assert f.evidence[0].fact == "job.env.NCCL_IB_GID_INDEX" and f.evidence[0].path == spec


def test_version_unknown_makes_an_unlisted_name_a_question_with_the_likely_name():
    result = run(image(None, script_env("litgpt_train_t4x2_kaggle.sh")), node(IB_NODE))
    assert "ENV-NCCL-PARAM-UNKNOWN" not in lint(result)
    reasons = [u.reason for u in result.unknowns if u.rule == "ENV-NCCL-PARAM-UNKNOWN"]
    assert any(
        "NCCL_TIMEOUT" in r and "did you mean NCCL_IB_TIMEOUT" in r and "image.nccl.version" in r for r in reasons
    )


def test_an_nccl_older_than_the_catalog_is_asked_about_not_judged():
    """The catalog is read from the release tags from 2.3.5 on: whether NCCL 2.2 reads a name is not in it
    (NCCL 2.2.13 reads NCCL_SOCKET_IFNAME: its own logs print the interface it chose)."""
    result = run(image("2.2.13", {"NCCL_SOCKET_IFNAME": "eth0", "NCCL_SOCKET_IFNAMES": "eth0"}), node(IB_NODE))
    assert not lint(result)
    reasons = {u.rule: u.reason for u in result.unknowns if u.rule.startswith("ENV-NCCL-PARAM")}
    assert "older than the releases" in reasons["ENV-NCCL-PARAM-NOT-IN-RELEASE"]
    assert "older than those" in reasons["ENV-NCCL-PARAM-UNKNOWN"]


# ---- named values, per release (tools/nccl/gen_params.py named_values) ----
def test_named_values_follow_each_release_source():
    rows = {r["name"]: r for r in matrix().rows("nccl_params")}
    level = rows["NCCL_P2P_LEVEL"]
    # checked by hand at two tags: v2.6.4-1 src/graph/topo.cc topoPathTypeStr with topo.h PATH_SYS 5, and
    # v2.30.7-1 src/graph/topo.cc with graph.h PATH_SYS 9 (the words up to PATH_SYS are accepted, exact case)
    assert "2.6.4: LOC,NVL,PIX,PXB,PHB,SYS" in level["values_history"]
    assert level["values_history"][-1] == "2.27.5: LOC,NVL,NVB,C2C,PIX,PXB,P2C,PXN,PHB,SYS"
    assert level["values_match"] == "case-sensitive"
    assert rows["NCCL_NET_GDR_LEVEL"]["values_history"][1:] == level["values_history"][1:]  # the same reader
    algo = rows["NCCL_ALGO"]  # v2.12.12-1 src/init.cc ncclAlgoStr = Tree, Ring, CollNet
    assert "2.6.4: Tree,Ring,CollNet" in algo["values_history"] and algo["values_match"] == "ignore-case"
    assert algo["unknown_value"][0].startswith("2.5.6: ignored")  # the old parseList skips unknown words
    assert algo["unknown_value"][-1].startswith("2.24.3: ncclInvalidUsage")  # 'Unrecognized element token'
    assert rows["NCCL_BUFFSIZE"]["unit"] == "bytes"


def test_a_level_word_in_the_wrong_case_or_release_does_nothing():
    node_ = node(IB_NODE)
    (f,) = lint(evaluate(image("2.21.5", {"NCCL_P2P_LEVEL": "nvl"}), node_, matrix()))["ENV-NCCL-PARAM-VALUE"]
    assert f.severity == "warning" and "exact case" in f.mechanism  # strcmp: 'nvl' is ignored
    assert not lint(evaluate(image("2.21.5", {"NCCL_P2P_LEVEL": "NVL"}), node_, matrix()))
    assert not lint(evaluate(image("2.21.5", {"NCCL_P2P_LEVEL": "2"}), node_, matrix()))  # old-style number
    assert lint(evaluate(image("2.21.5", {"NCCL_P2P_LEVEL": "C2C"}), node_, matrix()))  # C2C from 2.26.2
    assert not lint(evaluate(image("2.26.2", {"NCCL_P2P_LEVEL": "C2C"}), node_, matrix()))


def test_an_unknown_algorithm_fails_init_from_the_release_that_rejects_it():
    node_ = node(IB_NODE)
    (f,) = lint(evaluate(image("2.26.2", {"NCCL_ALGO": "Ring,Trees"}), node_, matrix()))["ENV-NCCL-PARAM-VALUE"]
    assert f.severity == "error" and "Unrecognized element token" in f.predicted_error
    (old,) = lint(evaluate(image("2.18.3", {"NCCL_ALGO": "Ring,Trees"}), node_, matrix()))["ENV-NCCL-PARAM-VALUE"]
    assert old.severity == "warning"  # ignored by that release's parseList
    assert not lint(
        evaluate(image("2.26.2", {"NCCL_PROTO": "^LL128", "NCCL_ALGO": "ring;allreduce:tree"}), node_, matrix())
    )


def test_address_family_words_are_exact():
    # src/misc/socket.cc ncclEnvSocketFamily: strcmp with AF_INET / AF_INET6, anything else leaves the default
    node_ = node(IB_NODE)
    assert not lint(evaluate(image("2.21.5", {"NCCL_SOCKET_FAMILY": "AF_INET6"}), node_, matrix()))
    (f,) = lint(evaluate(image("2.21.5", {"NCCL_SOCKET_FAMILY": "IPv6"}), node_, matrix()))["ENV-NCCL-PARAM-VALUE"]
    assert f.severity == "warning" and "keeps its default" in f.mechanism
    assert lint(evaluate(image("2.21.5", {"NCCL_SOCKET_FAMILY": "6"}), node_, matrix()))  # no numeric form here


def test_every_nccl_parameter_is_marked_documented_or_internal():
    """Each name libnccl reads is in a section of NVIDIA's environment variable page or marked undocumented
    (tools/nccl/env_doc.py joined by tools/nccl/gen_params.py); names of other programs carry no mark."""
    rows = matrix().rows("nccl_params")
    marks = {r["name"]: r["doc"] for r in rows}
    assert {r["doc"] for r in rows if r["first"]} == {"system configuration", "debugging", "undocumented"}
    assert all(r["doc"] is None for r in rows if r["first"] is None)
    assert marks["NCCL_P2P_USE_CUDA_MEMCPY"] == marks["NCCL_SHM_USE_CUDA_MEMCPY"] == "undocumented"
    assert marks["NCCL_SOCKET_IFNAME"] == marks["NCCL_IB_HCA"] == "system configuration"
    assert marks["NCCL_IB_DISABLE"] == marks["NCCL_PROTO"] == "debugging"
    proto = next(r for r in rows if r["name"] == "NCCL_PROTO")
    assert "data corruption" in proto["doc_note"] and proto["doc_since"] == "2.5"
    assert all(any("env.html" in s for s in r["source"]) for r in rows if r["doc"])


def test_llmjp_script_sets_an_internal_parameter_and_debugging_ones():
    env = script_env("llmjp_nvlink_test.sh")
    found = lint(run(image("2.21.5", env), node(IB_NODE)), documented=True)
    by_fact = {f.evidence[0].fact: f for f in found["ENV-NCCL-PARAM-INTERNAL"]}
    internal = by_fact["image.env.NCCL_P2P_USE_CUDA_MEMCPY"]
    assert internal.severity == "warning" and "does not document or support" in internal.title
    assert "src/transport/p2p.cc" in internal.mechanism  # what code reads it
    for name in ("NCCL_IB_DISABLE", "NCCL_NET_GDR_LEVEL", "NCCL_NET_GDR_READ"):
        debug = by_fact[f"image.env.{name}"]
        assert debug.severity == "info" and "not for production" in debug.title
        assert "crashes, or hangs" in debug.mechanism  # the page's own caution, quoted
    # the System configuration settings are what the page means to be set
    assert "image.env.NCCL_SOCKET_IFNAME" not in by_fact and "image.env.NCCL_DEBUG" not in by_fact


def test_internal_parameter_is_reported_when_the_nccl_version_is_unknown():
    found = lint(run(image(None, {"NCCL_SHM_USE_CUDA_MEMCPY": "1"}), node(IB_NODE)), documented=True)
    assert [f.evidence[0].fact for f in found["ENV-NCCL-PARAM-INTERNAL"]] == ["image.env.NCCL_SHM_USE_CUDA_MEMCPY"]


def test_ib_settings_with_the_ib_transport_turned_off_do_nothing():
    """FlagAI's script (NCCL_IB_HCA, NCCL_IB_GID_INDEX) with NCCL_IB_DISABLE flipped to 1, as a launch that turns
    RDMA off for a test run would: NCCL's IB transport never opens a device, so nothing reads the IB settings."""
    env = {**script_env("flagai_run_multi.sh"), "NCCL_IB_DISABLE": "1"}
    found = lint(run(image("2.18.3", env), node(IB_NODE)))
    off = sorted(f.evidence[0].fact for f in found["ENV-NCCL-PARAM-IB-OFF"])
    assert off == ["image.env.NCCL_IB_GID_INDEX", "image.env.NCCL_IB_HCA"]  # NCCL_IB_CUDA_SUPPORT: gone in 2.18
    assert all(f.severity == "info" and "NCCL_IB_DISABLE=1" in f.title for f in found["ENV-NCCL-PARAM-IB-OFF"])
    # the script as written (NCCL_IB_DISABLE=0) leaves the IB transport on: no such finding
    assert "ENV-NCCL-PARAM-IB-OFF" not in lint(run(image("2.18.3", script_env("flagai_run_multi.sh")), node(IB_NODE)))


def test_ib_settings_with_a_net_plugin_in_the_image_are_a_question():
    from imgcheck.model.image import NcclNetPlugin

    env = {"NCCL_IB_DISABLE": "1", "NCCL_IB_HCA": "=mlx5_0"}
    plugin = NcclNetPlugin(path="/usr/lib/libnccl-net.so", name="libnccl-net.so", project=None)
    facts = dataclasses.replace(image("2.18.3", env), nccl_net_plugins=(plugin,))
    result = run(facts, node(IB_NODE))
    assert "ENV-NCCL-PARAM-IB-OFF" not in lint(result)
    assert any(u.rule == "ENV-NCCL-PARAM-IB-OFF" and "libnccl-net.so" in u.reason for u in result.unknowns)
