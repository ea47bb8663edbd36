"""Rules the incident corpus called for, each on committed real facts (Debian bookworm's rdma-core) plus the
facts its mechanism needs: torch's NCCL pin vs the wheel, two NCCL wheels, NCCL releases with known failures,
NCCL older than the node's GPU generation, NCCL_IB_HCA / NCCL_SOCKET_IFNAME read as NCCL reads them, CUDA
before minor-version compatibility, NCCL_IB_RETRY_CNT masked to its maximum, NCCL_NET=Socket."""

from __future__ import annotations

import dataclasses

from engine_facts import by_id, committed_facts, matrix, node, with_nccl

from imgcheck.engine import evaluate
from imgcheck.model.image import Cuda, Nccl

SITE = "/usr/local/lib/python3.11/dist-packages"


def run(image, node_name="mofed-23.10-open-550-peermem", **node_changes):
    return evaluate(image, node(node_name, **node_changes), matrix())


def wheel(version, cu=12):
    return Nccl(version, f"{SITE}/nvidia_nccl_cu{cu}-{version}.dist-info/METADATA", None, "pip")


def pin(version):
    return Nccl(version, f"{SITE}/torch-2.2.0.dist-info/METADATA", None, "torch-requirement")


def image_with(*nccl, env=None, nccl_conf=None, platform=None):
    base = with_nccl(committed_facts("bookworm"), "2.21.5", env=env, nccl_conf=nccl_conf)
    return dataclasses.replace(base, nccl=tuple(nccl) or base.nccl, platform=platform or base.platform)


def severities(result, rule):
    return sorted(f.severity for f in result.findings if f.id == rule)


def test_wheel_older_than_torch_pin_is_an_import_error():
    older = run(image_with(wheel("2.18.1"), pin("2.19.3")))
    f = by_id(older, "NCCL-WHEEL-NOT-TORCH-PIN")
    assert f.severity == "error" and "2.19.3" in f.title and "2.18.1" in f.title
    assert "nvidia-nccl-cu12==2.19.3" in " ".join(f.fixes)
    assert severities(run(image_with(wheel("2.19.3"), pin("2.19.3"))), "NCCL-WHEEL-NOT-TORCH-PIN") == []
    assert severities(run(image_with(wheel("2.20.5"), pin("2.19.3"))), "NCCL-WHEEL-NOT-TORCH-PIN") == ["info"]


def test_two_nccl_wheels_of_different_cuda_majors():
    both = run(image_with(wheel("2.29.3", 12), wheel("2.29.7", 13)))
    f = by_id(both, "NCCL-WHEELS-TWO-CUDA-MAJORS")
    assert f.severity == "warning" and "nvidia-nccl-cu12 2.29.3" in f.title and "nvidia-nccl-cu13 2.29.7" in f.title
    assert severities(run(image_with(wheel("2.29.7", 13))), "NCCL-WHEELS-TWO-CUDA-MAJORS") == []


def test_nccl_219_cumem_a2a_hang_unless_cumem_is_off():
    lib = Nccl("2.19.3", "/usr/lib/x86_64-linux-gnu/libnccl.so.2.19.3", None, "library")
    f = by_id(run(image_with(lib)), "NCCL-RELEASE-KNOWN-ISSUE")
    assert f.severity == "warning" and "NCCL_CUMEM_ENABLE=0" in " ".join(f.fixes) and "2.20.3" in " ".join(f.fixes)
    assert severities(run(image_with(lib, env={"NCCL_CUMEM_ENABLE": "0"})), "NCCL-RELEASE-KNOWN-ISSUE") == []
    fixed = Nccl("2.20.3", "/usr/lib/x86_64-linux-gnu/libnccl.so.2.20.3", None, "library")
    assert severities(run(image_with(fixed)), "NCCL-RELEASE-KNOWN-ISSUE") == []
    # "2.19" may be 2.19.0 (not affected) or 2.19.3 (affected): unknown, not a finding
    partial = run(image_with(Nccl("2.19", "/usr/lib/x86_64-linux-gnu/libnccl.so.2", None, "library")))
    assert severities(partial, "NCCL-RELEASE-KNOWN-ISSUE") == []
    assert any(u.rule == "NCCL-RELEASE-KNOWN-ISSUE" for u in partial.unknowns)


def test_known_issue_with_a_platform_applies_to_that_platform_only():
    aarch = wheel("2.28.9", 13)
    arm = run(image_with(aarch, platform="linux/arm64"))
    assert "no setting avoids it" in " ".join(by_id(arm, "NCCL-RELEASE-KNOWN-ISSUE").fixes)
    assert severities(run(image_with(aarch, platform="linux/amd64")), "NCCL-RELEASE-KNOWN-ISSUE") == []


