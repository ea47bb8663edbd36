"""The upstream Env lint (engine/env_upstream_params.py): UCX_*, FI_* and OFI_NCCL_* settings of real launch scripts
against the catalogs generated from every UCX, libfabric and aws-ofi-nccl release tag."""

from __future__ import annotations

import dataclasses
import os
import re

from engine_facts import committed_facts, matrix, node, run, with_nccl

from imgcheck.engine import evaluate
from imgcheck.model.image import Libfabric, NcclNetPlugin, Package

DATA = os.path.join(os.path.dirname(__file__), "data", "upstream_env")
_EXPORT = re.compile(r"^export ([A-Za-z_][A-Za-z0-9_]*)=(\S*)")
NODE = "mofed-5.8-proprietary-535-peermem"
RULES = ("ENV-UPSTREAM-PARAM-UNKNOWN", "ENV-UPSTREAM-PARAM-NOT-IN-RELEASE")


def script_env(name: str) -> dict[str, str]:
    """The `export NAME=value` lines of a real launch script (tests/data/upstream_env/README.md names each URL)."""
    with open(os.path.join(DATA, name)) as f:
        return dict(m.groups() for line in f if (m := _EXPORT.match(line.strip())))


def image(env: dict[str, str], *, ucx: str | None = "keep", libfabric: str | None = None, plugin: str | None = None):
    """The real bookworm rdma image (UCX 1.13.1 from Debian's libucx0) with a script's settings as its Env."""
    facts = committed_facts("bookworm")
    facts = dataclasses.replace(facts, env={**facts.env, **env})
    if ucx != "keep":
        facts = dataclasses.replace(facts, ucx=dataclasses.replace(facts.ucx, version=ucx))
    if libfabric is not None:
        lf = Libfabric(version=libfabric, path="/usr/lib/x86_64-linux-gnu/libfabric.so.1", origin="dpkg")
        facts = dataclasses.replace(facts, libfabric=lf)
    if plugin is not None:
        p = NcclNetPlugin(path="/opt/amazon/ofi-nccl/lib/libnccl-net.so", name="libnccl-net.so", project="aws-ofi-nccl")
        facts = dataclasses.replace(facts, nccl_net_plugins=(dataclasses.replace(p, version=plugin),))
    return facts


def outcomes(result) -> tuple[dict[str, list], dict[str, list]]:
    found: dict[str, list] = {}
    for f in result.findings:
        if f.id in RULES:
            found.setdefault(f.id, []).append(f)
    unknown: dict[str, list] = {}
    for u in result.unknowns:
        if u.rule in RULES:
            unknown.setdefault(u.rule, []).append(u)
    return found, unknown


def test_catalogs_are_generated_from_every_release_and_validate():
    ucx = {r["name"]: r for r in matrix().rows("ucx_params")}
    assert len(ucx) > 1000  # 1.2.0 .. 1.22.0, nested prefixes expanded
    # one field, two names: the rc transport's own prefix and the nested table's (parser.c)
    assert ucx["UCX_RC_VERBS_TIMEOUT"]["default"] == ucx["UCX_RC_TIMEOUT"]["default"] == "1.0s"
    assert ucx["UCX_IB_REG_METHODS"]["removed_in"] == "1.16.0" and ucx["UCX_IB_REG_METHODS"]["uncertain"] is None
    # a bound a table the generator did not reach could explain is marked, and the lint says unknown for it
    assert sum(1 for r in ucx.values() if r["uncertain"]) < len(ucx) // 10
    assert ucx["UCX_PROTO_ENABLE"]["first"] == "1.9.0"
    # a protocol default that changed, read from the tables: the new protocols became the default in 1.16.0
    assert ucx["UCX_PROTO_ENABLE"]["default_history"] == ["1.9.0: n", "1.16.0: y"]
    assert ucx["UCX_WARN_UNUSED_ENV_VARS"]["first"] is not None  # a field named by a header macro
    ofi = {r["name"]: r for r in matrix().rows("ofi_params")}
    assert ofi["FI_EFA_FORK_SAFE"]["first"] == "1.13.0" and ofi["FI_EFA_FORK_SAFE"]["upstream"] == "libfabric"
    assert ofi["FI_HMEM_CUDA_USE_GDRCOPY"]["removed_in"] is None
    assert ofi["FI_EFA_USE_HW_CNTR"]["type"] == "getenv"  # read with a raw getenv, not fi_param_define
    assert ofi["OFI_NCCL_DISABLE_GDR_REQUIRED_CHECK"]["upstream"] == "aws-ofi-nccl"
    assert all(r["source"] and r["confidence"] for r in [*ucx.values(), *ofi.values()])


