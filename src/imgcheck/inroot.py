"""Symlinks followed inside a root, as the kernel follows them inside a chroot: written once.

Security-relevant: an image's or a mounted host's links must never lead out of its root. Absolute
targets restart at the root, `..` stops at it, and more than MAX_LINKS links (Linux's MAXSYMLINKS,
ELOOP) or a target no filesystem could hold (PATH_MAX) ends the walk. Used by the merged image
view (view/fileview.py) and by the node probe's host root (node/hostroot.py); each says, through
`link_target`, what a path is in its own world.
"""

from __future__ import annotations

from collections.abc import Callable

MAX_LINKS = 40  # Linux's MAXSYMLINKS
PATH_MAX = 4096  # Linux's, with the terminating NUL: a longer path or symlink target gets ENAMETOOLONG
NAME_MAX = 255  # bytes in one path component (ext4, xfs, overlayfs)
MAX_LINK_TARGET = PATH_MAX - 1  # no filesystem holds a longer symlink (Docker's unpack fails on one)


class LinkLoop(Exception):
    """Too many links, or one too long to follow: the path does not resolve (ELOOP, ENAMETOOLONG)."""


def resolve_in_root(path: str, link_target: Callable[[list[str]], str | None]) -> list[str]:
    """The components below the root that `path` really names, every symlink followed.

    `link_target(parts)` gets the components of a path whose parents are already resolved and
    returns its symlink target, or None when it is not a symlink; it may raise to stop the walk
    (the host root does when a component is missing).
    """
    # `todo` is a stack, next component last: a target of 500,000 '..' costs 500,000 steps,
    # where taking from the front of a list cost that many squared.
    todo = [p for p in reversed(path.split("/")) if p not in ("", ".")]
    done: list[str] = []
    links = 0
    while todo:
        part = todo.pop()
        if part == "..":
            if done:
                done.pop()
            continue
        target = link_target(done + [part])
        if target is not None:
            links += 1
            if links > MAX_LINKS or len(target) > MAX_LINK_TARGET:
                raise LinkLoop(path)
            if target.startswith("/"):
                done = []  # absolute targets are relative to the root, not to the machine reading it
            todo.extend(p for p in reversed(target.split("/")) if p not in ("", "."))
            continue
        done.append(part)
    return done
