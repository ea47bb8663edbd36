"""Image reference strings -> a source. Scheme words follow syft/skopeo/podman usage."""

from __future__ import annotations

from ..errors import UsageError
from .platform import Platform

LOCAL_SCHEMES = ("docker-archive", "oci-dir", "oci-archive", "facts", "enroot", "sif")
REMOTE_SCHEMES = ("registry", "docker")


def split_scheme(ref: str) -> tuple[str | None, str]:
    scheme, sep, rest = ref.partition(":")
    if sep and scheme in LOCAL_SCHEMES + REMOTE_SCHEMES:
        if not rest:
            raise UsageError(f"{ref!r}: nothing after '{scheme}:'")
        return scheme, rest
    return None, ref


def _path_and_tag(rest: str) -> tuple[str, str | None]:
    """'PATH[:TAG]' as skopeo writes it; a path containing ':' is taken whole if it exists."""
    import os

    if os.path.exists(rest) or ":" not in rest:
        return rest, None
    path, _, tag = rest.rpartition(":")
    return path, tag or None


def _without_pyxis(ref: str) -> str:
    """Pyxis/Enroot spellings (`registry#repo:tag`, `docker://...`) as a `registry:` reference."""
    from .pyxis import is_pyxis_reference, to_registry_reference

    if is_pyxis_reference(ref, split_scheme(ref)[0]):
        return "registry:" + to_registry_reference(ref)
    return ref


def registry_reference(ref: str):
    """The registry Reference that `ref` names (bare, `registry:` or a Pyxis spelling), else None."""
    from .reference import parse_reference

    scheme, rest = split_scheme(_without_pyxis(ref))
    return parse_reference(rest) if scheme in (None, "registry") else None


def pinned_digest(ref: str) -> str | None:
    """The digest a registry reference pins (`name@sha256:...`), read without any network request."""
    parsed = registry_reference(ref)
    return parsed.digest if parsed is not None else None


def open_source(ref: str, platform: Platform | None = None, **options):
    """Return a source object with .open() and .close() for `ref`."""
    scheme, rest = split_scheme(_without_pyxis(ref))
    if scheme == "enroot":
        from .squashfs import SquashfsSource

        return SquashfsSource(rest)
    if scheme == "sif":
        from .sif import SifSource

        return SifSource(rest)
    if scheme == "docker-archive":
        from .docker_archive import DockerArchiveSource

        path, tag = _path_and_tag(rest)
        return DockerArchiveSource(path, tag=tag)
    if scheme in ("oci-dir", "oci-archive"):
        from .oci_layout import OciLayoutSource

        path, name = _path_and_tag(rest)
        factory = OciLayoutSource.from_dir if scheme == "oci-dir" else OciLayoutSource.from_archive
        return factory(path, ref_name=name, platform=platform)
    if scheme == "docker":
        from .docker_daemon import DockerDaemonSource

        return DockerDaemonSource(rest, platform=platform, **options)
    from .registry import RegistrySource

    return RegistrySource(rest, platform=platform, **options)
