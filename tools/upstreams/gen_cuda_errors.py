"""Generate compat_matrix/catalogs/cuda_driver_errors.json: every CUresult code of the CUDA driver API with NVIDIA's
own description, from cuda.h as NVIDIA ships it in the nvidia-cuda-runtime wheels on PyPI, plus what the codes
that decide whether a container can use the GPU mean in a container (CONTAINER below, each with its source).

    python tools/upstreams/gen_cuda_errors.py nvidia-cuda-runtime-cu11==11.8.89 nvidia-cuda-runtime-cu12==12.9.79 \
        nvidia-cuda-runtime==13.5.37

Each wheel is fetched with `pip download --no-deps` (a few MB) into a temporary directory; cuda.h is read from it,
nothing is installed. first_cuda / last_cuda are the oldest / newest header read that defines the code.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/compat_matrix/catalogs/cuda_driver_errors.json"
ENUM = re.compile(r"typedef\s+enum\s+cudaError_enum\s*\{(.*?)\}\s*CUresult\s*;", re.S)
ITEM = re.compile(r"(/\*\*(.*?)\*/\s*)?(CUDA_(?:ERROR_\w+|SUCCESS))\s*=\s*(\d+)", re.S)
VERSION = re.compile(r"#define\s+CUDA_VERSION\s+(\d+)")
COMPAT = "https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html"
NIM = "https://docs.nvidia.com/nim/large-language-models/troubleshooting/cuda-driver.md"  # errors 802 and 803
CONTAINERS = "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html"

# code -> (what it means for a container, source). Only codes whose cause is the image/host boundary.
CONTAINER = {
    100: (
        "No GPU is visible to the process: the container runtime did not inject a GPU (no --gpus / "
        "NVIDIA_VISIBLE_DEVICES / device-plugin request), or CUDA_VISIBLE_DEVICES names none of the injected GPUs.",
        CONTAINERS,
    ),
    34: (
        "The libcuda.so the process loaded is the toolkit's stub (/usr/local/cuda/lib64/stubs): the host driver's "
        "libcuda was not mounted into the container, or LD_LIBRARY_PATH puts the stubs directory first.",
        "cuda.h CUDA_ERROR_STUB_LIBRARY",
    ),
    222: (
        "The image's code was built by a CUDA newer than the host driver supports (PTX the driver's JIT cannot "
        "read): upgrade the driver, use the image's forward-compatibility libcuda where the GPU allows it, or build "
        "for the host's CUDA.",
        "cuda.h CUDA_ERROR_UNSUPPORTED_PTX_VERSION; " + COMPAT,
    ),
    803: (
        "The libcuda the process loaded and the host's kernel driver are different versions: typically the image's "
        "forward-compatibility libcuda (/usr/local/cuda/compat) is loaded on a host whose driver is not a supported "
        "base for it, or a libcuda copied into the image does not match the host driver.",
        "cuda.h CUDA_ERROR_SYSTEM_DRIVER_MISMATCH; " + COMPAT + "; " + NIM,
    ),
    804: (
        "The image's forward-compatibility libcuda is loaded but the GPU does not support forward compatibility "
        "(it is for data-center GPUs and select NGC-ready RTX / Jetson only): drop /usr/local/cuda/compat from the "
        "library path on such GPUs, or upgrade the host driver.",
        "cuda.h CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE; " + COMPAT,
    ),
    802: (
        "The system is not ready for CUDA: a driver daemon the host needs is not running (on NVSwitch systems the "
        "Fabric Manager); a host service, not something an image can fix.",
        "cuda.h CUDA_ERROR_SYSTEM_NOT_READY; " + NIM,
    ),
    46: (
        "The GPU is busy or unavailable: in exclusive-process compute mode another process (possibly another "
        "container on the node) already holds it, or the GPU is prohibited.",
        "cuda.h CUDA_ERROR_DEVICE_UNAVAILABLE",
    ),
    801: (
        "The operation is not supported on this system/device: for the container boundary, e.g. a feature the "
        "forward-compatibility path does not provide, or one the host driver/GPU lacks.",
        "cuda.h CUDA_ERROR_NOT_SUPPORTED; " + COMPAT,
    ),
    999: (
        "An unknown internal error: the driver gives no reason. For a container, check what the engine checks "
        "(driver injected, device nodes present, driver vs image CUDA) before reading it as a code bug.",
        "cuda.h CUDA_ERROR_UNKNOWN",
    ),
}


def header(spec: str, tmp: str) -> tuple[str, str]:
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet", "--python-version",
         "3.11", "--platform", "manylinux_2_28_x86_64", "--platform", "manylinux2014_x86_64", "-d", tmp, spec],
        check=True,
    )  # fmt: skip
    name = spec.split("==")[0].replace("-", "_")
    wheel = next(p for p in Path(tmp).glob("*.whl") if p.name.startswith(name + "-"))
    with zipfile.ZipFile(wheel) as z:
        member = next(n for n in z.namelist() if n.endswith("include/cuda.h"))
        return z.read(member).decode("utf-8", "replace"), f"{wheel.name}:{member}"


def clean(doc: str) -> str:
    text = re.sub(r"^\s*\*\s?", "", doc, flags=re.M)
    text = re.sub(r"\\(ref|p|c)\s+", "", text)
    return re.sub(r"\s+", " ", text).strip()


def main(specs: list[str]) -> None:
    codes: dict[int, dict] = {}
    read = []
    with tempfile.TemporaryDirectory() as tmp:
        for spec in specs:
            text, where = header(spec, tmp)
            cuda = int(VERSION.search(text).group(1))  # type: ignore[union-attr]
            cuda_s = f"{cuda // 1000}.{cuda % 1000 // 10}"
            read.append(cuda_s)
            body = ENUM.search(text).group(1)  # type: ignore[union-attr]
            for m in ITEM.finditer(body):
                code = int(m.group(4))
                row = codes.setdefault(code, {"code": code, "name": m.group(3), "first_cuda": cuda_s})
                row.update(name=m.group(3), description=clean(m.group(2) or ""), last_cuda=cuda_s, header=where)
    rows = []
    for code in sorted(codes):
        r = codes[code]
        meaning, msrc = CONTAINER.get(code, (None, None))
        rows.append(
            {
                "code": r["code"],
                "name": r["name"],
                "description": r["description"] or None,
                "first_cuda": r["first_cuda"],
                "last_cuda": r["last_cuda"],
                "container_meaning": meaning,
                "source": f"PyPI {r['header']}" + (f"; {msrc}" if msrc else ""),
                "confidence": "verified" if meaning is None else "vendor-guidance",
                "note": None
                if meaning
                else "container_meaning null: the code's cause is not at the image/host boundary (or NVIDIA's text "
                "does not say it is); description is NVIDIA's",
            }
        )
    doc = {
        "table": "cuda_driver_errors",
        "description": "CUDA driver API error codes (CUresult) with NVIDIA's description from cuda.h in the "
        f"nvidia-cuda-runtime wheels (CUDA {', '.join(read)} read; first_cuda/last_cuda among those), and what the "
        "codes at the image/host boundary mean in a container; generated by tools/upstreams/gen_cuda_errors.py",
        "rows": rows,
    }
    OUT.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    print(len(rows), "codes", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
