"""Where the image puts CUDA's forward-compat libcuda decides what it loads on a newer driver (issue 31).

The container toolkit adds compat/ only for an older driver; an image that names it itself loads an older
libcuda on a newer driver: CUDA error 803. The layouts are the ones real images use: NVIDIA's CUDA images
(compat/ on no path), containers/ramalama#1287 (`echo "/usr/local/cuda-12.8/compat" >
/etc/ld.so.conf.d/99_cuda_compat.conf && ldconfig`), VIAME/VIAME#276 (compat/ first in LD_LIBRARY_PATH)."""

from __future__ import annotations

import dataclasses

import pytest
from engine_facts import matrix as load_matrix
from engine_facts import node
from imagebuild import Symlink, make_layer, write_docker_archive

from imgcheck import api
from imgcheck.engine import evaluate
from imgcheck.sources.read_options import ReadOptions

RULE = "CUDA-COMPAT-OLDER-THAN-DRIVER-ON-PATH"
COMPAT = "usr/local/cuda-12.8/compat"
OFFICIAL_ENV = [  # nvidia/cuda:12.8.1-base-ubuntu24.04's Env
    "PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/sbin:/usr/bin:/sbin:/bin",
    "CUDA_VERSION=12.8.1",
    "LD_LIBRARY_PATH=/usr/local/nvidia/lib:/usr/local/nvidia/lib64",
    "NVIDIA_VISIBLE_DEVICES=all",
]


def cuda_layer(extra: dict | None = None) -> bytes:
    files = {
        "usr/local/cuda": Symlink("cuda-12.8"),
        "usr/local/cuda-12.8/version.json": b'{"cuda": {"name": "CUDA SDK", "version": "12.8.1"}}',
        f"{COMPAT}/libcuda.so.570.124.06": b"\x7fELF fake",
        f"{COMPAT}/libcuda.so.1": Symlink("libcuda.so.570.124.06"),
        "etc/ld.so.conf.d/nvidia.conf": b"/usr/local/nvidia/lib\n/usr/local/nvidia/lib64\n",
    }
    return make_layer({**files, **(extra or {})})


def inspect(tmp_path, layers, env) -> object:
    archive = write_docker_archive(str(tmp_path / "image.tar"), layers, env=env)
    return api.inspect_image(f"docker-archive:{archive}", ReadOptions(use_cache=False))


@pytest.fixture(scope="module")
def matrix():
    return load_matrix()


def test_official_layout_leaves_compat_to_the_runtime(tmp_path, matrix):
    facts = inspect(tmp_path, [cuda_layer()], OFFICIAL_ENV)
    assert facts.cuda.compat_on_path is False and "only the container runtime" in facts.cuda.compat_path_how
    result = evaluate(facts, node("doca-24.10-open-580-peermem"), matrix)  # driver 580 > compat 570
    assert RULE not in {f.id for f in result.findings} | {u.rule for u in result.unknowns}


def test_ld_so_conf_d_entry_loads_the_older_libcuda_on_a_newer_driver(tmp_path, matrix):
    conf = {"etc/ld.so.conf.d/99_cuda_compat.conf": b"/usr/local/cuda-12.8/compat\n"}  # containers/ramalama#1287
    facts = inspect(tmp_path, [cuda_layer(conf)], OFFICIAL_ENV)
    assert facts.cuda.compat_on_path is True and facts.cuda.compat_path_how == "/etc/ld.so.conf.d/99_cuda_compat.conf"
    found = {f.id: f for f in evaluate(facts, node("doca-24.10-open-580-peermem"), matrix).findings}[RULE]
    assert found.severity == "error" and "803" in found.predicted_error
    older = evaluate(facts, node("inbox-5.15-proprietary-535"), matrix)  # driver 535 < compat 570: compat is wanted
    assert RULE not in {f.id for f in older.findings}


def test_ld_library_path_through_the_cuda_symlink(tmp_path, matrix):
    env = [*OFFICIAL_ENV[:2], "LD_LIBRARY_PATH=/usr/local/cuda/compat:/usr/local/nvidia/lib64"]  # VIAME/VIAME#276
    facts = inspect(tmp_path, [cuda_layer()], env)
    assert facts.cuda.compat_on_path is True and facts.cuda.compat_path_how == "LD_LIBRARY_PATH /usr/local/cuda/compat"
    assert RULE in {f.id for f in evaluate(facts, node("doca-24.10-open-580-peermem"), matrix).findings}


def test_facts_that_do_not_say_ask_instead_of_passing(tmp_path, matrix):
    facts = inspect(tmp_path, [cuda_layer()], OFFICIAL_ENV)
    unstated = dataclasses.replace(
        facts,
        cuda=dataclasses.replace(facts.cuda, compat_on_path=None, compat_path_how=None),
        unknown={"cuda.compat_on_path": "not given in facts.json"},
    )
    result = evaluate(unstated, node("doca-24.10-open-580-peermem"), matrix)
    u = next(u for u in result.unknowns if u.rule == RULE)
    assert "loader path" in u.reason and "not given in facts.json" in u.reason


