"""UCX built for MLNX_OFED's legacy experimental verbs (UCX-BUILT-FOR-EXP-VERBS): the extractor names the
experimental verbs from the log strings such a build compiles in (UCX 1.7-1.13 src/uct/ib/base/ib_verbs.h
"ibv_exp_query_device(%s) returned %d: %m"), the rule weighs them against the image's libibverbs. Debian's UCX (built
against rdma-core) has none: tests/test_inspect_realworld.py checks bullseye's 1.10.0 and bookworm's 1.13.1."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess

import pytest
from engine_facts import by_id, committed_facts, ids, node, run, unknown_rules

from imgcheck.extractors.ucx import exp_verbs
from imgcheck.model.image import UcxModule

RULE = "UCX-BUILT-FOR-EXP-VERBS"
# the log calls of UCX 1.13.1 src/uct/ib/base/ib_verbs.h and src/uct/ib/base/ib_md.c under HAVE_DECL_IBV_EXP_*
UCX_EXP_LOG = r"""
#include <stdio.h>
int query(const char *dev, int ret) { return printf("ibv_exp_query_device(%s) returned %d: %m", dev, ret); }
int reg(void *a, unsigned long n) { return printf("ibv_exp_reg_mr(address=%p, length=%zu, exp_access=0x%lx) failed: %m", a, n, 0ul); }
int plain(const char *dev) { return printf("ibv_query_device_ex(%s) returned %d: %m", dev, 0); }
"""


def gcc_module(tmp_path, source: str) -> bytes:
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    src = tmp_path / "m.c"
    src.write_text(source)
    out = tmp_path / "libuct_ib.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-o", str(out), str(src)], check=True)
    return out.read_bytes()


def test_exp_verbs_are_read_from_a_modules_strings(tmp_path):
    assert exp_verbs(gcc_module(tmp_path, UCX_EXP_LOG)) == ("ibv_exp_query_device", "ibv_exp_reg_mr")
    plain = (
        UCX_EXP_LOG.split("int query")[0]
        + 'int plain(const char *d) { return printf("ibv_query_device_ex(%s)", d); }\n'
    )
    assert exp_verbs(gcc_module(tmp_path, plain)) == ()


@pytest.fixture(scope="module")
def bookworm():
    return committed_facts("bookworm")


def with_modules(image, *verbs):
    ucx = image.ucx
    assert ucx is not None and ucx.modules  # bookworm's own UCX 1.13.1, built against rdma-core
    first = dataclasses.replace(ucx.modules[0], exp_verbs=tuple(verbs) if verbs else ())
    return dataclasses.replace(image, ucx=dataclasses.replace(ucx, modules=(first, *ucx.modules[1:])))


def test_exp_verbs_build_on_rdma_core_fails(bookworm):
    f = by_id(run(with_modules(bookworm, "ibv_exp_query_device"), node("mofed-23.10-open-550-peermem")), RULE)
    assert f.severity == "error" and "returned 38" in f.predicted_error
    assert any(e.fact.endswith(".exp_verbs") and "ibv_exp_query_device" in e.value for e in f.evidence)


def test_debian_build_and_unread_modules(bookworm):
    n = node("mofed-23.10-open-550-peermem")
    result = run(with_modules(bookworm), n)
    assert RULE not in ids(result) and RULE not in unknown_rules(result)
    ucx = bookworm.ucx
    unread = dataclasses.replace(
        bookworm,
        ucx=dataclasses.replace(ucx, modules=tuple(dataclasses.replace(m, exp_verbs=None) for m in ucx.modules)),
    )
    assert RULE in unknown_rules(run(unread, n))


def test_legacy_libibverbs_is_what_such_a_build_needs(bookworm):
    lib = dataclasses.replace(
        bookworm.rdma.libibverbs, private_abi=None, symbol_versions=("IBVERBS_1.0", "IBVERBS_1.1")
    )
    image = with_modules(
        dataclasses.replace(bookworm, rdma=dataclasses.replace(bookworm.rdma, libibverbs=lib)), "ibv_exp_reg_mr"
    )
    result = run(image, node("mofed-5.8-470-peermem"))
    assert RULE not in ids(result) and RULE not in unknown_rules(result)


def test_module_model_default_is_unread():
    assert UcxModule(name="uct_ib", path="/x").exp_verbs is None


def test_modules_unread_are_decided_by_release_from_1_14_and_asked_before(bookworm):
    """UCX 1.14.0 removed the experimental-verbs build (its NEWS; its configure.m4 checks no ibv_exp_*): without the
    modules a release from it is decided, an older one is asked about its modules."""
    ucx = bookworm.ucx
    assert ucx is not None
    n = node("mofed-23.10-open-550-peermem")
    newer = dataclasses.replace(bookworm, ucx=dataclasses.replace(ucx, version="1.16.0", modules=()))
    assert RULE not in ids(run(newer, n)) and RULE not in unknown_rules(run(newer, n))
    older = dataclasses.replace(bookworm, ucx=dataclasses.replace(ucx, version="1.13.1", modules=()))
    result = run(older, n)
    assert RULE not in ids(result) and RULE in unknown_rules(result)
    asked = next(u for u in result.unknowns if u.rule == RULE)
    assert asked.facts == ("image.ucx.modules",) and "1.14.0" in asked.reason
