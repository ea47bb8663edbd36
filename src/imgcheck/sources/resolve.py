"""Image reference strings -> a parsed ImageRef -> a source. Scheme words follow syft/skopeo/podman usage."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import BadInputError, UsageError
from .read_options import ReadOptions
from .reference import Reference, parse_reference

if TYPE_CHECKING:
    from .base import Source
    from .digest_resolution import ResolvedDigest

# `oci:` is skopeo's and syft's word for an OCI layout directory (= oci-dir:)
LOCAL_SCHEMES = ("docker-archive", "oci-dir", "oci", "oci-archive", "facts", "enroot", "sif")
REMOTE_SCHEMES = ("registry", "docker")


def split_scheme(ref: str) -> tuple[str | None, str]:
    scheme, sep, rest = ref.partition(":")
    if sep and scheme in LOCAL_SCHEMES + REMOTE_SCHEMES:
        if not rest:
            raise UsageError(f"{ref!r}: nothing after '{scheme}:'")
        return scheme, rest
    return None, ref


def _path_and_tag(rest: str) -> tuple[str, str | None]:
    """'PATH[:REF]' as skopeo writes it (`docker-archive:x.tar:name:tag`, `oci:dir:ref`).

    skopeo splits at the first ':' (the REF of a docker-archive is `name:tag` and holds one itself); a
    path that itself holds ':' is found by trying the prefixes that exist, the whole string first.
    """
    import os

    if os.path.exists(rest) or ":" not in rest:
        return rest, None
    for i, char in enumerate(rest):
        if char == ":" and os.path.exists(rest[:i]):
            return rest[:i], rest[i + 1 :] or None
    path, _, tag = rest.partition(":")
    return path, tag or None


def _archive_scheme(path: str) -> str:
    """docker-archive or oci-archive, from the archive's member names (tar headers only, no data read).

    `docker save` writes manifest.json (Docker 25+ also the OCI files beside it: the Docker manifest is
    read then, as `docker-archive:` would); `skopeo copy ... oci-archive:` writes only oci-layout.
    """
    import tarfile

    oci = False
    try:
        with tarfile.open(path, "r:") as tar:
            for member in tar:
                name = member.name.lstrip("./")
                if name == "manifest.json":
                    return "docker-archive"
                oci = oci or name == "oci-layout"
    except (tarfile.TarError, EOFError) as exc:
        raise BadInputError(f"{path}: not a readable image archive ({exc})") from None
    except OSError as exc:
        from ..errors import UnavailableError

        raise UnavailableError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if oci:
        return "oci-archive"
    raise BadInputError(f"{path}: a tar with neither manifest.json (docker save) nor oci-layout (an OCI archive)")


def _bare_path(ref: str) -> str:
    """A bare `image.tar` or OCI layout directory on disk, as syft takes them, with its scheme word.

    Only an existing `*.tar` file or a directory holding `oci-layout`: a bare word is otherwise a
    registry name (a directory called `ubuntu` must not shadow the image `ubuntu`).
    """
    import os

    if ref.endswith(".tar") and os.path.isfile(ref):
        return f"{_archive_scheme(ref)}:{ref}"
    if os.path.isfile(os.path.join(ref, "oci-layout")):
        return f"oci-dir:{ref}"
    return ref


def _without_pyxis(ref: str) -> str:
    """Pyxis/Enroot spellings (`registry#repo:tag`, `docker://...`) as a `registry:` reference; a bare
    archive or layout path with its scheme word."""
    from .pyxis import is_pyxis_reference, to_registry_reference

    scheme = split_scheme(ref)[0]
    if is_pyxis_reference(ref, scheme):
        return "registry:" + to_registry_reference(ref)
    if scheme is None:
        return _bare_path(ref)
    return ref


@dataclass(frozen=True)
class ImageRef:
    """A reference string parsed once: its scheme (after Pyxis spellings and bare paths are named)
    and, for a registry image, its parsed Reference. Everything downstream takes this, never the text."""

    text: str  # as the user wrote it; facts and reports carry this
    scheme: str | None  # None: a bare registry reference
    rest: str  # after the scheme
    registry: Reference | None = None  # set for bare and registry: references

    @property
    def is_facts(self) -> bool:
        return self.scheme == "facts"


def parse_image_ref(text: str) -> ImageRef:
    """Parse a reference once. Bad registry references fail here (UsageError), before any source."""
    scheme, rest = split_scheme(text)
    if scheme == "facts":
        return ImageRef(text, scheme, rest)
    scheme, rest = split_scheme(_without_pyxis(text))
    registry = parse_reference(rest) if scheme in (None, "registry") else None
    return ImageRef(text, scheme, rest, registry)


def registry_reference(ref: str) -> Reference | None:
    """The registry Reference that `ref` names (bare, `registry:` or a Pyxis spelling), else None."""
    return parse_image_ref(ref).registry


def open_source(ref: ImageRef, options: ReadOptions = ReadOptions(), resolved: ResolvedDigest | None = None) -> Source:
    """The source for `ref`. `resolved`: what digest_resolution already found for a registry
    reference (so its client does not ask again)."""
    scheme, rest = ref.scheme, ref.rest
    if scheme == "facts":
        raise UsageError(f"{ref.text!r}: saved facts are loaded, not opened as an image source")
    if scheme == "enroot":
        from .enroot import enroot_source

        return enroot_source(rest)
    if scheme == "sif":
        from .sif import SifSource

        return SifSource(rest)
    if scheme == "docker-archive":
        from .docker_archive import DockerArchiveSource

        path, tag = _path_and_tag(rest)
        return DockerArchiveSource(path, tag=tag)
    if scheme in ("oci-dir", "oci", "oci-archive"):
        from .oci_layout import OciLayoutSource

        path, name = _path_and_tag(rest)
        factory = OciLayoutSource.from_dir if scheme in ("oci-dir", "oci") else OciLayoutSource.from_archive
        return factory(path, ref_name=name, platform=options.platform)
    if scheme == "docker":
        from .docker_daemon import DEFAULT_TIMEOUT, DockerDaemonSource

        timeout = options.timeout
        if options.deadline is not None:  # each daemon read, never past the whole read's deadline
            timeout = options.deadline.clamp(timeout or DEFAULT_TIMEOUT)
        return DockerDaemonSource(rest, platform=options.platform, timeout=timeout, client=options.docker_client)
    from .registry import RegistrySource

    assert ref.registry is not None  # parse_image_ref parsed every bare and registry: reference
    return RegistrySource(
        ref.registry,
        platform=options.platform,
        insecure_registries=options.insecure_registries,
        timeout=options.timeout,
        http_policy=options.http_policy,
        session=options.session,
        sleep=options.sleep,
        resolved=resolved,
        deadline=options.deadline,
    )
