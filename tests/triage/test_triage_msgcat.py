"""Message catalogs enumerated from upstream sources for triage (issue 32, msgcat): glibc's dynamic loader
(ld_messages.json), UCX's IB / DevX / shared-memory / wireup sites (ucx_messages.json), Open MPI's UCX device
selection (ompi_ucx_messages.json), the toolkit's IMEX handling per release (ctk_imex.json) and getaddrinfo's
gai_strerror texts (gai_messages.json). Each generated row names signatures; these tests check that every row's
rendered format is matched by the signature it names, that the counts stay those of the releases walked, and that the
release ranges the causes quote are the ones the generators read from the code."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import pytest

from imgcheck.triage import host_catalog, triage
from imgcheck.triage.signatures import load_signatures

SPEC = re.compile(r"%[-+ #0-9.*]*(?:hh|h|ll|l|L|z|j|t)?([diouxXcspm%])")


def _data(name: str) -> dict:
    return json.loads(resources.files("imgcheck.data.triage").joinpath(name).read_text("utf-8"))


@pytest.fixture(scope="module")
def sigs():
    return host_catalog.extend(load_signatures()).by_id()


def _render(fmt: str, word: str = "mlx5_0") -> str:
    def one(m: re.Match[str]) -> str:
        return "7" if m.group(1) in "diouxX" else "0x7f12" if m.group(1) == "p" else word

    return SPEC.sub(one, fmt.split("\n")[0])


def _host_entry(sid: str) -> dict:
    return next(m for m in _data("host_messages.json")["messages"] if "HOST-" + m["id"] == sid)


def test_every_generated_row_names_a_signature_that_exists_and_has_causes(sigs):
    for name in host_catalog.GENERATED_MULTI:
        for row in _data(name)["messages"]:
            for pick in row.get("signatures", ()):
                assert pick["signature"] in sigs, (name, pick["signature"])
                assert sigs[pick["signature"]].causes, pick["signature"]
                re.compile(pick["regex"])


def test_loader_catalog_covers_every_glibc_release_and_each_mapped_message_is_matched(sigs):
    doc = _data("ld_messages.json")
    assert doc["releases"] >= 26 and doc["found"] >= 80  # glibc 2.17..2.42
    assert doc["mapped"] == sum(1 for r in doc["messages"] if "signatures" in r) >= 20
    checked = 0
    for row in doc["messages"]:
        for pick in row.get("signatures", ()):
            # a rendered line that satisfies the pick's argument condition: the condition's own sample values
            ver = {"IBVERBS-SYMBOL-VERSION": "MLX5_1.8", "HOST-LD-SYSTEM-VERSION": "GLIBC_2.34"}.get(
                pick["signature"], "FOO_2.0"
            )
            sym = {"LD-UNDEFINED-NCCL-SYMBOL": "ncclCommRegister", "HOST-LD-UNDEFINED-RDMA-SYMBOL": "mlx5dv_x"}
            fmt = row["format"].replace("%s%s%s", sym.get(pick["signature"], "foo_bar"))
            line = "prog: symbol lookup error: /lib/libx.so: " + _render(fmt, ver).replace(
                "required by " + ver, "required by /bin/prog"
            )
            line = line.replace("defined in file " + ver, "defined in file libmlx5.so.1")
            if re.search(pick["regex"], line):
                checked += 1
                assert any(p.search(line) for p in sigs[pick["signature"]].patterns), (row["format"], pick)
    assert checked >= 20  # each mapped message rendered with values its condition accepts
    assert doc["left_out"]["why"] and "cannot open shared object file" in doc["left_out"]["formats"]


@pytest.mark.parametrize(
    ("line", "signature", "cause"),
    [
        # openucx/ucx#5469 (the reporter's comment): UCX's IB module built against another MLNX_OFED's libmlx5
        (
            "./a.out: relocation error: /gpfs/projects/ChapmanGroup/opt/ucx/git/lib/ucx/libuct_ib.so.0: symbol "
            "mlx5dv_is_supported, version MLX5_1.8 not defined in file libmlx5.so.1 with link time reference",
            "IBVERBS-SYMBOL-VERSION",
            "built-against-other-rdma-core",
        ),
        # NVIDIA/nvidia-container-toolkit#543: the host's Tegra driver libraries need a newer glibc than the image
        (
            "nvidia-smi: /lib/aarch64-linux-gnu/libc.so.6: version `GLIBC_2.34' not found (required by "
            "/usr/lib/aarch64-linux-gnu/tegra/libnvrm_gpu.so)",
            "HOST-LD-SYSTEM-VERSION",
            "host-binary-in-older-image",
        ),
        # NVIDIA-AI-IOT/trt_pose#111 (the title)
        (
            "OSError: /usr/lib/aarch64-linux-gnu/libgomp.so.1: cannot allocate memory in static TLS block",
            "HOST-LD-STATIC-TLS",
            "preload-tls-library",
        ),
        # openucx/ucx#10180 (the title: the message without UCX's prefix)
        (
            "ERROR mlx5_0: both WC and NC_DEDICATED UAR allocation types are not supported",
            "HOST-UCX-MLX5-DEVX",
            "ucx-devx-unsupported",
        ),
        # openucx/ucx#2195
        (
            "rc_iface.c:650  UCX  ERROR Failed to create TM XRQ: No route to host",
            "HOST-UCX-RC-TAG-MATCHING",
            "tm-unsupported-by-driver",
        ),
        # openucx/ucx#4511 (a comment's run under Apptainer)
        (
            "[1688710000.495329] [c7:2019617:0]       mm_posix.c:195  UCX  ERROR open(file_name=/proc/2019618/fd/20 "
            "flags=0x0) failed: Permission denied",
            "HOST-UCX-SHM-PEER-ATTACH",
            "ranks-in-separate-namespaces",
        ),
        # open-mpi/ompi#9617
        (
            "[1,1]<stderr>:[ko067.localdomain:26640] common_ucx.c:298 rc_verbs/mlx5_0:1: matched transport list "
            "but not device list",
            "HOST-OMPI-UCX-DEVICE-MATCH",
            "ompi-device-check-defect",
        ),
        # pytorch/test-infra#5852
        (
            "nvidia-container-cli: error parsing IMEX info: unsupported IMEX channel value: all: unknown.",
            "HOST-NVC-IMEX-CHANNELS",
            "ctk-legacy-image-imex-all",
        ),
        # pytorch/ci-infra#552
        (
            "[ERROR] not all local fabric manager instances finished their configuration",
            "HOST-FM-CONFIG-INCOMPLETE",
            "fm-started-before-driver-ready",
        ),
        # NVIDIA/gpu-operator#2619: the driver pod installed no modules (userspace-only), the peermem sidecar's modprobe
        (
            "  modprobe: FATAL: Module nvidia-peermem not found in directory /lib/modules/6.8.0-1059-azure",
            "HOST-KMOD-MODULE-NOT-FOUND",
            "nvidia-modules-not-installed-for-kernel",
        ),
        # pytorch/pytorch#73682
        (
            "ValueError: host not found: Name or service not known",
            "C10D-STORE-NAME-UNRESOLVED",
            "store-lookup-fatal-without-retry",
        ),
    ],
)
def test_a_real_line_of_each_family_gets_its_signature_and_mechanism(tmp_path, line, signature, cause):
    log = tmp_path / "job.log"
    log.write_text(line + "\n", encoding="utf-8")
    report = triage([str(log)])
    assert report.first_failure is not None and report.first_failure.signature == signature
    assert report.diagnoses[0].causes[0].id == cause


def test_ucx_catalog_walks_every_minor_series_and_names_each_mechanism(sigs):
    doc = _data("ucx_messages.json")
    assert doc["releases"][0] == "1.2.2" and len(doc["releases"]) >= 21
    assert doc["formats"] >= 800 and doc["mapped"] >= 90
    assert set(doc["by_mechanism"]) == {"mlx5-devx", "rc-tag-matching", "shm-peer-attach", "ib-gid", "no-transport"}
    for row in doc["messages"]:
        pick = row["signatures"][0]
        line = "ib_mlx5.c:611 UCX  ERROR " + _render(row["format"])
        assert any(p.search(line) for p in sigs[pick["signature"]].patterns), row["format"]
        assert not re.search(r"(?i)allocate memory", row["format"])  # host memory stays the fabric catalog's


def test_a_ucx_memory_failure_is_not_read_as_devx_or_tag_matching(tmp_path):
    # ucx#8684's line: memlock, whatever transport printed it
    log = tmp_path / "job.log"
    log.write_text("ib_log.c:246 UCX ERROR mlx5_0: ibv_create_cq() failed: Cannot allocate memory\n")
    report = triage([str(log)])
    assert not any(d.signature.startswith("HOST-UCX-") for d in report.diagnoses)


def test_ompi_device_check_defect_releases_are_read_from_the_code_and_quoted_by_the_cause():
    doc = _data("ompi_ucx_messages.json")
    assert doc["device_check_unterminated_readlink"] == ["4.0.6", "4.0.7", "4.1.1"]
    assert "4.1.2" in doc["device_check_releases"]
    text = next(c for c in _host_entry("HOST-OMPI-UCX-DEVICE-MATCH")["causes"] if c["id"] == "ompi-device-check-defect")
    assert "4.0.6, 4.0.7 or 4.1.1" in text["text"]
    # "did not match transport list" is printed for tcp/sm resources on every healthy node: not a failure
    assert not any("did not match transport list" in r["format"] for r in doc["messages"])


def test_toolkit_imex_releases_are_read_from_the_code_and_quoted_by_the_cause():
    doc = _data("ctk_imex.json")
    assert doc["legacy_image_fails"] == ["1.17.0", "1.17.1"] and doc["first_fixed"] == "1.17.2"
    text = next(c for c in _host_entry("HOST-NVC-IMEX-CHANNELS")["causes"] if c["id"] == "ctk-legacy-image-imex-all")
    assert "1.17.0 or 1.17.1" in text["text"] and "1.17.2" in text["text"]


def test_every_name_resolution_gai_text_is_a_store_lookup_failure(sigs):
    doc = _data("gai_messages.json")
    assert doc["codes"] >= 17
    mapped = {r["code"] for r in doc["messages"] if "signatures" in r}
    assert mapped == {"EAI_NONAME", "EAI_AGAIN", "EAI_FAIL", "EAI_NODATA", "EAI_ADDRFAMILY"}
    for row in doc["messages"]:
        line = f"ValueError: host not found: {row['text']}"
        hit = any(p.search(line) for p in sigs["C10D-STORE-NAME-UNRESOLVED"].patterns)
        assert hit == (row["code"] in mapped), row["code"]


def test_generated_patterns_reach_hand_written_signatures_once():
    base = load_signatures()
    once = host_catalog.extend(base).by_id()["IBVERBS-SYMBOL-VERSION"]
    twice = host_catalog.extend(host_catalog.extend(base)).by_id()["IBVERBS-SYMBOL-VERSION"]
    assert len(once.patterns) > len(base.by_id()["IBVERBS-SYMBOL-VERSION"].patterns)
    assert [p.pattern for p in once.patterns] == [p.pattern for p in twice.patterns]


def test_generators_are_kept_and_say_how_to_rerun():
    root = Path(__file__).resolve().parents[2]
    for gen in (
        "tools/host/gen_ld_messages.py",
        "tools/host/gen_ctk_imex.py",
        "tools/host/gen_gai_messages.py",
        "tools/host/gen_kmod_messages.py",
        "tools/upstreams/gen_ucx_messages.py",
        "tools/upstreams/gen_ompi_ucx_messages.py",
    ):
        text = (root / gen).read_text()
        assert "_MIRROR=/work/.mirror/" in text, gen


def test_openib_without_a_connection_scheme_is_a_warning_and_its_verbose_reason_decides(tmp_path):
    """help-mpi-btl-openib-cpc-base.txt [no cpcs for port] (open-mpi/ompi#5789's banner) disables openib for the port:
    a warning alone; the CPCs' own verbose lines (btl_openib_connect_rdmacm.c / _udcm.c) say why."""
    banner = (Path(__file__).parent / "logs" / "ompi-5789-openib-no-cpcs.log").read_text().splitlines()
    log = tmp_path / "job.log"
    # the CPC query's verbose line (btl_base_verbose) is printed before the banner that sums it up
    log.write_text("\n".join(["openib BTL: rdmacm IP address not found on port", *banner]) + "\n")
    report = triage([str(log)])
    assert report.verdict == "advisory_only" and report.first_failure is None
    assert report.diagnoses[0].signature == "HOST-OMPI-OPENIB-NO-CPC"
    assert report.diagnoses[0].causes[0].id == "roce-port-rdmacm-needs-ip"
