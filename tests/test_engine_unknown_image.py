"""Image facts may be unknown: a key a hand-written facts file leaves out is unknown, never absent.

These run on hand-written facts as users write them (`facts:` files) and the committed node fixtures."""

from __future__ import annotations

import dataclasses
import json

from engine_facts import by_id, node, run, unknown_rules

from imgcheck import api

NCCL_ONLY = {
    "reference": "hand:trainer",
    "nccl": [{"version": "2.21.5", "origin": "pip"}],
    "cuda": {"version": "12.4.1"},
}


def facts_file(tmp_path, doc) -> str:
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    return str(path)


def test_a_file_without_libibverbs_leaves_the_rdma_rules_unknown(tmp_path):
    image = api.load_image_facts(facts_file(tmp_path, NCCL_ONLY))
    result = run(image, node("mofed-23.10-open-550-peermem"))
    assert "RDMA-NO-LIBIBVERBS" not in {f.id for f in result.findings}
    unknown = set(unknown_rules(result))
    assert {"RDMA-NO-LIBIBVERBS", "GDR-PEERMEM-MISSING", "DMABUF-UNSUPPORTED"} <= unknown
    assert any("not given in" in u.reason for u in result.unknowns if u.rule == "RDMA-NO-LIBIBVERBS")


def test_an_explicit_null_libibverbs_is_known_absent(tmp_path):
    doc = {**NCCL_ONLY, "rdma": {"libibverbs": None, "providers": [], "flavor": "none"}}
    result = run(api.load_image_facts(facts_file(tmp_path, doc)), node("mofed-23.10-open-550-peermem"))
    assert by_id(result, "RDMA-NO-LIBIBVERBS").severity == "warning"


def test_a_file_without_compat_libraries_does_not_claim_every_cuda_call_fails(tmp_path):
    image = api.load_image_facts(facts_file(tmp_path, NCCL_ONLY))
    result = run(image, node("mofed-5.8-470-peermem"))
    assert "CUDA-DRIVER-TOO-OLD" not in {f.id for f in result.findings}
    reason = next(u.reason for u in result.unknowns if u.rule == "CUDA-DRIVER-TOO-OLD")
    assert "forward-compat" in reason and "525" in reason  # the floor, from cuda_minor_compat


def test_compat_driver_null_means_looked_and_found_none(tmp_path):
    doc = {**NCCL_ONLY, "cuda": {"version": "12.4.1", "compat_driver": None}}
    result = run(api.load_image_facts(facts_file(tmp_path, doc)), node("mofed-5.8-470-peermem"))
    f = by_id(result, "CUDA-DRIVER-TOO-OLD")
    assert (f.severity, f.confidence) == ("error", "verified")


def test_exports_left_out_follow_from_the_rdma_core_release(tmp_path):
    lib = {"version": "1.14.44.0", "rdma_core": "44.0", "private_abi": 34, "path": "/usr/lib/libibverbs.so.1.14.44.0"}
    doc = {
        **NCCL_ONLY,
        "rdma": {
            "libibverbs": lib,
            "flavor": "inbox",
            "providers": [{"name": "mlx5", "pabi": 34, "path": "/usr/lib/libmlx5-rdmav34.so"}],
        },
    }
    image = api.load_image_facts(facts_file(tmp_path, doc))
    result = run(image, node("inbox-6.8-open-570"))
    # rdma-core 44 exports ibv_reg_dmabuf_mr (first in 34.0): DMA-BUF is usable, so no GDR finding
    assert not {"DMABUF-UNSUPPORTED", "GDR-PEERMEM-MISSING"} & {f.id for f in result.findings}
    old = dataclasses.replace(
        image,
        rdma=dataclasses.replace(image.rdma, libibverbs=dataclasses.replace(image.rdma.libibverbs, rdma_core="33.2")),
    )
    assert "lacks ibv_reg_dmabuf_mr" in by_id(run(old, node("inbox-6.8-open-570")), "GDR-PEERMEM-MISSING").mechanism


def test_a_partial_nccl_version_is_a_range(tmp_path):
    lib = {
        "version": "1.14.44.0",
        "rdma_core": "44.0",
        "private_abi": 34,
        "has_reg_mr_iova2": True,
        "has_reg_dmabuf_mr": False,
        "symbol_versions": ["IBVERBS_1.8"],
    }
    doc = {
        **NCCL_ONLY,
        "nccl": [{"version": "2.13", "origin": "library"}],
        "rdma": {"libibverbs": lib, "flavor": "inbox", "providers": [{"name": "mlx5", "pabi": 34, "path": "p"}]},
    }
    result = run(api.load_image_facts(facts_file(tmp_path, doc)), node("inbox-6.8-open-570"))
    # 2.13.0..2.13.3 predate DMA-BUF (2.13.4): whether NCCL tries it is undecided, never a confident error
    assert "DMABUF-UNSUPPORTED" in unknown_rules(result)
    assert "DMABUF-UNSUPPORTED" not in {f.id for f in result.findings}


def test_inspect_output_reloaded_has_no_unknowns(tmp_path):
    from imgcheck.model.image import ImageFacts
    from imgcheck.model.serde import to_dict

    written = to_dict(ImageFacts("x"))  # inspect writes every key, nulls included
    assert api.load_image_facts(facts_file(tmp_path, written)).unknown == {}
