"""engine/gdrcopy.py on node facts shaped like the GDRCopy threads (gdrcopy#234, #305, #139, #278)."""

from __future__ import annotations

import dataclasses

from engine_facts import by_id, committed_facts, ids, matrix, node, replace_in, run, unknown_rules

from imgcheck.engine.evaluate import evaluate
from imgcheck.job.model import JobFacts
from imgcheck.model.image import Gdrcopy
from imgcheck.model.node import DkmsModule, Gpu

IMAGE = "bookworm"


def _with_lib():
    """The Debian image with GDRCopy's libgdrapi, as `make lib_install` leaves it (NCCL, UCX, NVSHMEM dlopen it)."""
    lib = Gdrcopy(version="2.4", path="/opt/gdrcopy/lib/libgdrapi.so.2.4", soname_major=2)
    return dataclasses.replace(committed_facts(IMAGE), gdrcopy=lib)


def _gdr(base: str = "inbox-6.8-open-570", **gpu):
    facts = node(base)
    facts = dataclasses.replace(facts, gpu=dataclasses.replace(facts.gpu, **gpu))
    return facts


def test_loaded_without_device_node_is_an_error():
    # gdrcopy#234: lsmod shows gdrdrv, no /dev/gdrdrv; every gdr_open fails
    res = run(_with_lib(), _gdr(gdrdrv_loaded=True, gdrdrv_registered=True, gdrdrv_device=False))
    f = by_id(res, "GDRCOPY-NO-DEVICE-NODE")
    assert f.severity == "error"
    assert "gdr_open" in (f.predicted_error or "")


def test_device_node_present_with_insmod_mode_is_fine():
    # gdrcopy#278: crw-rw-rw- 1 root root 242, 0 /dev/gdrdrv, sanity passes
    res = run(_with_lib(), _gdr(gdrdrv_loaded=True, gdrdrv_device=True, gdrdrv_device_mode="666"))
    assert "GDRCOPY-NO-DEVICE-NODE" not in ids(res)
    assert "GDRCOPY-NO-DEVICE-NODE" not in unknown_rules(res)


def test_device_node_root_only_is_a_warning():
    res = run(_with_lib(), _gdr(gdrdrv_loaded=True, gdrdrv_device=True, gdrdrv_device_mode="600"))
    f = by_id(res, "GDRCOPY-NO-DEVICE-NODE")
    assert f.severity == "warning"


def test_module_not_loaded_no_gdrcopy_rule_applies():
    res = run(_with_lib(), _gdr(gdrdrv_loaded=False))
    assert not [r for r in ids(res) + unknown_rules(res) if r.startswith("GDRCOPY-")]


def test_load_state_unknown_asks():
    res = run(_with_lib(), _gdr(gdrdrv_loaded=None))
    assert "GDRCOPY-NO-DEVICE-NODE" in unknown_rules(res)


def _dkms(release: str, kernel: str | None):
    return (
        DkmsModule(name="gdrdrv", version=release, kernel=kernel, arch="x86_64", installed=True, modules=("gdrdrv",)),
    )


def test_gdrdrv_241_under_driver_560_pin_defect():
    # gdrcopy#305: gdrdrv 2.4.1 with 560.35.03 fails gdr_pin_buffer; fixed by gdrdrv 2.4.2
    facts = _gdr(gdrdrv_loaded=True, gdrdrv_version="2.4", gdrdrv_device=True, gdrdrv_device_mode="666")
    facts = replace_in(facts, "gpu.driver_version", "560.35.03")
    facts = dataclasses.replace(facts, dkms=_dkms("2.4.1", facts.kernel.release))
    f = by_id(run(_with_lib(), facts), "GDRCOPY-GDRDRV-KNOWN-DEFECT")
    assert "gdrdrv-pin-size-alignment" in f.title


def test_gdrdrv_242_is_clear_of_the_alignment_defect():
    facts = _gdr(gdrdrv_loaded=True, gdrdrv_version="2.4", gdrdrv_device=True, gdrdrv_device_mode="666")
    facts = replace_in(facts, "gpu.driver_version", "560.35.03")
    facts = dataclasses.replace(facts, dkms=_dkms("2.5.2", facts.kernel.release))
    assert "GDRCOPY-GDRDRV-KNOWN-DEFECT" not in ids(run(_with_lib(), facts))


