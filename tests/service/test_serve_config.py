"""The service config file: secrets from env/files, relative paths, and one-line errors for bad files."""

from __future__ import annotations

import os

import pytest

from imgcheck.errors import BadInputError, UnavailableError
from imgcheck.service.config import load_config


def write(tmp_path, text: str) -> str:
    p = tmp_path / "imgcheck.toml"
    p.write_text(text)
    return str(p)


GOOD = """
[server]
database = "state/imgcheck.db"
workers = 3

[registries.main]
host = "registry.example.com:5000"
username = "bot"
password_env = "REG_PW"
secret_file = "webhook-secret"

[fleets.prod]
selector = "pool=a100"
node_facts = ["nodes/"]
"""


def test_good_config(tmp_path):
    (tmp_path / "webhook-secret").write_text("from-a-file\n")
    c = load_config(write(tmp_path, GOOD), env={"REG_PW": "pw"})
    assert c.database == str(tmp_path / "state" / "imgcheck.db")
    assert c.workers == 3 and c.max_body_bytes == 1024 * 1024
    reg = c.registries["main"]
    assert (reg.host, reg.username, reg.password, reg.secret) == (
        "registry.example.com:5000",
        "bot",
        "pw",
        "from-a-file",
    )
    assert c.fleets["prod"].node_facts == (str(tmp_path / "nodes"),)
    assert c.default_registry() is reg
    # production defaults: bounded bodies, connections and shutdown; JSON logs; 90-day retention; open reads
    assert (c.body_timeout_seconds, c.max_connections, c.shutdown_timeout_seconds) == (10.0, 200, 10.0)
    assert (c.log_format, c.retention_days, c.read_token, reg.watch) == ("json", 90.0, None, ())


def test_retention_zero_keeps_everything_and_watch_and_read_token_parse(tmp_path):
    text = GOOD.replace("workers = 3", 'workers = 3\nretention_days = 0\nread_token_env = "RT"').replace(
        'secret_file = "webhook-secret"', 'secret = "s"\nwatch = ["team/*", "ml/trainer"]'
    )
    c = load_config(write(tmp_path, text), env={"REG_PW": "pw", "RT": "tok"})
    assert c.retention_days is None and c.read_token == "tok"
    assert c.registries["main"].watch == ("team/*", "ml/trainer")


@pytest.mark.parametrize(
    "text, message",
    [
        ("[server]\n", "database"),
        ('[server]\ndatabase="x"\n[fleets.a]\nselector="x"\n', "registries"),
        ('[server]\ndatabase="x"\n[registries.r]\nhost="h"\nsecret="s"\n', "fleets"),
        ('[server]\ndatabase="x"\n[registries.r]\nhost="h"\n[fleets.a]\nselector="x"\n', "secret"),
        ('[server]\ndatabase="x"\n[registries.r]\nhost="https://h/v2"\nsecret="s"\n[fleets.a]\nselector="x"\n', "host"),
        (
            '[server]\ndatabase="x"\nworkers=0\n[registries.r]\nhost="h"\nsecret="s"\n[fleets.a]\nselector="x"\n',
            "workers",
        ),
        ('[server]\ndatabase="x"\ntypo=1\n[registries.r]\nhost="h"\nsecret="s"\n[fleets.a]\nselector="x"\n', "typo"),
        (
            '[server]\ndatabase="x"\n[registries.r]\nhost="h"\nsecret="s"\nsecret_env="E"\n[fleets.a]\nselector="x"\n',
            "only one",
        ),
        ('[server]\ndatabase="x"\n[registries.r]\nhost="h"\nsecret_env="NOPE"\n[fleets.a]\nselector="x"\n', "NOPE"),
        ('[server]\ndatabase="x"\n[registries.r]\nhost="h"\nsecret="s"\n[fleets.a]\n', "selector"),
        (
            '[server]\ndatabase="x"\n[registries.r]\nhost="h"\nsecret="s"\n[fleets.a]\nselector="x"\n'
            '[notify]\nurl="ftp://x"\n',
            "url",
        ),
        ("[server\n", "not valid TOML"),
        (
            '[server]\ndatabase="x"\nlog_format="xml"\n[registries.r]\nhost="h"\nsecret="s"\n[fleets.a]\nselector="x"\n',
            "log_format",
        ),
        (
            '[server]\ndatabase="x"\nmax_connections=1\n[registries.r]\nhost="h"\nsecret="s"\n[fleets.a]\nselector="x"\n',
            "max_connections",
        ),
        (
            '[server]\ndatabase="x"\n[registries.r]\nhost="h"\nsecret="s"\nwatch=[" team/*"]\n[fleets.a]\nselector="x"\n',
            "watch",
        ),
        (
            '[server]\ndatabase="x"\nread_token_env="NOPE"\n[registries.r]\nhost="h"\nsecret="s"\n[fleets.a]\nselector="x"\n',
            "NOPE",
        ),
        (  # an empty path used to reach open(None): a TypeError traceback instead of this line
            '[server]\ndatabase="x"\n[registries.r]\nhost="h"\nsecret_file=""\n[fleets.a]\nselector="x"\n',
            "secret_file` is empty",
        ),
    ],
)
def test_bad_configs_name_the_problem(tmp_path, text, message):
    with pytest.raises(BadInputError, match=message):
        load_config(write(tmp_path, text), env={})


