"""Build /work/sealed7/logs/: one file per verbatim log excerpt plus logs/index.json and logs/README.md.

Each excerpt holds lines copied from the public thread named in `url` (trimmed to the lines that matter, lines
never edited; where the thread goes on, the excerpt simply ends; markdown list indentation around a quoted line is
dropped and `notes` says so). The text of every excerpt is embedded below and written out by main(), so the set can
be rebuilt from this file alone.
`expect_signatures`: ids from src/imgcheck/data/triage/signatures.json whose title covers the failure and whose
causes describe the established cause today ([] if none does, or the log is noise from a job that worked ->
`negative`); `expect_causes` names the cause ids of those signatures that fit.
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


# ---------------------------------------------------------------- NCCL / launch spec
log(
    "node013:37715:38896 [0] NCCL INFO NET/IB : No device found.\n"
    "node013:37715:38896 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 0.\n",
    id="pytorch-111424-net-ib-no-device-container-without-dev-infiniband",
    url="https://github.com/pytorch/pytorch/issues/111424",
    cause="Two-node Slurm job on InfiniBand nodes; the training container had no /dev/infiniband, so NCCL found no "
    "IB device and used sockets although NCCL_IB_DISABLE=0.",
    established_by="reporter's verified fix: mapping /dev/infiniband into the NeMo container (srun --container-image "
    "... --container-mounts /dev/infiniband/:/dev/infiniband) worked",
    mechanism="container launched without RDMA device nodes -> NET/IB finds no device -> socket fallback",
    expect_signatures=["NET-IB-NO-DEVICE"],
    expect_causes=["no-uverbs-in-container"],
    notes="the first two log lines of the issue description, unchanged (the rest of the description is cut)",
)
log(
    "   7: ip-10-1-113-84: Test CUDA failure common.cu:894 'system has unsupported display driver / cuda driver "
    "combination'\n"
    "   7:  .. ip-10-1-113-84 pid 738939: Test failure common.cu:844\n",
    id="awsome-distributed-ai-314-nccl-tests-cuda-803-compat",
    url="https://github.com/awslabs/awsome-distributed-ai/pull/314",
    cause="The nccl-tests image (FROM nvidia/cuda:12.2.0-devel) carried a cuda-compat user-mode driver that did not "
    "match the host driver; CUDA initialisation failed with 803.",
    established_by="merged maintainer PR 'nccl-tests container: fix cuda driver mismatch' ('update cuda compat to "
    "fix error'), quoting this output",
    mechanism="image's cuda-compat libcuda on the loader path does not match the host kernel driver -> CUDA 803 in "
    "nccl-tests",
    expect_signatures=["CUDA-DRIVER-MISMATCH-803"],
    expect_causes=["compat-libcuda-loaded"],
    notes="the PR description's text block, unchanged (the block is indented by three spaces inside a markdown list "
    "in the PR; the spaces are kept as shown)",
)
log(
    "lccn19:2471268:2471514 [1] NCCL INFO NET/Plugin: Loaded collnet plugin SHARP (v8)\n"
    "lccn19:2471268:2471514 [1] NCCL INFO Plugin Path : /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so\n"
    "lccn19:2471268:2471514 [1] NCCL INFO P2P plugin v8 IBext_v8\n"
    "lccn19:2471268:2471514 [1] NCCL INFO NCCL_SOCKET_IFNAME set by environment to bond0\n"
    "lccn19:2471272:2471512 [5] NCCL INFO NET/Plugin: Failed to find ncclNetPlugin_v10 symbol.\n"
    "lccn19:2471272:2471512 [5] NCCL INFO NET/Plugin: Failed to find ncclNetPlugin_v9 symbol.\n"
    "lccn19:2471272:2471512 [5] NCCL INFO NET/Plugin: Loaded net plugin NCCL RDMA Plugin v8 (v8)\n"
    "lccn19:2471272:2471512 [5] NCCL INFO NET/Plugin: Failed to find ncclCollNetPlugin_v10 symbol.\n"
    "lccn19:2471272:2471512 [5] NCCL INFO NET/Plugin: Failed to find ncclCollNetPlugin_v9 symbol.\n"
    "lccn19:2471272:2471512 [5] NCCL INFO NET/Plugin: Loaded collnet plugin SHARP (v8)\n",
    id="nccl-tests-319-hpcx-plugin-version-probe-negative",
    url="https://github.com/NVIDIA/nccl-tests/issues/319",
    cause="(negative) NCCL probes the newest net/collnet plugin API versions first; 'Failed to find "
    "ncclNetPlugin_v10/v9 symbol' is followed by 'Loaded net plugin NCCL RDMA Plugin v8 (v8)': the HPC-X SHARP "
    "plugin loaded with API v8. The thread is about bandwidth with DOCA on 2-4 HGX hosts, not about these lines.",
    established_by="the log itself: each probe miss is followed by a successful load of the v8 plugin "
    "('Loaded net plugin ... (v8)', 'Loaded collnet plugin SHARP (v8)', 'P2P plugin v8 IBext_v8')",
    mechanism="(negative) plugin API version probing noise from a job whose plugin loaded",
    expect_signatures=[],
    negative=True,
    notes="consecutive lines from the reporter's NCCL_DEBUG=INFO output (turn 3), unchanged",
)

# ---------------------------------------------------------------- UCX / Open MPI
log(
    "[marcink@b1101.BETZY ~]$ mpirun -np 1 ./mpihello\n"
    "[b1101:176811:0:176811] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x98)\n"
    "==== backtrace (tid: 176811) ====\n"
    " 0 0x0000000000028663 ucs_debug_print_backtrace()  /cluster/home/marcink/src/ucx-1.10.0/src/ucs/debug/debug.c:656\n"
    " 1 0x000000000000bbb6 _dl_relocate_object()  :0\n"
    " 2 0x000000000001463c dl_open_worker()  dl-open.c:0\n"
    " 3 0x000000000000f7a4 _dl_catch_error()  :0\n"
    " 4 0x0000000000013b5b _dl_open()  :0\n"
    " 5 0x0000000000000fab dlopen_doit()  dlopen.c:0\n"
    " 6 0x000000000000f7a4 _dl_catch_error()  :0\n"
    " 7 0x00000000000015ad _dlerror_run()  :0\n"
    " 8 0x0000000000001041 __dlopen_check()  :0\n"
    " 9 0x000000000000de00 ucm_prevent_dl_unload()  /cluster/home/marcink/src/ucx-1.10.0/src/ucm/util/sys.c:311\n"
    "10 0x0000000000006d77 ucm_event_install()  /cluster/home/marcink/src/ucx-1.10.0/src/ucm/event/event.c:491\n",
    id="ucx-7239-ucx-1.10-segfault-in-mpi-init",
    url="https://github.com/openucx/ucx/issues/7239",
    cause="Open MPI 4.0.5 / 4.1.1 built against UCX 1.10.0 and 1.10.1 segfaulted in MPI_Init (UCX's memory hooks, "
    "ucm_prevent_dl_unload) on the compute nodes; the same binary and MPI with UCX 1.11.1 loaded works.",
    established_by="reporter's A/B in the issue: 'When I load UCX 1.11.1 with the same binary and MPI, things work' "
    "(UCX 1.10.0 and 1.10.1 fail); issue labelled Bug and closed",
    mechanism="UCX 1.10.x release crashes at MPI_Init on these nodes; a newer UCX with the same binary works",
    expect_signatures=[],
    notes="the reporter's shell block from the description, unchanged up to frame 10 (the backtrace goes on in the "
    "issue); RANK-CRASH's title covers a segfault but none of its causes names a UCX release defect",
)
log(
    "[er-head:1511505:0:1511505] Caught signal 11 (Segmentation fault: address not mapped to object at address "
    "0x7fffeded5298)\n"
    "==== backtrace (tid:1511505) ====\n"
    " 0 0x0000000000012c20 .annobin_sigaction.c()  sigaction.c:0\n"
    " 1 0x0000000000043529 var_destructor() XZXX /opal/mca/base/mca_base_var.c:1859\n"
    " 2 0x000000000003ec96 opal_obj_run_destructors()  "
    "XXXXXX/ompi-er2/opal/mca/base/../../../opal/class/opal_object.h:472\n"
    " 3 0x000000000004136b mca_base_var_finalize()  XXXXXX/opal/mca/base/mca_base_var.c:1122\n"
    " 4 0x000000000002ed5a opal_finalize_cleanup_domain()  XXXXXXXX/opal/runtime/opal_finalize_core.c:128\n"
    " 5 0x000000000002eeba opal_finalize_util()  XXXXXXXX/opal/runtime/opal_finalize_core.c:143\n",
    id="ompi-11632-ucx-with-enable-mca-dso-ompi-info-segfault",
    url="https://github.com/open-mpi/ompi/issues/11632",
    cause="Open MPI main / v5.0.x configured with --with-ucx --enable-mca-dso (UCX 1.12.0 from MLNX_OFED on RHEL8, "
    "ConnectX-5): the resulting ompi_info segfaults while finalizing MCA variables.",
    established_by="Open MPI maintainer (hppritcha) filed the issue with the reproducer ('./configure --with-ucx "
    "--enable-mca-dso'), titled 'UCX and enable mca dso do not mix'; closed",
    mechanism="Open MPI build defect: UCX components built as DSOs leave dangling MCA variables -> segfault at finalize",
    expect_signatures=[],
    notes="the traceback from the issue description, unchanged up to frame 5 (the XXXXXX path redactions are the "
    "reporter's; frame 6 is cut in the stored copy and left out)",
)

# ---------------------------------------------------------------- GDRCopy
log(
    "gdrcopy_sanity\n"
    'Assertion "(gdr_pin_buffer(g, d_A[0], buffer_size, 0, 0, &A_mh[0])) == (0)" failed at sanity.cpp:435\n'
    'Assertion "(gdr_pin_buffer(g, d_A, A_size, 0, 0, &A_mh)) == (0)" failed at sanity.cpp:344\n'
    "Total: 28, Passed: 24, Failed: 2, Waived: 2\n",
    id="gdrcopy-305-gdrdrv-2.4.1-pin-fails-driver-560",
    url="https://github.com/NVIDIA/gdrcopy/issues/305",
    cause="gdrdrv 2.4.1 with NVIDIA driver 560.35.03 on A100: gdr_pin_buffer fails; fixed in gdrdrv on master, "
    "released as GDRCopy 2.4.2.",
    established_by="maintainer: already fixed on master (rebuild gdrdrv); reporter verified; fix released in 2.4.2",
    mechanism="gdrdrv release defect on a newer driver branch -> GPU memory pinning fails",
    expect_signatures=[],
    notes="the error block of the issue, unchanged",
)
log(
    "nvidia@nvidia-tegra:~$ sudo sanity \n"
    "Running suite(s): Sanity\n"
    "gdr_open error: Is gdrdrv driver installed and loaded?\n"
    "gdr_open error: Is gdrdrv driver installed and loaded?\n"
    "gdr_open error: Is gdrdrv driver installed and loaded?\n"
    "gdr_open error: Is gdrdrv driver installed and loaded?\n"
    "gdr_open error: Is gdrdrv driver installed and loaded?\n",
    id="gdrcopy-234-gdr-open-fails-no-dev-gdrdrv-node",
    url="https://github.com/NVIDIA/gdrcopy/issues/234",
    cause="gdrdrv was loaded with modprobe (lsmod shows it) but /dev/gdrdrv was never created, so gdr_open fails; "
    "loading with insmod.sh (which creates the device node) fixed it.",
    established_by="reporter's root cause and verified fix: 'the driver gdrdrv doesn't create gdrdrv device. I used "
    "insmod.sh script and after that all works fine'",
    mechanism="kernel module loaded without its device node -> libgdrapi cannot open the driver (misleading message: "
    "the module is loaded)",
    expect_signatures=[],
    notes="the start of the reporter's 'running tools' block, unchanged (the block repeats the same line further)",
)
log(
    "Running suite(s): Sanity\n"
    'Assertion "(gdr_pin_buffer(g, d_ptr, size, 0, 0, &mh)) == (0)" failed at sanity.cpp:188\n'
    "CUDA error: CUDA_ERROR_INVALID_DEVICE\n"
    'Assertion "CUDA_SUCCESS == result" failed at sanity.cpp:215\n'
    'Assertion "(gdr_pin_buffer(g, d_A, A_size, 0, 0, &A_mh)) == (0)" failed at sanity.cpp:282\n',
    id="gdrcopy-139-pin-einval-gpu-without-gpudirect-rdma",
    url="https://github.com/NVIDIA/gdrcopy/issues/139",
    cause="The GPU does not support GPUDirect RDMA (not a Tesla/Quadro board), so every gdr_pin_buffer fails.",
    established_by="GDRCopy maintainer (drossetti): 'GDRCopy relies on GPUDirect RDMA which is only supported on "
    "Quadro and Tesla GPUs'; closed as not a bug",
    mechanism="GPU class without GPUDirect RDMA -> nvidia_p2p_get_pages refused -> gdr_pin_buffer EINVAL",
    expect_signatures=[],
    notes="the first lines of the sanity output in the description, unchanged (the list of failing assertions goes "
    "on); no signature covers GDRCopy's sanity output (IBV-REG-MR-EFAULT's cause no-gdr-gpu names the mechanism for "
    "ibv_reg_mr, not this message)",
)
log(
    "# gdrcopy_sanity\n"
    "Total: 28, Passed: 28, Failed: 0, Waived: 0\n"
    "\n"
    "# ls -ls /dev/gdrdrv\n"
    "0 crw-rw-rw- 1 root root 242, 0 Sep 26 01:26 /dev/gdrdrv\n",
    id="gdrcopy-278-kmod-install-sanity-passes-negative",
    url="https://github.com/NVIDIA/gdrcopy/issues/278",
    cause="(negative) gdrcopy-kmod 2.4 DKMS package installed on a Kubernetes node's host: /dev/gdrdrv exists and "
    "gdrcopy_sanity passes 28/28.",
    established_by="reporter's output; GDRCopy maintainer (pakmarkthub): the kmod package is sufficient to install "
    "the driver",
    mechanism="(negative) a working gdrdrv installation",
    expect_signatures=[],
    negative=True,
    notes="the reporter's two command blocks from the comment of 2023-09-26, unchanged (the blank line separates the "
    "two blocks)",
)


def write_readme(d: str) -> None:
    lines = [
        "# Sealed held-out logs #7",
        "",
        "Verbatim excerpts from public threads (lines unchanged; where the thread goes on, the excerpt ends). Built by "
        "../build_logs.py; index.json has url, cause, established_by, expect_signatures, expect_causes, notes.",
        "`negative: true` marks output of a setup that works (nothing should be diagnosed as the failure).",
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
