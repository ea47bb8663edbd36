"""Print, or with --write record, the content digests that `version` in compat_matrix/matrix.json and in
src/imgcheck/data/triage/signatures.json stand for.

    python tools/fingerprints.py            # print them, and whether each file records the current one
    python tools/fingerprints.py --write    # after bumping `version`: record them

A change to the matrix rows or to the triage data needs a new `version` (it is in every report and triage
result); tests/test_matrix.py and tests/triage/test_data_version.py fail until the digest is recorded, which is
the moment to bump. The digests leave out only the `version`/`content_digest` fields themselves.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

from imgcheck.matrix.files import MANIFEST, content_digest, read_tree  # noqa: E402
from imgcheck.triage.signatures import SIGNATURES_FILE, triage_data_digest  # noqa: E402

MATRIX = os.path.join(ROOT, "compat_matrix")
TRIAGE = os.path.join(ROOT, "src", "imgcheck", "data", "triage")


def _record(path: str, digest: str, write: bool) -> None:
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    doc = json.loads(text)
    state = "recorded" if doc.get("content_digest") == digest else "NOT recorded"
    print(f"{os.path.relpath(path, ROOT)}: version {doc.get('version')}, content {digest} ({state})")
    if write and state != "recorded":
        # an edit of the one line, not a re-dump: the files keep their own layout
        line = f'"content_digest": "{digest}",'
        if "content_digest" in doc:
            text = re.sub(r'"content_digest": "[^"]*",', line, text, count=1)
        else:
            text = re.sub(
                r'(\n(\s*)"version": "[^"]*",)', lambda m: m.group(1) + "\n" + m.group(2) + line, text, count=1
            )
        with open(path + ".tmp", "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(path + ".tmp", path)
        print("  written")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="record the current digests (bump `version` first)")
    args = ap.parse_args()
    _record(os.path.join(MATRIX, MANIFEST), content_digest(read_tree(MATRIX)), args.write)
    _record(os.path.join(TRIAGE, SIGNATURES_FILE), triage_data_digest(read_tree(TRIAGE)), args.write)


if __name__ == "__main__":
    main()
