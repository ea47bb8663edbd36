"""Registration rules (issue 27, docs/registration-errors.md): facts in, finding out, one test per row.

Image facts are what imgcheck reads from the real Debian bookworm image (rdma-core 44.0: ibv_reg_mr_iova2
and ibv_reg_dmabuf_mr exported) and bullseye (33.2); NCCL and CUDA are added the way a torch image has them.
"""

from __future__ import annotations

import os
import re

import pytest
from engine_facts import by_id, ids, node, real_facts, replace_in, run, unknown_rules, with_nccl

from imgcheck.model.node import RdmaDevice


@pytest.fixture(scope="module")
def bookworm(debian_archive):
    return real_facts(debian_archive("bookworm"))


def unknown_reason(result, rule):
    return next(u.reason for u in result.unknowns if u.rule == rule)


# ---------------------------------------------------------------- REG-PATH: which call, which memory


def test_peer_memory_path_explains_einval_and_efault(bookworm):
    """MLNX_OFED + proprietary driver + nvidia-peermem: GPU buffers go to ibv_reg_mr_iova2 via peer memory
    (rows RE-EINVAL-PEER-DMAMAP, RE-EFAULT-DECLINED, RE-ENOMEM-MEMLOCK)."""
    f = by_id(run(with_nccl(bookworm, "2.21.5"), node("mofed-5.8-proprietary-535-peermem")), "REG-PATH")
    assert f.severity == "info" and f.confidence == "verified" and f.predicted_error is None
    assert "ibv_reg_mr_iova2 through nvidia-peermem" in f.title
    assert "Invalid argument" in f.mechanism and "nv_dma_map" in f.mechanism
    assert "Bad address" in f.mechanism and "not mine" in f.mechanism
    assert "not the relaxed-ordering flag" in f.mechanism
    assert "mlnx_ofed 5.8-3.0.7.0" in f.mechanism
    assert any("NCCL_CUMEM_ENABLE=0" in x for x in f.fixes)
    assert "docs/registration-errors.md" in f.sources


def test_peer_memory_path_names_ibv_reg_mr_when_ro_is_off(bookworm):
    image = with_nccl(bookworm, "2.21.5", env={"NCCL_IB_PCI_RELAXED_ORDERING": "0"})
    f = by_id(run(image, node("mofed-5.8-proprietary-535-peermem")), "REG-PATH")
    assert "with ibv_reg_mr through nvidia-peermem" in f.title
    assert {e.fact for e in f.evidence} >= {"image.env.NCCL_IB_PCI_RELAXED_ORDERING"}


def test_dmabuf_path(bookworm):
    """Inbox 6.8 + open modules: DMA-BUF; memlock and nvidia-peermem do not apply (RE-EOPNOTSUPP-DMABUF, RE-EINVAL-DMABUF)."""
    f = by_id(run(with_nccl(bookworm, "2.21.5"), node("inbox-6.8-open-570")), "REG-PATH")
    assert "ibv_reg_dmabuf_mr" in f.title
    assert "RLIMIT_MEMLOCK does not apply" in f.mechanism
    assert "nvidia-peermem is not involved" in f.mechanism


def test_host_staging_path_on_inbox_proprietary(bookworm):
    """Inbox kernel + proprietary driver: no GDR at all, only host memory is registered; EINVAL would contradict the table."""
    f = by_id(run(with_nccl(bookworm, "2.21.5"), node("inbox-5.15-proprietary-535")), "REG-PATH")
    assert "registers only host memory" in f.title
    assert "no EINVAL site is reachable" in f.mechanism
    assert "proprietary kernel modules" in f.mechanism


def test_gdr_level_loc_forces_host_staging(bookworm):
    image = with_nccl(bookworm, "2.21.5", env={"NCCL_NET_GDR_LEVEL": "LOC"})
    f = by_id(run(image, node("mofed-5.8-proprietary-535-peermem")), "REG-PATH")
    assert "registers only host memory" in f.title
    assert "NCCL_NET_GDR_LEVEL=LOC (image Env) forbids GPUDirect RDMA" in f.mechanism


def test_path_unknown_when_kernel_module_flavour_unknown(bookworm):
    n = replace_in(node("inbox-5.15-proprietary-535"), "gpu.kernel_module", None)
    result = run(with_nccl(bookworm, "2.21.5"), n)
    assert "REG-PATH" not in ids(result)
    assert "gpu.kernel_module" in unknown_reason(result, "REG-PATH")


