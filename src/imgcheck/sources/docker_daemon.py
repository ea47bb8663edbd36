"""`docker:REF`: an image in the local Docker daemon, read from its `docker save` stream.

The save stream is read once, front to back, never held in memory or written to disk. Its
manifest.json comes after the layers (docker writes the tar in path order, and hex digests sort
before "manifest.json"), so every layer-like member is indexed as it streams by, with the wants
the layer walk asks for, and matched to its place in the image once manifest.json and the config
have arrived. The image's metadata (config, diff_ids, platform) comes from the daemon's inspect
answer, and the config in the stream must hash to the inspected image ID, so the stream is known
to be the image that was inspected.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..errors import BadInputError, UnavailableError, UsageError
from ..streams import ByteStream
from .base import LayerRef, OpenedImage, Source, parse_digest
from .platform import Platform, PlatformMismatchError, parse_platform
from .save_stream import CHUNK, SaveStreamReader

if TYPE_CHECKING:
    from tarfile import _Fileobj as TarFileobj  # typeshed's name for what tarfile.open(fileobj=...) accepts

    from _typeshed import WriteableBuffer

# Per socket read. Docker 20.10 exports a whole image to a temp dir before its first byte, which
# takes minutes for a 20 GB framework image; the SDK's 60 s default would cut that off.
DEFAULT_TIMEOUT = 900


class IterStream(io.RawIOBase):
    """A read-only file object over an iterator of byte chunks (the SDK's save generator)."""

    def __init__(self, chunks: Iterator[bytes], what: str):
        self._chunks = chunks
        self._buf = b""
        self._what = what

    def readable(self) -> bool:
        return True

    def readinto(self, b: WriteableBuffer) -> int:
        while not self._buf:
            try:
                self._buf = next(self._chunks)
            except StopIteration:
                return 0
            except Exception as exc:  # requests/urllib3 errors when the daemon drops the stream
                from .http import describe

                raise UnavailableError(f"{self._what}: the Docker daemon's stream broke ({describe(exc)})") from None
        view = memoryview(b)
        n = min(len(view), len(self._buf))
        view[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n


def _platform_of_attrs(attrs: dict[str, Any]) -> str | None:
    os_, arch, variant = attrs.get("Os"), attrs.get("Architecture"), attrs.get("Variant")
    if not isinstance(os_, str) or not isinstance(arch, str):
        return None
    return str(Platform(os_, arch, variant if isinstance(variant, str) and variant else None))


def daemon_address() -> str:
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


class DockerDaemonSource(Source):
    """`docker:REF`. `timeout`: seconds per daemon read; `client`: a docker.DockerClient (tests).

    Its layers come only as the one save stream: the opened image's save_stream is this source."""

    def __init__(
        self, ref: str, platform: Platform | None = None, timeout: float | None = None, client: Any = None
    ) -> None:
        if not ref or ref != ref.strip():
            raise UsageError(f"invalid docker: reference {ref!r}")
        self.ref = ref
        self.where = f"docker:{ref}"
        self.platform = platform
        self.timeout = timeout
        self._client = client
        self._image_id: str | None = None
        self._layers: list[LayerRef] = []
        self._stream: SaveStreamReader | None = None

    def _connect(self) -> Any:  # a docker.DockerClient: the SDK ships no type hints
        import docker  # type: ignore[import-untyped]  # ships no type hints

        if self._client is None:
            try:
                self._client = docker.from_env(timeout=15)  # a daemon that is there answers at once
                self._client.ping()
                self._client.api.timeout = int(self.timeout or DEFAULT_TIMEOUT)
            except Exception as exc:  # DockerException, requests errors: the daemon is not there
                from .http import describe

                raise UnavailableError(
                    f"cannot connect to the Docker daemon at {daemon_address()}: is it running? ({describe(exc)})"
                ) from None
        return self._client

    def open(self) -> OpenedImage:
        import docker

        client = self._connect()
        try:
            image = client.images.get(self.ref)
        except docker.errors.ImageNotFound:
            raise UnavailableError(
                f"{self.where}: no such image in the local Docker daemon "
                "(pull it, or read it from its registry without the docker: prefix)"
            ) from None
        except docker.errors.APIError as exc:
            if exc.status_code == 400:
                raise UsageError(f"{self.where}: the daemon rejects the reference ({exc.explanation})") from None
            raise UnavailableError(
                f"{self.where}: the Docker daemon answered {exc.status_code} ({exc.explanation})"
            ) from None
        except docker.errors.DockerException as exc:
            raise UnavailableError(f"{self.where}: {exc}") from None
        attrs = image.attrs
        image_id = attrs.get("Id")
        diff_ids = (attrs.get("RootFS") or {}).get("Layers") or []
        if not isinstance(image_id, str) or not isinstance(diff_ids, list):
            raise BadInputError(f"{self.where}: the daemon's image description lacks an Id or RootFS layers")
        parse_digest(image_id)
        for d in diff_ids:
            if not isinstance(d, str):
                raise BadInputError(f"{self.where}: malformed layer id {d!r}")
            parse_digest(d)
        platform = _platform_of_attrs(attrs)
        if self.platform is not None:
            got = parse_platform(platform) if platform else None
            w = self.platform
            if (
                got is None
                or (got.os, got.architecture) != (w.os, w.architecture)
                or (w.variant is not None and got.variant != w.variant)
            ):
                raise PlatformMismatchError(
                    f"{self.where}: the daemon holds {platform or 'an image of unknown platform'}, not the requested "
                    f"{w} (docker pull --platform {w} first)",
                    (platform,) if platform else (),
                )
        self._image_id = image_id
        self._layers = [
            LayerRef(digest=d, media_type="layer.tar", index=i, digest_of_uncompressed=True, diff_id=d)
            for i, d in enumerate(diff_ids)
        ]
        config = {
            "architecture": attrs.get("Architecture"),
            "os": attrs.get("Os"),
            "config": attrs.get("Config") or {},
            "rootfs": {"type": "layers", "diff_ids": list(diff_ids)},
        }
        if attrs.get("Variant"):
            config["variant"] = attrs["Variant"]
        notes = [f"{self.where}: registry digest {d}" for d in attrs.get("RepoDigests") or [] if isinstance(d, str)]
        return OpenedImage(
            reference=self.where,
            digest=image_id,
            platform=platform,
            config=config,
            layers=list(self._layers),
            opener=self._open_layer,
            notes=notes,
            save_stream=self,
        )

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        self._stream = None

    def _open_layer(self, layer: LayerRef) -> ByteStream:
        # A save stream cannot be opened at one layer; every reader goes through index().
        raise UnavailableError(f"{self.where}: layers of the docker: source are read only as one stream")

    def index(self, layer: LayerRef, wants: Any, limits: Any, index_tar: Callable[..., object]) -> object:
        """Layer `layer`'s index from the one pass over the save stream (sources/save_stream.py)."""
        if self._stream is None:
            assert self._image_id is not None  # set by open(), which hands this source out as the save stream
            self._stream = SaveStreamReader(self.where, self._export, self._image_id, self._layers)
        return self._stream.index(layer, wants, limits, index_tar)

    def _export(self) -> tuple[TarFileobj, Callable[[], None]]:
        """The daemon's `docker save` of the inspected image, as a stream and its closer."""
        client = self._connect()
        try:
            chunks = client.api.get_image(self._image_id, chunk_size=CHUNK)
        except Exception as exc:
            from .http import describe

            raise UnavailableError(
                f"{self.where}: the Docker daemon refused to export the image ({describe(exc)})"
            ) from None
        stream = io.BufferedReader(IterStream(iter(chunks), self.where), buffer_size=CHUNK)
        return stream, getattr(chunks, "close", None) or (lambda: None)