def test_a_stated_datacenter_class_decides_forward_compat(tmp_path, matrix):
    from imgcheck.model.node import Gpu

    facts = inspect(tmp_path, [cuda_layer()], OFFICIAL_ENV)
    old = node("inbox-5.15-proprietary-535")  # driver 535 < compat 570: forward compatibility is used
    gpu = Gpu(index=0, name="NVIDIA Graphics Device", gpu_class="datacenter")  # a name no catalog row matches
    result = evaluate(facts, dataclasses.replace(old, gpu=dataclasses.replace(old.gpu, gpus=(gpu,))), matrix)
    said = {f.id for f in result.findings} | {u.rule for u in result.unknowns}
    assert "CUDA-FORWARD-COMPAT-UNSUPPORTED-GPU" not in said
    unclassified = dataclasses.replace(gpu, gpu_class=None)
    result = evaluate(facts, dataclasses.replace(old, gpu=dataclasses.replace(old.gpu, gpus=(unclassified,))), matrix)
    u = next(u for u in result.unknowns if u.rule == "CUDA-FORWARD-COMPAT-UNSUPPORTED-GPU")
    assert "class is not known" in u.reason and "state gpu_class" in u.reason


def test_an_unknown_driver_is_asked_about_not_passed():
    """_order() returns nothing to the rule when the node's driver is unknown; the engine then reports the rule
    undecided with the driver question (its READS), so a compat libcuda on an unprobed node is never silent."""
    from engine_facts import committed_facts

    from imgcheck.model.image import Cuda

    image = dataclasses.replace(
        committed_facts("bookworm"),
        cuda=Cuda(
            version="12.8.1",
            origin="env CUDA_VERSION",
            compat_driver="570.124.06",
            compat_path="/usr/local/cuda/compat/libcuda.so.570.124.06",
        ),
    )
    n = node("inbox-6.8-open-570")
    n = dataclasses.replace(
        n, gpu=dataclasses.replace(n.gpu, driver_version=None), unknown={**n.unknown, "gpu.driver_version": "x"}
    )
    unknowns = {u.rule: u for u in evaluate(image, n, load_matrix()).unknowns}
    assert "node.gpu.driver_version" in unknowns["CUDA-COMPAT-OLDER-THAN-DRIVER-ON-PATH"].facts


SAME_BRANCH = "CUDA-COMPAT-SAME-BRANCH-NEWER"


def _with_driver(name: str, driver: str):
    n = node(name)
    return dataclasses.replace(n, gpu=dataclasses.replace(n.gpu, driver_version=driver))


def test_a_newer_compat_of_the_drivers_own_branch_on_the_image_path_is_reported(tmp_path, matrix):
    """compat 570.124.06 named by the image's ld.so.conf.d (containers/ramalama#1287's layout) on a 570.86.15 kernel
    driver: not cross-branch forward compatibility; the same-branch direction is its own rule, and neither the
    older-compat rule nor the GPU-support rule claims it."""
    conf = {"etc/ld.so.conf.d/99_cuda_compat.conf": b"/usr/local/cuda-12.8/compat\n"}
    facts = inspect(tmp_path, [cuda_layer(conf)], OFFICIAL_ENV)
    result = evaluate(facts, _with_driver("inbox-6.8-open-570", "570.86.15"), matrix)
    found = {f.id: f for f in result.findings}
    assert SAME_BRANCH in found and RULE not in found and "CUDA-FORWARD-COMPAT-UNSUPPORTED-GPU" not in found
    assert "570.124.06" in found[SAME_BRANCH].title and "802" in found[SAME_BRANCH].predicted_error
    # the host reaching the compat release (or any newer one of the branch) settles it
    for driver in ("570.124.06", "570.133.20"):
        later = evaluate(facts, _with_driver("inbox-6.8-open-570", driver), matrix)
        assert SAME_BRANCH not in {f.id for f in later.findings} | {u.rule for u in later.unknowns}
    # an older branch is the forward compatibility the guide documents: not this rule
    cross = evaluate(facts, _with_driver("inbox-6.8-open-570", "535.230.02"), matrix)
    assert SAME_BRANCH not in {f.id for f in cross.findings} | {u.rule for u in cross.unknowns}


def test_a_same_branch_compat_left_to_the_runtime_is_asked(tmp_path, matrix):
    facts = inspect(tmp_path, [cuda_layer()], OFFICIAL_ENV)  # compat/ on no path of the image
    result = evaluate(facts, _with_driver("inbox-6.8-open-570", "570.86.15"), matrix)
    assert SAME_BRANCH not in {f.id for f in result.findings}
    u = next(u for u in result.unknowns if u.rule == SAME_BRANCH)
    assert "container toolkit" in u.reason and "image.cuda.compat_on_path" in u.facts
