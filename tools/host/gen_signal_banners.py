"""Generate src/imgcheck/data/triage/signal_banners.json: the banners a process killed by a signal leaves in a job
log, for every fatal signal, in each form the stack prints (Open MPI's backtrace handler, UCX's, Python's
faulthandler, the shell's job report), with the triage signature that names the signal's cause class.

    OMPI_MIRROR=/work/.mirror/open-mpi+ompi/repo UCX_MIRROR=/work/.mirror/openucx+ucx/repo \
        python tools/host/gen_signal_banners.py

Signal texts are glibc's strsignal() (Python's signal.strsignal on the generator's host), which all of these print.
The Open MPI and UCX formats are checked in their sources (the generator stops if a format is gone); faulthandler's
and bash's are quoted from their sources (cpython Modules/faulthandler.c faulthandler_handlers; bash jobs.c:
"(core dumped)" after strsignal) as they are not mirrored here.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/triage/signal_banners.json"
OMPI = os.environ.get("OMPI_MIRROR", "/work/.mirror/open-mpi+ompi/repo")
UCX = os.environ.get("UCX_MIRROR", "/work/.mirror/openucx+ucx/repo")
# signal -> signature naming its cause class; None: RANK-CRASH / HOST-OOM-KILL (hand-written) name it already
SIGNALS: dict[str, str | None] = {
    "SIGABRT": "PROCESS-SIGNAL-ABRT",
    "SIGILL": "PROCESS-SIGNAL-ILL",
    "SIGFPE": "PROCESS-SIGNAL-FPE",
    "SIGSEGV": None,
    "SIGBUS": None,
    "SIGKILL": None,
}
# (form id, source, where verified, regex template with {num} and {text})
FORMS = (
    (
        "ompi-stacktrace",
        "open-mpi/ompi opal/util/stacktrace.c",
        (OMPI, "opal/util/stacktrace.c", "Signal: %s (%d)"),
        r"\] Signal: {text} \({num}\)",
    ),
    (
        "ucx-debug",
        "openucx/ucx src/ucs/debug/debug.c",
        (UCX, "src/ucs/debug/debug.c", "Caught signal %d ("),
        r"Caught signal {num} \({text}[:)]",
    ),
    (
        "faulthandler",
        "python/cpython Modules/faulthandler.c (faulthandler_handlers)",
        None,
        r"Fatal Python error: {text}\b",
    ),
    ("shell-job", "GNU bash jobs.c (strsignal + ' (core dumped)')", None, r"(?:^|\s){text} \(core dumped\)"),
    (
        "glog-failure-handler",
        "google/glog src/signalhandler.cc (FailureSignalHandler: '*** SIGSEGV (@0x...) received "
        "by PID N (TID ...) ...; stack trace: ***')",
        None,
        r"\*\*\* {name} \(@0x[0-9a-fA-F]+\) received by PID \d+",
    ),
    (
        "torchrun-summary",
        "pytorch/pytorch torch/distributed/elastic/multiprocessing/errors/__init__.py (ProcessFailure: "
        "'Signal N (SIGNAME) received by PID P' as the child's traceback)",
        None,
        r"Signal {num} \({name}\) received by PID \d+",
    ),
)
# faulthandler spells two texts its own way
FAULTHANDLER_TEXT = {"SIGFPE": "Floating-point exception"}


def newest_tag(repo: str, pattern: str) -> str:
    tags = [
        t
        for t in subprocess.run(["git", "-C", repo, "tag"], capture_output=True, text=True).stdout.split()
        if re.match(pattern, t)
    ]
    return sorted(tags, key=lambda t: [int(x) for x in re.findall(r"\d+", t)])[-1]


def main() -> None:
    verified = {}
    for form, _src, check, _rx in FORMS:
        if check is None:
            continue
        repo, path, literal = check
        tag = newest_tag(repo, r"^v\d+\.\d+\.\d+$")
        text = subprocess.run(["git", "-C", repo, "show", f"{tag}:{path}"], capture_output=True, text=True).stdout
        if literal not in text:
            raise SystemExit(f"{repo}@{tag}:{path}: '{literal}' not found: update FORMS")
        verified[form] = f"{os.path.basename(os.path.dirname(repo))}@{tag}:{path}"
    rows = []
    for name, sig in SIGNALS.items():
        num = int(getattr(signal, name))
        text = signal.strsignal(num) or name
        for form, src, _check, rx in FORMS:
            shown = FAULTHANDLER_TEXT.get(name, text) if form == "faulthandler" else text
            rows.append(
                {
                    "signal": name,
                    "number": num,
                    "text": shown,
                    "form": form,
                    "source": verified.get(form, src),
                    "regex": rx.format(num=num, text=re.escape(shown), name=name),
                    "signature": sig,
                }
            )
    doc = {
        "source": "glibc strsignal texts; banner formats of Open MPI, UCX (checked in the mirrors), CPython's "
        "faulthandler and bash; read by tools/host/gen_signal_banners.py",
        "confidence": "verified",
        "messages": rows,
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{len(rows)} banners: {len(SIGNALS)} signals x {len(FORMS)} forms")


if __name__ == "__main__":
    main()
