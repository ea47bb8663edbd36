"""Webhook authentication: shared secret (plain or Bearer) and HMAC-SHA256 body signatures."""

from __future__ import annotations

import hashlib
import hmac

from starlette.datastructures import Headers

from imgcheck.service.auth import authenticate, sign
from imgcheck.service.config import RegistryConfig

BODY = b'{"events": []}'


def reg(**kw) -> RegistryConfig:
    return RegistryConfig(name="main", host="r.example", **kw)


def test_shared_secret_plain_or_bearer():
    r = reg(secret="s3cret")
    assert authenticate(r, Headers({"authorization": "Bearer s3cret"}), BODY)
    assert authenticate(r, Headers({"Authorization": "s3cret"}), BODY)
    for wrong in ("Bearer s3cre", "Bearer s3cretX", "Basic s3cret", "", "bearer  s3cret x"):
        assert not authenticate(r, Headers({"Authorization": wrong}), BODY), wrong
    assert not authenticate(r, Headers({}), BODY)


def test_shared_secret_in_a_custom_header():
    r = reg(secret="s3cret", secret_header="X-Imgcheck-Token")
    assert authenticate(r, Headers({"x-imgcheck-token": "s3cret"}), BODY)
    assert not authenticate(r, Headers({"Authorization": "Bearer s3cret"}), BODY)


def test_hmac_signature_over_the_exact_body():
    r = reg(hmac_secret="k3y")
    expected = "sha256=" + hmac.new(b"k3y", BODY, hashlib.sha256).hexdigest()
    assert sign(BODY, "k3y") == expected
    assert authenticate(r, Headers({"X-Hub-Signature-256": expected}), BODY)
    assert not authenticate(r, Headers({"X-Hub-Signature-256": expected}), BODY + b" ")
    assert not authenticate(r, Headers({"X-Hub-Signature-256": sign(BODY, "other")}), BODY)
    assert not authenticate(r, Headers({"X-Hub-Signature-256": "sha256=\u00e9"}), BODY)
    assert not authenticate(r, Headers({}), BODY)


def test_either_method_suffices_when_both_are_configured():
    r = reg(secret="s3cret", hmac_secret="k3y")
    assert authenticate(r, Headers({"Authorization": "Bearer s3cret"}), BODY)
    assert authenticate(r, Headers({"X-Hub-Signature-256": sign(BODY, "k3y")}), BODY)
    assert not authenticate(r, Headers({"Authorization": "Bearer k3y"}), BODY)


def test_secrets_do_not_appear_in_repr():
    assert "s3cret" not in repr(reg(secret="s3cret", password="pw", username="u"))
