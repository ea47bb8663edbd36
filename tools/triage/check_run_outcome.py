"""Check the nccl-tests markers of src/imgcheck/data/triage/run_outcome.json against nccl-tests itself.

    python tools/triage/check_run_outcome.py [--mirror /work/.mirror/NVIDIA+nccl-tests/repo]

Walks every release tag of the nccl-tests snapshot (the `fetch` tool brings it) and finds, in every PRINT under
src/, the print formats the markers read: the end-of-run summary (`Out of bounds values`, `Avg bus
bandwidth`, `Collective test concluded`) and the result-row preamble (`%12li  %12li  %8s  %6s  %6s` or the older
forms). It prints, per format, the first and last tag that prints it and the tags that do not; a marker whose
format no tag prints, or a new tag whose summary changed, fails (exit 1). Nothing is generated: the markers are
few and hand-written, this keeps them honest for each new release.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys

FORMATS = {
    "nccl-tests-out-of-bounds-ok": re.compile(r"Out of bounds values"),
    "nccl-tests-avg-bus-bandwidth": re.compile(r"Avg bus bandwidth"),
    "nccl-tests-concluded": re.compile(r"Collective test concluded: %s"),
    "nccl-tests-result-row": re.compile(r'PRINT\("%12li +%12li +%\d+s'),
}
OPTIONAL = {"nccl-tests-concluded"}  # added in a later release; older tags end at the bandwidth line


def _git(mirror: str, *args: str) -> str:
    return subprocess.run(["git", "-C", mirror, *args], capture_output=True, text=True, check=False).stdout


def _version(tag: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", tag))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror", default="/work/.mirror/NVIDIA+nccl-tests/repo")
    args = ap.parse_args()
    tags = sorted((t for t in _git(args.mirror, "tag").split() if re.match(r"v\d", t)), key=_version)
    if not tags:
        print(f"{args.mirror}: no release tags (fetch github:NVIDIA/nccl-tests first)", file=sys.stderr)
        return 2
    seen: dict[str, list[str]] = {k: [] for k in FORMATS}
    for tag in tags:
        text = _git(args.mirror, "grep", "-h", "PRINT", tag, "--", "src")  # every test's own PRINTs too
        for key, rx in FORMATS.items():
            if rx.search(text):
                seen[key].append(tag)
    bad = False
    for key, have in seen.items():
        missing = [t for t in tags if t not in have]
        first, last = (have[0], have[-1]) if have else ("-", "-")
        print(
            f"{key}: printed by {len(have)}/{len(tags)} tags ({first}..{last}); not by: {', '.join(missing) or 'none'}"
        )
        if not have or (key not in OPTIONAL and have[-1] != tags[-1]):
            bad = True
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
