"""The join of verifier results with static predictions: confirmed, contradicted, not testable here."""

from __future__ import annotations

from imgcheck.model.image import ImageFacts, Libibverbs, Provider, RdmaFacts
from imgcheck.model.report import Evidence, Finding
from imgcheck.verify.join import (
    CONFIRMED,
    CONTRADICTED,
    FIX,
    NO_DEVICE,
    NOT_TESTABLE,
    check_from_finding,
    checks_from_facts,
    observations,
)
from imgcheck.verify.report import RunInfo, VerifyReport, exit_code_of, render_text, verdict_of
from imgcheck.verify.result import (
    DeviceList,
    DeviceResult,
    DmabufProbe,
    LibibverbsLoad,
    OpenAttempt,
    ProviderLoad,
    Providers,
    Registration,
    Step,
    SymbolLookup,
    Sysfs,
    VerifierOutput,
)

LIBDIR = "/usr/lib/x86_64-linux-gnu"


def facts(symbol_versions=("IBVERBS_1.1", "IBVERBS_1.8", "IBVERBS_1.12"), providers=None, pabi=34) -> ImageFacts:
    lib = Libibverbs(
        version="1.14.44.0",
        rdma_core="44.0",
        symbol_versions=symbol_versions,
        private_abi=pabi,
        has_reg_mr_iova2="IBVERBS_1.8" in symbol_versions,
        has_reg_dmabuf_mr="IBVERBS_1.12" in symbol_versions,
        path=f"{LIBDIR}/libibverbs.so.1.14.44.0",
    )
    if providers is None:
        providers = (
            Provider(
                "mlx5", 34, f"{LIBDIR}/libibverbs/libmlx5-rdmav34.so", driver_file="/etc/libibverbs.d/mlx5.driver"
            ),
        )
    return ImageFacts(reference="test", rdma=RdmaFacts(libibverbs=lib, providers=providers))


def output(
    dmabuf_found=True, mlx5_loaded=True, mlx5_error=None, sysfs=Sysfs(), devices=DeviceList(), device_results=()
) -> VerifierOutput:
    return VerifierOutput(
        schema_version=1,
        libibverbs=LibibverbsLoad(
            tried=(OpenAttempt("libibverbs.so", False, "not found"), OpenAttempt("libibverbs.so.1", True)),
            opened="libibverbs.so.1",
            path=f"{LIBDIR}/libibverbs.so.1",
            real_path=f"{LIBDIR}/libibverbs.so.1.14.44.0",
            private_abi=34,
        ),
        symbols=(
            SymbolLookup("ibv_get_device_list", "IBVERBS_1.1", True, True),
            SymbolLookup("ibv_reg_mr_iova2", "IBVERBS_1.8", False, True),
            SymbolLookup("ibv_reg_dmabuf_mr", "IBVERBS_1.12", False, dmabuf_found),
        ),
        providers=Providers(
            drivers=(
                ProviderLoad(
                    "/etc/libibverbs.d/mlx5.driver",
                    "mlx5",
                    f"{LIBDIR}/libibverbs/libmlx5-rdmav34.so",
                    True,
                    mlx5_loaded,
                    mlx5_error,
                ),
            )
        ),
        sysfs=sysfs,
        devices=devices,
        device_results=device_results,
    )


def by_id(checks):
    return {c.id: c for c in checks}


def test_everything_as_predicted_is_confirmed():
    checks = by_id(checks_from_facts(facts(), output()))
    ro = checks.pop("host registration as NCCL does by default")
    assert ro.status == NOT_TESTABLE and ro.detail == NO_DEVICE  # no device in output()
    assert {c.status for c in checks.values()} == {CONFIRMED}
    assert set(checks) >= {
        "libibverbs loads",
        "libibverbs version",
        "private ABI",
        "provider mlx5 loads",
        "symbol ibv_reg_dmabuf_mr@IBVERBS_1.12",
    }


def test_static_symbol_that_is_not_there_is_a_problem_to_fix():
    check = by_id(checks_from_facts(facts(), output(dmabuf_found=False)))["symbol ibv_reg_dmabuf_mr@IBVERBS_1.12"]
    assert check.status == CONTRADICTED and check.detail == FIX
    assert check.prediction.startswith("present") and check.observed == "dlvsym found nothing"


def test_predicted_provider_failure_is_confirmed():
    stale = (
        Provider("mlx5", 33, f"{LIBDIR}/libibverbs/libmlx5-rdmav33.so", driver_file="/etc/libibverbs.d/mlx5.driver"),
    )
    err = f"{LIBDIR}/libibverbs/libmlx5-rdmav34.so: cannot open shared object file: No such file or directory"
    check = by_id(checks_from_facts(facts(providers=stale), output(mlx5_loaded=False, mlx5_error=err)))[
        "provider mlx5 loads"
    ]
    assert check.status == CONFIRMED
    assert "private ABI 33" in check.prediction and "cannot open shared object" in check.observed