def test_ucx_block_on_the_ucx_it_was_written_for_is_quiet():
    found, unknown = outcomes(run(image(script_env("sc24_export_frontier_vars.sh")), node(NODE)))
    assert found == {} and unknown == {}  # UCX 1.13.1 reads UCX_NET_DEVICES, UCX_IB_REG_METHODS and UCX_TLS


def test_ucx_block_on_a_newer_ucx_says_reg_methods_is_no_longer_read():
    # UCX 1.20.0 is what NGC's cuda-dl-base 26.03 ships (catalogs/base_images.json)
    found, _ = outcomes(run(image(script_env("sc24_export_frontier_vars.sh"), ucx="1.20.0"), node(NODE)))
    removed = found["ENV-UPSTREAM-PARAM-NOT-IN-RELEASE"]
    assert [f.evidence[0].fact for f in removed] == ["image.env.UCX_IB_REG_METHODS"]
    assert "no longer reads" in removed[0].title and "1.16.0" in removed[0].mechanism


def test_ucx_version_unknown_is_an_unknown_naming_it():
    found, unknown = outcomes(run(image(script_env("sc24_export_frontier_vars.sh"), ucx=None), node(NODE)))
    assert "ENV-UPSTREAM-PARAM-NOT-IN-RELEASE" not in found
    assert "UCX version was not read" in unknown["ENV-UPSTREAM-PARAM-NOT-IN-RELEASE"][0].reason


def test_efa_block_on_an_old_libfabric_fork_safe_not_yet_read():
    env = script_env("birdnoise_train_dist.sh")
    # Debian bullseye's libfabric1 is 1.11.0: FI_EFA_FORK_SAFE arrived in 1.13.0
    found, _ = outcomes(run(image(env, libfabric="1.11.0"), node(NODE)))
    not_yet = found["ENV-UPSTREAM-PARAM-NOT-IN-RELEASE"]
    assert [f.evidence[0].fact for f in not_yet] == ["image.env.FI_EFA_FORK_SAFE"]
    assert "does not read" in not_yet[0].title and "1.13.0" in not_yet[0].title
    # the same script on Debian bookworm's libfabric 1.17.0 reads every FI_* it sets
    found, unknown = outcomes(run(image(env, libfabric="1.17.0"), node(NODE)))
    assert found == {} and unknown == {}


def test_efa_block_without_libfabric_in_the_image_is_left_to_the_libfabric_rules():
    found, _ = outcomes(run(image(script_env("birdnoise_train_dist.sh")), node(NODE)))
    assert found == {}


def test_slingshot_script_on_a_libfabric_with_the_cxi_provider_is_quiet():
    # NERSC's Perlmutter script: FI_CXI_DISABLE_HOST_REGISTER (cxi, upstream since 1.21.0) and FI_MR_CACHE_MONITOR
    env = script_env("nersc_env_nccl.sh")
    found, unknown = outcomes(run(image(env, libfabric="1.22.0"), node(NODE)))
    assert found == {} and unknown == {}
    # the same on upstream 1.17.0, which has no cxi provider yet: the cxi setting does nothing there
    found, _ = outcomes(run(image(env, libfabric="1.17.0"), node(NODE)))
    assert [f.evidence[0].fact for f in found["ENV-UPSTREAM-PARAM-NOT-IN-RELEASE"]] == [
        "image.env.FI_CXI_DISABLE_HOST_REGISTER"
    ]


