"""Reading a bare upstream mirror (the `fetch` tool's /work/.mirror/<owner>+<name>/repo) tag by tag.

Shared by the generators in this folder; only git plumbing (tag, grep -l, cat-file) is used, nothing is built.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Iterable


class Mirror:
    def __init__(self, path: str) -> None:
        self.path = path

    def git(self, *args: str) -> str:
        return subprocess.run(
            ["git", "-C", self.path, *args], check=True, capture_output=True, text=True, errors="replace"
        ).stdout

    def tags(self, pattern: str) -> list[str]:
        rx = re.compile(pattern)
        return [t for t in self.git("tag").split() if rx.fullmatch(t)]

    def files_with(self, tag: str, needle: str, paths: Iterable[str] = ()) -> list[str]:
        try:
            out = self.git("grep", "-l", "-F", needle, tag, "--", *paths)
        except subprocess.CalledProcessError:
            return []  # git grep exits 1 when nothing matches
        return [line.split(":", 1)[1] for line in out.splitlines() if ":" in line]

    def show(self, tag: str, path: str) -> str | None:
        try:
            return self.git("show", f"{tag}:{path}")
        except subprocess.CalledProcessError:
            return None

    def show_many(self, tag: str, paths: list[str]) -> dict[str, str]:
        """Several files of one tag in one `git cat-file --batch` call."""
        if not paths:
            return {}
        spec = "".join(f"{tag}:{p}\n" for p in paths)
        raw = subprocess.run(
            ["git", "-C", self.path, "cat-file", "--batch"], input=spec.encode(), check=True, capture_output=True
        ).stdout
        out: dict[str, str] = {}
        pos = 0
        for p in paths:
            nl = raw.index(b"\n", pos)
            header = raw[pos:nl].split()
            pos = nl + 1
            if len(header) < 3 or header[1] == b"missing":
                continue
            size = int(header[2])
            out[p] = raw[pos : pos + size].decode("utf-8", "replace")
            pos += size + 1
        return out

    def tag_date(self, tag: str) -> str:
        return self.git("log", "-1", "--format=%cs", tag).strip()


def version_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v))


def split_args(text: str) -> list[str]:
    """Split a C argument list at top-level commas (not inside (), {}, [] or string literals)."""
    args, depth, cur, i, n = [], 0, [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            cur.append(text[i : j + 1])
            i = j + 1
            continue
        if c in "({[":
            depth += 1
        elif c in ")}]":
            depth -= 1
        if c == "," and depth == 0:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    if "".join(cur).strip():
        args.append("".join(cur).strip())
    return args


def strip_comments(src: str) -> str:
    """C comments out, string literals kept (a // inside a string is not a comment)."""
    return re.sub(r'("(?:\\.|[^"\\])*")|/\*.*?\*/|//[^\n]*', lambda m: m.group(1) or " ", src, flags=re.S)


def c_string(expr: str) -> str | None:
    """The value of a C string-literal expression ("A" "B" -> "AB"), or None when it is not only literals."""
    parts = re.findall(r'"((?:\\.|[^"\\])*)"', expr)
    rest = re.sub(r'"(?:\\.|[^"\\])*"', "", expr).strip()
    if not parts or rest:
        return None
    return "".join(parts).encode().decode("unicode_escape", "replace")


def balanced(src: str, start: int, open_c: str = "{", close_c: str = "}") -> int:
    """Index just after the bracket matching the one at `start` (string literals skipped)."""
    depth, i, n = 0, start, len(src)
    while i < n:
        c = src[i]
        if c == '"':
            i += 1
            while i < n and src[i] != '"':
                i += 2 if src[i] == "\\" else 1
        elif c == open_c:
            depth += 1
        elif c == close_c:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


def null_note(*args: object) -> str | None:
    """Why a parameter row's fields are null (the validator wants every null explained): the last three
    arguments are its default, the release that removed it and its type."""
    *head, removed, typ = args
    default = head[-1]
    why = []
    if default is None:
        why.append("default not a literal in the source (a macro, computed at run time, or not declared with the name)")
    if removed is None:
        why.append("removed_in null: still read by the newest release covered")
    if typ is None:
        why.append("type not stated by the declaration")
    return "; ".join(why) or None


def write_generated(argv: list[str], usage: str | None, build: Callable[[str], dict], out: object) -> int:
    """The main of a generator that reads one mirror (argv[1]) and writes one catalog: usage without it."""
    import json  # only the generators that write need it

    if len(argv) != 2:
        print(usage)
        return 2
    data = build(argv[1])
    with open(str(out), "w", encoding="utf-8") as fh:
        fh.write(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps(data["coverage"]))
    return 0
