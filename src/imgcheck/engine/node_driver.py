"""The host's user-space NVIDIA driver against the loaded kernel module: they must be the same build.

A node fact (the container toolkit mounts the host's libraries into every GPU container), so it runs in
`imgcheck node check` and, for an image that uses the GPU, in `imgcheck check`.
"""

from __future__ import annotations

from collections.abc import Iterator

from . import facts
from .context import Ctx
from .emit import Outcome, finding
from .node_only import node_only

RULES = ("NODE-DRIVER-USERSPACE-MISMATCH",)
# The facts each rule needs present (absent: the rule does not apply) and the further facts it reads;
# silence with one of them unknown is reported as unknown (engine/contract.py).
REQUIRES = {
    "NODE-DRIVER-USERSPACE-MISMATCH": (facts.GPU_WORKLOAD,),
}
READS = {
    "NODE-DRIVER-USERSPACE-MISMATCH": (facts.GPU_WORKLOAD, facts.GPU_DRIVER),
}


def check(ctx: Ctx) -> Iterator[Outcome]:
    if not (node_only(ctx) or ctx.gpu_image):
        return  # a CPU-only container never opens the driver
    gpu = ctx.node.gpu
    module, userspace = gpu.driver_version, gpu.userspace_driver_version
    if not module or not userspace or module == userspace:
        return  # nothing to compare (an unknown side is in node.unknown already), or one build: fine
    yield finding(
        ctx.matrix,
        RULES[0],
        [ctx.node_ev("gpu.driver_version", module), ctx.node_ev("gpu.userspace_driver_version", userspace)],
        module_version=module,
        userspace_version=userspace,
        userspace_path=gpu.userspace_driver_path,
    )