def test_a_vendor_build_or_an_unknown_prefix_is_unknown_not_a_finding():
    # version string in the shape of AWS's builds (1.22.0amzn4.0): the vendor's tree may read what upstream does not
    found, unknown = outcomes(run(image(script_env("birdnoise_train_dist.sh"), libfabric="1.11.1amzn1.0"), node(NODE)))
    assert "ENV-UPSTREAM-PARAM-NOT-IN-RELEASE" not in found
    assert "vendor build" in unknown["ENV-UPSTREAM-PARAM-NOT-IN-RELEASE"][0].reason
    # error path, hand-made: a prefix no libfabric release uses
    found, unknown = outcomes(run(image({"FI_XYZ_THING": "1"}, libfabric="1.22.0"), node(NODE)))
    assert found == {} and "FI_<word>_ prefix" in unknown["ENV-UPSTREAM-PARAM-UNKNOWN"][0].reason


def test_misspelled_name_gets_did_you_mean():
    # error path, hand-made: the missing S of UCX_NET_DEVICES
    found, _ = outcomes(run(image({"UCX_NET_DEVICE": "mlx5_0:1"}), node(NODE)))
    typo = found["ENV-UPSTREAM-PARAM-UNKNOWN"][0]
    assert "UCX_NET_DEVICES" in typo.title and typo.severity == "warning"
    # ucx-py's own UCX_PY_* settings are not UCX's: not linted as UCX names
    found, unknown = outcomes(run(image({"UCX_PY_LOG_LEVEL": "DEBUG"}), node(NODE)))
    assert found == {} and unknown == {}


def test_plugin_setting_against_the_plugin_release():
    env = {"OFI_NCCL_DISABLE_GDR_REQUIRED_CHECK": "1"}
    found, _ = outcomes(run(image(env, plugin="1.7.3-aws"), node(NODE)))
    assert [f.evidence[0].fact for f in found["ENV-UPSTREAM-PARAM-NOT-IN-RELEASE"]] == [
        "image.env.OFI_NCCL_DISABLE_GDR_REQUIRED_CHECK"
    ]
    found, _ = outcomes(run(image(env, plugin="1.9.1-aws"), node(NODE)))
    assert found == {}


def test_rdma_core_notes_and_cuda_errors_load_with_their_sources():
    notes = matrix().rows("rdma_core_notes")
    # copy-on-fork: libibverbs stops honouring IBV_FORK_SAFE once the kernel does fork itself (v51.0)
    fork = [r for r in notes if r["release"] == "51.0" and "fork" in r["topics"]]
    assert fork and "IBV_FORK_SAFE" in fork[0]["text"] and fork[0]["source"].startswith("linux-rdma/rdma-core@v51.0")
    assert any(r["release"] == "34.0" and "dmabuf" in r["topics"] for r in notes)  # ibv_reg_dmabuf_mr arrives
    errors = {r["code"]: r for r in matrix().rows("cuda_driver_errors")}
    assert errors[804]["name"] == "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE" and errors[804]["container_meaning"]
    assert errors[803]["name"] == "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"
    assert errors[34]["name"] == "CUDA_ERROR_STUB_LIBRARY" and "stub" in errors[34]["container_meaning"]
    assert errors[700]["container_meaning"] is None and errors[700]["note"]  # an illegal address is the code's own


def later_fix(result):
    found = [f for f in result.findings if f.id == "UPSTREAM-RELEASE-LATER-FIX"]
    unknown = [u for u in result.unknowns if u.rule == "UPSTREAM-RELEASE-LATER-FIX"]
    return found, unknown


def test_release_notes_cover_every_release_of_the_three_upstreams():
    rows = matrix().rows("upstream_release_notes")
    ups = {u: [r for r in rows if r["upstream"] == u] for u in ("ucx", "libfabric", "aws-ofi-nccl")}
    assert len({r["release"] for r in ups["ucx"]}) > 30 and len({r["release"] for r in ups["aws-ofi-nccl"]}) > 40
    crash = next(r for r in ups["aws-ofi-nccl"] if r["release"] == "1.17.2" and "NCCL v2.28" in r["text"])
    assert crash["kind"] == "fix" and crash["symptom"] == "crash" and crash["conditions"] == ["nccl:2.28"]


