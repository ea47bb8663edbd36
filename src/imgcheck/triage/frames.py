"""Stack frames in a log: the function, library and source file each frame names.

The forms read are the backtraces the MPI stack and its neighbours print when a process crashes:
- UCX's signal handler (openucx/ucx src/ucs/debug/debug.c): " 9 0x000000000000de00 ucm_prevent_dl_unload()
  /path/src/ucm/util/sys.c:311", or, without debug information, " 3  /usr/lib64/libucs.so.0(func+0x2e) [0x7f...]";
- Open MPI's opal_backtrace (open-mpi/ompi opal/util/stacktrace.c): "[host:123] [ 3] /opt/lib/libmpi.so.40(
  ompi_mpi_finalize+0x12)[0x7f...]";
- glibc's backtrace_symbols ("lib.so(func+0x12) [0x...]") and gdb ("#3 0x... in func (args) at file.c:12",
  "#4 0x... in func () from /usr/lib/libucp.so.0");
- Julia's "hcoll_create_mpi_type at /opt/mellanox/hcoll/lib/libhcoll.so.1 (unknown line)".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_FRAMES = 48  # frames kept per writer: the first crash's stack, not a whole core dump
MAX_STACK_LINES = 16  # release and build lines kept per writer (ucx_info -v, ompi_info, mpirun --version)
# substrings of the lines that show a component's release or build (catalogs/mpi_stack_components.json release-line
# and build-line rows say which): a cheap test before any pattern
STACK_LINE_HINTS = ("# Library version:", "# UCT version=", "# configured with:", "Open MPI", "Configure command line:")

# a frame's leading index: UCX " 9 0x...", Open MPI "[host:pid] [ 9] ", gdb "#9  0x..."
_UCX = re.compile(
    r"^\s*(?P<n>\d+)\s+0x[0-9a-fA-F]+\s+(?P<fn>[A-Za-z_.][\w.:~<>]*)\(\)\s+(?P<file>\S*)",
)
_SYMBOLS = re.compile(
    r"^(?:\s*\d+\s+|\s*\[[^\]]*\]\s*\[\s*\d+\]\s*|\s*)(?P<lib>/?[\w.+\-/]*\.so[\w.]*)"
    r"\((?P<fn>[A-Za-z_][\w.]*)?(?:\+0x[0-9a-fA-F]+)?\)\s*\[0x[0-9a-fA-F]+\]"
)
_GDB = re.compile(
    r"^\s*#\d+\s+(?:0x[0-9a-fA-F]+\s+in\s+)?(?P<fn>[A-Za-z_][\w.:~]*)\s*\([^)]*\)?"
    r"(?:.*?\s(?:at\s+(?P<file>\S+)|from\s+(?P<lib>\S+)))?"
)
# Julia's (and libunwind-style) "func at /path/lib.so (unknown line)" / "func at file.c:12"
_AT = re.compile(
    r"^\s*(?:\[\d+\]\s*)?(?P<fn>[A-Za-z_][\w.!]*) at (?:(?P<lib>/\S+\.so[\w.]*) \(unknown line\)"
    r"|(?P<file>\S+\.(?:c|cc|cpp|h|inl|jl):\d+))\s*$"
)
_LIB_IN_FILE = re.compile(r"[\w.+\-]+\.so(?:\.\d+)*$")
# what goes before a frame on a line: mpirun --timestamp-output's "<date>[1,3]<stderr>:", a pasted listing's line number
_LEAD = re.compile(r"^(?:[^<]{0,80}<(?:stdout|stderr)>:)?(?:\s*\d+\s+(?=\d+\s+0x))?")


@dataclass(frozen=True)
class Frame:
    function: str | None  # None: the frame names only an address in a library
    library: str | None  # the shared object's file name (libucm.so.0), when printed
    path: str | None  # the library's or source file's path as printed (may hold a release: ucx-1.10.0/src/...)
    text: str  # the line, stripped


def parse(text: str) -> Frame | None:
    """The frame a line shows, or None for a line that is not a stack frame."""
    if "0x" not in text:
        if " at " not in text:
            return None
        m = _AT.match(text)
        if m is None:
            return None
        lib_path = m.group("lib")
        return Frame(
            m.group("fn"), lib_path.rsplit("/", 1)[-1] if lib_path else None, lib_path or m.group("file"), text.strip()
        )
    lead = _LEAD.match(text)
    if lead:
        text = text[lead.end() :]
    m = _UCX.match(text)
    if m:
        path = m.group("file") or None
        found = _LIB_IN_FILE.search(path) if path else None
        lib = found.group(0) if found else None
        return Frame(m.group("fn"), lib, path, text.strip())
    m = _SYMBOLS.match(text)
    if m:
        lib_path = m.group("lib")
        return Frame(m.group("fn"), lib_path.rsplit("/", 1)[-1], lib_path, text.strip())
    m = _GDB.match(text)
    if m and "0x" in text:
        lib_path = m.group("lib")
        return Frame(
            m.group("fn"),
            lib_path.rsplit("/", 1)[-1] if lib_path else None,
            m.group("file") or lib_path,
            text.strip(),
        )
    return None
