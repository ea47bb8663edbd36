"""Which image Env values a report may show: the ones the checks read; every other value is redacted.

An image's Env often carries tokens baked in at build time (a registry password, a cloud key);
reports travel further than the image (the webhook's /results, CI artifacts, chat), so they keep
the values that explain a finding and hide the rest. The names stay, so a reader still sees that
a variable is set.

Kept: the libraries' own settings (NCCL_*, UCX_*, CUDA_*, NVIDIA_*, Open MPI's OMPI_MCA_*, HPC-X,
rdma-core's RDMAV_*/IBV_*/MLX5_*, PyTorch's TORCH_NCCL_*), and search paths (PATH, LD_LIBRARY_PATH,
LD_PRELOAD and any *PATH). This is the set recommend/diff.py compares, plus path-like names.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: `inspect -o json` redacts Env without loading the report model
    from .image import ImageFacts
    from .report import Report

KEEP_PREFIXES = ("NCCL_", "UCX_", "CUDA_", "NVIDIA_", "OMPI_MCA_", "HPCX_", "RDMAV_", "IBV_", "MLX5_", "TORCH_NCCL_")
KEEP_NAMES = frozenset({"LD_PRELOAD"})
REDACTED = "<redacted>"


def keeps(name: str) -> bool:
    return name.startswith(KEEP_PREFIXES) or name in KEEP_NAMES or name.endswith("PATH")


def redact_env(env: Mapping[str, str]) -> dict[str, str]:
    return {k: (v if keeps(k) else REDACTED) for k, v in env.items()}


def redact_facts(facts: ImageFacts) -> ImageFacts:
    """ImageFacts with its Env redacted (a new frozen object; the checks ran on the original)."""
    return dataclasses.replace(facts, env=redact_env(facts.env))


def redact_report(report: Report) -> Report:
    return dataclasses.replace(report, image=redact_facts(report.image))


def redact_report_dict(doc: Any) -> Any:
    """The same on a report already serialised (`{"image": {"env": {...}}}`), e.g. one stored earlier."""
    if isinstance(doc, dict) and isinstance(doc.get("image"), dict) and isinstance(doc["image"].get("env"), dict):
        return {**doc, "image": {**doc["image"], "env": redact_env(doc["image"]["env"])}}
    return doc