def test_a_plugin_fix_whose_condition_the_facts_show_is_named():
    # aws-ofi-nccl 1.17.0 (what NGC cuda-dl-base 26.03 ships) with NCCL 2.28.3 (the NCCL its release notes name):
    # 1.17.2 fixed "a crash with NCCL v2.28.x when Libfabric initialization failed"
    facts = with_nccl(committed_facts("bookworm"), "2.28.3")
    p = NcclNetPlugin(path="/opt/amazon/ofi-nccl/lib/libnccl-net.so", name="libnccl-net.so", project="aws-ofi-nccl")
    facts = dataclasses.replace(facts, nccl_net_plugins=(dataclasses.replace(p, version="1.17.0"),))
    found, _ = later_fix(run(facts, node(NODE)))
    assert found and found[0].severity == "info"
    assert "1.17.2" in found[0].mechanism and "NCCL v2.28" in found[0].mechanism
    assert any(e.fact == "image.nccl_net_plugins.version" for e in found[0].evidence)
    # the same plugin with NCCL 2.29.7 (as NGC 26.03 pairs it): that entry's condition does not hold
    facts = dataclasses.replace(
        with_nccl(committed_facts("bookworm"), "2.29.7"), nccl_net_plugins=facts.nccl_net_plugins
    )
    found, _ = later_fix(run(facts, node(NODE)))
    assert not any("NCCL v2.28" in f.mechanism for f in found)


def test_fixes_whose_conditions_the_facts_cannot_show_are_one_unknown():
    # Debian bookworm's UCX 1.13.1: later UCX releases fixed hangs and crashes in paths the facts do not show
    found, unknown = later_fix(run(committed_facts("bookworm"), node(NODE)))
    assert not found and len(unknown) == 1
    assert "ucx 1.13.1" in unknown[0].reason and "name no condition to check" in unknown[0].reason


def with_torch(facts, version: str):
    torch = Package(
        name="torch",
        version=version,
        db="python",
        path=f"/usr/local/lib/python3.11/dist-packages/torch-{version}.dist-info/METADATA",
    )
    return dataclasses.replace(facts, packages=(*facts.packages, torch))


def test_torch_script_setting_a_name_its_torch_does_not_declare_yet():
    # the old NCCL_* names are the NCCL lint's (read by PyTorch, not typos). TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC is
    # first declared by torch 2.2.0's c10d (catalogs/torch_nccl_env.json, generated from every torch wheel): with
    # torch 2.1.2 the setting does nothing; with 2.5.1 it is read, and the script's NCCL_ASYNC_ERROR_HANDLING is
    # named as the deprecated alias it is there (information)
    facts = with_torch(image(script_env("ssocl_debug.sh")), "2.1.2")
    found, unknown = outcomes(run(facts, node(NODE)))
    (f,) = found["ENV-UPSTREAM-PARAM-NOT-IN-RELEASE"]
    assert "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC" in f.title and "2.1.2" in f.title and "2.2.0" in f.title
    found, unknown = outcomes(run(with_torch(image(script_env("ssocl_debug.sh")), "2.5.1"), node(NODE)))
    alias = found["ENV-UPSTREAM-PARAM-NOT-IN-RELEASE"]
    assert alias and all(f.severity == "info" and "deprecated alias" in f.title for f in alias)
    assert unknown == {}


def test_a_name_no_later_torch_declares_is_a_question_not_a_finding():
    """TORCH_NCCL_ABORT_IN_DESTROY_PG is declared by torch 2.3.x only; a later torch may read it from
    ProcessGroupNCCL.cpp, which the wheels read do not build: one unknown, never 'not read'. The old alias
    ENABLE_NCCL_HEALTH_CHECK (declared by 2.2.x only) is not called a working deprecated alias on torch 2.5.1."""
    m = matrix()
    row = m.row("torch_nccl_env", name="TORCH_NCCL_ABORT_IN_DESTROY_PG")
    assert (row["first"], row["last"], row["removed_in"]) == ("2.3.0", "2.3.1", "2.4.0")
    found, unknown = outcomes(run(with_torch(image({"TORCH_NCCL_ABORT_IN_DESTROY_PG": "1"}), "2.5.1"), node(NODE)))
    assert found == {} and "not decided" in unknown["ENV-UPSTREAM-PARAM-NOT-IN-RELEASE"][0].reason
    found, unknown = outcomes(run(with_torch(image({"TORCH_NCCL_ABORT_IN_DESTROY_PG": "1"}), "2.3.1"), node(NODE)))
    assert found == {} and unknown == {}
    found, unknown = outcomes(run(with_torch(image({"ENABLE_NCCL_HEALTH_CHECK": "1"}), "2.5.1"), node(NODE)))
    assert found == {} and "ENABLE_NCCL_HEALTH_CHECK" in unknown["ENV-UPSTREAM-PARAM-NOT-IN-RELEASE"][0].reason
    found, _ = outcomes(run(with_torch(image({"ENABLE_NCCL_HEALTH_CHECK": "1"}), "2.2.2"), node(NODE)))
    (f,) = found["ENV-UPSTREAM-PARAM-NOT-IN-RELEASE"]
    assert f.severity == "info" and "deprecated alias" in f.title