def test_no_path_finding_without_rdma(bookworm):
    result = run(with_nccl(bookworm, "2.21.5"), node("cpu-no-rdma"))
    assert "REG-PATH" not in ids(result) and "REG-PATH" not in unknown_rules(result)


# ---------------------------------------------------------------- RE-EPERM-MEMLOCK0


def test_memlock_zero_predicts_eperm_not_enomem(bookworm):
    n = replace_in(node("mofed-5.8-proprietary-535-peermem"), "limits.memlock_kib", 0)
    result = run(with_nccl(bookworm, "2.21.5"), n)
    f = by_id(result, "REG-MEMLOCK-ZERO")
    assert f.severity == "error" and f.confidence == "verified"
    assert f.predicted_error == "NCCL WARN Call to ibv_reg_mr_iova2 failed with error Operation not permitted"
    assert "can_do_mlock" in f.mechanism and "CAP_IPC_LOCK" in f.mechanism
    # the ENOMEM rule would name the wrong errno for a zero limit
    assert "MEMLOCK-TOO-LOW" not in ids(result)


def test_memlock_low_but_nonzero_stays_enomem(bookworm):
    n = replace_in(node("mofed-5.8-proprietary-535-peermem"), "limits.memlock_kib", 8192)
    result = run(with_nccl(bookworm, "2.21.5"), n)
    assert "REG-MEMLOCK-ZERO" not in ids(result)
    assert by_id(result, "MEMLOCK-TOO-LOW").predicted_error.endswith("Cannot allocate memory")


def test_memlock_zero_applies_without_nccl(bookworm):
    """Any verbs user is refused, not only NCCL: the plain rdma image gets the finding too."""
    n = replace_in(node("inbox-6.8-open-570"), "limits.memlock_kib", 0)
    f = by_id(run(bookworm, n), "REG-MEMLOCK-ZERO")
    assert f.predicted_error.endswith("Operation not permitted")


# ---------------------------------------------------------------- RE-EFAULT-CUMEM-FLAG


@pytest.mark.parametrize(
    "nccl, expect_unknown", [("2.21.5", False), ("2.23.4", False), ("2.24.3", True), ("2.27.3", True)]
)
def test_cumem_vmm_gdr_only_from_2_24_3(bookworm, nccl, expect_unknown):
    """2.19 - 2.23 enable cuMem only when the GPU reports VMM GPUDirect RDMA; 2.24.3 dropped that test."""
    result = run(with_nccl(bookworm, nccl), node("mofed-5.8-proprietary-535-peermem"))
    assert ("REG-CUMEM-VMM-GDR" in unknown_rules(result)) == expect_unknown
    assert "REG-CUMEM-VMM-GDR" not in ids(result)
    if expect_unknown:
        reason = unknown_reason(result, "REG-CUMEM-VMM-GDR")
        assert "GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED" in reason and "imgcheck verify" in reason


def test_cumem_vmm_gdr_not_asked_when_cumem_is_off(bookworm):
    image = with_nccl(bookworm, "2.27.3", env={"NCCL_CUMEM_ENABLE": "0"})
    assert "REG-CUMEM-VMM-GDR" not in unknown_rules(run(image, node("mofed-5.8-proprietary-535-peermem")))


def test_cumem_vmm_gdr_not_asked_on_dmabuf_nodes(bookworm):
    assert "REG-CUMEM-VMM-GDR" not in unknown_rules(run(with_nccl(bookworm, "2.27.3"), node("inbox-6.8-open-570")))


def test_cumem_vmm_gdr_not_asked_below_driver_api_12(bookworm):
    """R470 without forward-compat libs: driver API 11.4, NCCL never uses cuMem."""
    image = with_nccl(bookworm, "2.27.3", cuda="11.8.0")
    assert "REG-CUMEM-VMM-GDR" not in unknown_rules(run(image, node("mofed-5.8-470-peermem")))


def test_cumem_vmm_gdr_asked_with_forward_compat_on_r470(bookworm):
    image = with_nccl(bookworm, "2.27.3", cuda="12.8.0", compat="570.124.06")
    assert "REG-CUMEM-VMM-GDR" in unknown_rules(run(image, node("mofed-5.8-470-peermem")))


# ---------------------------------------------------------------- RE-FLAG-ATOMIC


