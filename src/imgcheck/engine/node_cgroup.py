"""Device cgroups that systemd re-applies (node/device_cgroup.py).

With the systemd cgroup driver runc turns a container's device rules into DeviceAllow= properties of the container's
scope unit, naming each device by /dev/char/<major>:<minor>. systemd re-applies a unit's properties on `systemctl
daemon-reload` (and on unit changes), and a DeviceAllow= path that does not exist is dropped: the NVIDIA device nodes
have no /dev/char links of their own, so a running GPU container loses /dev/nvidia* and NVML fails ("Failed to
initialize NVML: Unknown Error"). NVIDIA's fix is the links (`nvidia-ctk system create-dev-char-symlinks --create-all`,
from NVIDIA/nvidia-container-toolkit@v1.12.0, run by a udev rule or the GPU Operator); with the cgroupfs driver nothing
re-applies the rules.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..node.device_cgroup import CGROUPFS, SYSTEMD
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, decided, finding, unknown

SYSTEMD_DEVICES = "NODE-SYSTEMD-DEVICE-CGROUP"
_GPU_VAR = "NVIDIA_VISIBLE_DEVICES"


def _driver(ctx: Ctx, runtime: str) -> tuple[str | None, str, str]:
    """(the cgroup driver runc runs under for this runtime, the fact it comes from, the fact's key)."""
    state = ctx.node.state
    if runtime == "docker":
        return state.docker_cgroup_driver, "Docker's cgroup driver", "state.docker_cgroup_driver"
    flag = state.containerd_systemd_cgroup
    value = None if flag is None else (SYSTEMD if flag else CGROUPFS)
    return value, "containerd's runc SystemdCgroup", "state.containerd_systemd_cgroup"


@rule(
    SYSTEMD_DEVICES,
    reads=(facts.DOCKER_CGROUP_DRIVER, facts.CONTAINERD_SYSTEMD_CGROUP, facts.NVIDIA_CHAR_LINKS),
)
def systemd_device_cgroup(ctx: Ctx) -> Iterator[Outcome]:
    """A GPU container under runc's systemd cgroup driver keeps its /dev/nvidia* only while systemd does not re-apply
    its device rules, unless /dev/char links name the NVIDIA devices."""
    job = ctx.job
    if job is None or job.runtime not in ("docker", "kubernetes"):
        yield decided(SYSTEMD_DEVICES, "the job is not a runc container started by Docker or Kubernetes")
        return
    if not (job.gpus or job.env_value(_GPU_VAR)):
        yield decided(SYSTEMD_DEVICES, f"{job.where} asks for no GPU")
        return
    links = ctx.node.state.nvidia_char_links
    if links:
        yield decided(SYSTEMD_DEVICES, f"/dev/char links the NVIDIA devices ({len(links)} links): systemd keeps them")
        return
    driver, what, key = _driver(ctx, job.runtime)
    if driver == CGROUPFS:
        yield decided(SYSTEMD_DEVICES, f"{what}: cgroupfs, so systemd does not manage the container's device rules")
        return
    if driver is None:
        yield unknown(
            SYSTEMD_DEVICES,
            f"{job.where} uses GPUs: does runc run under the systemd cgroup driver ({what}; node.{key})?",
            (facts.DOCKER_CGROUP_DRIVER.name if job.runtime == "docker" else facts.CONTAINERD_SYSTEMD_CGROUP.name,),
        )
        return
    if links is None:
        return  # the engine asks for the /dev/char links
    ev = [
        ctx.node_ev(key, driver),
        ctx.node_ev("state.nvidia_char_links", "none"),
        ctx.node_ev("state.cgroup_version", ctx.node.state.cgroup_version or "not read"),
    ]
    yield finding(ctx.matrix, SYSTEMD_DEVICES, ev, node=ctx.node.name, where=job.where, what=what)


RULES, NEEDS, REQUIRES, READS, check = family(systemd_device_cgroup)
