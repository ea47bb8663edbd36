"""A registry's token realm cannot point requests (and credentials) at internal addresses."""

from __future__ import annotations

import pytest

from imgcheck.sources.registry_auth import _internal_address


@pytest.mark.parametrize(
    "host,internal",
    [
        ("169.254.169.254", True),  # cloud metadata service
        ("10.1.2.3", True),
        ("192.168.0.1", True),
        ("127.0.0.1", True),
        ("::1", True),
        ("localhost", True),
        ("fe80::1", True),
        ("8.8.8.8", False),
        ("auth.docker.io", False),
    ],
)
def test_internal_addresses(host, internal):
    assert _internal_address(host) is internal


class NoNetwork:
    def send(self, *args, **kwargs):
        raise AssertionError("no request may be sent to an internal realm")


def test_public_registry_cannot_send_token_request_to_metadata_service():
    from imgcheck.errors import UnavailableError
    from imgcheck.sources.registry_auth import RegistryAuth

    auth = RegistryAuth(
        "registry.example.com",
        "team/app",
        NoNetwork(),
        may_use_http=lambda host: True,
        lookup=lambda registry, repo: None,
    )
    with pytest.raises(UnavailableError, match="internal address"):
        auth._token({"realm": "http://169.254.169.254/latest/meta-data/token"}, "repository:team/app:pull")
