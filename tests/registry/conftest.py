"""Registry fixtures (tests/registryfixture.py) for the tests in this directory."""

from registryfixture import basic_registry, registry, tls_registry, token_registry  # noqa: F401
