"""Control characters, ANSI escapes and Rich markup in image data never reach a report raw.

An Env value or file name holding ESC sequences could recolour or erase a terminal's earlier
lines, and a '\\r' or '\\n' could forge a report line ("OK"); '[red]' must print as '[red]', and
an unmatched '[/ib0]' (a plausible NCCL_IB_HCA value) must not crash Rich.
"""

from __future__ import annotations

import dataclasses
import re

from formats_sample import bookworm_facts, sample_report
from hypothesis import given, settings
from hypothesis import strategies as st

from imgcheck.formats.facts_table import render_facts_table
from imgcheck.formats.markdown import render_markdown
from imgcheck.formats.report_table import render_table
from imgcheck.formats.safe_text import printable
from imgcheck.model.location import Location
from imgcheck.model.report import Evidence

HOSTILE = "mlx5_0:1\x1b[2J\x1b[1A\rOK all clear\n[red]boom[/red] [/ib0] \u202eevil\x07\x9b31m"
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def hostile_report():
    report = sample_report()
    finding = report.findings[0]
    evidence = finding.evidence + (
        Evidence(fact="env.NCCL_IB_HCA", value=HOSTILE, location=Location.file("/etc/\x1b]0;pwn\x07x")),
        # a hand-written node facts file names its own origins
        Evidence(fact="node.rdma.stack", value="inbox", location=Location.described("node facts file " + HOSTILE)),
    )
    finding = dataclasses.replace(
        finding, evidence=evidence, title=finding.title + HOSTILE, predicted_error="line one\n" + HOSTILE
    )
    image = dataclasses.replace(report.image, reference="img\x1b[31m:[bold]x")
    return dataclasses.replace(report, findings=(finding,) + report.findings[1:], image=image)


def _no_raw_controls(text: str) -> None:
    assert not CONTROL.search(text), repr(CONTROL.search(text).group(0))


def test_table_report_escapes_controls_and_markup():
    for color, verbose in ((False, False), (True, False), (False, True)):  # verbose: evidence paths and origins
        out = render_table(hostile_report(), color=color, verbose=verbose)
        plain = re.sub(r"\x1b\[[0-9;]*m", "", out) if color else out  # Rich's own styling only
        _no_raw_controls(plain)
        assert "[red]boom[/red] [/ib0]" in plain and "\\x1b[2J" in plain
        assert not any(line.strip().startswith("OK all clear") for line in plain.splitlines())


def test_markdown_report_escapes_controls():
    out = render_markdown(hostile_report())
    _no_raw_controls(out)
    assert "\\x1b" in out and "\\u202e" in out
    assert not any(line.startswith("OK all clear") for line in out.splitlines())


def test_facts_table_env_value_is_literal():
    facts = dataclasses.replace(
        bookworm_facts("ref[/ib0]\x1b[31m"), env={"NCCL_IB_HCA": HOSTILE}, notes=("note \x1b[2J[bold]",)
    )
    for color in (False, True):
        out = render_facts_table(facts, color=color)
        plain = re.sub(r"\x1b\[[0-9;]*m", "", out) if color else out
        _no_raw_controls(plain)
        assert "[/ib0]" in plain and "[red]boom[/red]" in plain


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(alphabet=st.characters(max_codepoint=0x2070), max_size=40))
def test_fuzz_printable_and_table(text):
    assert not CONTROL.search(printable(text)) and "\n" not in printable(text)
    facts = dataclasses.replace(bookworm_facts(), env={"NCCL_SOCKET_IFNAME": text})
    _no_raw_controls(render_facts_table(facts, color=False))
