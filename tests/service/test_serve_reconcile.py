"""Pushes made while `imgcheck serve` was down are found on start (catalog + tags API) and checked.

Debian's docker-registry with htpasswd auth (so the catalog's own token scope and the service's
pull credentials are exercised) and no notifications at all: the service learns of the images
only by listing the registry. The real bookworm image is pushed under two tags of a watched
repository, once to an unwatched one, plus a cosign-style signature tag.
"""

from __future__ import annotations

import pytest
import requests
from registryfixture import PASSWORD, USER, RegistryServer, htpasswd_line
from registrypush import Pusher, push_rootfs_image
from servicekit import ServiceProcess, db_rows, imgcheck_home, need_registry, wait_for, write_config  # noqa: F401 (fixture)

pytestmark = pytest.mark.registry


def test_pushes_during_downtime_are_reconciled_on_start(tmp_path, imgcheck_home, rootfs):
    need_registry()
    htpasswd = tmp_path / "htpasswd"
    htpasswd.write_text(htpasswd_line(USER, PASSWORD))
    registry = RegistryServer(
        str(tmp_path / "registry"), f"auth:\n  htpasswd:\n    realm: imgcheck-test\n    path: {htpasswd}\n"
    )
    db = str(tmp_path / "q.db")
    cfg = write_config(
        str(tmp_path / "c.toml"),
        registry.host,
        database=db,
        registry_extra=f'username = "{USER}"\npassword = "{PASSWORD}"\nwatch = ["team/*"]\n',
    )
    proc = None
    try:
        pusher = Pusher(registry.url, auth=(USER, PASSWORD))
        digest = push_rootfs_image(pusher, "team/trainer", "v1", rootfs("bookworm"))
        push_rootfs_image(pusher, "team/trainer", "v1-copy", rootfs("bookworm"))
        push_rootfs_image(pusher, "other/app", "v1", rootfs("bookworm"))  # not watched
        manifest = requests.get(
            f"{registry.url}/v2/team/trainer/manifests/v1",
            auth=(USER, PASSWORD),
            timeout=10,
            headers={"Accept": "application/vnd.oci.image.manifest.v1+json"},
        ).content
        # a cosign-style signature tag: an artifact, not an image, so not queued (its tag is not recorded)
        pusher.push_manifest(
            "team/trainer", f"sha256-{'e' * 64}.sig", manifest, "application/vnd.oci.image.manifest.v1+json"
        )

        proc = ServiceProcess(cfg, str(tmp_path), log_level="info")
        wait_for(
            lambda: db_rows(db, "SELECT state FROM jobs") in ([("done",)], [("failed",)]),
            90,
            "the reconciled image to be checked",
        )
        assert db_rows(db, "SELECT registry, repository, digest, state FROM jobs") == [
            ("main", "team/trainer", digest, "done")
        ]
        assert sorted(r[0] for r in db_rows(db, "SELECT tag FROM job_tags")) == ["v1", "v1-copy"]
        assert db_rows(db, "SELECT fleet, verdict FROM results ORDER BY fleet") == [("lab", "fail"), ("prod", "ok")]
        proc.kill()

        # a second start finds nothing new: the same digest is not checked again
        proc = ServiceProcess(cfg, str(tmp_path), log_level="info")
        wait_for(lambda: '"event": "reconcile.done"' in proc.output(), 30, "the second reconcile")
        assert db_rows(db, "SELECT COUNT(*) FROM jobs") == [(1,)] and db_rows(db, "SELECT COUNT(*) FROM results") == [
            (2,)
        ]
    finally:
        if proc:
            proc.kill()
        registry.stop()
