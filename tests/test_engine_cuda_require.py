"""NVIDIA_REQUIRE_CUDA against the node's driver: the toolkit's start-time requirement check (engine/cuda_require.py)."""

from __future__ import annotations

import dataclasses

import pytest
from engine_facts import by_id, committed_facts, ids, node, replace_in, run, unknown_rules

from imgcheck.engine import cuda_require

RULE = "CUDA-REQUIRE-UNSATISFIED"
# nvidia/cuda 12.8.1 (ubuntu24.04) image Env, verbatim from the image's build history as printed in
# https://github.com/search?q=%22NVIDIA_REQUIRE_CUDA%3Dcuda%3E%3D12.8+brand%3Dunknown%22 (a runpod-derived image's
# layer listing; code-index id 22547696651)
_BRANDS = "unknown grid tesla nvidia quadro quadrortx nvidiartx vapps vpc vcs vws cloudgaming".split()
REQUIRE_12_8 = "cuda>=12.8 " + " ".join(
    f"brand={b},driver>={lo},driver<{lo + 1}" for lo in (470, 535, 550, 560, 565) for b in _BRANDS
)


def _image(env: dict[str, str]):
    img = committed_facts("bookworm")
    return dataclasses.replace(img, env={**img.env, **env})


def _node(driver: str, cuda: str | None = None):
    n = node("mofed-23.10-open-550-peermem")
    n = replace_in(n, "gpu.driver_version", driver)
    return replace_in(n, "gpu.cuda_driver_version", cuda)


def test_grammar_is_or_of_ands():
    terms = cuda_require.parse(REQUIRE_12_8)
    assert len(terms) == 1 + 5 * len(_BRANDS)
    props = {"cuda": "12.4", "driver": "551.61"}
    assert cuda_require.satisfied(terms, props) is False  # no driver window contains 551
    assert cuda_require.satisfied(terms, {"cuda": "12.4", "driver": "550.54.15"}) is None  # brand decides
    assert cuda_require.satisfied(terms, {"cuda": "12.8", "driver": "570.86.10"}) is True
    assert cuda_require.parse("cuda>=12.8 foo>=1") == [[cuda_require.Factor("cuda", ">=", "12.8")]]  # unknown skipped
    with pytest.raises(ValueError):
        cuda_require.parse("cuda")


def test_driver_551_refuses_cuda_12_8_image():
    result = run(_image({"NVIDIA_REQUIRE_CUDA": REQUIRE_12_8}), _node("551.61", "12.4"))
    f = by_id(result, RULE)
    assert f.severity == "error"
    assert f.predicted_error.startswith("nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8")


def test_driver_cuda_from_branch_catalog():
    result = run(_image({"NVIDIA_REQUIRE_CUDA": "cuda>=12.8"}), _node("550.54.15"))  # branch 550: CUDA 12.4
    assert RULE in ids(result)


def test_branch_window_depends_on_brand_is_unknown():
    result = run(_image({"NVIDIA_REQUIRE_CUDA": REQUIRE_12_8}), _node("550.54.15", "12.4"))
    assert RULE not in ids(result)
    assert RULE in unknown_rules(result)


@pytest.mark.parametrize(
    "env, driver",
    [
        ({"NVIDIA_REQUIRE_CUDA": REQUIRE_12_8}, "570.86.10"),  # new enough
        ({"NVIDIA_REQUIRE_CUDA": REQUIRE_12_8, "NVIDIA_DISABLE_REQUIRE": "true"}, "551.61"),
        ({"NVIDIA_REQUIRE_CUDA": ""}, "551.61"),
    ],
)
def test_no_refusal(env, driver):
    result = run(_image(env), _node(driver, "12.8" if driver.startswith("570") else "12.4"))
    assert RULE not in ids(result)


def test_legacy_image_gets_cuda_version_floor():
    img = _image({"CUDA_VERSION": "12.8.1"})
    img = dataclasses.replace(img, env={k: v for k, v in img.env.items() if k != "NVIDIA_REQUIRE_CUDA"})
    f = by_id(run(img, _node("551.61", "12.4")), RULE)
    assert "cuda>=12.8" in f.predicted_error


# ---------- UCX_TLS without the CUDA transports (engine/ucx.py) ----------
UCX_RULE = "UCX-TLS-NO-GPU-TRANSPORT"


def _gpu_node(count: int):
    n = node("mofed-23.10-open-550-peermem")
    gpus = n.gpu.gpus
    assert gpus, "the fixture node lists its GPUs"
    return replace_in(n, "gpu.gpus", tuple(dataclasses.replace(gpus[0], index=i) for i in range(count)))


@pytest.mark.parametrize(
    "tls, count, expect",
    [
        ("^cuda_ipc", 4, "cuda_ipc"),  # nixl#1110: the image's UCX_TLS=^cuda_ipc on a 4-GPU GB200 node
        ("rc,sm", 8, "cuda_copy, cuda_ipc"),
        ("rc,cuda,sm", 8, None),  # the cuda alias brings both
        ("^cuda_ipc", 1, None),  # no peer GPU on the node
        ("all", 8, None),
    ],
)
def test_ucx_tls_without_gpu_transports(tls, count, expect):
    result = run(_image({"UCX_TLS": tls}), _gpu_node(count))
    if expect is None:
        assert UCX_RULE not in ids(result)
    else:
        f = by_id(result, UCX_RULE)
        assert f"without {expect}" in f.title


def test_ucx_tls_unset_is_silent():
    img = _image({})
    img = dataclasses.replace(img, env={k: v for k, v in img.env.items() if k != "UCX_TLS"})
    assert UCX_RULE not in ids(run(img, _gpu_node(4)))


@pytest.mark.parametrize(
    "tls, names",
    [
        ("", "''"),  # set but empty: no transport named
        ("^", "'^'"),
        ("rc,sm,cuda_ipcc", "cuda_ipcc"),  # an allow-list naming what is no UCX transport or alias imgcheck knows
    ],
)
def test_ucx_tls_it_cannot_read_is_asked_about_naming_the_value(tls, names):
    result = run(_image({"UCX_TLS": tls}), _gpu_node(8))
    assert UCX_RULE not in ids(result)
    (u,) = [u for u in result.unknowns if u.rule == UCX_RULE]
    assert names in u.reason and "UCX_TLS" in u.reason
