"""The README's two commands: the second (`bash .ci/run`) sets up everything the tests need and ends with
exactly the test command the README names; what the tests import is what that setup installs."""

from __future__ import annotations

import ast
import importlib.metadata as md
import os
import re
import shlex
import subprocess
import sys
import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEST_COMMAND = ".venv/bin/python -m pytest -q"


def _readme() -> str:
    return open(os.path.join(REPO, "README.md"), encoding="utf-8").read()


def _ci_run() -> str:
    return open(os.path.join(REPO, ".ci", "run"), encoding="utf-8").read()


def _commands(script: str) -> list[str]:
    return [line.strip() for line in script.splitlines() if line.strip() and not line.strip().startswith("#")]


def test_two_commands_second_is_ci_run():
    section = _readme().split("## Two commands", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    assert len(blocks) == 2
    assert "pip install -q -e ." in blocks[0] and "examples/bookworm-rdma" in blocks[0]
    assert blocks[1].strip() == "bash .ci/run"
    assert f"`{TEST_COMMAND}`" in section  # said plainly: what it runs at its end, to rerun alone


def test_ci_run_ends_with_the_readme_test_command_and_parses():
    assert _commands(_ci_run())[-1] == TEST_COMMAND
    subprocess.run(["bash", "-n", os.path.join(REPO, ".ci", "run")], check=True)
    assert "pip install -q -e '.[test]'" in _ci_run()


def test_readme_names_the_packages_ci_run_installs():
    array = re.search(r"APT_PACKAGES=\((.*?)\n\)", _ci_run(), re.S).group(1)
    installed = {word for line in array.splitlines() for word in shlex.split(line, comments=True)}
    section = _readme().split("## Two commands", 1)[1].split("\n## ", 1)[0]
    named = re.search(r"Debian packages the tests use \(`([^`]+)`\)", section).group(1).split()
    assert set(named) <= installed, set(named) - installed
    assert {"python3-venv", "docker.io", "docker-registry", "mmdebstrap", "gcc"} <= installed


def _closure(requirements: list[str]) -> set[str]:
    """Distributions installed for these requirements (with their own dependencies, no extras)."""
    seen: set[str] = set()
    todo = [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(req.name)
        if name in seen:
            continue
        seen.add(name)
        try:
            todo += [Requirement(r) for r in (md.requires(req.name) or [])]
        except md.PackageNotFoundError:
            pass
    return seen


def _test_imports() -> set[str]:
    local = set()
    modules = set()
    for dirpath, _, files in os.walk(os.path.join(REPO, "tests")):
        for name in files:
            if not name.endswith(".py"):
                continue
            local.add(name[:-3])
            tree = ast.parse(open(os.path.join(dirpath, name), encoding="utf-8").read())
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    modules |= {a.name.split(".")[0] for a in node.names}
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    modules.add(node.module.split(".")[0])
    return modules - local - set(sys.stdlib_module_names) - {"imgcheck", "__future__"}


def test_everything_the_tests_import_comes_with_the_test_extra():
    """`pip install -e '.[test]'` (what .ci/run does) brings every third-party module a test imports."""
    project = tomllib.load(open(os.path.join(REPO, "pyproject.toml"), "rb"))["project"]
    provided = _closure(project["dependencies"] + project["optional-dependencies"]["test"])
    by_module = md.packages_distributions()
    missing = {
        m: by_module.get(m)
        for m in _test_imports()
        if not {canonicalize_name(d) for d in by_module.get(m, [])} & provided
    }
    assert not missing, f"imported by tests but not installed by the test extra: {missing}"