def test_module_major_minor_only_asks_the_release():
    # /sys/module/gdrdrv/version says 2.4: releases 2.4 .. 2.4.4, some before the 2.4.2 fix, some after
    facts = _gdr(gdrdrv_loaded=True, gdrdrv_version="2.4", gdrdrv_device=True, gdrdrv_device_mode="666")
    facts = dataclasses.replace(replace_in(facts, "gpu.driver_version", "560.35.03"), dkms=())
    res = run(_with_lib(), facts)
    assert "GDRCOPY-GDRDRV-KNOWN-DEFECT" not in ids(res)
    assert "GDRCOPY-GDRDRV-KNOWN-DEFECT" in unknown_rules(res)


def test_older_driver_branch_does_not_trigger_the_alignment_defect():
    # gdrcopy#278: gdrdrv 2.4 under driver 535, sanity passes 28/28
    facts = _gdr(gdrdrv_loaded=True, gdrdrv_version="2.4", gdrdrv_device=True, gdrdrv_device_mode="666")
    facts = dataclasses.replace(replace_in(facts, "gpu.driver_version", "535.104.12"), dkms=())
    res = run(_with_lib(), facts)
    assert "GDRCOPY-GDRDRV-KNOWN-DEFECT" not in ids(res) + unknown_rules(res)


def test_module_version_unknown_asks_the_release():
    facts = _gdr(gdrdrv_loaded=True, gdrdrv_version=None, gdrdrv_device=True, gdrdrv_device_mode="666")
    res = run(_with_lib(), dataclasses.replace(facts, dkms=()))
    assert "GDRCOPY-GDRDRV-KNOWN-DEFECT" in unknown_rules(res)


def test_module_25_is_clear():
    facts = _gdr(gdrdrv_loaded=True, gdrdrv_version="2.5", gdrdrv_device=True, gdrdrv_device_mode="666")
    res = run(_with_lib(), dataclasses.replace(facts, dkms=()))
    assert "GDRCOPY-GDRDRV-KNOWN-DEFECT" not in ids(res) + unknown_rules(res)


def test_consumer_gpu_cannot_pin():
    # gdrcopy#139: GeForce; every gdr_pin_buffer fails (nvidia_p2p_get_pages refused)
    facts = _gdr(
        gdrdrv_loaded=True,
        gdrdrv_device=True,
        gdrdrv_device_mode="666",
        gpus=(Gpu(index=0, name="GeForce RTX 2080 Ti", gpu_class="consumer"),),
    )
    assert by_id(run(_with_lib(), facts), "GDRCOPY-GPU-NO-GDR").severity == "error"
    working = replace_in(facts, "gpu.gpus", (Gpu(index=0, name="Tesla V100-PCIE-16GB", gpu_class="datacenter"),))
    assert "GDRCOPY-GPU-NO-GDR" not in ids(run(_with_lib(), working))


# ---------- the image's libgdrapi against the node's gdrdrv, and the launch spec ----------


LIB_24 = Gdrcopy(version="2.4", path="/opt/gdrcopy/lib/libgdrapi.so.2.4", soname_major=2)
LIB_1 = Gdrcopy(version="1.2", path="/usr/lib64/libgdrapi.so.1.2", soname_major=1)


def _image(lib):
    return dataclasses.replace(committed_facts(IMAGE), gdrcopy=lib)


def _node_with_device():
    return _gdr(gdrdrv_loaded=True, gdrdrv_version="2.5", gdrdrv_device=True, gdrdrv_device_mode="666")


def test_any_2x_pair_works_together():
    # gdrcopy#327: host gdrdrv 2.4.3 with libgdrapi 2.5 in the image: 'forward and backward compat'
    res = run(
        _image(Gdrcopy(version="2.5", path="/usr/lib/libgdrapi.so.2.5", soname_major=2)),
        _gdr(gdrdrv_loaded=True, gdrdrv_version="2.4", gdrdrv_device=True, gdrdrv_device_mode="666"),
    )
    assert "GDRCOPY-ABI-MISMATCH" not in ids(res) + unknown_rules(res)


def test_1x_library_against_2x_module_is_refused():
    f = by_id(run(_image(LIB_1), _node_with_device()), "GDRCOPY-ABI-MISMATCH")
    assert "1.2" in f.title and "2.0" in f.title


def test_library_version_unknown_asks():
    res = run(_image(Gdrcopy(version=None, path="/usr/lib/libgdrapi.so.2")), _node_with_device())
    assert "GDRCOPY-ABI-MISMATCH" in unknown_rules(res)


