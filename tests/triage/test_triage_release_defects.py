"""A failure in the log against the release knowledge of the NCCL that printed it (triage/release_defects.py)."""

from __future__ import annotations

import json
import os
import re

from imgcheck.knowledge import shipped
from imgcheck.triage import triage
from imgcheck.triage.release_defects import (
    CAUSE_ID,
    classes_of,
    matches,
    release_of,
    releases_at_site,
)

HERE = os.path.dirname(__file__)
CATALOGS = os.path.join(HERE, "..", "..", "compat_matrix", "catalogs")


def log(name: str) -> str:
    return os.path.join(HERE, "logs", name)


def test_a_cuda_failure_site_names_its_release_without_a_version_line():
    """vllm#19890's only line: enqueue.cc:1556 holds a CUDA check (CUCHECKGOTO around cuLaunchKernelEx) in NCCL
    2.26.2 alone (NVIDIA/nccl@v2.26.2-1:src/enqueue.cc:1556), so the wheel's release is known from the line."""
    line = "enqueue.cc:1556 NCCL WARN Cuda failure 700 'an illegal memory access was encountered'"
    assert releases_at_site(line) == ("2.26.2",)
    assert releases_at_site("init.cc:1 NCCL WARN Cuda failure 700 'x'") == ()  # no CUDA check on that line
    rel = release_of((), (line,))
    assert rel is not None and rel.versions == ("2.26.2",) and "enqueue.cc:1556" in rel.where
    # a version line wins over the site
    assert release_of(("2.21.5",), (line,)).versions == ("2.21.5",)  # type: ignore[union-attr]


def test_vllm_19890_names_a_later_fix_of_the_wheels_release_not_only_a_gpu_fault():
    r = triage([log("vllm-19890-nccl-wheel-illegal-access.log")])
    d = r.diagnoses[0]
    assert d.signature == "NCCL-CUDA-FAILURE"
    ids = [c.id for c in d.causes]
    assert ids[0] == "illegal-address"  # CUDA's semantics: a kernel's invalid access, reported by NCCL's next call
    defect = next(c for c in d.causes if c.id == CAUSE_ID)
    assert "NCCL 2.26.2" in defect.text
    # the release to try fixes the nearest matched row: later than the printed one (2.27.3's fixes are among them)
    to_try = re.search(r"NCCL (\d+\.\d+\.\d+) or newer", defect.next)
    assert to_try and tuple(map(int, to_try.group(1).split("."))) > (2, 26, 2)
    assert defect.status == "candidate"  # the fixes' own conditions are not shown by a log line
    assert any("2.27.3#" in b and "NVIDIA/nccl@" in b for b in defect.because)  # each row named with its source


def test_every_matched_row_is_fixed_after_the_release_and_of_the_symptoms_kind():
    """Enumerated, not sampled: for each release the check sites know, the rows matched for an illegal address are
    exactly the fixes released after it whose symptom class or text is that kind of failure."""
    notes = json.load(open(os.path.join(CATALOGS, "nccl_release_notes.json")))["rows"]
    classes = classes_of("NCCL-CUDA-FAILURE", "NCCL WARN Cuda failure 700 'an illegal memory access was encountered'")
    assert [c.id for c in classes] == ["illegal-address"]
    rel = release_of(("2.18.1",), ())
    assert rel is not None
    found = matches(shipped(), rel, classes, "")
    entries = {m.entry for m in found}
    from imgcheck.versions import ranges

    expected = {
        n["entry"]
        for n in notes
        if n["kind"] == "fix" and n["symptom"] in ("crash", "data-corruption") and ranges.below("2.18.1", n["release"])
    }
    # traced rows (nccl_fix_ranges) drop out when 2.18.1 is before their first affected release
    assert entries <= expected | {m.entry for m in found if m.first}
    assert "2.19.4#3" in entries  # 'segfault or CUDA illegal address in an all-to-all', 2.18.1..2.19.4
    first = next(m for m in found if m.entry == "2.19.4#3")
    # its own symptom names the illegal address and 2.18.1 is inside its traced range, so it leads the list; it still
    # needs a workload the log does not show (a rank sending to itself), so it is a candidate, never decided
    assert first.specific and first.inside is True and first.conditions and found[0].entry == "2.19.4#3"
    assert "2.9.9#1" not in entries  # its range ends before 2.18.1
    assert all(m.fixed is None or ranges.below("2.18.1", m.fixed) for m in found)


def test_a_watchdog_timeout_after_a_verbs_error_is_not_blamed_on_the_release():
    """deepspeed#2931: NCCL 2.14.3 predates a fix of an init hang, but the first failure is vendor err 129; the
    timeout that follows is a consequence and is not compared with the release's defects."""
    r = triage([log("deepspeed-2931-vendor129.log")])
    assert all(c.id != CAUSE_ID for d in r.diagnoses for c in d.causes)


def test_a_row_quoting_the_failing_lines_format_is_matched_without_a_symptom_class():
    """pytorch#177472's log (NCCL 2.29.3): torch re-prints NCCL's 'Failed to bind NVLink SHARP (NVLS) Multicast memory'
    WARN without its prefix. No symptom class covers a CUDA error from a multicast bind, but the known issue
    nvls_multicast_bind_fatal quotes that format (src/transport/nvls.cc, fatal from 2.29.2 on), so it is a candidate
    that says no release fixes it, with the conditions it still needs."""
    r = triage([log("pytorch-177472-nvls-bind.log")])
    d = r.diagnoses[0]
    defect = next(c for c in d.causes if c.id == CAUSE_ID)
    assert "nvls_multicast_bind_fatal" in defect.text and "no release fixes yet" in defect.text
    assert defect.status == "candidate"  # the row's conditions (NVLink board, many communicators) are not in a log
    # the same line printed by a release that still falls back (2.28.9) matches no row
    kb = shipped()
    line = "Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 2 'out of memory'."
    rel = release_of(("2.28.9",), ())
    assert rel is not None and not [m for m in matches(kb, rel, (), line) if m.entry == "nvls_multicast_bind_fatal"]