def test_nccl_older_than_the_gpu_generation():
    old = Nccl("2.14.3", "/usr/lib/x86_64-linux-gnu/libnccl.so.2.14.3", None, "library")
    on_h100 = run(image_with(old))  # the MLNX_OFED 23.10 fixture node has H100s
    f = by_id(on_h100, "NCCL-TOO-OLD-FOR-GPU")
    assert f.severity == "error" and "2.15.1" in f.title and "hopper" in f.title
    assert severities(run(image_with(old), "inbox-5.15-proprietary-535"), "NCCL-TOO-OLD-FOR-GPU") == []  # A100
    new = Nccl("2.15.1", "/usr/lib/x86_64-linux-gnu/libnccl.so.2.15.1", None, "library")
    assert severities(run(image_with(new)), "NCCL-TOO-OLD-FOR-GPU") == []


def test_ib_hca_read_as_nccl_reads_it():
    # the fixture node has mlx5_0 and mlx5_1
    none = run(image_with(env={"NCCL_IB_HCA": "rdma0,rdma1"}))
    f = by_id(none, "ENV-NCCL-IB-HCA-NO-DEVICE")
    assert f.severity == "warning" and f.predicted_error == "NCCL INFO NET/IB : No device found."
    excluded_all = run(image_with(env={"NCCL_IB_HCA": "^mlx5"}))
    assert severities(excluded_all, "ENV-NCCL-IB-HCA-NO-DEVICE") == ["warning"]
    for fine in ("mlx5", "mlx5_0:1", "=mlx5_1", "^mlx5_1"):
        assert severities(run(image_with(env={"NCCL_IB_HCA": fine})), "ENV-NCCL-IB-HCA-NO-DEVICE") == [], fine


def test_ib_hca_prefix_that_selects_more_devices():
    n = node("mofed-23.10-open-550-peermem")
    devices = n.rdma.devices
    many = dataclasses.replace(
        n,
        rdma=dataclasses.replace(
            n.rdma,
            devices=devices
            + (dataclasses.replace(devices[0], name="mlx5_10"), dataclasses.replace(devices[0], name="mlx5_11")),
        ),
    )
    result = evaluate(image_with(env={"NCCL_IB_HCA": "mlx5_1"}), many, matrix())
    f = by_id(result, "ENV-NCCL-IB-HCA-PREFIX")
    assert f.severity == "info" and "mlx5_10, mlx5_11" in f.title and "=mlx5_1" in " ".join(f.fixes)
    exact = evaluate(image_with(env={"NCCL_IB_HCA": "=mlx5_1"}), many, matrix())
    assert severities(exact, "ENV-NCCL-IB-HCA-PREFIX") == []


def test_socket_ifname_exclusion_without_lo():
    conf = run(image_with(nccl_conf={"NCCL_SOCKET_IFNAME": "^docker0"}))
    f = by_id(conf, "ENV-NCCL-SOCKET-IFNAME-ALLOWS-LO")
    assert f.severity == "warning" and f.evidence[0].path == "/etc/nccl.conf"
    for fine in ("^docker,lo", "^lo,docker0", "eth0", "=ib0"):
        assert (
            severities(run(image_with(nccl_conf={"NCCL_SOCKET_IFNAME": fine})), "ENV-NCCL-SOCKET-IFNAME-ALLOWS-LO")
            == []
        ), fine


def test_cuda_before_11_has_a_floor_per_release():
    base = with_nccl(committed_facts("bookworm"), "2.7.8", cuda=None)
    cuda102 = dataclasses.replace(base, cuda=Cuda("10.2.89", "/usr/local/cuda/version.txt", None, "version.txt"))
    n = node(
        "mofed-5.8-470-peermem", gpu=dataclasses.replace(node("mofed-5.8-470-peermem").gpu, driver_version="418.87.00")
    )
    f = by_id(evaluate(cuda102, n, matrix()), "CUDA-DRIVER-TOO-OLD")
    assert f.severity == "error" and "440.33" in f.title and f.mechanism.startswith("Before CUDA 11")
    cuda101 = dataclasses.replace(base, cuda=Cuda("10.1.243", "/usr/local/cuda/version.txt", None, "version.txt"))
    assert severities(evaluate(cuda101, n, matrix()), "CUDA-DRIVER-TOO-OLD") == []