def _job(**kw):
    return JobFacts(path="run.sh", kind="docker run", runtime="docker", **kw)


def test_container_without_dev_gdrdrv():
    res = evaluate(_image(LIB_24), _node_with_device(), matrix(), job=_job(devices=("/dev/infiniband",)))
    assert by_id(res, "GDRCOPY-DEVICE-NOT-PASSED").severity == "warning"


def test_container_with_dev_gdrdrv_or_privileged():
    for job in (_job(devices=("/dev/infiniband", "/dev/gdrdrv")), _job(devices=(), privileged=True)):
        res = evaluate(_image(LIB_24), _node_with_device(), matrix(), job=job)
        assert "GDRCOPY-DEVICE-NOT-PASSED" not in ids(res) + unknown_rules(res)


def test_image_without_gdrcopy_needs_no_device():
    res = evaluate(_image(None), _node_with_device(), matrix(), job=_job(devices=()))
    assert "GDRCOPY-DEVICE-NOT-PASSED" not in ids(res) + unknown_rules(res)


def test_image_without_libgdrapi_is_not_blamed_for_the_node():
    # a torch image with no libgdrapi on a node whose gdrdrv has no device node: nothing in it opens /dev/gdrdrv
    res = run(_image(None), _gdr(gdrdrv_loaded=True, gdrdrv_device=False))
    assert not [r for r in ids(res) + unknown_rules(res) if r.startswith("GDRCOPY-")]


def test_node_check_reports_the_node_alone():
    from imgcheck.engine.evaluate import evaluate_node
    from imgcheck.engine.node_only import NODE_ONLY_IMAGE

    res = evaluate_node(NODE_ONLY_IMAGE, _gdr(gdrdrv_loaded=True, gdrdrv_device=False), matrix())
    assert "GDRCOPY-NO-DEVICE-NODE" in ids(res)


def test_libgdrapi_unknown_asks_unless_the_job_shows_it_uses_gdrcopy():
    # most images ship no GDRCopy: "present" is hypothesised only on the job's evidence of use (a GDRCopy setting)
    image = committed_facts(IMAGE)
    image = dataclasses.replace(image, unknown={**image.unknown, "gdrcopy": "not read"})
    res = run(image, _gdr(gdrdrv_loaded=True, gdrdrv_device=False))
    assert "GDRCOPY-NO-DEVICE-NODE" not in ids(res)
    assert "GDRCOPY-NO-DEVICE-NODE" in unknown_rules(res)
    hinted = dataclasses.replace(image, env={**image.env, "NCCL_GDRCOPY_ENABLE": "1"})
    f = by_id(run(hinted, _gdr(gdrdrv_loaded=True, gdrdrv_device=False)), "GDRCOPY-NO-DEVICE-NODE")
    assert f.assumes  # conditional: on the image shipping libgdrapi, which the setting shows the job means to use


def test_enroot_mounts_it_and_kubernetes_asks_the_device_plugin():
    # enroot's 98-nvidia.sh bind-mounts /dev/gdrdrv for compute containers (gdrcopy#138: "done automatically");
    # the NVIDIA device plugin adds it only with gdrcopyEnabled, which no pod spec shows
    enroot = JobFacts(path="sbatch.sh", kind="slurm", runtime="enroot", devices=())
    res = evaluate(_image(LIB_24), _node_with_device(), matrix(), job=enroot)
    assert "GDRCOPY-DEVICE-NOT-PASSED" not in ids(res) + unknown_rules(res)
    pod = JobFacts(path="pod.yaml", kind="Pod", runtime="kubernetes", devices=())
    res = evaluate(_image(LIB_24), _node_with_device(), matrix(), job=pod)
    assert "GDRCOPY-DEVICE-NOT-PASSED" in unknown_rules(res)


def test_image_with_libgdrapi_on_a_geforce_node_whatever_gdrdrv():
    # gdrcopy#139 as an image check: the pin is refused by the GPU, so gdrdrv's state does not change the answer
    geforce = (Gpu(index=0, name="GeForce RTX 2080 Ti", gpu_class="consumer"),)
    for loaded in (True, None):
        facts = _gdr(gdrdrv_loaded=loaded, gpus=geforce)
        assert by_id(run(_with_lib(), facts), "GDRCOPY-GPU-NO-GDR").severity == "error"