@pytest.mark.parametrize(
    "server,registry,env",
    [
        ("", 'secret = "change-me"', {}),  # inline
        ("", 'secret_env = "S"', {"S": "Change-Me "}),  # from the example Secret through the environment
        ("", 'secret = "s"\nusername = "u"\npassword_env = "P"', {"P": "change-me"}),
        ('database_url_env = "U"', 'secret = "s"', {"U": "postgresql://imgcheck:change-me@db:5432/imgcheck"}),
        ("", 'secret = "s"', {"IMGCHECK_CACHE_URL": "postgresql://imgcheck_cache:change-me@db/imgcheck"}),
    ],
)
def test_the_example_secrets_placeholder_is_refused(tmp_path, capsys, server, registry, env):
    """`kubectl apply -k` of the example deployed a service whose secret is printed in the repository."""
    text = f'[server]\ndatabase = "x"\n{server}\n[registries.r]\nhost = "h"\n{registry}\n[fleets.a]\nselector = "x"\n'
    with pytest.raises(BadInputError, match="placeholder 'change-me'"):
        load_config(write(tmp_path, text), env=env)


def test_missing_config_is_unavailable(tmp_path):
    with pytest.raises(UnavailableError):
        load_config(str(tmp_path / "none.toml"))


def test_serve_command_reports_a_bad_config_in_one_line(tmp_path, capsys):
    from imgcheck.cli.main import main

    assert main(["serve", "--config", write(tmp_path, "[server\n")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("imgcheck: error:") and err.count("\n") == 1
    assert main(["serve", "--config", str(tmp_path / "missing.toml")]) == 3


def test_example_config_in_deploy_parses():
    here = os.path.dirname(os.path.abspath(__file__))
    example = os.path.join(here, "..", "..", "deploy", "service", "imgcheck.toml")
    c = load_config(example, env={"IMGCHECK_WEBHOOK_SECRET": "x", "IMGCHECK_REGISTRY_PASSWORD": "y"})
    assert c.registries and c.fleets


def test_config_in_the_kubernetes_manifest_parses(tmp_path):
    import yaml

    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "..", "deploy", "service", "deployment.yaml")) as fh:
        docs = list(yaml.safe_load_all(fh))
    kinds = {d["kind"]: d for d in docs}
    assert {"Deployment", "Service", "ConfigMap"} <= set(kinds)
    assert kinds["Deployment"]["spec"]["replicas"] == 1  # SQLite: one writer
    c = load_config(
        write(tmp_path, kinds["ConfigMap"]["data"]["imgcheck.toml"]),
        env={"IMGCHECK_WEBHOOK_SECRET": "x", "IMGCHECK_REGISTRY_PASSWORD": "y"},
    )
    assert c.database == "/var/lib/imgcheck/imgcheck.db"


def test_serve_refuses_a_database_held_by_another_process(tmp_path, capsys):
    from servicekit import write_config

    from imgcheck.cli.main import main
    from imgcheck.service.store import Store

    db = str(tmp_path / "q.db")
    cfg = write_config(str(tmp_path / "c.toml"), "127.0.0.1:1", database=db)
    holder = Store(db)
    holder.acquire_instance_lock()
    try:
        assert main(["serve", "--config", cfg, "--port", "1"]) == 3
        assert "another imgcheck serve is using this database" in capsys.readouterr().err
    finally:
        holder.close()
