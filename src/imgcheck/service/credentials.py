"""Registry credentials from the service config, handed to the registry source.

The registry source looks up credentials in $REGISTRY_AUTH_FILE first (containers-auth.json), then
Docker's config.json. The service writes the configured credentials to a private auth file next to
its database (mode 0600, written atomically), merged over any auth file already named by
$REGISTRY_AUTH_FILE, and points $REGISTRY_AUTH_FILE at it for this process. Registries without
configured credentials keep using Docker's config.json and credential helpers.
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
from collections.abc import MutableMapping
from typing import Any

from .config import ServiceConfig


def install_auth_file(config: ServiceConfig, env: MutableMapping[str, str] | None = None) -> str | None:
    env = os.environ if env is None else env
    auths: dict[str, dict[str, str]] = {}
    for reg in config.registries.values():
        if reg.username and reg.password:
            token = base64.b64encode(f"{reg.username}:{reg.password}".encode()).decode()
            auths[reg.host] = {"auth": token}
    if not auths:
        return None
    doc: dict[str, Any] = {}
    previous = env.get("REGISTRY_AUTH_FILE")
    if previous:
        try:
            with open(previous, "rb") as fh:
                loaded = json.load(fh)
            doc = loaded if isinstance(loaded, dict) else {}
        except (OSError, ValueError):
            doc = {}
    doc["auths"] = {**(doc.get("auths") or {}), **auths}
    path = os.path.join(os.path.dirname(os.path.abspath(config.database)), "registry-auth.json")
    fd, tmp = tempfile.mkstemp(prefix=".registry-auth.", dir=os.path.dirname(path))  # created 0600
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(doc, fh)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    env["REGISTRY_AUTH_FILE"] = path
    return path