def test_remote_atomic_is_safe_on_mlx5(bookworm):
    result = run(with_nccl(bookworm, "2.28.9"), node("mofed-5.8-proprietary-535-peermem"))
    assert "REG-REMOTE-ATOMIC" not in ids(result) and "REG-REMOTE-ATOMIC" not in unknown_rules(result)


def test_remote_atomic_on_other_drivers_is_a_hypothesis(bookworm):
    n = replace_in(node("inbox-6.8-open-570"), "rdma.devices", (RdmaDevice(name="irdma0", link_layer="Ethernet"),))
    f = by_id(run(with_nccl(bookworm, "2.28.9"), n), "REG-REMOTE-ATOMIC")
    assert f.confidence == "hypothesis" and f.severity == "info"
    assert "irdma" in f.title and "not audited" in f.title


def test_remote_atomic_not_asked_before_2_28_7(bookworm):
    n = replace_in(node("inbox-6.8-open-570"), "rdma.devices", (RdmaDevice(name="irdma0"),))
    assert "REG-REMOTE-ATOMIC" not in ids(run(with_nccl(bookworm, "2.28.3"), n))


def test_every_registration_rule_cites_rows_that_exist():
    """Each rule text names its rows of docs/registration-errors.md, and those rows are in the table."""
    from engine_facts import matrix

    with open(os.path.join(os.path.dirname(__file__), "..", "docs", "registration-errors.md")) as fh:
        table_rows = set(re.findall(r"^\| `(RE-[A-Z0-9-]+)` \|", fh.read(), flags=re.M))
    assert len(table_rows) >= 15
    m = matrix()
    for rule in ("REG-PATH", "REG-MEMLOCK-ZERO", "REG-CUMEM-VMM-GDR", "REG-REMOTE-ATOMIC"):
        row = m.rule(rule)
        assert "docs/registration-errors.md" in row["sources"]
        texts = [row["mechanism"]] + [v["mechanism"] for v in (row.get("variants") or {}).values()]
        for text in texts:
            if text == "{why}.":
                continue  # the base text of REG-PATH; every emitted finding uses a variant
            named = set(re.findall(r"RE-[A-Z0-9]+(?:-[A-Z0-9]+)*", text))
            assert named and named <= table_rows, (rule, named - table_rows)


def test_peer_memory_path_with_unknown_stack_says_so(bookworm):
    n = replace_in(node("mofed-5.8-proprietary-535-peermem"), "rdma.stack", None)
    f = by_id(run(with_nccl(bookworm, "2.21.5"), n), "REG-PATH")
    assert "(RDMA stack unknown)" in f.mechanism and "None" not in f.mechanism


def test_readme_headline_example(capsys):
    """The README's headline example (facts of NVIDIA/nccl#1842 in examples/incidents/) keeps predicting what it shows."""
    import json

    from imgcheck.cli.main import main

    root = os.path.join(os.path.dirname(__file__), "..", "examples", "incidents")
    code = main([f"facts:{root}/nccl-1842-image.json", "--node-facts", f"{root}/nccl-1842-node.json", "-o", "json"])
    assert code == 0  # warnings only: the default --fail-on is error
    report = json.loads(capsys.readouterr().out)
    findings = {f["id"]: f for f in report["findings"]}
    assert (
        findings["CUMEM-OLD-DRIVER"]["predicted_error"]
        == "NCCL WARN Call to ibv_reg_mr_iova2 failed with error Invalid argument"
    )
    assert "through nvidia-peermem" in findings["REG-PATH"]["title"]
    assert "nv_dma_map" in findings["REG-PATH"]["mechanism"]
    assert "RO-MASKED-SAFE" in findings
    assert "REG-CUMEM-VMM-GDR" in {u["rule"] for u in report["unknowns"]}
    # the thread states no memlock limit: the error rules that need it are undecided, so never "OK"/"WARN"
    assert (report["verdict"], report["outcome"]) == ("warn", "incomplete")
    assert "MEMLOCK-TOO-LOW" in {u["rule"] for u in report["unknowns"] if u["severity"] == "error"}