def test_retry_count_masked_to_its_maximum_is_not_blamed():
    fifteen = by_id(run(image_with(env={"NCCL_IB_RETRY_CNT": "15"})), "ENV-NCCL-IB-RETRY-CNT")
    assert fifteen.severity == "info" and "7" in fifteen.title
    sixteen = by_id(run(image_with(env={"NCCL_IB_RETRY_CNT": "16"})), "ENV-NCCL-IB-RETRY-CNT")
    assert sixteen.severity == "error" and "(retry count 0)" in sixteen.title
    nine = by_id(run(image_with(env={"NCCL_IB_RETRY_CNT": "9"})), "ENV-NCCL-IB-RETRY-CNT")
    assert "(retry count 1)" in nine.title and "1 retries" not in nine.title  # issue 37: grammar


def test_nccl_net_socket_disables_ib():
    f = by_id(run(image_with(env={"NCCL_NET": "socket"})), "ENV-DISABLES-IB")
    assert f.severity == "warning" and "NCCL_NET=socket" in f.title
    assert severities(run(image_with(env={"NCCL_NET": "IB"})), "ENV-DISABLES-IB") == []


def test_forward_compat_libcuda_on_a_gpu_class_without_forward_compatibility():
    base = with_nccl(committed_facts("bookworm"), "2.21.5", cuda="12.1.1", compat="530.30.02")
    n = node("inbox-5.15-proprietary-535")

    def on(gpu_name, driver):
        gpus = tuple(dataclasses.replace(g, name=gpu_name, gpu_class=None) for g in n.gpu.gpus)
        return evaluate(
            base, dataclasses.replace(n, gpu=dataclasses.replace(n.gpu, gpus=gpus, driver_version=driver)), matrix()
        )

    f = by_id(on("NVIDIA GeForce RTX 3090", "525.147.05"), "CUDA-FORWARD-COMPAT-UNSUPPORTED-GPU")
    assert f.severity == "error" and "804" in f.predicted_error and "consumer" in f.title
    assert severities(on("NVIDIA A100-SXM4-80GB", "525.147.05"), "CUDA-FORWARD-COMPAT-UNSUPPORTED-GPU") == []
    # a driver at least as new as the compat library: the library is never used
    assert severities(on("NVIDIA GeForce RTX 3090", "535.129.03"), "CUDA-FORWARD-COMPAT-UNSUPPORTED-GPU") == []
    # professional RTX boards: only select SKUs support it, so it is unknown
    workstation = on("NVIDIA RTX A6000", "525.147.05")
    assert severities(workstation, "CUDA-FORWARD-COMPAT-UNSUPPORTED-GPU") == []
    assert any(u.rule == "CUDA-FORWARD-COMPAT-UNSUPPORTED-GPU" for u in workstation.unknowns)


def test_transport_rules_stay_quiet_when_the_transport_is_off():
    """GDR-PEERMEM-MISSING (and the other NCCL-over-RDMA rules) do not fire when NCCL's IB transport is off or no
    provider drives the node's devices: the rule that says so is the one reported (issue 19)."""
    n = node("inbox-5.15-proprietary-535")  # no peer memory, proprietary modules: GDR-PEERMEM-MISSING otherwise
    assert "GDR-PEERMEM-MISSING" in {f.id for f in evaluate(image_with(), n, matrix()).findings}
    off = evaluate(image_with(env={"NCCL_IB_DISABLE": "1"}), n, matrix())
    assert "GDR-PEERMEM-MISSING" not in {f.id for f in off.findings} and by_id(off, "ENV-DISABLES-IB")
    socket = evaluate(image_with(env={"NCCL_NET": "Socket"}), n, matrix())
    assert "GDR-PEERMEM-MISSING" not in {f.id for f in socket.findings} and by_id(socket, "ENV-DISABLES-IB")
    base = image_with()
    no_mlx5 = dataclasses.replace(
        base, rdma=dataclasses.replace(base.rdma, providers=tuple(p for p in base.rdma.providers if p.name != "mlx5"))
    )
    result = evaluate(no_mlx5, n, matrix())
    assert "GDR-PEERMEM-MISSING" not in {f.id for f in result.findings} and by_id(result, "RDMA-NO-MLX5-PROVIDER")


