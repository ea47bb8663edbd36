"""Add to compat_matrix/catalogs/torch_wheels.json the NCCL wheel each PyPI torch release pins, read from the wheel's
METADATA Requires-Dist by pip's resolver (PEP 658 metadata only: `pip install --dry-run --no-deps --report`, nothing
is downloaded or installed). Rows already in the table are kept as they are.

    python tools/upstreams/gen_torch_wheels.py 2.11.0 2.12.0 ...      # the releases to add

The x86_64 Linux wheel for CPython 3.11 is read (PyPI's default torch wheel is the CUDA build on Linux).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

PYPI = "https://pypi.org/simple"
OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/compat_matrix/catalogs/torch_wheels.json"
# "nvidia-nccl-cu11 (==2.14.3)" in older METADATA, "nvidia-nccl-cu13==2.28.9" later
NCCL = re.compile(r"^(nvidia-nccl-cu\d+|nvidia-nccl)\s*\(?\s*==\s*([0-9.]+)")
CUDART = re.compile(r"^(nvidia-cuda-runtime-cu\d+|nvidia-cuda-runtime)\s*\(?\s*==\s*([0-9.]+)")
# CUDA 13 builds pin the runtime through NVIDIA's meta package: cuda-toolkit[...,cudart,...]==13.0.2
TOOLKIT = re.compile(r"^cuda-toolkit\[[^\]]*\bcudart\b[^\]]*\]\s*==\s*([0-9.]+)")


def pins(version: str) -> dict[str, str | None]:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "r.json"
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--ignore-installed", "--quiet",
             "--only-binary=:all:", "--python-version", "3.11", "--platform", "manylinux_2_28_x86_64", "--platform", "manylinux_2_17_x86_64", "--platform", "manylinux2014_x86_64", "--platform", "manylinux1_x86_64",
             "--target", tmp, "--report", str(report), f"torch=={version}"],
            check=True,
            # PyPI only: a local wheel directory in the pip configuration (a +cpu build) must not answer
            env={**os.environ, "PIP_CONFIG_FILE": os.devnull, "PIP_FIND_LINKS": "", "PIP_INDEX_URL": PYPI},
        )  # fmt: skip
        meta = json.loads(report.read_text())["install"][0]["metadata"]
    found: dict[str, str | None] = {"nccl_pip_package": None, "nccl": None, "cuda_runtime": None}
    for req in meta.get("requires_dist", []):
        spec = req.split(";")[0].strip()
        if m := NCCL.match(spec):
            found["nccl_pip_package"], found["nccl"] = m.groups()
        elif m := CUDART.match(spec):
            found["cuda_runtime"] = m.group(2)
        elif m := TOOLKIT.match(spec):
            found["cuda_runtime"] = m.group(1)
    return found


def main(versions: list[str]) -> None:
    doc = json.loads(OUT.read_text())
    have = {r["torch"] for r in doc["rows"]}
    for v in versions:
        if v in have:
            continue
        p = pins(v)
        why = []
        if p["nccl"] is None:
            why.append("the wheel's Requires-Dist names no nvidia-nccl wheel (NCCL linked into libtorch, or none)")
        if p["cuda_runtime"] is None:
            why.append("no nvidia-cuda-runtime pin in Requires-Dist")
        elif p["nccl_pip_package"] and p["nccl_pip_package"].endswith("cu13"):
            why.append(
                "cuda_runtime is the cuda-toolkit[cudart] meta-package pin (CUDA 13 wheels), not a runtime wheel's own version"
            )
        doc["rows"].append(
            {
                "torch": v,
                **p,
                "source": f"https://pypi.org/project/torch/{v}/",
                "confidence": "verified",
                "note": "; ".join(why) or None,
            }
        )
        print(v, p, file=sys.stderr)
    doc["rows"].sort(key=lambda r: tuple(int(x) for x in re.findall(r"\d+", r["torch"])))
    OUT.write_text(_dump(doc))


def _dump(doc: dict) -> str:
    """The table's own layout: one row per line."""
    head = {k: v for k, v in doc.items() if k != "rows"}
    body = ",\n".join("  " + json.dumps(r, ensure_ascii=False) for r in doc["rows"])
    text = json.dumps(head, indent=1, ensure_ascii=False)[:-2]
    return text + ',\n "rows": [\n' + body + "\n ]\n}\n"


if __name__ == "__main__":
    main(sys.argv[1:])
