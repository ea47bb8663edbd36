"""Multi-Instance GPU from the driver's capability files (never by running nvidia-smi).

The driver publishes one procfs capability per MIG GPU instance and compute instance:
/proc/driver/nvidia/capabilities/gpu<N>/mig/gi<G>/access and .../gi<G>/ci<C>/access (NVIDIA MIG user guide,
"Device Nodes and Capabilities"; created by the driver's nv-caps). A GPU with MIG enabled and no instance has no
gi directory: CUDA sees no device on it, as it sees none of a GPU whose instances are all created elsewhere, so the
probe counts instances, the thing that splits a GPU for CUDA.
"""

from __future__ import annotations

import re

from ..model.node import NodeMig
from .hostroot import HostReadError, HostRoot

CAPABILITIES = "/proc/driver/nvidia/capabilities"
_GPU = re.compile(r"^gpu\d+$")
_GI = re.compile(r"^gi\d+$")


def scan_mig(host: HostRoot, driver_loaded: bool, unknown: dict[str, str]) -> NodeMig:
    if not driver_loaded:
        return NodeMig(gpu_instances={})  # no driver: nothing is split (the GPU facts say why)
    if not host.is_dir(CAPABILITIES):
        unknown["mig.gpu_instances"] = f"{CAPABILITIES} is not visible under the probe root"
        return NodeMig()
    found: dict[str, int] = {}
    try:
        for gpu in sorted(host.listdir(CAPABILITIES)):
            if not _GPU.match(gpu) or not host.is_dir(f"{CAPABILITIES}/{gpu}/mig"):
                continue
            count = sum(1 for name in host.listdir(f"{CAPABILITIES}/{gpu}/mig") if _GI.match(name))
            if count:
                found[gpu] = count
    except HostReadError as exc:
        unknown["mig.gpu_instances"] = str(exc)
        return NodeMig()
    return NodeMig(gpu_instances=found)
