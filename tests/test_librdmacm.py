"""librdmacm's device init in a container given some of the node's uverbs devices (issue #32): the
librdmacm_releases rows generated from librdmacm/cma.c of every rdma-core tag, the image's librdmacm read from its
package, and JOB-RDMA-DEVICES-PARTIAL naming librdmacm's all-or-nothing failure instead of NCCL's degradation."""

from __future__ import annotations

import dataclasses
import os

import pytest
from engine_facts import committed_facts, matrix, node, with_nccl

from imgcheck.engine import evaluate
from imgcheck.job import load_job_spec
from imgcheck.knowledge import librdmacm
from imgcheck.model.image import Package

MATRIX = matrix()
ROWS = MATRIX.rows(librdmacm.TABLE)
SPEC = os.path.join(os.path.dirname(__file__), "job", "specs", "real", "oobleck-start_container.sh")
RDMA_NODE = "mofed-23.10-open-550-peermem"  # mlx5_0, mlx5_1


def test_every_release_is_classified_and_the_behaviour_changes_once():
    assert ROWS and all(r["partial_devices"] in (librdmacm.FAILS_ALL, librdmacm.SKIPS) for r in ROWS)
    kinds = [r["partial_devices"] for r in ROWS]
    first_fixed = kinds.index(librdmacm.SKIPS)
    assert set(kinds[:first_fixed]) == {librdmacm.FAILS_ALL} and set(kinds[first_fixed:]) == {librdmacm.SKIPS}
    # the fix (rdma-core PR #1060) was not backported to a stable branch: every tag of the releases before it fails
    fixed = librdmacm.fixed_release(MATRIX)
    assert fixed == ROWS[first_fixed]["release"] and fixed.endswith(".0")
    assert all(r["source"].endswith(":librdmacm/cma.c") for r in ROWS)


# real distribution packages of librdmacm: Ubuntu focal / jammy / noble (t64 rename), Debian bookworm, Rocky 8.6
@pytest.mark.parametrize(
    "name, version, db, expected",
    [
        ("librdmacm1", "28.0-1ubuntu1", "dpkg", librdmacm.FAILS_ALL),
        ("librdmacm1", "39.0-1", "dpkg", librdmacm.SKIPS),
        ("librdmacm1t64", "50.0-2build2", "dpkg", librdmacm.SKIPS),
        ("librdmacm1", "44.0-2", "dpkg", librdmacm.SKIPS),
        ("librdmacm", "37.2-1.el8", "rpm", librdmacm.FAILS_ALL),
    ],
)
def test_release_of_real_packages(name, version, db, expected):
    image = dataclasses.replace(committed_facts("bookworm"), packages=(Package(name, version, db),))
    image = dataclasses.replace(image, rdma=dataclasses.replace(image.rdma, packages=()))
    lib, unread = librdmacm.in_image(image)
    assert unread is None and lib is not None and lib.how == f"package {name} {version}"
    assert librdmacm.partial_devices(MATRIX, lib) == expected


def _with_librdmacm(version: str | None):
    image = with_nccl(committed_facts("bookworm"), "2.21.5", env={})
    rdma = [p for p in image.rdma.packages if p.name != "librdmacm1"]
    other = [p for p in image.packages if p.name != "librdmacm1"]
    if version is not None:
        rdma.append(Package("librdmacm1", version, "dpkg"))
    return dataclasses.replace(image, packages=tuple(other), rdma=dataclasses.replace(image.rdma, packages=tuple(rdma)))


def _partial(image):
    (job,) = load_job_spec(SPEC)
    result = evaluate(image, node(RDMA_NODE), MATRIX, job=job)
    return [f for f in result.findings if f.id == "JOB-RDMA-DEVICES-PARTIAL"]


def test_old_librdmacm_is_named_as_the_failure():
    (f,) = _partial(_with_librdmacm("28.0-1ubuntu1"))
    assert "librdmacm 28.0 fails every device" in f.title
    assert "ENODEV" in (f.predicted_error or "") and "ucma_init_all" in f.mechanism
    assert any(e.fact == "image.rdma.librdmacm" for e in f.evidence)


def test_fixed_librdmacm_keeps_the_nccl_wording_and_says_rdma_cm_runs():
    (f,) = _partial(_with_librdmacm("44.0-2"))
    assert "NCCL uses only what it can open" in f.title and "marks a device it cannot open dead" in f.mechanism


def test_no_librdmacm_says_nothing_of_it():
    (f,) = _partial(_with_librdmacm(None))
    assert "librdmacm" not in f.title + f.mechanism
