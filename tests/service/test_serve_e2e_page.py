"""The status page and the readable report, rendered by headless Chromium; signatures are skipped.

Debian's docker-registry notifies the service of a push of the real bookworm rdma image and of a
cosign signature, laid out as cosign writes one (an OCI image config and one
`application/vnd.dev.cosign.simplesigning.v1+json` layer holding the simple-signing payload;
the layout seen in go-containerregistry's logs of real cosign signatures). The signature is
pushed twice: under cosign's own `sha256-<hex>.sig` tag (ignored from the event alone) and under
an ordinary tag (recognised from its manifest): neither is failed.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile

import pytest
from registryfixture import RegistryServer
from registrypush import Pusher, push_rootfs_image
from servicekit import (
    ThreadedService,
    db_rows,
    free_port,
    imgcheck_home,
    need_registry,
    notifications_yaml,
    wait_for,
    write_config,
)  # noqa: F401 (fixture)

pytestmark = pytest.mark.registry
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"


def render(chromium: str, url: str) -> str:
    with tempfile.TemporaryDirectory() as profile:
        out = subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={profile}",
                "--dump-dom",
                url,
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert out.stdout, out.stderr[-2000:]
    return out.stdout


def push_cosign_signature(pusher: Pusher, repo: str, image_digest: str, tag: str) -> str:
    payload = json.dumps(
        {
            "critical": {
                "identity": {"docker-reference": f"127.0.0.1/{repo}"},
                "image": {"docker-manifest-digest": image_digest},
                "type": "cosign container image signature",
            },
            "optional": None,
        }
    ).encode()
    config = json.dumps(
        {
            "architecture": "",
            "config": {},
            "created": "0001-01-01T00:00:00Z",
            "history": [{"created": "0001-01-01T00:00:00Z"}],
            "os": "",
            "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(payload).hexdigest()]},
        }
    ).encode()
    layer_digest = pusher.push_blob(repo, payload)
    config_digest = pusher.push_blob(repo, config)
    manifest = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "config": {
                "mediaType": "application/vnd.oci.image.config.v1+json",
                "size": len(config),
                "digest": config_digest,
            },
            "layers": [
                {
                    "mediaType": "application/vnd.dev.cosign.simplesigning.v1+json",
                    "size": len(payload),
                    "digest": layer_digest,
                    "annotations": {"dev.cosignproject.cosign/signature": "MEUCIQDtest"},
                }
            ],
        }
    ).encode()
    return pusher.push_manifest(repo, tag, manifest, OCI_MANIFEST)


def test_page_shows_top_findings_and_links_a_readable_report(tmp_path, imgcheck_home, rootfs):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    need_registry()
    port = free_port()
    registry = RegistryServer(str(tmp_path / "registry"), notifications_yaml(f"http://127.0.0.1:{port}/webhook"))
    db = str(tmp_path / "q.db")
    service = None
    try:
        service = ThreadedService(write_config(str(tmp_path / "c.toml"), registry.host, database=db), port=port)
        pusher = Pusher(registry.url)
        digest = push_rootfs_image(pusher, "team/trainer", "v1", rootfs("bookworm"))
        sig = push_cosign_signature(pusher, "team/trainer", digest, f"sha256-{digest[7:]}.sig")
        push_cosign_signature(pusher, "team/trainer", digest, "signed-v1")
        wait_for(
            lambda: (
                db_rows(db, "SELECT COUNT(*) FROM jobs WHERE state IN ('done', 'failed')")[0][0] == 2
                and db_rows(db, "SELECT COUNT(*) FROM job_tags WHERE tag = 'signed-v1'")[0][0] == 1
            ),
            60,
            "the image and the signature to be handled",
        )
        rows = dict(db_rows(db, "SELECT digest, state || ' ' || COALESCE(last_error, '') FROM jobs"))
        assert rows[digest] == "done "
        assert rows[sig].startswith("done skipped: an artifact with application/vnd.dev.cosign.simplesigning.v1+json")
        assert db_rows(db, "SELECT COUNT(*) FROM results WHERE digest = ?", (sig,)) == [(0,)]
        assert db_rows(db, "SELECT COUNT(*) FROM job_tags WHERE tag LIKE 'sha256-%'") == [(0,)]

        page = render(chromium, service.base + "/")
        row = page[page.index(f'data-digest="{digest}"') :]
        row = row[: row.index("</tr>")]
        assert "MEMLOCK-TOO-LOW" in row and "sev-error" in row and "(lab)" in row
        assert f'href="/report/{digest.replace(":", "%3A")}?repository=team%2Ftrainer"' in row
        sig_row = page[page.index(f'data-digest="{sig}"') :]
        assert 'class="state-skipped">skipped' in sig_row[: sig_row.index("</tr>")]

        report = render(chromium, f"{service.base}/report/{digest}?repository=team%2Ftrainer")
        assert "<h1>imgcheck report</h1>" in report and '"findings"' not in report  # HTML, not JSON
        lab = report[report.index('data-fleet="lab"') :]
        lab = lab[: lab.index("</section>")]
        assert 'verdict-fail">fail' in lab and "MEMLOCK-TOO-LOW" in lab
        assert "<dt>Fix</dt>" in lab and "<dt>Why</dt>" in lab and "<dt>Evidence</dt>" in lab
        prod = report[report.index('data-fleet="prod"') :]
        assert 'verdict-ok">ok' in prod[: prod.index("</section>")]
    finally:
        if service:
            service.stop()
        registry.stop()
