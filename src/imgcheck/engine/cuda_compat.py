"""CUDA forward-compatibility libcuda (cuda-compat) in the image, against the node's driver and GPUs.

Newer than the driver: it is the libcuda CUDA uses, and forward compatibility works only on data-center GPUs,
select NGC Server Ready RTX SKUs and Jetson boards (NVIDIA's CUDA compatibility guide): elsewhere cuInit fails
with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804).
Newer than the driver on the driver's own branch (same first number): not the cross-branch forward compatibility the
guide is written for. The guide's FAQ supports an intra-branch upgrade only on LTSB/LLB branches for select GPUs, and
the toolkit's hook decides from the libcuda's `.note.cuda.fwd_compatibility` list of host branches, which the image
facts do not carry; a newer same-branch libcuda over an older kernel module of that branch has failed cuInit with 802.
Older than the driver: the container toolkit does not add it then, but an image that puts compat/ on its own
loader path (LD_LIBRARY_PATH in Env, ld.so.conf.d, so ld.so.cache) loads it anyway: an older libcuda on a
newer kernel driver fails with CUDA error 803 (system has unsupported display driver / cuda driver combination).
The toolkit's link-time stub libcuda (lib64/stubs) ahead of the injected driver library on the loader path: every
CUDA call returns cudaErrorStubLibrary (34; CUDA_ERROR_STUB_LIBRARY, 34, in the driver API), whatever the driver.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

from .. import driver_dirs
from ..knowledge import gpus as gpus_k
from ..knowledge import settings as settings_k
from ..model.image import Cuda
from ..model.location import Location
from ..model.node import Gpu
from ..model.report import Evidence
from ..versions import ranges
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, assuming, decided, finding, unknown

UNSUPPORTED_GPU = "CUDA-FORWARD-COMPAT-UNSUPPORTED-GPU"
OLDER_ON_PATH = "CUDA-COMPAT-OLDER-THAN-DRIVER-ON-PATH"
SAME_BRANCH = "CUDA-COMPAT-SAME-BRANCH-NEWER"
_COMPAT = (facts.CUDA, facts.COMPAT)

# What decides forward compatibility for a GPU whose support the gpu_classes rows leave open, by class.
_OPEN_WORDS = {
    "workstation": "only select NGC Server Ready RTX SKUs do; whether this one is one is not in the facts",
    None: "the GPU's class is not known (data-center GPUs and Jetson boards support it, GeForce does not, "
    "only select NGC Server Ready RTX SKUs do); state gpu_class in the node facts to decide it",
}


def _compat_ev(cuda: Cuda, compat: str) -> Evidence:
    return Evidence("image.cuda.compat_driver", compat, Location.file(cuda.compat_path, cuda.layer))


def _order(ctx: Ctx) -> tuple[Cuda, str, str, bool | None] | None:
    """(cuda, compat, driver, compat newer than the driver?) when both versions are known."""
    cuda = ctx.image.cuda
    compat = cuda.compat_driver if cuda else None
    driver = ctx.node.gpu.driver_version
    if cuda is None or not compat or not driver:
        return None  # the engine asks for what is unknown (contract); absent compat: nothing to decide
    newer = ranges.at_least(compat, driver)
    if newer and ranges.at_least(driver, compat):
        newer = False  # the same build
    return cuda, compat, driver, newer


def _support(ctx: Ctx, gpu: Gpu) -> tuple[str | None, str | None]:
    """(class, forward_compat support): a class stated in the node facts decides it; else the row the model
    name matches."""
    klass, row = gpus_k.class_of(gpu, ctx.matrix)
    return klass, gpus_k.class_forward_compat(gpu.gpu_class, ctx.matrix) if gpu.gpu_class else row.get("forward_compat")


@rule(UNSUPPORTED_GPU, requires=_COMPAT, reads=(facts.GPU_DRIVER,))
def unsupported_gpu(ctx: Ctx) -> Iterator[Outcome]:
    gpus = ctx.node.gpu.gpus
    if gpus and all(_support(ctx, g)[1] == "supported" for g in gpus):
        yield decided(UNSUPPORTED_GPU, "every GPU of the node supports forward compatibility")
        return
    known = _order(ctx)
    if known is None:
        # not silence: without a compat libcuda the rule does not apply (COMPAT absent), and an unknown CUDA,
        # compat or driver version is reported by the engine with its question (REQUIRES/READS, contract.py)
        return
    cuda, compat, driver, newer = known
    if newer is None:
        yield unknown(
            UNSUPPORTED_GPU, f"cannot tell whether forward-compat libcuda {compat} is newer than driver {driver}"
        )
        return
    if not newer:
        yield decided(UNSUPPORTED_GPU, "the driver is at least as new: forward compatibility is not used")
        return
    if not ctx.node.gpu.gpus:
        yield unknown(
            UNSUPPORTED_GPU,
            f"forward-compat libcuda {compat} is newer than driver {driver}; the node's GPUs are not in its facts, "
            "and only data-center GPUs, Jetson boards and select RTX SKUs support forward compatibility",
            facts=("node.gpu.gpus",),
        )
        return
    for gpu in ctx.node.gpu.gpus:
        klass, support = _support(ctx, gpu)
        if support == "supported":
            continue
        evidence = [
            _compat_ev(cuda, compat),
            ctx.node_ev("gpu.driver_version", driver),
            ctx.node_ev("gpu.gpus.name", gpu.name),
            ctx.node_ev("gpu.gpus.gpu_class", klass),
        ]
        if support == "unsupported":
            yield finding(
                ctx.matrix,
                UNSUPPORTED_GPU,
                evidence,
                gpu=gpu.name,
                gpu_class=klass,
                compat_driver=compat,
                driver_version=driver,
                cuda=cuda.version or "unknown",
            )
        else:
            yield unknown(
                UNSUPPORTED_GPU,
                f"forward-compat libcuda {compat} is newer than driver {driver}; whether the "
                f"{klass or 'unclassified'} GPU {gpu.name or '(unnamed)'} supports forward compatibility: "
                + _OPEN_WORDS.get(klass, _OPEN_WORDS[None]),
                facts=("node.gpu.gpus.gpu_class",),
            )
        return  # one answer per node
    yield decided(UNSUPPORTED_GPU, "every GPU of the node supports forward compatibility")


@rule(OLDER_ON_PATH, requires=_COMPAT, reads=(facts.GPU_DRIVER,))
def older_on_path(ctx: Ctx) -> Iterator[Outcome]:
    known = _order(ctx)
    if known is None:
        # not silence: without a compat libcuda the rule does not apply (COMPAT absent), and an unknown CUDA,
        # compat or driver version is reported by the engine with its question (REQUIRES/READS, contract.py)
        return
    cuda, compat, driver, newer = known
    if newer is None:
        yield unknown(
            OLDER_ON_PATH, f"cannot tell whether forward-compat libcuda {compat} is older than driver {driver}"
        )
        return
    if newer or ranges.at_least(driver, compat) is not True or ranges.at_least(compat, driver):
        yield decided(OLDER_ON_PATH, "the compat libcuda is not older than the driver")
        return
    if cuda.compat_on_path is None:
        why = cuda.compat_path_how or ctx.image.unknown_reason("cuda.compat_on_path") or "not read"
        yield unknown(
            OLDER_ON_PATH,
            f"the image's forward-compat libcuda {compat} is older than driver {driver}: whether the image itself "
            f"puts {cuda.compat_path or 'compat/'} on its loader path (LD_LIBRARY_PATH, ld.so.conf.d) is unknown ({why})",
            facts=("image.cuda.compat_on_path",),
        )
        return
    if not cuda.compat_on_path:
        yield decided(OLDER_ON_PATH, "only the container runtime adds compat/, and only for an older driver")
        return
    yield finding(
        ctx.matrix,
        OLDER_ON_PATH,
        [
            _compat_ev(cuda, compat),
            Evidence("image.cuda.compat_path_how", cuda.compat_path_how, Location.file(cuda.compat_path, cuda.layer)),
            ctx.node_ev("gpu.driver_version", driver),
        ],
        compat_driver=compat,
        driver_version=driver,
        how=cuda.compat_path_how,
        compat_dir=(cuda.compat_path or "").rpartition("/")[0] or "compat/",
    )


def _branch(version: str) -> str:
    """An NVIDIA driver release's branch: the number before its first dot (the kernel module's relaxed version check,
    open-gpu-kernel-modules src/nvidia/arch/nvalloc/unix/src/osapi.c, compares up to that dot)."""
    return version.strip().split(".", 1)[0]


@rule(SAME_BRANCH, requires=_COMPAT, reads=(facts.GPU_DRIVER,))
def same_branch_newer(ctx: Ctx) -> Iterator[Outcome]:
    known = _order(ctx)
    if known is None:
        # not silence: without a compat libcuda the rule does not apply (COMPAT absent), and an unknown CUDA,
        # compat or driver version is reported by the engine with its question (REQUIRES/READS, contract.py)
        return
    cuda, compat, driver, newer = known
    if newer is None:
        yield unknown(SAME_BRANCH, f"cannot tell whether forward-compat libcuda {compat} is newer than driver {driver}")
        return
    if not newer or _branch(compat) != _branch(driver):
        yield decided(SAME_BRANCH, "the compat libcuda is not a newer release of the driver's own branch")
        return
    evidence = [_compat_ev(cuda, compat), ctx.node_ev("gpu.driver_version", driver)]
    if cuda.compat_on_path is True:
        evidence.append(
            Evidence("image.cuda.compat_path_how", cuda.compat_path_how, Location.file(cuda.compat_path, cuda.layer))
        )
        how = f"the image puts it on its own loader path ({cuda.compat_path_how or 'ld.so.conf.d / LD_LIBRARY_PATH'})"
    else:
        # off the image's own path, the container toolkit decides: its cuda-compat hook uses a newer compat libcuda
        # when the libcuda's ELF note lists the host's branch, which the image facts do not carry
        why = cuda.compat_path_how or ctx.image.unknown_reason("cuda.compat_on_path") or "not read"
        yield unknown(
            SAME_BRANCH,
            f"the image's forward-compat libcuda {compat} is a newer release of driver {driver}'s own branch; whether "
            "it is loaded depends on the container toolkit (its cuda-compat hook reads the libcuda's list of "
            f"supported host branches) since the image does not put it on its loader path itself ({why})",
            facts=("image.cuda.compat_on_path",),
        )
        return
    yield finding(
        ctx.matrix,
        SAME_BRANCH,
        evidence,
        compat_driver=compat,
        driver_version=driver,
        branch=_branch(driver),
        how=how,
        compat_dir=(cuda.compat_path or "").rpartition("/")[0] or "compat/",
    )


STUB_FIRST = "CUDA-STUB-LIBCUDA-FIRST"
_STUB_WORDS = (
    "the stub directory holds libcuda.so.1 (images that link against the stub add that name: a symlink, or ldconfig "
    "run over the directory, which names the link after the stub's soname)"
)


@rule(STUB_FIRST, requires=(facts.CUDA,), reads=(facts.setting("LD_LIBRARY_PATH"), facts.setting("LD_PRELOAD")))
def stub_first(ctx: Ctx) -> Iterator[Outcome]:
    """The toolkit's stub libcuda ahead of the driver's on the loader path: every CUDA call fails with
    cudaErrorStubLibrary (34, "CUDA driver is a stub library"), whatever the node's driver."""
    cuda = ctx.image.cuda
    if cuda is None:
        return  # no CUDA: the rule does not apply (requires facts.CUDA)
    read = cuda.stub_path_how is not None  # the image's files were read (not facts stated elsewhere)
    preload = ctx.setting("LD_PRELOAD")
    for path in re.split(r"[\s:]+", preload.value if preload else ""):
        if posixpath.basename(path).startswith("libcuda.so") and driver_dirs.is_stub_dir(posixpath.dirname(path)):
            # LD_PRELOAD loads it before any search; libcuda.so.1 is then satisfied by it (ld.so(8))
            found = finding(
                ctx.matrix,
                STUB_FIRST,
                [preload.evidence] if preload else [],
                setting=preload.label if preload else "LD_PRELOAD",
                stub_dir=posixpath.dirname(path),
                stub=path,
            )
            shipped = read and cuda.stub_on_path and cuda.stub_path == path  # the extractor found the file
            yield found if shipped else assuming(found, f"the image has {path}", "image.cuda.stub_path")
            return
    setting = ctx.setting("LD_LIBRARY_PATH")
    stub_dir, driver_first = driver_dirs.first_stub_dir(setting.value) if setting is not None else (None, None)
    if stub_dir is None:
        if setting is None and (ctx.image.unknown_reason("env") or (ctx.job is not None and ctx.job.env_incomplete)):
            return  # whether LD_LIBRARY_PATH names a stub directory is not known: the engine asks it (READS)
        if cuda.stub_on_path is None and read:
            yield unknown(STUB_FIRST, f"the image's stub libcuda {cuda.stub_path}: {cuda.stub_path_how}")
            return
        if setting is None and not read:
            return  # LD_LIBRARY_PATH unset and the image's ld.so.conf not read: nothing names a stub directory
        yield decided(
            STUB_FIRST,
            f"LD_LIBRARY_PATH names the driver's directory {driver_first} before any stub directory"
            if driver_first
            else "no CUDA stub directory is on the loader path ahead of the driver library",
        )
        return
    assert setting is not None  # a stub directory came from its value
    evidence = [setting.evidence]
    stub_file = posixpath.join(posixpath.normpath(stub_dir), "libcuda.so.1")
    by_preload = (cuda.stub_path_how or "").startswith("LD_PRELOAD")  # the extractor stopped at the image's preload
    if read and setting.origin == settings_k.ORIGIN_ENV and not by_preload:
        # the extractor walked this same LD_LIBRARY_PATH over the image's files
        if cuda.stub_on_path is not True:
            yield decided(STUB_FIRST, f"{stub_dir} on LD_LIBRARY_PATH holds no libcuda.so.1 ({cuda.stub_path_how})")
            return
        known = True
    else:
        known = read and cuda.stub_path == stub_file
    if read and cuda.stub_path:
        evidence.append(Evidence("image.cuda.stub_path", cuda.stub_path, Location.file(cuda.stub_path, cuda.layer)))
    found = finding(ctx.matrix, STUB_FIRST, evidence, setting=setting.label, stub_dir=stub_dir, stub=stub_file)
    yield found if known else assuming(found, _STUB_WORDS, "image.cuda.stub_path")


RULES, NEEDS, REQUIRES, READS, check = family(unsupported_gpu, older_on_path, same_branch_newer, stub_first)
