"""`registry:REF` and bare references: the OCI distribution API over requests.

Tag -> digest by HEAD (Docker Hub's rate limit counts GETs, not HEADs), then the manifest is
fetched by digest and verified. An index picks exactly one platform. Every blob is verified while
it streams; layers go straight from the socket into the layer walk, never to disk.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import quote

import requests
import urllib3

from .. import safejson
from ..deadline import Deadline
from ..errors import BadInputError, UnavailableError
from .base import (
    DOCKER_MANIFEST,
    INDEX_MEDIA_TYPES,
    MANIFEST_ACCEPT,
    OCI_MANIFEST,
    LayerRef,
    OpenedImage,
    Source,
    VerifyingReader,
    media_type_of,
    parse_digest,
    verify_bytes,
)
from .digest_resolution import ResolvedDigest, with_client
from .http import NETWORK_ERRORS, HttpClient, HttpPolicy, ResumingBody, describe, read_within
from .manifest import check_config, config_descriptor, layers_of_manifest, with_diff_ids
from .platform import (
    DEFAULT_PLATFORM,
    Platform,
    PlatformMismatchError,
    parse_platform,
    platform_of_config,
    select_manifest,
)
from .reference import Reference, insecure_hosts, is_local_host, may_use_http
from .registry_auth import Credentials, RegistryAuth, find_credentials
from .soci_index import SociIndex, SociReferrers, index_digest
from .timeouts import parse_timeout

MAX_MANIFEST_BYTES = 4 * 1024 * 1024  # distribution refuses manifests over 4 MiB
MAX_CONFIG_BYTES = 8 * 1024 * 1024
MAX_INDEX_DEPTH = 2


def _registry_error(resp: requests.Response) -> str:
    """The registry's own error code and message (distribution's {"errors": [...]}), if any."""
    try:
        doc = resp.json()
        first = doc["errors"][0]
        return f"{first.get('code', '')}: {first.get('message', '')}".strip(": ")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return ""


class RegistryClient:
    """One repository on one registry: authenticated, retried requests."""

    def __init__(
        self,
        ref: Reference,
        insecure_registries: Iterable[str] = (),
        policy: HttpPolicy = HttpPolicy(),
        session: requests.Session | None = None,
        sleep: Callable[[float], None] | None = None,
        lookup: Callable[[str, str], Credentials | None] = find_credentials,
        deadline: Deadline | None = None,
    ):
        self.ref = ref
        self.host = ref.api_host
        self.insecure = insecure_hosts(insecure_registries)
        self.http = HttpClient(policy, session=session, sleep=sleep, deadline=deadline)
        self.auth = RegistryAuth(ref.registry, ref.repository, self.http, self.may_use_http, lookup=lookup)
        self.scope = f"repository:{ref.repository}:pull"
        self._base: str | None = None
        if not self.verify:
            # the user allowed this host unverified TLS; one warning per request would drown the output
            # (set once: warnings.catch_warnings is not thread-safe, and layers are read in threads)
            urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)

    def may_use_http(self, host: str) -> bool:
        return may_use_http(host, self.insecure)

    @property
    def verify(self) -> bool:
        return not self.may_use_http(self.host)  # as Docker does for insecure registries

    def base(self) -> str:
        """https://HOST, or http://HOST for a local/insecure host that does not speak TLS.

        Loopback is asked over plain HTTP first: nothing leaves the machine, and a refused TLS
        handshake (whose context loads the CA bundle) costs more than a whole warm re-check.
        Hosts named by --insecure-registry are tried over TLS first, as Docker does.
        """
        if self._base is None:
            self._base = f"https://{self.host}"
            if is_local_host(self.host):
                if self._answers_plain_http():
                    self._base = f"http://{self.host}"
            elif self.may_use_http(self.host):
                try:
                    self.http.send("GET", f"https://{self.host}/v2/", verify=False, attempts=1).close()
                except (requests.exceptions.SSLError, UnavailableError):
                    self._base = f"http://{self.host}"
        return self._base

    def _answers_plain_http(self) -> bool:
        """Any HTTP answer but 400 (TLS ports answer plain HTTP with 400, as Go and nginx do, or reset)."""
        try:
            resp = self.http.send("GET", f"http://{self.host}/v2/", attempts=1)
        except (requests.RequestException, UnavailableError):
            return False
        resp.close()
        return resp.status_code != 400

    def request(
        self, method: str, path: str, headers: dict[str, str] | None = None, stream: bool = False
    ) -> requests.Response:
        url = f"{self.base()}/v2/{self.ref.repository}/{path}"
        for attempt in range(3):
            try:
                resp = self.http.send(
                    method, url, headers={**(headers or {}), **self.auth.headers()}, stream=stream, verify=self.verify
                )
            except requests.exceptions.SSLError as exc:
                raise UnavailableError(
                    f"{self.host}: TLS failed ({_ssl_reason(exc)}); if this registry speaks "
                    f"plain HTTP or has a self-signed certificate and you trust it, use "
                    f"--insecure-registry {self.host}"
                ) from None
            if resp.status_code != 401 or attempt == 2:
                return resp
            resp.close()
            if not self.auth.answer(resp, self.scope):
                return resp
        return resp  # pragma: no cover

    def fail(self, resp: requests.Response, what: str) -> UnavailableError:
        code = resp.status_code
        detail = _registry_error(resp)
        detail = f" ({detail})" if detail else ""
        resp.close()
        if code == 404:
            return UnavailableError(f"{self.ref}: {what} not found on {self.ref.registry}{detail}")
        if code == 401:
            return UnavailableError(
                f"{self.ref}: authentication required or failed ({self.auth.describe_credentials()}){detail}"
            )
        if code == 403:
            return UnavailableError(f"{self.ref}: access to {what} denied ({self.auth.describe_credentials()}){detail}")
        if code == 429:
            after = resp.headers.get("Retry-After")
            return UnavailableError(
                f"{self.host}: rate limited (HTTP 429)" + (f", retry after {after} s" if after else "")
            )
        if code >= 500:
            return UnavailableError(
                f"{self.host}: server error HTTP {code} for {what} after "
                f"{self.http.policy.max_attempts} attempts{detail}"
            )
        return UnavailableError(f"{self.host}: unexpected HTTP {code} for {what}{detail}")

    def get_small(
        self, path: str, headers: dict[str, str], limit: int, what: str, status: int = 200
    ) -> requests.Response:
        """GET a manifest or config whole (size-capped), or with `status` 206 one byte range of a blob; a body cut
        off mid-way is fetched again. Returns the response with its bytes in `.content`."""
        attempts = self.http.policy.max_attempts
        for attempt in range(1, attempts + 1):
            resp = self.request("GET", path, headers=headers, stream=True)
            if resp.status_code != status:
                raise self.fail(resp, what)
            declared = resp.headers.get("Content-Length")
            if declared and declared.isdigit() and int(declared) > limit:
                resp.close()
                raise BadInputError(f"{self.ref}: {what} is {declared} bytes, more than the {limit}-byte limit")

            def read_capped(resp: requests.Response = resp) -> bytearray:
                data = bytearray()
                for chunk in resp.iter_content(1 << 16):
                    data += chunk
                    if len(data) > limit:
                        raise BadInputError(f"{self.ref}: {what} is larger than the {limit}-byte limit")
                return data

            try:
                # the whole body under one deadline: a registry trickling a byte per read timeout never trips that
                data = read_within(resp, self.http.answer_limit(), self.host, read_capped)
            except (requests.RequestException, *NETWORK_ERRORS) as exc:
                if attempt == attempts:
                    raise UnavailableError(f"{self.host}: {what} download kept failing ({describe(exc)})") from None
                self.http.sleep(self.http._delay(attempt))
                continue
            finally:
                resp.close()
            resp._content = bytes(data)  # requests' own slot for a consumed body
            return resp
        raise AssertionError("unreachable")  # pragma: no cover

    def head_manifest(self, reference: str) -> str | None:
        """The digest a tag points at, from HEAD's Docker-Content-Digest; None if not offered."""
        resp = self.request("HEAD", f"manifests/{reference}", headers={"Accept": MANIFEST_ACCEPT})
        resp.close()
        if resp.status_code == 404:
            raise self.fail(resp, f"tag {reference!r}")
        if resp.status_code != 200:
            return None  # some registries refuse HEAD (405) or need GET; fall back to GET
        digest = resp.headers.get("Docker-Content-Digest")
        try:
            return digest if digest and parse_digest(digest) else None
        except BadInputError:
            return None

    def get_manifest(self, reference: str) -> tuple[bytes, str | None, str]:
        """(bytes, Content-Type, digest); by digest the bytes are verified against it."""
        resp = self.get_small(
            f"manifests/{reference}", {"Accept": MANIFEST_ACCEPT}, MAX_MANIFEST_BYTES, f"manifest {reference}"
        )
        content_type = (resp.headers.get("Content-Type") or "").split(";")[0].strip() or None
        header_digest = resp.headers.get("Docker-Content-Digest")
        data = resp.content
        if reference.startswith(("sha256:", "sha512:")):
            verify_bytes(data, reference, f"{self.ref}: manifest")
            return data, content_type, reference
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        if header_digest and header_digest.startswith("sha256:") and header_digest != digest:
            raise BadInputError(f"{self.ref}: manifest bytes hash to {digest}, the registry says {header_digest}")
        return data, content_type, digest

    def get_blob_bytes(self, digest: str, size: int | None, limit: int, what: str) -> bytes:
        data = self.get_small(f"blobs/{digest}", {"Accept-Encoding": "identity"}, limit, what).content
        verify_bytes(data, digest, f"{self.ref}: {what}")
        if size is not None and len(data) != size:
            raise BadInputError(f"{self.ref}: {what} is {len(data)} bytes, its manifest declares {size}")
        return data

    def get_referrers(self, digest: str, artifact_type: str) -> bytes | None:
        """The OCI index of `digest`'s referrers of one artifact type: the referrers API (distribution-spec v1.1),
        else the referrers tag schema's `<alg>-<hex>` tag; None when the registry has neither."""
        algo, _, hexpart = digest.partition(":")
        for path in (f"referrers/{digest}?artifactType={quote(artifact_type, safe='')}", f"manifests/{algo}-{hexpart}"):
            try:
                headers = {"Accept": "application/vnd.oci.image.index.v1+json"}
                return self.get_small(path, headers, MAX_MANIFEST_BYTES, f"referrers of {digest}").content
            except UnavailableError:
                continue  # 404 (no referrers API, no such tag) or another refusal: the next way, then none
        return None

    def get_blob_range(self, digest: str, start: int, end: int) -> bytes:
        """Bytes [start, end) of a blob, by an HTTP Range request (a seekable layer's footer, table of contents or
        chunk). Not verified here: the caller checks them against the digests the verified manifest binds.
        A registry that answers with the whole blob (200) is refused: the caller reads the layer whole instead."""
        what = f"bytes {start}-{end - 1} of blob {digest}"
        headers = {"Accept-Encoding": "identity", "Range": f"bytes={start}-{end - 1}"}
        data = self.get_small(f"blobs/{digest}", headers, end - start, what, status=206).content
        if len(data) != end - start:
            raise BadInputError(f"{self.ref}: {what}: {len(data)} bytes came")
        return data

    def open_blob(self, digest: str, size: int | None) -> ResumingBody:
        what = f"{self.ref}: blob {digest}"

        def open_at(offset: int) -> requests.Response:
            headers = {"Accept-Encoding": "identity"}
            if offset:
                headers["Range"] = f"bytes={offset}-"
            resp = self.request("GET", f"blobs/{digest}", headers=headers, stream=True)
            if resp.status_code not in (200, 206) or (resp.status_code == 206 and not offset):
                raise self.fail(resp, f"blob {digest}")
            return resp

        policy = self.http.policy
        deadline = policy.blob_grace + (size or 0) / policy.min_blob_rate
        if self.http.deadline is not None:  # --timeout: the whole read's deadline bounds each blob too
            deadline = self.http.deadline.clamp(deadline)
        return ResumingBody(open_at, what, size, policy.max_resumes, deadline=deadline)

    def close(self) -> None:
        self.http.session.close()


