"""The signature data: it loads, every signature is sourced and matched by a sample line, and
malformed data is refused with one clear error."""

from __future__ import annotations

import copy
import json
from importlib import resources

import pytest

from imgcheck.errors import BadInputError
from imgcheck.triage.logparse import parse_line
from imgcheck.triage.signatures import load_signatures, parse_signatures

# One line per signature (most from the public threads cited in logs/README.md).
SAMPLES = {
    "CUDA-INVALID-DEVICE-ORDINAL": "transport/p2p.cc:275 NCCL WARN Cuda failure 101 'invalid device ordinal'",
    "CUDA-DRIVER-INSUFFICIENT": "Cuda failure common.cu:891 'CUDA driver version is insufficient for CUDA runtime version'",
    "NCCL-CUDA-FAILURE": "pais:508:508 [0] init.cc:426 NCCL WARN Cuda failure 'operation not supported'",
    "NCCL-ERR-1": "NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1331, unhandled cuda error",
    "IBV-REG-MR-EINVAL": "misc/ibvwrap.cc:182 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Invalid argument",
    "IBV-REG-MR-EFAULT": "mscclpp._mscclpp.IbError: (14, 'ibv_reg_mr failed (errno 14) (Ib failure: Bad address)')",
    "IBV-REG-MR-ENOMEM": "misc/ibvwrap.cc:278 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory",
    "IBV-REG-DMABUF-EOPNOTSUPP": "misc/ibvwrap.cc:288 NCCL WARN Call to ibv_reg_dmabuf_mr failed with error Operation not supported",
    "NCCL-ERR-2": "NCCL error in: /torch/lib/c10d/ProcessGroupNCCL.cpp:260, unhandled system error",
    "NCCL-ERR-3": "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:3763, internal error",
    "GPU-XID-31": "[Mon Aug  5 03:54:13 2024] NVRM: Xid (PCI:0000:00:07): 31, pid=2512125, name=python3.10, Ch 00000008",
    "GPU-XID-79": "NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.",
    "GPU-XID-ECC": "NVRM: Xid (PCI:0000:9b:00): 94, pid=1234, name=python3, Contained ECC error",
    "GPU-XID": "kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001",
    "CKPT-CRC32-SEGFAULT": ' 93:   File "<unknown>", line 0, in crc32_16bytes(void const*, unsigned long, unsigned int)',
    "COMPILE-CACHE-SHARED": "KeyError: 'getpwuid(): uid not found: 1000'",
    "NCCL-ERR-6": "a100:183006:183181 [1] misc/socket.cc:538 NCCL WARN Net : Connection closed by remote peer a100-22<47861>",
    "TORCH-WATCHDOG-TIMEOUT": "[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out.",
    "ALLTOALL-NOT-CERTIFIED": "[Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12, OpType=ALLTOALL_BASE)",
    "IB-VENDOR-ERR-129": "NCCL WARN NET/IB : Got completion with error 12, opcode 0, len 0, vendor err 129",
    "IB-VENDOR-ERR-249": "NET/IB : Got completion from peer 172.21.17.89<38536> with error 5, opcode 48, len 32710, vendor err 249",
    "IB-COMPLETION-ERROR": "vm2:15364:15376 [0] transport/net_ib.cc:1192 NCCL WARN NET/IB : Got completion from peer 192.168.0.12<60054> with error 4, opcode 32704, len 0, vendor err 81",
    "IBVERBS-PROVIDER-ABI": "libibverbs: Warning: couldn't load driver 'mlx4': /x/libibverbs.so.1: version `IBVERBS_PRIVATE_22' not found (required by /usr/lib64/libibverbs/libmlx4-rdmav2.so)",
    "IBVERBS-DRIVER-LOAD-MLX5": "libibverbs: Warning: couldn't load driver 'libmlx5-rdmav34.so': libmlx5-rdmav34.so: cannot open shared object file: No such file or directory",
    "IBVERBS-DRIVER-LOAD": "libibverbs: Warning: couldn't load driver 'libvmw_pvrdma-rdmav34.so': libvmw_pvrdma-rdmav34.so: cannot open shared object file",
    "LIBIBVERBS-MISSING": "axon:5020:5091 [1] NCCL INFO Failed to open libibverbs.so[.1]",
    "NET-IB-NO-DEVICE": "ip-172-31-12-21:45361:45361 [0] NCCL INFO NET/IB : No device found.",
    "GDR-DISABLED": "hostname1:25668:27396 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'",
    "RANK-CRASH": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
}


def _matching(sigset, text):
    t = parse_line(text, "s", 1).text
    return {s.id for s in sigset.signatures if any(p.search(t) for p in s.patterns)}


def test_packaged_signatures_are_sourced_and_sampled():
    sigset = load_signatures()
    ids = {s.id for s in sigset.signatures}
    for s in sigset.signatures:
        assert s.source and s.confidence in ("verified", "reported", "vendor-guidance", "hypothesis"), s.id
        assert all(c.next.strip() and c.confidence for c in s.causes), s.id
        if s.derived is None:
            assert s.id in SAMPLES, f"{s.id} has no sample line"
            assert s.id in _matching(sigset, SAMPLES[s.id]), s.id
    assert set(SAMPLES) <= ids


