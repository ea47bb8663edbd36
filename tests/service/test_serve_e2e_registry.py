"""End to end with the real registry: Debian's docker-registry notifies the service of a push.

The registry (htpasswd auth, so the service's configured pull credentials are exercised) sends its
notification envelopes to the service's /webhook with a Bearer secret; the service pulls the real
Debian bookworm rdma image back from it and stores one report per fleet. The stored facts must be
the facts `imgcheck inspect` reads from the same reference, and the HTML page, rendered by
headless Chromium, must show the verdicts.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

import pytest
import requests
from registryfixture import PASSWORD, USER, RegistryServer, htpasswd_line
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
)  # noqa: F401 (imgcheck_home is a fixture)

from imgcheck.sources.read_options import ReadOptions

pytestmark = pytest.mark.registry


@pytest.fixture
def stack(tmp_path, imgcheck_home):
    need_registry()
    port = free_port()
    htpasswd = tmp_path / "htpasswd"
    htpasswd.write_text(htpasswd_line(USER, PASSWORD))
    registry = RegistryServer(
        str(tmp_path / "registry"),
        f"auth:\n  htpasswd:\n    realm: imgcheck-test\n    path: {htpasswd}\n"
        + notifications_yaml(f"http://127.0.0.1:{port}/webhook"),
    )
    db = str(tmp_path / "state" / "imgcheck.db")
    cfg = write_config(
        str(tmp_path / "imgcheck.toml"),
        registry.host,
        database=db,
        registry_extra=f'username = "{USER}"\npassword_env = "TEST_REGISTRY_PASSWORD"\n',
    )
    os.environ["TEST_REGISTRY_PASSWORD"] = PASSWORD
    try:
        service = ThreadedService(cfg, port=port)
    except BaseException:
        registry.stop()
        raise
    finally:
        del os.environ["TEST_REGISTRY_PASSWORD"]
    yield registry, service, db
    service.stop()
    registry.stop()


def test_push_to_real_registry_is_checked_and_served(stack, rootfs):
    from imgcheck import api
    from imgcheck.model.env_redact import redact_facts
    from imgcheck.model.serde import to_dict

    registry, service, db = stack
    pusher = Pusher(registry.url, auth=(USER, PASSWORD))
    digest = push_rootfs_image(pusher, "team/trainer", "v1", rootfs("bookworm"))

    wait_for(
        lambda: db_rows(db, "SELECT state FROM jobs WHERE digest = ?", (digest,)) in ([("done",)], [("failed",)]),
        60,
        "the pushed image to be checked",
    )
    job = requests.get(f"{service.base}/results/{digest}", timeout=10).json()["images"][0]
    assert job["state"] == "done", job["last_error"]
    assert (job["repository"], job["tags"], job["attempts"]) == ("team/trainer", ["v1"], 1)
    assert job["verdicts"] == {"lab": "fail", "prod": "ok"}

    # the stored facts are what `imgcheck inspect` reads from the same image (no cache: read afresh)
    lab = requests.get(f"{service.base}/results/{digest}", params={"fleet": "lab"}, timeout=10).json()
    reference = f"registry:{registry.host}/team/trainer@{digest}"
    fresh = api.inspect_image(reference, ReadOptions(use_cache=False))
    assert lab["image"] == to_dict(redact_facts(fresh))
    assert lab["image"]["digest"] == digest
    assert lab["image"]["rdma"]["libibverbs"]["version"] == "1.14.44.0"
    assert "MEMLOCK-TOO-LOW" in {f["id"] for f in lab["findings"] if f["severity"] == "error"}

    # the registry sends blob pushes too: they were ignored, not queued
    metrics = requests.get(f"{service.base}/metrics", timeout=10).text
    assert 'imgcheck_events_received_total{outcome="queued"} 1.0' in metrics
    ignored = [l for l in metrics.splitlines() if l.startswith('imgcheck_events_received_total{outcome="ignored"}')]
    assert ignored and float(ignored[0].split()[-1]) >= 2

    # pushing the same manifest again (a new event id, same digest): still one job, one result per fleet
    manifest = requests.get(
        f"{registry.url}/v2/team/trainer/manifests/{digest}",
        auth=(USER, PASSWORD),
        headers={"Accept": "application/vnd.oci.image.manifest.v1+json"},
        timeout=10,
    )
    pusher.push_manifest("team/trainer", "v1-again", manifest.content, "application/vnd.oci.image.manifest.v1+json")
    wait_for(lambda: db_rows(db, "SELECT COUNT(*) FROM job_tags")[0][0] == 2, 30, "the second push event")
    assert db_rows(db, "SELECT COUNT(*) FROM jobs")[0][0] == 1
    assert db_rows(db, "SELECT fleet, verdict FROM results ORDER BY fleet") == [("lab", "fail"), ("prod", "ok")]

    # the HTML page, rendered by a real browser
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium): HTML page not rendered")
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
                service.base + "/",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    dom = out.stdout
    assert f'data-digest="{digest}"' in dom, out.stderr[-2000:]
    row = dom[dom.index(f'data-digest="{digest}"') :]
    row = row[: row.index("</tr>")]
    assert 'data-fleet="lab">fail</td>' in row and 'data-fleet="prod">ok</td>' in row
    assert "team/trainer" in row and "v1, v1-again" in row