def test_nccl_older_than_consumer_blackwell():
    """RTX 5090 (sm_120): NCCL 2.25.1 already built sm_120 but sized shared memory above what it offers;
    2.26.2's release notes fix it (nccl-tests#287) - the nccl_gpu_generations row blackwell-sm120."""
    base = node("mofed-23.10-open-550-peermem")
    gpus = tuple(dataclasses.replace(g, name="NVIDIA GeForce RTX 5090") for g in base.gpu.gpus)
    rtx = dataclasses.replace(base.gpu, gpus=gpus)
    old = Nccl("2.25.1", "/usr/lib/x86_64-linux-gnu/libnccl.so.2.25.1", None, "library")
    f = by_id(evaluate(image_with(old), dataclasses.replace(base, gpu=rtx), matrix()), "NCCL-TOO-OLD-FOR-GPU")
    assert "2.26.2" in f.title and "blackwell-sm120" in f.title
    new = Nccl("2.26.2", "/usr/lib/x86_64-linux-gnu/libnccl.so.2.26.2", None, "library")
    assert (
        severities(evaluate(image_with(new), dataclasses.replace(base, gpu=rtx), matrix()), "NCCL-TOO-OLD-FOR-GPU")
        == []
    )


def test_nic_fusion_net_id_0_needs_nccl_ib_transport_and_the_affected_range():
    # NVIDIA/nccl v2.24.3-1..v2.26.6-1: every NIC of the internal IB plugin becomes a virtual NIC, so the
    # graph-search fallback's hard-coded NET/0 is gone (nccl#1748); v2.27.3-1 skips vNICs of one device
    affected = wheel("2.26.2")
    f = by_id(run(image_with(affected)), "NCCL-RELEASE-KNOWN-ISSUE")
    assert f.severity == "warning" and "Could not find NET with id 0" in f.title
    assert "2.27.3" in " ".join(f.fixes) and "no setting avoids it" in " ".join(f.fixes)
    assert "falling back to simple order" in f.mechanism  # the trigger the facts cannot show is named
    for fixed in (wheel("2.27.3"), wheel("2.23.4")):
        assert severities(run(image_with(fixed)), "NCCL-RELEASE-KNOWN-ISSUE") == []
    # NCCL_TOPO_DUMP_FILE makes ncclTopoProcessNet use the physical devices; NCCL_NET=Socket has no makeVDevice
    for env in ({"NCCL_TOPO_DUMP_FILE": "/tmp/topo.xml"}, {"NCCL_NET": "Socket"}):
        assert severities(run(image_with(affected, env=env)), "NCCL-RELEASE-KNOWN-ISSUE") == []
    # a node without RDMA devices: only sockets, no virtual NICs
    assert severities(run(image_with(affected), "cpu-no-rdma"), "NCCL-RELEASE-KNOWN-ISSUE") == []
    # one NIC port: every report of the fallback had several NICs (topology:several-nics)
    one = node("mofed-23.10-open-550-peermem")
    one = dataclasses.replace(one, rdma=dataclasses.replace(one.rdma, devices=one.rdma.devices[:1]))
    one_port = one.rdma.devices[0]
    one = dataclasses.replace(
        one, rdma=dataclasses.replace(one.rdma, devices=(dataclasses.replace(one_port, ports=one_port.ports[:1]),))
    )
    assert severities(evaluate(image_with(affected), one, matrix()), "NCCL-RELEASE-KNOWN-ISSUE") == []


def _known_naming(result, setting):
    """The one NCCL-RELEASE-KNOWN-ISSUE finding about `setting` (the image's torch 2.5.1 on these old NCCLs also meets
    the torch x NCCL floor row, a finding of the same rule)."""
    (found,) = [f for f in result.findings if f.id == "NCCL-RELEASE-KNOWN-ISSUE" and setting in f.mechanism]
    return found


def test_traced_fix_is_a_known_issue_only_inside_its_affected_range_and_with_its_setting():
    # 2.12.12's "Fix crash when setting NCCL_SET_THREAD_NAME": the bug came with the variable in 2.12.7
    # (catalogs/nccl_fix_ranges.json, from NVIDIA/nccl@v2.12.12-1:src/proxy.cc)
    lib = Nccl("2.12.10", "/usr/lib/x86_64-linux-gnu/libnccl.so.2.12.10", None, "library")
    f = _known_naming(run(image_with(lib, env={"NCCL_SET_THREAD_NAME": "1"})), "NCCL_SET_THREAD_NAME")
    assert (
        f.severity == "warning"
        and "NCCL_SET_THREAD_NAME" in f.mechanism
        and "traced back to NCCL 2.12.7" in f.mechanism
    )
    assert any(e.fact == "image.env.NCCL_SET_THREAD_NAME" for e in f.evidence)
    # not set to 1: the thread is never named, the entry is not shown
    quiet = run(image_with(lib, env={"NCCL_SET_THREAD_NAME": "0"}))
    assert all("NCCL_SET_THREAD_NAME" not in f.mechanism for f in quiet.findings if f.id == "NCCL-RELEASE-KNOWN-ISSUE")
    # 2.9.9's NCCL_MAX_P2P_NCHANNELS crash: 2.6.4 predates send/receive (first affected 2.7.3)
    old = Nccl("2.6.4", "/usr/lib/x86_64-linux-gnu/libnccl.so.2.6.4", None, "library")
    older = run(image_with(old, env={"NCCL_MAX_P2P_NCHANNELS": "1"}))
    assert all(
        "NCCL_MAX_P2P_NCHANNELS" not in f.mechanism for f in older.findings if f.id == "NCCL-RELEASE-KNOWN-ISSUE"
    )
    mid = Nccl("2.8.4", "/usr/lib/x86_64-linux-gnu/libnccl.so.2.8.4", None, "library")
    f = _known_naming(run(image_with(mid, env={"NCCL_MAX_P2P_NCHANNELS": "1"})), "NCCL_MAX_P2P_NCHANNELS")
    assert f.severity == "warning" and "NCCL_MAX_P2P_NCHANNELS" in f.mechanism