def test_provider_predicted_to_load_that_fails_is_contradicted():
    check = by_id(checks_from_facts(facts(), output(mlx5_loaded=False, mlx5_error="undefined symbol")))[
        "provider mlx5 loads"
    ]
    assert check.status == CONTRADICTED


def test_no_libibverbs_on_both_sides():
    empty = ImageFacts(reference="t")
    out = VerifierOutput(
        schema_version=1, libibverbs=LibibverbsLoad(tried=(OpenAttempt("libibverbs.so.1", False, "not found"),))
    )
    checks = checks_from_facts(empty, out)
    assert [(c.id, c.status) for c in checks] == [("libibverbs loads", CONFIRMED)]


def finding(rule, *evidence):
    return Finding(
        id=rule,
        severity="error",
        title=rule,
        predicted_error=f"{rule} error",
        mechanism="m",
        confidence="verified",
        evidence=tuple(evidence),
    )


def test_engine_findings_join():
    pabi = finding("RDMA-PABI-MISMATCH", Evidence.member("image.rdma.providers", "mlx5", "pabi", 33))
    assert check_from_finding(pabi, output(mlx5_loaded=False, mlx5_error="x")).status == CONFIRMED
    assert check_from_finding(pabi, output()).status == CONTRADICTED

    dmabuf = check_from_finding(finding("DMABUF-UNSUPPORTED"), output())
    assert dmabuf.status == NOT_TESTABLE and dmabuf.detail == NO_DEVICE

    env = check_from_finding(finding("ENV-NCCL-IB-RETRY-CNT"), output())
    assert env.status == NOT_TESTABLE and "cannot provoke retries" in env.detail  # the rule's not_verifiable_live


def _device(ok_ro: bool):
    regs = (
        Registration("host", "base", "ibv_reg_mr", 7, "LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ", "w", True, True),
        Registration(
            "host",
            "base+ro",
            "ibv_reg_mr_iova2",
            7 | (1 << 20),
            "...|RELAXED_ORDERING",
            "w",
            True,
            ok_ro,
            0 if ok_ro else 22,
            None if ok_ro else "EINVAL",
            None if ok_ro else "Invalid argument",
        ),
    )
    return DeviceResult(
        "mlx5_0", Step(True), Step(True), regs, DmabufProbe(True, True, 9, "EBADF", "Bad file descriptor")
    )


def test_registration_results_with_a_device():
    sysfs = Sysfs(class_infiniband=("mlx5_0",), dev_infiniband=("uverbs0",))
    good = output(sysfs=sysfs, devices=DeviceList(True, count=1), device_results=(_device(True),))
    bad = output(sysfs=sysfs, devices=DeviceList(True, count=1), device_results=(_device(False),))
    ro = finding("RO-MASKED-SAFE")
    static_ro = "host registration as NCCL does by default"
    assert by_id(checks_from_facts(facts(), good))[static_ro].status == CONFIRMED
    assert by_id(checks_from_facts(facts(), bad))[static_ro].status == CONTRADICTED
    assert check_from_finding(ro, good).status == CONFIRMED
    assert check_from_finding(ro, bad).status == CONTRADICTED
    assert check_from_finding(finding("DMABUF-UNSUPPORTED"), good).status == CONTRADICTED  # probe says EBADF

    errors = [o for o in observations(bad) if o.severity == "error"]
    assert len(errors) == 1
    assert "NCCL WARN Call to ibv_reg_mr_iova2 failed with error Invalid argument" in errors[0].message
    report = VerifyReport(
        image="i",
        run=RunInfo("docker", 0, False),
        verifier=bad,
        static="image facts",
        observations=tuple(observations(bad)),
        verdict=verdict_of([], observations(bad), True),
    )
    assert report.verdict == "failed" and exit_code_of(report) == 1
    assert "EINVAL" in render_text(report)


def test_devices_on_the_node_but_none_usable_is_an_error():
    out = output(
        sysfs=Sysfs(class_infiniband=("mlx5_0",), dev_infiniband=("uverbs0",)), devices=DeviceList(True, count=0)
    )
    obs = [o for o in observations(out) if o.id == "rdma-devices"]
    assert obs[0].severity == "error" and "No device found" in obs[0].message
    passed = output(sysfs=Sysfs(class_infiniband=("mlx5_0",), dev_infiniband=None))
    assert [o.severity for o in observations(passed) if o.id == "rdma-devices"] == ["warning"]


def test_contradiction_alone_gives_exit_1():
    checks = checks_from_facts(facts(), output(dmabuf_found=False))
    assert verdict_of(checks, [], True) == "contradicted"
    assert verdict_of(by_id(checks_from_facts(facts(), output())).values(), [], True) == "ok"
