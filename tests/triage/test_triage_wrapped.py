"""Messages wrapped over several lines by a terminal or an issue tracker are read rejoined (scan.feed_seam)."""

from __future__ import annotations

import io
from pathlib import Path

from imgcheck.triage import host_catalog
from imgcheck.triage.scan import Scanner
from imgcheck.triage.signatures import load_signatures

LOGS = Path(__file__).parent / "logs"
# NVIDIA/nvidia-docker#825 as the thread shows it: wrapped at a fixed width inside "nvidia-container-cli: m|ount"
WRAPPED = LOGS / "d7f-nvidia-docker-825-wrapped-file-exists.log"
_SIGSET = host_catalog.extend(load_signatures())  # as triage reads: the catalogs' signatures too


def _sigs(text: str) -> dict[str, list[int]]:
    sc = Scanner(_SIGSET)
    sc.feed_stream("f", io.StringIO(text))
    out: dict[str, list[int]] = {}
    for ev in sc.result.events:
        out.setdefault(ev.signature, []).append(ev.line.lineno)
    return out


def test_message_cut_inside_a_word_is_matched_on_the_continuation_line():
    sigs = _sigs(WRAPPED.read_text(encoding="utf-8"))
    assert sigs.get("HOST-NVC-MOUNT-FILE-EXISTS") == [4]
    assert "HOST-NVC-OTHER-ERROR" not in sigs  # the file-exists form is named, not the catch-all


def test_unwrapped_message_is_counted_once():
    one = "".join(WRAPPED.read_text(encoding="utf-8").splitlines()) + "\n"
    assert _sigs(one).get("HOST-NVC-MOUNT-FILE-EXISTS") == [1]


def test_a_line_with_its_own_prefix_is_no_continuation():
    lines = WRAPPED.read_text(encoding="utf-8").splitlines()
    # the fourth line given a launcher label of its own is a new line of another writer, not the rest of the third
    relabelled = "\n".join([*lines[:3], "[1,0]<stderr>:" + lines[3]]) + "\n"
    assert "HOST-NVC-MOUNT-FILE-EXISTS" not in _sigs(relabelled)


def test_tracker_wrap_at_a_space_is_rejoined_with_the_space():
    text = WRAPPED.read_text(encoding="utf-8").replace("\n", "")
    cut = text.index("file exists") + len("file")
    wrapped = text[:cut] + "\n" + text[cut + 1 :] + "\n"  # the tracker broke the line at the space and dropped it
    assert _sigs(wrapped).get("HOST-NVC-MOUNT-FILE-EXISTS") == [2]


def test_a_wrapped_message_quoted_in_a_reply_is_rejoined():
    quoted = "".join("> " + ln + "\n" for ln in WRAPPED.read_text(encoding="utf-8").splitlines())
    assert _sigs(quoted).get("HOST-NVC-MOUNT-FILE-EXISTS") == [4]
