"""`imgcheck verify` with the real Docker daemon and the real Debian rdma images (no RDMA device, no GPU).

What is asserted is what these images really are (their ELF says so, and `inspect` reads it): rdma-core
33.2 (bullseye) exports ibv_reg_mr_iova2@IBVERBS_1.8 but not ibv_reg_dmabuf_mr@IBVERBS_1.12; 44.0
(bookworm) and 56.1 (trixie) export both. The verifier must find exactly that at run time, and every
static prediction about the image must be confirmed.
"""

from __future__ import annotations

import json

import pytest

from imgcheck.cli.main import main
from imgcheck.verify.join import CONFIRMED, CONTRADICTED
from imgcheck.verify.run import verify_image

pytestmark = [pytest.mark.docker, pytest.mark.e2e]

EXPECTED = {  # suite -> (libibverbs file version, private ABI, has dmabuf)
    "bullseye": ("1.11.33.2", 33, False),
    "bookworm": ("1.14.44.0", 34, True),
    "trixie": ("1.14.56.1", 34, True),
}


@pytest.mark.parametrize("suite", sorted(EXPECTED))
def test_verify_real_image(suite, rdma_image, verifier, no_leftover_containers):
    version, pabi, has_dmabuf = EXPECTED[suite]
    report = verify_image(rdma_image(suite), "docker", timeout=120)
    out = report.verifier
    assert out is not None, report.observations

    # NCCL's way of loading: dlopen libibverbs.so (absent in runtime images), then libibverbs.so.1
    assert [t.name for t in out.libibverbs.tried] == ["libibverbs.so", "libibverbs.so.1"]
    assert out.libibverbs.opened == "libibverbs.so.1"
    assert out.libibverbs.file_version == version
    assert out.libibverbs.private_abi == pabi
    assert out.symbol("ibv_reg_mr_iova2").found is True
    assert out.symbol("ibv_reg_dmabuf_mr").found is has_dmabuf
    assert all(s.found for s in out.symbols if s.required_by_nccl)

    # the join: every prediction from the image facts is confirmed, none contradicted
    by_id = {c.id: c for c in report.checks}
    assert by_id["symbol ibv_reg_dmabuf_mr@IBVERBS_1.12"].status == CONFIRMED
    assert by_id["symbol ibv_reg_mr_iova2@IBVERBS_1.8"].status == CONFIRMED
    assert by_id["libibverbs version"].status == CONFIRMED
    assert by_id["private ABI"].status == CONFIRMED
    assert not [c for c in report.checks if c.status == CONTRADICTED]

    # provider loading is reported, per /etc/libibverbs.d driver file, and matches the static facts
    drivers = {d.name: d for d in out.providers.drivers}
    assert drivers["mlx5"].loaded is True
    assert drivers["mlx5"].library.endswith(f"libmlx5-rdmav{pabi}.so")
    assert by_id["provider mlx5 loads"].status == CONFIRMED

    # no RDMA device on this machine: said plainly, nothing registered
    assert out.sysfs.class_infiniband is None and out.device_results == ()
    rdma = [o for o in report.observations if o.id == "rdma-devices"]
    assert rdma and "No RDMA device exists on this machine" in rdma[0].message
    assert out.gpu.status == "no-libcuda"
    registration = by_id["host registration as NCCL does by default"]
    assert registration.status == "not testable here" and registration.detail == "no RDMA device exists on this machine"

    # isolation that was applied
    assert {"network none", "read-only root filesystem", "verifier mounted read-only"} <= set(report.run.settings)
    assert out.glibc and report.verdict == "ok"


def test_cli_json_report_and_exit_code(rdma_image, verifier, tmp_path, no_leftover_containers, capsys):
    target = tmp_path / "verify.json"
    code = main(["verify", rdma_image("bullseye"), "--runtime", "docker", "-o", f"json={target}"])
    assert code == 0, capsys.readouterr().err
    doc = json.loads(target.read_text())
    assert doc["schema_version"] == 1 and doc["verdict"] == "ok"
    assert doc["verifier"]["libibverbs"]["private_abi"] == 33
    statuses = {c["id"]: c["status"] for c in doc["checks"]}
    assert statuses["symbol ibv_reg_dmabuf_mr@IBVERBS_1.12"] == "confirmed"


def test_timeout_kills_and_removes_the_container(rdma_image, compile_c, monkeypatch, no_leftover_containers):
    """A verifier that hangs is killed at the time limit and its container is removed all the same."""
    sleeper = compile_c("sleeper.c", "-O2", "-nostartfiles", "-fno-stack-protector")
    monkeypatch.setenv("IMGCHECK_VERIFIER", sleeper)
    report = verify_image(rdma_image("bookworm"), "docker", timeout=3, use_static=False)
    assert report.run.timed_out is True
    assert report.verifier is None and report.verdict == "failed"
    assert any(o.id == "run" and "time limit" in o.message for o in report.observations)


def test_unreadable_static_facts_still_verify(rdma_image, verifier, no_leftover_containers):
    report = verify_image(rdma_image("bullseye"), "docker", static_ref="facts:/nonexistent/facts.json")
    assert report.static.startswith("none: could not read facts:/nonexistent/facts.json")
    assert report.checks == () and report.verifier is not None
    assert report.verifier.symbol("ibv_reg_dmabuf_mr").found is False  # 33.2: no IBVERBS_1.12


def test_missing_image_is_exit_3(docker_client, verifier, capsys):
    code = main(["verify", "imgcheck-verify/no-such-image:never", "--runtime", "docker"])
    err = capsys.readouterr().err
    assert code == 3
    assert err.count("\n") == 1 and "not in the local Docker daemon" in err