def test_every_rule_and_signature_the_table_names_exists():
    """docs/registration-errors.md names rules (`rule X`) and triage signatures (`triage X`); they must exist."""
    from engine_facts import matrix

    from imgcheck.engine import RULE_IDS
    from imgcheck.triage.signatures import load_signatures

    with open(os.path.join(os.path.dirname(__file__), "..", "docs", "registration-errors.md")) as fh:
        text = fh.read()
    rules = set(re.findall(r"rule `([A-Z0-9-]+)`", text))
    sigs = set(re.findall(r"triage `([A-Z0-9-]+)`", text)) | set(
        re.findall(r"`(IBV-[A-Z0-9-]+|PEERMEM-[A-Z0-9-]+)`", text)
    )
    assert rules and sigs
    assert rules <= set(RULE_IDS), rules - set(RULE_IDS)
    known = {s.id for s in load_signatures().signatures}
    assert sigs <= known, sigs - known
    assert all(matrix().rule(r) for r in rules)


@pytest.mark.parametrize(
    "nccl, env, compat, node_name, words",
    [
        ("2.18.5", {}, None, "mofed-5.8-proprietary-535-peermem", "of its cudaMalloc buffers"),
        ("2.21.5", {}, None, "mofed-5.8-proprietary-535-peermem", "cuMem (VMM) if the GPU reports VMM GPUDirect RDMA"),
        ("2.27.3", {}, None, "mofed-5.8-proprietary-535-peermem", "of its cuMem (VMM) buffers"),
        (
            "2.27.3",
            {"NCCL_CUMEM_ENABLE": "0"},
            None,
            "mofed-5.8-proprietary-535-peermem",
            "cudaMalloc (NCCL_CUMEM_ENABLE=0 (image Env)) buffers",
        ),
        ("2.27.3", {}, None, "mofed-5.8-470-peermem", "cudaMalloc (driver API < 12.0)"),
        ("2.27.3", {}, "570.124.06", "mofed-5.8-470-peermem", "of its cuMem (VMM) buffers"),
    ],
)
def test_peer_memory_path_names_the_allocation(bookworm, nccl, env, compat, node_name, words):
    """2.19 - 2.23 use cuMem only with VMM GPUDirect RDMA; 2.24.3+ whenever the driver API is >= 12.0."""
    image = with_nccl(bookworm, nccl, env=env, cuda="12.8.0" if compat else "12.4.1", compat=compat)
    f = by_id(run(image, node(node_name)), "REG-PATH")
    assert words in f.mechanism


def test_every_table_row_has_a_rule_a_row_specific_cause_and_a_verify_label():
    """Issue 34: each row of docs/registration-errors.md names a rule or says why facts cannot decide it, a
    triage signature with a cause that exists in it, and a verify label or why verify cannot run it."""
    from engine_facts import matrix

    from imgcheck.engine import RULE_IDS
    from imgcheck.triage.signatures import load_signatures

    sigs = {s.id: {c.id for c in s.causes} for s in load_signatures().signatures}
    with open(os.path.join(os.path.dirname(__file__), "..", "docs", "registration-errors.md")) as fh:
        rows = [ln for ln in fh.read().splitlines() if re.match(r"^\| `RE-[A-Z0-9-]+` \|", ln)]
    assert len(rows) >= 35
    pairs = {}
    for line in rows:
        cells = [c.strip() for c in line.strip()[1:-1].split(" | ")]
        assert len(cells) == 10, cells[0]
        row_id, rule, triage_cell, verify = cells[0], cells[7], cells[8], cells[9]
        named = re.findall(r"rule `([A-Z0-9-]+)`", rule)
        assert named or rule.startswith("none: "), (row_id, rule)
        assert set(named) <= set(RULE_IDS) and all(matrix().rule(r) for r in named), row_id
        found = set()
        for part in re.split(r"; |, (?=`[A-Z])|(?<=\)), ", triage_cell):
            sig = re.search(r"`([A-Z0-9]+(?:-[A-Z0-9]+)+)`", part)
            if not sig or sig.group(1) not in sigs:
                continue
            for cause in re.findall(r"`([a-z0-9]+(?:-[a-z0-9]+)*)`", part):
                if cause in sigs[sig.group(1)]:
                    found.add((sig.group(1), cause))
        assert found, (row_id, triage_cell)
        pairs[row_id] = frozenset(found)
        assert verify and len(verify) > 10, row_id
    # row-specific: no two rows point at exactly the same causes
    seen = {}
    for row_id, found in pairs.items():
        assert found not in seen, (row_id, seen.get(found))
        seen[found] = row_id
