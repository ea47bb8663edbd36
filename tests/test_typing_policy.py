"""mypy --strict covers the package (issue 38) and stays honest about it.

`.ci/run` runs `mypy` with [tool.mypy] of pyproject.toml; these tests hold that configuration to what
CONTRIBUTING.md ("Linters") promises: strict over all of src/imgcheck (a package may be left out only by
`exclude` while it is rewritten), no blanket overrides, and every `# type: ignore` narrowed to an error code
and followed by the reason it is needed.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "imgcheck"
LOOSENING = ("ignore_errors", "ignore_missing_imports", "follow_untyped_imports")
IGNORE = re.compile(r"#\s*type:\s*ignore(?P<code>\[[a-z0-9-]+(?:,\s*[a-z0-9-]+)*\])?(?P<rest>.*)$")


def _config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]


def _checked_files() -> list[Path]:
    excluded = [re.compile(rx) for rx in _config().get("exclude", [])]
    return [
        path
        for path in sorted(SRC.rglob("*.py"))
        if not any(rx.search(path.relative_to(ROOT).as_posix()) for rx in excluded)
    ]


def test_mypy_is_strict_over_the_whole_package():
    cfg = _config()
    assert cfg.get("strict") is True
    assert cfg.get("files") == ["src/imgcheck"], "check the whole package; leave a package out only by `exclude`"
    for key in LOOSENING:
        assert key not in cfg, f"[tool.mypy] {key} turns checking off for every module"
    for override in cfg.get("overrides", []):
        loosened = sorted(k for k in override if k in LOOSENING or (k.startswith("disallow_") and not override[k]))
        assert not loosened, f"override for {override.get('module')} loosens {loosened}: annotate instead"


def test_all_but_the_excluded_packages_are_checked():
    """An `exclude` names a package being rewritten, not a module that is merely hard to annotate."""
    checked = {p.relative_to(SRC).parts[0] for p in _checked_files()}
    packages = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    left_out = packages - checked
    assert not left_out, f"packages mypy does not check: {sorted(left_out)}"


def test_every_type_ignore_names_its_code_and_why():
    bad = []
    for path in _checked_files():
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, 1):
            m = IGNORE.search(line)
            # the why follows the ignore, or is the comment line just above it
            above = lines[number - 2].lstrip() if number > 1 else ""
            why = m is not None and ("#" in m.group("rest") or above.startswith("#"))
            if m and (not m.group("code") or not why):
                bad.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not bad, "a `# type: ignore` needs its [code] and a `# why` (CONTRIBUTING.md, Linters):\n" + ("\n".join(bad))


def test_the_policy_check_sees_a_bare_ignore():
    """The pattern above catches what it is meant to (a check that matches nothing would pass forever)."""
    assert IGNORE.search("x = f()  # type: ignore")
    assert not IGNORE.search("x = f()  # type: ignore").group("code")
    m = IGNORE.search("import yaml  # type: ignore[import-untyped]  # ships no type hints")
    assert m and m.group("code") == "[import-untyped]" and "#" in m.group("rest")
    m = IGNORE.search("y = g()  # type: ignore[arg-type]")
    assert m and "#" not in m.group("rest")
