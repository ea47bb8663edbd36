"""Build /work/sealed9/logs/: one file per verbatim log excerpt plus logs/index.json and logs/README.md.

Each excerpt holds lines copied from the public thread or page named in `url` (trimmed to the lines that matter,
lines never edited; where the thread goes on, the excerpt simply ends; the thread's own elisions are kept). The text
of every excerpt is embedded below and written out by main(), so the set can be rebuilt from this file alone.
`expect_signatures`: ids from src/imgcheck/data/triage/signatures.json whose title covers the failure and whose
causes describe the established cause today ([] if none does, or the log is noise from a job whose failure lies
elsewhere -> `negative`); `expect_causes` names the cause ids of those signatures that fit.
Every source was checked with exclusion-check.sh (see exclusion-check.txt) on 2026-12-07.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
LOGS = []
TEXT = {}


def log(text: str, **kw):
    kw.setdefault("sealed_source", "issues")
    kw.setdefault("negative", False)
    kw.setdefault("expect_causes", [])
    kw["file"] = kw["id"] + ".log"
    assert kw["file"] not in TEXT, kw["file"]
    TEXT[kw["file"]] = text
    LOGS.append(kw)


# ---------------------------------------------------------------- EFA / GIN
log(
    "nccl-gin-efa-test-worker-0:19817:19817 [0] NCCL INFO transport/net.cc:476 -> 2\n"
    "nccl-gin-efa-test-worker-0:19817:19817 [0] NCCL INFO transport/net.cc:1202 -> 2 [Async thread]\n"
    "Test NCCL failure all_reduce.cu:471 'internal error - please report this issue to the NCCL developers'\n"
    "NET/OFI Unexpected number of remote rails for dev 0. Expected 3 but got 2\n"
    "NET/OFI Unexpected number of remote rails for dev 1. Expected 2 but got 3\n"
    "[continues for all 8 devices]\n",
    id="nccl-1921-gin-proxy-efa-rail-mismatch-internal-error",
    url="https://github.com/NVIDIA/nccl/issues/1921",
    cause="NCCL 2.28.9 with the GIN proxy backend (NCCL_GIN_TYPE=2) and aws-ofi-nccl v1.16.3/v1.17.2 on AWS P5 "
    "(EFA): the EFA devices report 1-3 rails each, GIN's proxy backend expects one rail layout on every device, so "
    "connection setup fails with rail-count mismatches and NCCL returns 'internal error'.",
    established_by="the same reporter's aws/aws-ofi-nccl#1061 (filed the same day): OFI_NCCL_FORCE_NUM_RAILS=4 is "
    "required for GIN on P5; without it 'complete failure with rail mismatch errors' and 'Internal error' from NCCL",
    mechanism="GIN proxy backend on multi-rail EFA without a forced rail count -> rail mismatch -> internal error",
    expect_signatures=[],
    notes="the description's two code blocks, in order, unchanged (first block: the NCCL lines; second block: the "
    "plugin lines with the reporter's own '[continues for all 8 devices]'). NCCL-ERR-3's title covers 'internal "
    "error' but none of its causes names GIN / rail counts",
)

# ---------------------------------------------------------------- NCCL copies / wheels
log(
    '    torch = import_optional("torch")\n'
    "/pyenv/versions/3.9.19/lib/python3.9/site-packages/cugraph/utilities/utils.py:455: in import_optional\n"
    "    return importlib.import_module(mod)\n"
    "/pyenv/versions/3.9.19/lib/python3.9/site-packages/torch/__init__.py:237: in <module>\n"
    "    from torch._C import *  # noqa: F403\n"
    "E   ImportError: /pyenv/versions/3.9.19/lib/python3.9/site-packages/torch/lib/libtorch_cuda.so: undefined "
    "symbol: ncclCommRegister\n",
    id="cugraph-4465-undefined-ncclcommregister-container-nccl-first",
    url="https://github.com/rapidsai/cugraph/issues/4465",
    cause="cupy loaded the container's built-in libnccl.so (2.16.2) before torch, whose libtorch_cuda.so needs the "
    "nvidia-nccl-cu11 2.20.5 wheel; the older NCCL already in the process lacks ncclCommRegister.",
    established_by="reporter's root cause in the issue (cupy -> builtin libnccl 2.16.2, torch -> wheel 2.20.5; "
    "'always import torch first' works around it)",
    mechanism="older libnccl.so.2 loaded first in the process -> undefined NCCL symbol at torch import",
    expect_signatures=["LD-UNDEFINED-NCCL-SYMBOL"],
    expect_causes=["older-libnccl-first"],
    notes="the pytest traceback lines from the description, unchanged (the lines before 'torch = ...' are cut)",
)
log(
    "Python 3.12.3 (main, Jun 18 2025, 17:59:45) [GCC 13.3.0] on linux\n"
    'Type "help", "copyright", "credits" or "license" for more information.\n'
    ">>> import torch\n"
    "Traceback (most recent call last):\n"
    '  File "<stdin>", line 1, in <module>\n'
    '  File "/usr/local/lib/python3.12/dist-packages/torch/__init__.py", line 417, in <module>\n'
    "    from torch._C import *  # noqa: F403\n"
    "    ^^^^^^^^^^^^^^^^^^^^^^\n"
    "ImportError: libnccl.so.2: cannot open shared object file: No such file or directory\n",
    id="pytorch-156888-aarch64-cu129-wheel-no-libnccl",
    url="https://github.com/pytorch/pytorch/pull/156888",
    cause="The aarch64 CUDA 12.9 torch nightly wheel was built with USE_SYSTEM_NCCL=1 and links libnccl.so.2 "
    "dynamically, but shipped no libnccl.so.2.",
    established_by="PyTorch PR (tinglvv) adding libnccl.so back into the aarch64 CUDA wheel, with this diagnosis",
    mechanism="framework wheel without the NCCL library it links -> ImportError at import torch",
    expect_signatures=["LD-LIB-NOT-FOUND"],
    expect_causes=["library-not-in-image"],
    notes="the PR description's code block, unchanged",
    sealed_source="issues (merged PR)",
)

# ---------------------------------------------------------------- launch spec
log(
    "Error: rank 27 and rank 19 both on CUDA device 53000 (PCI 53:00.0)\n"
    "Error: rank 29 and rank 21 both on CUDA device 91000 (PCI 91:00.0)\n",
    id="thomaskalnik-deepseek-v3-part4-ranks-on-same-cuda-device",
    url="https://www.thomaskalnik.com/posts/deepseek-v3-part-4-nccl-networking-stability",
    cause="3-node torchrun job (8x A100 per node, LLaMA-Factory containers): inconsistent GPU enumeration order put "
    "two ranks on one GPU; CUDA_DEVICE_ORDER=PCI_BUS_ID fixed it.",
    established_by="author's verified fix on the page ('Root cause: inconsistent device ordering across nodes. Fix: "
    "export CUDA_DEVICE_ORDER=PCI_BUS_ID')",
    mechanism="rank-to-GPU mapping under inconsistent device enumeration -> two ranks on one GPU (NCCL duplicate GPU)",
    expect_signatures=["NCCL-DUPLICATE-GPU"],
    expect_causes=["ranks-share-gpu"],
    notes="the two lines the author quotes, unchanged; the page shows them without NCCL's 'Duplicate GPU detected :' "
    "prefix",
    sealed_source="pages",
)

# ---------------------------------------------------------------- negatives
log(
    "libibverbs: Warning: couldn't load driver 'libmana-rdmav34.so': libmana-rdmav34.so: cannot open shared object "
    "file: No such file or directory\n"
    "libibverbs: Warning: couldn't load driver 'liberdma-rdmav34.so': liberdma-rdmav34.so: cannot open shared object "
    "file: No such file or directory\n"
    "\n"
    "************************************\n"
    "* Waiting for client to connect... *\n"
    "************************************\n"
    "---------------------------------------------------------------------------------------\n"
    "                    RDMA_Write BW Test\n"
    " Dual-port       : OFF          Device         : rocep4s0f0\n"
    " Number of qps   : 1            Transport type : IB\n"
    " Connection type : RC           Using SRQ      : OFF\n",
    id="perftest-262-provider-load-warnings-device-opened-negative",
    url="https://github.com/linux-rdma/perftest/issues/262",
    cause="(negative) libibverbs warns that the mana and erdma provider libraries (listed in /etc/libibverbs.d but "
    "not installed) cannot be loaded; the ConnectX device rocep4s0f0 is opened right after and ib_write_bw starts. "
    "The thread's later failure ('Completion with error at client') is not about these lines.",
    established_by="the log itself: after the two warnings the server opens 'Device : rocep4s0f0' (Link type Ethernet) "
    "and waits for the client",
    mechanism="(negative) provider-load warnings for NICs the host does not have, from a run whose RDMA device opened",
    expect_signatures=[],
    negative=True,
    notes="the first lines of the server console output in the description, unchanged (the block goes on)",
)
log(
    "mwh-deployment-cp2nvtm93l1ljsuft5kg-0:291:291 [0] NCCL INFO Bootstrap : Using eth0:10.224.5.210<0>\n"
    "mwh-deployment-cp2nvtm93l1ljsuft5kg-0:291:291 [0] NCCL INFO NET/Plugin: Failed to find ncclNetPlugin_v6 symbol.\n"
    "mwh-deployment-cp2nvtm93l1ljsuft5kg-0:291:291 [0] NCCL INFO NET/Plugin: Loaded net plugin NCCL RDMA Plugin (v5)\n",
    id="vllm-5405-plugin-v6-probe-then-v5-loaded-negative",
    url="https://github.com/vllm-project/vllm/issues/5405",
    cause="(negative) NCCL looks for the newest net plugin API first; the v6 symbol is missing and the next line "
    "shows the HPC-X 'NCCL RDMA Plugin' loaded with API v5. The thread is about a slow vLLM start, not about these "
    "lines.",
    established_by="the log itself: 'Failed to find ncclNetPlugin_v6 symbol.' is followed by 'Loaded net plugin NCCL "
    "RDMA Plugin (v5)'",
    mechanism="(negative) plugin API version probing noise from a job whose plugin loaded",
    expect_signatures=[],
    negative=True,
    notes="the first three NCCL lines of the description's log block, unchanged (the excerpt ends mid-line after "
    "these; only complete lines are kept)",
)


def write_readme(d: str) -> None:
    lines = [
        "# Sealed held-out logs #9",
        "",
        "Verbatim excerpts from public threads and pages (lines unchanged; where the thread goes on, the excerpt "
        "ends). Built by ../build_logs.py; index.json has url, cause, established_by, expect_signatures, "
        "expect_causes, notes.",
        "`negative: true` marks noise that is not the failure (nothing should be diagnosed as the failure).",
        "",
        "| file | source | cause (short) |",
        "|---|---|---|",
    ]
    for e in LOGS:
        lines.append(f"| {e['file']} | {e['url']} | {e['mechanism']} |")
    with open(os.path.join(d, "README.md"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


def main() -> None:
    d = os.path.join(HERE, "logs")
    os.makedirs(d, exist_ok=True)
    ids = [e["id"] for e in LOGS]
    assert len(ids) == len(set(ids))
    for e in LOGS:
        for k in (
            "id",
            "file",
            "url",
            "cause",
            "established_by",
            "mechanism",
            "expect_signatures",
        ):
            assert e.get(k) is not None and (e[k] != "" or k == "expect_signatures"), (
                e.get("id"),
                k,
            )
        with open(os.path.join(d, e["file"]), "w", encoding="utf-8") as fh:
            fh.write(TEXT[e["file"]])
    with open(os.path.join(d, "index.json"), "w", encoding="utf-8") as fh:
        json.dump(LOGS, fh, indent=1)
        fh.write("\n")
    write_readme(d)
    print(f"wrote {len(LOGS)} logs")


if __name__ == "__main__":
    main()
