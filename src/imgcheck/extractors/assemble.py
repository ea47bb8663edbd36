"""All extractors together: the wants of every one, and ImageFacts from a FileView and config."""

from __future__ import annotations

import dataclasses

from ..model.bounded_numbers import drop_bad_versions
from ..model.image import ImageFacts, LayerInfo
from ..sources.base import OpenedImage
from ..sources.manifest import env_of_config
from ..view.fileview import FileView
from ..view.wants import Want, WantSet
from . import (
    bundled,
    conda,
    cuda,
    env,
    fabric,
    gdrcopy,
    glibc,
    hpcx,
    loader,
    nccl,
    nccl_xml,
    os_release,
    packages,
    python,
    rdma,
    ucx,
    ucx_build,
)

ALL_WANTS: tuple[Want, ...] = (
    os_release.WANTS
    + packages.WANTS
    + rdma.WANTS
    + ucx.WANTS
    + nccl.WANTS
    + cuda.WANTS
    + hpcx.WANTS
    + env.WANTS
    + loader.WANTS
    + python.WANTS
    + bundled.WANTS
    + fabric.WANTS
    + glibc.WANTS
    + nccl_xml.WANTS
    + conda.WANTS
    + ucx_build.WANTS
    + gdrcopy.WANTS
)


def want_set() -> WantSet:
    """The compiled wants (one regex); cached while ALL_WANTS is the same tuple."""
    global _WANT_SET
    if _WANT_SET is None or _WANT_SET.wants != ALL_WANTS:
        _WANT_SET = WantSet(ALL_WANTS)
    return _WANT_SET


_WANT_SET: WantSet | None = None


def build_facts(view: FileView, image: OpenedImage, reference: str) -> ImageFacts:
    image_env = env_of_config(image.config)
    pkgs, notes = packages.extract(view)
    ld = loader.Loader(view, image_env, image.platform)
    py = python.extract(view, image_env)
    pkgs += python.packages_of(py)  # Python distributions are packages of the image (db "python")
    pkgs += conda.extract(view)  # and so are conda environments' packages (db "conda")
    machine = ld.machine
    efa_installer = fabric.extract_efa_installer(view)
    ncc = nccl.extract(view, pkgs, py, ld, machine)
    libc, libc_unknown = glibc.extract(view, pkgs, ld)
    nccl_conf = env.extract_nccl_conf(view)
    xml_files, file_refs = nccl_xml.extract(view, image_env, nccl_conf)
    facts = ImageFacts(
        reference=reference,
        digest=image.digest,
        platform=image.platform,
        os=os_release.extract(view),
        rdma=rdma.extract(view, pkgs, image_env, ld),
        ucx=ucx_build.annotate(view, ucx.extract(view, pkgs, ld, image_env)),
        nccl=tuple(ncc),
        cuda=cuda.extract(view, image_env, pkgs, py, ld),
        hpcx=hpcx.extract(view, image_env),
        env=image_env,
        nccl_conf=nccl_conf,
        packages=tuple(pkgs),
        layers=tuple(
            LayerInfo(digest=l.digest, media_type=l.media_type, size=l.size, diff_id=l.diff_id) for l in image.layers
        ),
        notes=tuple(image.notes) + tuple(notes) + tuple(ld.notes),
        python_sites=tuple("/" + s for s in py.sites),
        bundled_stacks=tuple(bundled.extract(view, py)),
        libfabric=fabric.extract_libfabric(view, pkgs, ld, image_env, efa_installer),
        nccl_net_plugins=tuple(fabric.extract_net_plugins(view, ld, image_env, py.sites)),
        efa_installer=efa_installer,
        glibc=libc,
        nccl_xml_files=xml_files,
        nccl_file_refs=file_refs,
        gdrcopy=gdrcopy.extract(view, pkgs),
        unknown=nccl.archs_unknown(ncc) | libc_unknown,
    )
    bad: list[str] = []
    facts = drop_bad_versions(facts, "image", bad)
    return dataclasses.replace(facts, notes=facts.notes + tuple(bad)) if bad else facts
