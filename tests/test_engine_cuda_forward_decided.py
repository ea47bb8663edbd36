"""CUDA-DRIVER-TOO-OLD decides whether forward compatibility could bridge the gap (NVIDIA's CUDA Compatibility
guide): not for a CUDA release before the first cuda-compat package (CUDA 10.0, the guide's vR410 edition), not on
GeForce GPUs (forward compatibility is for data-center GPUs, select RTX SKUs and Jetson); on a data-center GPU the
finding keeps the cuda-compat fix. Driver 384.81 is CUDA 9.0's own minimum (the toolkit release notes' table)."""

from __future__ import annotations

import dataclasses

from engine_facts import by_id, committed_facts, node, replace_in, run, with_nccl

RULE = "CUDA-DRIVER-TOO-OLD"


def gpus_named(facts, name):
    return replace_in(facts, "gpu.gpus", tuple(dataclasses.replace(g, name=name) for g in facts.gpu.gpus))


def test_cuda_before_the_first_compat_release_can_only_be_fixed_by_the_driver():
    image = with_nccl(committed_facts("bookworm"), "2.21.5", cuda="9.1.85")
    f = by_id(run(image, replace_in(node("mofed-5.8-470-peermem"), "gpu.driver_version", "384.81")), RULE)
    assert f.severity == "error"
    assert "10.0" in f.mechanism and "no compat package exists" in f.mechanism
    assert not any("cuda-compat" in fix for fix in f.fixes)


def test_geforce_cannot_use_forward_compat():
    image = with_nccl(committed_facts("bookworm"), "2.21.5", cuda="12.4.1")
    facts = gpus_named(node("mofed-5.8-470-peermem"), "NVIDIA GeForce RTX 3090")
    f = by_id(run(image, facts), RULE)
    assert "GeForce RTX 3090" in f.mechanism and "804" in f.mechanism
    assert not any("cuda-compat" in fix for fix in f.fixes)


def test_a_data_center_gpu_keeps_the_compat_fix():
    image = with_nccl(committed_facts("bookworm"), "2.21.5", cuda="12.4.1")
    f = by_id(run(image, node("mofed-5.8-470-peermem")), RULE)  # A100s
    assert any("cuda-compat" in fix for fix in f.fixes)


def test_a_gpu_of_unknown_class_keeps_the_conditional_compat_fix():
    image = with_nccl(committed_facts("bookworm"), "2.21.5", cuda="12.4.1")
    facts = gpus_named(node("mofed-5.8-470-peermem"), "NVIDIA Graphics Device")
    f = by_id(run(image, facts), RULE)
    assert any("data-center GPUs only" in fix for fix in f.fixes)


def compat_unread(image):
    return dataclasses.replace(image, unknown=dict(image.unknown, **{"cuda.compat_driver": "not given in the case"}))


def test_geforce_is_decided_even_when_the_images_compat_libcuda_was_not_read():
    # nccl#554's node: four GeForce RTX 2080 Ti on a CUDA 10.1 driver, libnccl built for CUDA 11.3
    image = compat_unread(with_nccl(committed_facts("bookworm"), "2.9.9", cuda="11.3.1"))
    facts = replace_in(
        gpus_named(node("mofed-5.8-470-peermem"), "GeForce RTX 2080 Ti"), "gpu.driver_version", "418.87.00"
    )
    f = by_id(run(image, facts), RULE)
    assert f.severity == "error" and not f.assumes
    assert "whether or not the image carries a cuda-compat libcuda" in f.mechanism


def test_cuda_before_compat_with_compat_unread_is_a_conditional_finding():
    image = compat_unread(with_nccl(committed_facts("bookworm"), "2.1.4", cuda="9.1.85"))
    result = run(image, replace_in(node("mofed-5.8-470-peermem"), "gpu.driver_version", "384.111"))
    found = [f for f in result.findings if f.id == RULE]
    assert found and found[0].assumes and "image.cuda.compat_driver" in found[0].assumed_facts


def test_a_data_center_gpu_with_compat_unread_stays_unknown():
    image = compat_unread(with_nccl(committed_facts("bookworm"), "2.21.5", cuda="12.4.1"))
    result = run(image, node("mofed-5.8-470-peermem"))
    assert RULE not in [f.id for f in result.findings]
    assert RULE in [u.rule for u in result.unknowns]