def test_torch_nccl_env_is_generated_from_every_torch_wheel():
    """Every name a torch wheel's c10d declares has its first (and, where it went, last) release and cites the
    wheel it was read from; the renames of torch 2.2.0 (pytorch/pytorch#114077, hand-recorded before) come out of the
    headers with the same first release and the old name as the alias."""
    rows = {r["name"]: r for r in matrix().rows("torch_nccl_env")}
    generated = [r for r in rows.values() if r.get("generated")]
    assert len(generated) >= 27
    for r in generated:
        assert r["source"][0].startswith(f"PyPI torch-{r['first']}-") and r["confidence"] == "verified"
        assert r["generated"]["read_from"] == "1.13.0"
    for new, old in {
        "TORCH_NCCL_BLOCKING_WAIT": "NCCL_BLOCKING_WAIT",
        "TORCH_NCCL_ASYNC_ERROR_HANDLING": "NCCL_ASYNC_ERROR_HANDLING",
        "TORCH_NCCL_DESYNC_DEBUG": "NCCL_DESYNC_DEBUG",
        "TORCH_NCCL_ENABLE_TIMING": "NCCL_ENABLE_TIMING",
        "TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK": "NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK",
        "TORCH_ENABLE_NCCL_HEALTH_CHECK": "ENABLE_NCCL_HEALTH_CHECK",
    }.items():
        assert rows[new]["first"] == "2.2.0" and rows[new]["renamed_from"] == old
        assert old in rows[new]["generated"]["deprecated_aliases"]


def test_renamed_torch_variable_on_a_torch_that_reads_only_the_old_name():
    # error path, hand-made: the 2.2.0 name set in an image whose torch is 2.1.2 (PyPI), then 2.5.1
    env = {"TORCH_NCCL_ASYNC_ERROR_HANDLING": "1"}
    found, _ = outcomes(run(with_torch(image(env), "2.1.2"), node(NODE)))
    (f,) = found["ENV-UPSTREAM-PARAM-NOT-IN-RELEASE"]
    assert "NCCL_ASYNC_ERROR_HANDLING" in f.title and "2.1.2" in f.title
    assert any(e.fact == "image.packages.torch" for e in f.evidence)
    found, _ = outcomes(run(with_torch(image(env), "2.5.1"), node(NODE)))
    assert found == {}
    # a TORCH_NCCL_* name the table does not list is unknown, never called a typo
    found, unknown = outcomes(run(with_torch(image({"TORCH_NCCL_ASYNC_HANDLING": "1"}), "2.5.1"), node(NODE)))
    assert found == {} and "not enumerated" in unknown["ENV-UPSTREAM-PARAM-UNKNOWN"][0].reason


def test_the_launch_specs_env_is_linted_with_job_evidence():
    from imgcheck.job import parse_job_spec

    # the birdnoise script's settings passed with docker run -e instead of the image Env
    (job,) = parse_job_spec("docker run -e FI_PROVIDER=efa -e FI_EFA_FORK_SAFE=1 img", "run.sh")
    facts = image({}, libfabric="1.11.0")
    result = evaluate(facts, node(NODE), matrix(), job=job)
    (f,) = [f for f in result.findings if f.id == "ENV-UPSTREAM-PARAM-NOT-IN-RELEASE"]
    assert f.evidence[0].fact == "job.env.FI_EFA_FORK_SAFE"


