"""How the image's aws-ofi-nccl was built, on a node with EFA devices.

From 1.6.0 aws-ofi-nccl's AWS code is a platform chosen at configure time (m4/ax_platform_aws.m4): built with
--enable-platform-aws, or when configure runs on an EC2 instance, and left out otherwise, e.g. in an image built on a
CI host. Without it the plugin does not configure itself for EFA (src/platform-aws.c: provider filter efa,
NCCL_PROTO=simple on platforms whose EFA ordering needs it, FI_EFA_FORK_SAFE, the p4d/p4de topology files NCCL is
pointed to). The build is read from the plugin's own strings (extractors/fabric.py), the release floor from the
thresholds row ofi_nccl_platform_aws_first.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..knowledge import providers
from ..model.report import Evidence
from ..versions import ranges
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, decided, finding, unknown

RULE = "OFI-PLUGIN-NO-AWS-PLATFORM"


@rule(RULE, requires=(facts.PLUGINS, facts.NODE_RDMA), needs={"thresholds": {"ofi_nccl_platform_aws_first"}})
def ofi_plugin_without_aws_platform(ctx: Ctx) -> Iterator[Outcome]:
    efa = [d.name or "efa" for d in ctx.node.rdma.devices if providers.provider_of(d) == "efa" or d.driver == "efa"]
    if not efa:
        if ctx.node.rdma.devices:
            yield decided(RULE, "the node has no EFA device: aws-ofi-nccl's AWS platform code matters on EFA only")
        return
    plugin = next((p for p in ctx.image.nccl_net_plugins if p.loaded), None)
    if plugin is None:
        return  # no net plugin loaded: EFA-NO-OFI-PLUGIN speaks
    if plugin.project is None:
        yield unknown(RULE, f"which project the loaded net plugin {plugin.path} is was not read from it")
        return
    if plugin.project != "aws-ofi-nccl":
        yield decided(RULE, f"the loaded net plugin is {plugin.project}, not aws-ofi-nccl")
        return
    if plugin.aws_platform is None:
        yield unknown(RULE, f"the strings of {plugin.path} were not read (facts from an older read)")
        return
    if plugin.aws_platform:
        yield decided(RULE, f"{plugin.path} carries aws-ofi-nccl's AWS platform code")
        return
    first = str(ctx.matrix.threshold("ofi_nccl_platform_aws_first"))
    release = (plugin.version or "").removesuffix("-aws").removesuffix("aws")
    newer = ranges.at_least(release, first) if release else None
    if newer is None:
        yield unknown(RULE, f"the release of {plugin.path} is not read; AWS platform code exists from {first} on")
        return
    if not newer:
        yield decided(RULE, f"aws-ofi-nccl {plugin.version} predates the configure-time AWS platform ({first})")
        return
    yield finding(
        ctx.matrix,
        RULE,
        [
            Evidence.member("image.nccl_net_plugins", plugin.name, "aws_platform", False, plugin.location),
            Evidence.member("image.nccl_net_plugins", plugin.name, "version", plugin.version, plugin.location),
            ctx.node_ev("rdma.devices.driver", f"efa ({', '.join(efa)})"),
        ],
        plugin=plugin.path,
        release=plugin.version,
    )


RULES, NEEDS, REQUIRES, READS, check = family(ofi_plugin_without_aws_platform)
