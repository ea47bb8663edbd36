"""The fabric message catalog (data/triage/fabric_messages.json, tools/upstreams/gen_fabric_messages.py): every entry
loads, compiles and is unique; every format, printed with realistic values, is recognised with its component and site;
error codes are read from the source's tables; memory and host limits are never read as the fabric."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import pytest

from imgcheck.triage import fabric_catalog as fc
from imgcheck.triage.signatures import load_signatures

RAW = json.loads(resources.files("imgcheck.data.triage").joinpath("fabric_messages.json").read_text())
CONV = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?(?:hh|h|ll|l|L|z|j|t)?([diouxXsfgcpm%])")


def render(fmt: str) -> str:
    """The first line printf(fmt) prints, with plausible values (a pointer, a device index, a name)."""
    values = {
        "s": "rdmap16s27",
        "m": "Cannot allocate memory",
        "c": "x",
        "p": "0x7f08c0001d30",
        "f": "1.0",
        "g": "1",
        "x": "1f",
        "X": "1F",
        "%": "%",
    }
    return CONV.sub(lambda m: values.get(m.group(1), "3"), fmt.strip("\n").split("\n")[0])


def test_every_component_was_walked_release_by_release():
    comps = RAW["components"]
    assert set(comps) == {"libfabric", "aws-ofi-nccl", "ucx", "open-mpi", "prrte", "pmix"}
    for name, c in comps.items():
        assert len(c["releases"]) >= 4, name
        assert c["encoded"] == len(c["messages"]) > 100, name
        assert c["formats"] >= c["encoded"], name


def test_entries_compile_and_are_unique():
    seen = set()
    for name, c in RAW["components"].items():
        for m in c["messages"]:
            re.compile(m["regex"])
            key = (name, m["level"], m["format"])
            assert key not in seen, key
            seen.add(key)
            assert m["first"] in c["releases"] and m["last"] in c["releases"]
            assert m["sites"] and all(len(s) == 4 for s in m["sites"])


def test_condition_classes_name_packaged_signatures():
    sigs = load_signatures().by_id()
    for klass, sid in fc.CLASS_SIGNATURE.items():
        assert sid in sigs and sigs[sid].derived == "fabric_catalog", klass
    derived = {s for s, sig in sigs.items() if sig.derived == "fabric_catalog"}
    assert derived == set(fc.CLASS_SIGNATURE.values())
    classes = {m["class"] for c in RAW["components"].values() for m in c["messages"]}
    assert classes <= set(fc.CLASS_SIGNATURE) | {"other", "registration", "no-provider"}


@pytest.mark.parametrize("component", ["libfabric", "aws-ofi-nccl", "ucx", "open-mpi", "prrte", "pmix"])
def test_every_format_rendered_is_recognised(component):
    prefix = {
        "libfabric": "libfabric:12:1700000000::efa:core:some_function():42<warn> ",
        "aws-ofi-nccl": "ip-10-0-0-1:199:263 [2] some_function:42 NCCL WARN NET/OFI ",
        "ucx": "[1700000000.1] [node1:12:0]   rc_iface.c:42  UCX  ERROR ",
    }
    missed = []
    for m in RAW["components"][component]["messages"]:
        if m["level"] in ("stderr", "banner", "check") or m["format"].startswith("configure: "):
            line = render(m["format"])
        elif m["level"] == "fatal":  # ucs_fatal: "<file>:<line> Fatal: <message>"
            line = "[1700000000.1] [node1:12:0]   ud_ep.c:296  Fatal: " + render(m["format"])
        elif component == "libfabric" and m["level"] == "info":
            line = prefix[component].replace("<warn>", "<info>") + render(m["format"])
        elif component == "aws-ofi-nccl" and m["level"] == "info":
            line = prefix[component].replace("WARN", "INFO") + render(m["format"])
        else:
            line = prefix[component] + render(m["format"])
        found = fc.recognise(line)
        if found is None or found.message is None:
            missed.append(m["format"])
    assert not missed, missed[:5]


def test_a_line_names_its_own_site_and_release_range():
    # the exact format string of libfabric's EFA provider, rendered as its logger prints it (src/log.c)
    line = "libfabric:7:1700000000::efa:ep_data:efa_device_construct_gid():47<warn> ibv_open_device failed! errno: 2"
    found = fc.recognise(line)
    assert found is not None and found.by_site
    assert found.site == "prov/efa/src/efa_device.c:47" and found.component == "libfabric"
    assert found.klass == "device-access" and found.signature == "FABRIC-DEVICE-OPEN"
    assert [e.name for e in found.errnos] == ["ENOENT"]
    assert "ibv_open_device() failed" in found.words()


def test_memory_beats_every_other_condition():
    # an address-vector insert (a peer condition by its words) that failed with ENOMEM is a host limit
    line = (
        "host:1:2 [0] f:9 NCCL WARN NET/OFI Unable to insert remote address into address vector for device 0. RC: -12"
    )
    found = fc.recognise(line)
    assert found is not None and found.klass == "host-memory"
    same_without = fc.recognise(line.replace("RC: -12", "RC: -113"))
    assert same_without is not None and same_without.klass == "peer-unreachable"


def test_error_codes_come_from_the_source_tables():
    cat = fc.load()
    assert cat.fi[261] == ("FI_ENOEQ", "Missing or unavailable event queue")  # fi_errno.h / fabric.c
    assert cat.system[61][0] == "ENODATA" and cat.system[12][0] == "ENOMEM"
    name, texts, site = cat.efa[4126]
    assert name == "UNESTABLISHED_RECV_UNRESP" and site.startswith("prov/efa/src/efa_errno.h:")
    errs = fc.errnos_in("fi_getinfo: -61 (No data available)", cat)
    assert [e.name for e in errs] == ["ENODATA"]
    for code in (4124, 4126, 13, 15):  # unresponsive / unreachable remote: the peer path
        found = fc.recognise(f"EFA internal error: ({code}) {cat.efa[code][1][-1]}")
        assert found is not None and found.klass == "peer-unreachable", code


def test_info_lines_and_passing_checks_are_not_failures():
    info = fc.recognise(
        "host:1:2 [0] NCCL INFO NET/OFI Unable to find a protocol that worked.  Failing initialization."
    )
    assert info is None or info.informational or info.signature is None
    assert fc.recognise("checking for ibv_get_device_list in -libverbs... yes") is None or (
        fc.recognise("checking for ibv_get_device_list in -libverbs... yes").signature is None
    )
    yes = fc.recognise("configure:           IB modules:   < ib rdmacm >")
    assert yes is None or yes.signature is None
    empty = fc.recognise("configure:           IB modules:   < >")
    assert empty is not None and empty.signature == "FABRIC-BUILD-NO-TRANSPORT"
    assert fc.recognise("Epoch 3: loss 0.12, lr 1e-4") is None


def test_a_banner_the_job_survives_is_context_not_a_failure():
    # help-mpi-btl-base.txt [btl:no-nics]: "Another transport will be used instead" (the job goes on)
    survive = fc.recognise("[[8641,0],1]: A high-performance Open MPI point-to-point messaging module")
    assert survive is not None and survive.informational
    fatal = fc.recognise("At least one pair of MPI processes are unable to reach each other for")
    assert fatal is not None and not fatal.informational and fatal.signature == "FABRIC-NO-TRANSPORT"
    assert fatal.site is not None and fatal.site.endswith("help-mca-bml-r2.txt:22")


def test_notes_put_the_limiting_condition_first():
    seen: dict[str, list] = {}
    fc.observe(seen, "libfabric:1:1::efa:core:f():1<warn> fi_getinfo: provider efa output empty list")
    # aws/aws-ofi-nccl#107, verbatim
    fc.observe(
        seen,
        "[0]:Unable to write to EQ: Missing or unavailable event queue. err: Unknown error -12 (-12) prov_errno: "
        "Unknown error -12 (-12) prov/efa/src/rxr/rxr.h:993",
    )
    notes = fc.notes(seen)
    assert "ENOMEM" in notes[0] and "not the fabric" in notes[0]
    for _ in range(fc.KEEP + 5):  # bounded whatever the log holds
        fc.observe(seen, "libfabric:1:1::efa:core:f():1<warn> fi_getinfo: provider efa output empty list")
    assert len(seen) <= fc.KEEP


def test_a_signature_file_without_the_fabric_signatures_still_names_the_lines(tmp_path):
    # --signatures FILE of an older schema user: the catalog still names the line; nothing is counted as a
    # signature the file does not have
    from imgcheck.triage.api import triage

    doc = json.loads(resources.files("imgcheck.data.triage").joinpath("signatures.json").read_text())
    doc["signatures"] = [s for s in doc["signatures"] if s.get("derived") != "fabric_catalog"]
    path = tmp_path / "sigs.json"
    path.write_text(json.dumps(doc))
    log = str(Path(__file__).parent / "logs" / "libfabric-12708-efa-open-device.log")  # ofiwg/libfabric#12708
    report = triage([log], signatures=str(path))
    assert report.first_failure is not None and report.first_failure.signature == "EFA-NO-DEVICE"
    assert any("efa_device_construct_gid" in n and "ENOENT" in n for n in report.notes)


def test_ucx_status_texts_are_read_like_errno_values(tmp_path):
    from imgcheck.triage.api import triage

    # the exact format of src/ucp/rma/flush.c ("error during flush: %s") with ucs_status_string's text
    line = "[1700000000.123] [node1:12:0]        flush.c:21   UCX  ERROR error during flush: %s"
    gone = fc.recognise(line % "Connection reset by remote peer")
    assert gone is not None and gone.klass == "peer-gone" and gone.errnos[0].name == "UCS_ERR_CONNECTION_RESET"
    memory = fc.recognise(line % "Out of memory")
    assert memory is not None and memory.klass == "host-memory"
    log = tmp_path / "rank1.log"
    log.write_text(line % "Connection reset by remote peer" + "\n")
    report = triage([str(log)])
    # a victim of its peer: the peer-gone condition explains UCX's generic error on the same line
    assert report.first_failure is not None and report.first_failure.signature == "FABRIC-PEER-GONE"
    assert report.diagnoses[0].causes[0].id == "peer-oom-killed"


def test_a_line_from_another_copy_of_libfabric_is_said_to_be():
    # ofiwg/libfabric#12708's line names efa_device_construct_gid():47, a site of the 2.5/2.6 series only
    line = "libfabric:...:efa:ep_data:efa_device_construct_gid():47<warn> ibv_open_device failed! errno: 2"
    seen: dict[str, list] = {}
    fc.observe(seen, line)
    (found, _count) = next(iter(seen.values()))
    assert fc.other_copy(found, "2.6.0") is None  # the image's own copy fits
    assert fc.other_copy(found, None) is None  # unknown version: no claim
    note = fc.other_copy(found, "1.22.0amzn4.0")  # an EFA installer's vendor build of an older series
    assert note is not None and "/opt/amazon/efa" in note
    assert any("not the image's libfabric 1.22.0amzn4.0" in n for n in fc.notes(seen, {"libfabric": "1.22.0amzn4.0"}))
