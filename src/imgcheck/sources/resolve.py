"""Image reference strings -> a source. Scheme words follow syft/skopeo/podman usage."""

from __future__ import annotations

from ..errors import BadInputError, UsageError
from .platform import Platform

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
            return rest[:i], rest[i + 1:] or None
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
    if scheme in ("oci-dir", "oci", "oci-archive"):
        from .oci_layout import OciLayoutSource

        path, name = _path_and_tag(rest)
        factory = OciLayoutSource.from_dir if scheme in ("oci-dir", "oci") else OciLayoutSource.from_archive
        return factory(path, ref_name=name, platform=platform)
    if scheme == "docker":
        from .docker_daemon import DockerDaemonSource

        return DockerDaemonSource(rest, platform=platform, **options)
    from .registry import RegistrySource

    return RegistrySource(rest, platform=platform, **options)