def test_an_efa_fix_whose_setting_the_script_sets_is_named_on_an_efa_node():
    from imgcheck.model.node_io import parse_node_facts

    # node facts as test_efa.py writes them: one EFA device (driver efa), as on a p4d instance
    efa_node = parse_node_facts(
        {"name": "p4d", "rdma": {"stack": "inbox", "devices": [{"name": "rdmap16s27", "driver": "efa"}]}}, "node"
    )
    # the birdnoise script sets FI_EFA_ENABLE_SHM_TRANSFER=0; libfabric 2.5.0 fixed "uninitialized descriptor
    # arrays causing segfault with FI_EFA_ENABLE_SHM_TRANSFER=0"
    facts = image(script_env("birdnoise_train_dist.sh"), libfabric="2.4.0")
    found, _ = later_fix(run(facts, efa_node))
    assert found and "FI_EFA_ENABLE_SHM_TRANSFER=0" in found[0].mechanism and "libfabric 2.5.0" in found[0].mechanism
    # the same image on an InfiniBand node: the EFA provider's fixes do not apply there
    found, _ = later_fix(run(facts, node(NODE)))
    assert not any("FI_EFA_ENABLE_SHM_TRANSFER" in f.mechanism for f in found)


def _torch_image(version: str, env: dict[str, str]):
    base = with_nccl(committed_facts("bookworm"), "2.21.5", env=env)
    return dataclasses.replace(base, packages=(*base.packages, Package(name="torch", version=version, db="python")))


def test_old_c10d_name_on_a_torch_with_the_new_one_is_named_as_a_deprecated_alias():
    """NCCL_ASYNC_ERROR_HANDLING on torch >= 2.2 (renamed in pytorch#114077; the old name still read): information
    naming TORCH_NCCL_ASYNC_ERROR_HANDLING, never a warning; on torch 2.1 the old name is the one read: nothing."""
    env = {"NCCL_ASYNC_ERROR_HANDLING": "1"}
    found = [
        f for f in evaluate(_torch_image("2.5.1", env), node("cpu-no-rdma"), matrix()).findings if "ASYNC" in f.title
    ]
    assert [f.severity for f in found] == ["info"]
    assert "TORCH_NCCL_ASYNC_ERROR_HANDLING" in found[0].title and "deprecated alias" in found[0].title
    old = evaluate(_torch_image("2.1.2", env), node("cpu-no-rdma"), matrix()).findings
    assert not [f for f in old if "ASYNC_ERROR_HANDLING" in f.title]


def test_deprecated_ucx_fields_are_ignored_from_the_release_that_deprecates_them():
    """Data-driven over ucx_params: one field per release that deprecated some (UCS_CONFIG_DEPRECATED_FIELD_OFFSET,
    skipped by UCX's parser with a 'is deprecated' warning), set for that release and for the one before."""
    ucx = matrix().rows("ucx_params")
    releases = json_releases("ucx_params")
    by_release = {}
    for r in ucx:
        if r["deprecated_in"] and r["name"].count("_") <= 3:
            by_release.setdefault(r["deprecated_in"], r)
    assert len(by_release) >= 6  # 1.7.0 (the MAX_SHORT/MAX_BCOPY fields) .. 1.20.0
    for since, row in sorted(by_release.items()):
        found, _ = outcomes(run(image({row["name"]: "128"}, ucx=since), node(NODE)))
        hits = [f for f in found.get("ENV-UPSTREAM-PARAM-NOT-IN-RELEASE", []) if "deprecated" in f.title]
        assert hits and f"since {since}" in hits[0].title, row["name"]
        before = releases[releases.index(since) - 1]
        if row["first"] != since and releases.index(since) > releases.index(row["first"]):
            found, _ = outcomes(run(image({row["name"]: "128"}, ucx=before), node(NODE)))
            assert not [f for f in found.get("ENV-UPSTREAM-PARAM-NOT-IN-RELEASE", []) if "deprecated" in f.title]


def json_releases(table: str) -> list[str]:
    """The releases the table's rows name (first, last, removed_in, deprecated_in), oldest first."""
    seen = {
        v for r in matrix().rows(table) for k in ("first", "last", "removed_in", "deprecated_in") if (v := r.get(k))
    }
    return sorted(seen, key=lambda v: tuple(int(x) for x in v.split(".")))
