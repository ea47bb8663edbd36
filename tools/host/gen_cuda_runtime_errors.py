"""Generate src/imgcheck/data/triage/cuda_runtime_errors.json: every cudaError_t code with its name and the text
cudaGetErrorString prints, read from the CUDA runtime library itself (libcudart of each CUDA given), so a framework's
"CUDA error: <text>" / "Error <code>: <text>" line maps to its code and, through the driver catalog
(compat_matrix/catalogs/cuda_driver_errors.json, same numbers), to what it means at the image/host boundary.

    python tools/host/gen_cuda_runtime_errors.py 11.8=/path/libcudart.so.11.0 12.9=/path/libcudart.so.12 \
        13.0=/usr/local/cuda-13.0/lib64/libcudart.so.13

libcudart comes from the nvidia-cuda-runtime wheels on PyPI (pip download --no-deps, unzip) or a CUDA toolkit.
cudaGetErrorName/cudaGetErrorString are table look-ups: no GPU or driver is needed. Each library is read in its own
process (two libcudart in one process would clash).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/triage/cuda_runtime_errors.json"
MAX_CODE = 1100
_READ = """
import ctypes, json, sys
lib = ctypes.CDLL(sys.argv[1])
lib.cudaGetErrorName.restype = ctypes.c_char_p
lib.cudaGetErrorString.restype = ctypes.c_char_p
out = {}
for code in range(int(sys.argv[2])):
    name = lib.cudaGetErrorName(code).decode()
    if name.startswith("cuda"):
        out[code] = [name, lib.cudaGetErrorString(code).decode()]
print(json.dumps(out))
"""


def read(lib: str) -> dict[int, tuple[str, str]]:
    raw = subprocess.run([sys.executable, "-c", _READ, lib, str(MAX_CODE)], check=True, capture_output=True, text=True)
    return {int(k): (v[0], v[1]) for k, v in json.loads(raw.stdout).items()}


def main(argv: list[str]) -> None:
    rows: dict[int, dict] = {}
    read_from = []
    for arg in argv:
        cuda, _, lib = arg.partition("=")
        read_from.append(f"{cuda}: {Path(lib).name}")
        for code, (name, text) in sorted(read(lib).items()):
            row = rows.setdefault(
                code, {"code": code, "name": name, "texts": [], "first_cuda": cuda, "last_cuda": cuda}
            )
            row["last_cuda"] = cuda
            if text not in row["texts"]:
                row["texts"].append(text)
    doc = {
        "source": "cudaGetErrorName / cudaGetErrorString of libcudart (" + "; ".join(read_from) + "), read by "
        "tools/host/gen_cuda_runtime_errors.py",
        "confidence": "verified",
        "rows": [rows[c] for c in sorted(rows) if c != 0],
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{len(doc['rows'])} cudaError_t codes")


if __name__ == "__main__":
    main(sys.argv[1:])