def test_cumem_host_numa_in_docker_needs_the_driver_the_runtime_and_the_release():
    # NVIDIA/nccl@v2.26.3-1's notes: cuMem host allocations are on by default from 2.24 with a 12.6+ driver and need
    # NUMA calls Docker's default seccomp profile refuses without CAP_SYS_NICE; the NGC docker run line is real
    import os

    from imgcheck.job import load_job_spec

    (docker,) = load_job_spec(os.path.join(os.path.dirname(__file__), "job", "specs", "ngc-pytorch-run.sh"))
    n = node("mofed-23.10-open-550-peermem")
    new_driver = dataclasses.replace(n, gpu=dataclasses.replace(n.gpu, cuda_driver_version="12.8"))
    img = image_with(wheel("2.26.2"))

    def issue(result):
        return [f for f in result.findings if f.id == "NCCL-RELEASE-KNOWN-ISSUE" and "cuMem" in f.title]

    f = issue(evaluate(img, new_driver, matrix(), job=docker))
    assert f and f[0].severity == "warning" and "NCCL_CUMEM_HOST_ENABLE=0" in " ".join(f[0].fixes)
    # the driver the node runs (12.4) leaves cuMem host allocations off
    assert issue(evaluate(img, n, matrix(), job=docker)) == []
    # SYS_NICE added, the workaround set, or 2.26.3 (which probes and falls back): nothing to name
    nice = dataclasses.replace(docker, cap_add=("SYS_NICE",))
    assert issue(evaluate(img, new_driver, matrix(), job=nice)) == []
    off = image_with(wheel("2.26.2"), env={"NCCL_CUMEM_HOST_ENABLE": "0"})
    assert issue(evaluate(off, new_driver, matrix(), job=docker)) == []
    assert issue(evaluate(image_with(wheel("2.26.3")), new_driver, matrix(), job=docker)) == []
    # no launch spec: whether the container may make NUMA calls is asked, not assumed
    # (NCCL_NET=Socket keeps the NIC-fusion row of the same release out: one outcome kind per rule)
    no_job = evaluate(image_with(wheel("2.26.2"), env={"NCCL_NET": "Socket"}), new_driver, matrix())
    assert issue(no_job) == []
    assert any("container:no-sys-nice" in u.reason for u in no_job.unknowns if u.rule == "NCCL-RELEASE-KNOWN-ISSUE")


def test_kernel_needing_a_newer_driver_crash_is_named_when_the_driver_is_older_than_nccls_cuda():
    # 2.28.7's "crash when NCCL is compiled with recent CUDA versions but running on ... older CUDA drivers":
    # from 2.27.7 a kernel the driver cannot load leaves its error pending (src/enqueue.cc, nccl_fix_ranges)
    lib = dataclasses.replace(wheel("2.28.3"), cuda="12.9", cuda_from="library build string")
    n = node("mofed-23.10-open-550-peermem")  # its driver supports CUDA 12.4
    f = by_id(run(image_with(lib)), "NCCL-RELEASE-KNOWN-ISSUE")
    assert (
        f.severity == "warning" and "older CUDA drivers" in f.mechanism and "traced back to NCCL 2.27.7" in f.mechanism
    )
    newer = dataclasses.replace(n, gpu=dataclasses.replace(n.gpu, cuda_driver_version="12.9"))
    quiet = evaluate(image_with(lib), newer, matrix())
    assert all("older CUDA drivers" not in f.mechanism for f in quiet.findings if f.id == "NCCL-RELEASE-KNOWN-ISSUE")