def _ssl_reason(exc: BaseException) -> str:
    return describe(exc)


def _doc(data: bytes, where: str) -> dict[str, Any]:
    doc = safejson.loads(data, where)
    if not isinstance(doc, dict):
        raise BadInputError(f"{where}: not a JSON object")
    if doc.get("schemaVersion") == 1:
        raise BadInputError(f"{where}: Docker schema 1 manifests are deprecated and not supported")
    return doc


def _is_index(doc: dict[str, Any], content_type: str | None) -> bool:
    media_type = media_type_of(doc, "manifest") or content_type
    return media_type in INDEX_MEDIA_TYPES or ("manifests" in doc and "layers" not in doc)


class RegistrySource(Source):
    """An image in a registry. `insecure_registries`: hosts allowed plain HTTP / unverified TLS;
    `timeout`: seconds per socket read; `resolved`: what digest_resolution found before this
    client existed (the anonymous HEAD), so it is not asked again; session/sleep for tests."""

    def __init__(
        self,
        ref: Reference,
        platform: Platform | None = None,
        insecure_registries: Iterable[str] = (),
        timeout: float | None = None,
        http_policy: HttpPolicy | None = None,
        session: requests.Session | None = None,
        sleep: Callable[[float], None] | None = None,
        resolved: ResolvedDigest | None = None,
        deadline: Deadline | None = None,
    ):
        self.ref = ref
        self.platform = platform
        policy = http_policy or HttpPolicy()
        if timeout is None and os.environ.get("IMGCHECK_REGISTRY_TIMEOUT"):
            timeout = parse_timeout(os.environ["IMGCHECK_REGISTRY_TIMEOUT"], "IMGCHECK_REGISTRY_TIMEOUT")
        if timeout is not None:
            from dataclasses import replace

            policy = replace(policy, connect_timeout=timeout, read_timeout=timeout)
        self.client = RegistryClient(
            self.ref, insecure_registries, policy, session=session, sleep=sleep, deadline=deadline
        )
        self._resolved = resolved
        self._asked = resolved is not None

    def resolve_digest(self) -> ResolvedDigest | None:
        """The digest the reference names now: its own, or its tag's from one HEAD (None when the
        registry does not say). Asked once: open() reuses it."""
        if not self._asked:
            self._resolved, self._asked = with_client(self.ref, self.client.head_manifest), True
        return self._resolved

    def open(self) -> OpenedImage:
        ref, client, where = self.ref, self.client, str(self.ref)
        notes: list[str] = []
        if ref.digest and ref.tag:
            notes.append(f"{where}: the digest is used; the tag {ref.tag!r} is ignored")
        resolved = self.resolve_digest()  # pinned, or asked once (here or before this client existed)
        if resolved:
            top = resolved.digest
            data, content_type, _ = client.get_manifest(top)
        else:  # the registry does not answer HEAD with a digest: the tag's manifest, hashed here
            data, content_type, top = client.get_manifest(ref.reference)
        doc = _doc(data, f"{where}: manifest")
        digest = top
        from_index = False
        for _depth in range(MAX_INDEX_DEPTH + 1):
            if not _is_index(doc, content_type):
                break
            wanted = self.platform or parse_platform(DEFAULT_PLATFORM)
            desc = select_manifest(doc, wanted, where)
            child = desc.get("digest")
            if not isinstance(child, str):
                raise BadInputError(f"{where}: index entry for {wanted} has no digest")
            parse_digest(child)
            data, content_type, _ = client.get_manifest(child)
            doc = _doc(data, f"{where}: manifest {child}")
            notes.append(f"{where}: index {digest} -> {wanted} manifest {child}")
            digest, from_index = child, True
        else:
            raise BadInputError(f"{where}: indexes nested deeper than {MAX_INDEX_DEPTH} levels")
        if doc.get("mediaType") is None and content_type in (OCI_MANIFEST, DOCKER_MANIFEST):
            doc = {**doc, "mediaType": content_type}
        layers = layers_of_manifest(doc, where)
        soci = index_digest(doc)  # a SOCI index v2 the (verified) manifest names: its gzip layers read by range
        get_manifest = lambda d: client.get_manifest(d)[0]  # noqa: E731
        if soci is not None:
            ztoc_of = SociIndex(soci, get_manifest, client.get_blob_bytes).ztoc
        else:  # a SOCI index v1 among the manifest's referrers, looked for when a large gzip layer is read
            ztoc_of = SociReferrers(digest, client.get_referrers, get_manifest, client.get_blob_bytes).ztoc
        config_digest, config_size = config_descriptor(doc, where)
        config_bytes = client.get_blob_bytes(config_digest, config_size, MAX_CONFIG_BYTES, "image config")
        config = check_config(_doc(config_bytes, f"{where}: image config"), where)
        platform = platform_of_config(config)
        self._check_platform(platform, from_index, where)
        return OpenedImage(
            reference=where,
            digest=digest,
            platform=platform,
            config=config,
            layers=with_diff_ids(layers, config, where),
            opener=self._open_layer,
            notes=notes,
            read_range=self._read_range,
            ztoc_of=ztoc_of,
        )

    def _check_platform(self, have: str | None, from_index: bool, where: str) -> None:
        wanted = self.platform or (parse_platform(DEFAULT_PLATFORM) if from_index else None)
        if wanted is None:
            return  # a single-platform image read without --platform is what the user named
        if have is None:
            raise BadInputError(f"{where}: image config names no os/architecture; cannot confirm {wanted}")
        got = parse_platform(have)
        if (got.os, got.architecture) != (wanted.os, wanted.architecture) or (
            wanted.variant is not None and got.variant != wanted.variant
        ):
            if from_index:
                raise BadInputError(f"{where}: the index lists {wanted} but that image's config says {got}")
            raise PlatformMismatchError(
                f"{where}: the image is {got}, not the requested {wanted} (it has no "
                f"index of platforms to choose from; available: {got})",
                (str(got),),
            )

    def _read_range(self, layer: LayerRef, start: int, end: int) -> bytes:
        return self.client.get_blob_range(layer.digest, start, end)

    def _open_layer(self, layer: LayerRef) -> VerifyingReader:
        body = self.client.open_blob(layer.digest, layer.size)
        return VerifyingReader(body, layer.digest, f"{self.ref}: layer {layer.digest}", layer.size)

    def close(self) -> None:
        self.client.close()