@pytest.mark.parametrize("text,absent", [
    ("axa:3048391:3048566 [0] NCCL INFO NET/Socket : GPU Direct RDMA Disabled for HCA 0 'lo'", "GDR-DISABLED"),
    ("libibverbs: Warning: couldn't load driver 'libvmw_pvrdma-rdmav34.so': cannot open", "IBVERBS-DRIVER-LOAD-MLX5"),
    ("NVRM: Xid (PCI:0000:00:07): 31, pid=1", "GPU-XID"),                       # the specific XID signature only
    ("Epoch 3: internal error rate 0.1%", "NCCL-ERR-3"),                         # not an NCCL error
])
def test_no_false_matches(text, absent):
    assert absent not in _matching(load_signatures(), text)


def _doc():
    ref = resources.files("imgcheck.data.triage").joinpath("signatures.json")
    return json.loads(ref.read_text(encoding="utf-8"))


@pytest.mark.parametrize("mutate,message", [
    (lambda d: d["signatures"][0]["patterns"].append("(unclosed"), "bad regex"),
    (lambda d: d["signatures"][0].update(confidence="certain"), "confidence"),
    (lambda d: d["signatures"][0].update(source=[]), "source"),
    (lambda d: d["signatures"].append(copy.deepcopy(d["signatures"][0])), "duplicate id"),
    (lambda d: d["signatures"][0]["causes"][0].update(when=["node.no_such_fact"]), "unknown fact predicate"),
    (lambda d: d["signatures"][0]["causes"][0].update(when=["sig:NOPE.hosts>=2"]), "unknown signature"),
    (lambda d: d["signatures"][0]["causes"][0].update(when=["env:X>seven"]), "non-integer"),
    (lambda d: d["signatures"][0].update(suppresses=["NOPE"]), "suppresses"),
    (lambda d: d["signatures"][0].update(role="cause"), "role"),
    (lambda d: d["signatures"][0]["causes"][0].update(promote="yes"), "promote"),
    (lambda d: d.update(schema_version=99), "newer"),
    (lambda d: d["signatures"][0].pop("causes"), "cause"),
])
def test_bad_signature_data_is_refused(mutate, message):
    doc = _doc()
    mutate(doc)
    with pytest.raises(BadInputError, match=message):
        parse_signatures(doc, "sigs.json")


def test_a_new_signature_needs_no_code(tmp_path):
    """Adding a signature is a data change: a user-supplied file with one more entry just works."""
    from imgcheck.triage import triage

    doc = _doc()
    doc["signatures"].append({
        "id": "IBV-MODIFY-QP-ENETUNREACH", "title": "ibv_modify_qp failed: Network is unreachable",
        "patterns": [r"Call to ibv_modify_qp failed with error Network is unreachable"],
        "role": "primary", "severity": "error", "priority": 80,
        "meaning": "The QP could not reach the peer's GID (RoCE routing / GID index).",
        "causes": [{"id": "gid-index", "text": "Wrong NCCL_IB_GID_INDEX for RoCE v2.", "next": "show_gids",
                    "confidence": "reported", "when": ["env:NCCL_IB_GID_INDEX"]}],
        "source": ["https://github.com/NVIDIA/nccl-tests/issues/185"], "confidence": "reported"})
    path = tmp_path / "sigs.json"
    path.write_text(json.dumps(doc))
    import os
    log = os.path.join(os.path.dirname(__file__), "logs", "nccl-tests-185-no-signature.log")
    r = triage([log], signatures=str(path))
    assert r.verdict == "signature_found" and r.diagnoses[0].signature == "IBV-MODIFY-QP-ENETUNREACH"


# Registration signatures (issue 27, docs/registration-errors.md); kept apart so additions elsewhere merge cleanly.
SAMPLES.update({
    # no public NCCL log yet: NCCL's "Call to %s failed with error %s" (misc/ibvwrap.cc) with strerror(EPERM)
    "IBV-REG-MR-EPERM": "misc/ibvwrap.cc:182 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Operation not permitted",
    "IBV-REG-DMABUF-EINVAL": "ibv_reg_dmabuf_mr (retain) failed: Invalid argument",  # uccl-project/mKernel#26
    # no public log yet: nvidia-peermem's peer_err format with nv_dma_map's message (nvidia-peermem.c:71, 313)
    "PEERMEM-DMA-MAP-REFUSED": "nvidia-peermem nv_dma_map:313 ERROR nv_dma_map -- assumption of 64KB pages failed size_id=0",
    "PEERMEM-LOAD-EINVAL": "nvidia_peer_memory-1.0-8 modprobe: ERROR: could not insert 'nv_peer_mem': Invalid argument",
    "PEERMEM-INVALID-CONTEXT": "[25033.266922] nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, "
                               "skipping further processing",
})
