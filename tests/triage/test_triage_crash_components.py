"""A crash's stack frames -> component -> that component's later crash fixes (triage/crash_components.py).

Real stacks from public threads (tests/triage/logs/README.md gives each URL) and the catalogs themselves.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from imgcheck.matrix import load_matrix
from imgcheck.triage import crash_components, frames
from imgcheck.triage.result import CAUSE_SUPPORTED, CAUSE_UNCONDITIONAL
from imgcheck.versions import ranges

LOGS = Path(__file__).parent / "logs"
UCX_MIRROR = Path("/work/.mirror/openucx+ucx/repo")


@pytest.fixture(scope="module")
def matrix():  # type: ignore[no-untyped-def]
    return load_matrix()


def _lines(name: str) -> tuple[str, ...]:
    return tuple((LOGS / name).read_text().splitlines())


@pytest.mark.parametrize(
    ("library", "component"),
    [
        ("libucm.so.0", "ucx"),
        ("libucs.so.0", "ucx"),
        ("libuct_ib.so.0", "ucx"),
        ("libucp.so.2", "ucx"),
        ("mca_pml_ucx.so", "open-mpi"),
        ("libmpi.so.40", "open-mpi"),
        ("libopen-pal.so.80", "open-mpi"),
        ("libmca_common_ucx.so.40", "open-mpi"),
        ("libhcoll.so.1", "hcoll"),
        ("libnccl.so.2", "nccl"),
        ("libcudart.so.12", "cuda-runtime"),
        ("libcuda.so.1", "nvidia-driver"),
        ("libibverbs.so.1", "rdma-core"),
        ("libmlx5.so.1", "rdma-core"),
        ("libmlx5-rdmav34.so", "rdma-core"),
        ("libfabric.so.1", "libfabric"),
        ("libpmix.so.2", "pmix"),
    ],
)
def test_library_file_names_map_to_their_component(matrix, library, component) -> None:  # type: ignore[no-untyped-def]
    frame = frames.Frame(None, library, f"/opt/lib/{library}", library)
    assert crash_components.place(matrix, frame).component == component


def test_component_catalog_rows_compile_and_have_a_known_role(matrix) -> None:  # type: ignore[no-untyped-def]
    for row in matrix.rows("mpi_stack_components"):
        rx = re.compile(row["pattern"])
        assert row["role"] in {"component", "handler", "loader", "error-report"}, row["id"]
        assert row["match"] in {"library", "function", "path", "release-path", "release-line", "build-line"}
        if row["match"] in ("release-path", "release-line"):
            assert "release" in rx.groupindex, row["id"]
        if row["match"] == "build-line":
            assert "config" in rx.groupindex, row["id"]


def test_crash_fix_rows_name_their_commit_and_a_later_release(matrix) -> None:  # type: ignore[no-untyped-def]
    rows = list(matrix.rows("mpi_crash_fixes"))
    assert {r["upstream"] for r in rows} == {"ucx", "open-mpi"}
    notes = [r for r in rows if "@" not in r["entry"]]  # Open MPI's release-note entries
    assert notes and all(
        r["upstream"] == "open-mpi" and ":NEWS" in r["source"] or "changelog" in r["source"] for r in notes
    )
    for r in rows:
        if "@" in r["entry"]:
            assert r["entry"].split("@", 1)[1] in r["source"], r["entry"]
        assert r["symptom"] in {"crash", "hang", "corruption"}
        assert ranges.at_least(r["release"], "1.0") is True


def test_crash_fixes_match_the_mirror(matrix) -> None:  # type: ignore[no-untyped-def]
    """The generated row for UCM's heap-corruption fix is what git says: first in v1.11.0, not in v1.10.1, and it
    changes ucm_prevent_dl_unload (the function ucx-7239's stack crashed under)."""
    if not UCX_MIRROR.is_dir():
        pytest.skip("no UCX mirror (fetch github:openucx/ucx)")
    row = next(r for r in matrix.rows("mpi_crash_fixes") if r["entry"] == "ucx@122512a8a869")
    sha = row["source"].split("@", 1)[1].split()[0]
    tags = subprocess.run(
        ["git", "-C", str(UCX_MIRROR), "tag", "--contains", sha], capture_output=True, text=True, check=True
    ).stdout.split()
    assert "v1.11.0" in tags and "v1.10.1" not in tags
    assert row["release"] == "1.11.0" and "ucm_prevent_dl_unload" in row["functions"]


def test_release_note_entries_map_components_and_mpi_calls(matrix) -> None:  # type: ignore[no-untyped-def]
    """Open MPI 4.1.4's 'Fix segmentation fault in UCX if MPI Tool interface is finalized before MPI_Init' reaches a
    stack in MPI_Init (any case, profiling prefix) of 4.1.3, and not of 4.1.4."""
    before = crash_components.fixes(matrix, "open-mpi", ["PMPI_Init"], "4.1.3")
    assert any("MPI Tool interface" in f.text and f.release == "4.1.4" for f in before)
    assert not any(
        "MPI Tool interface" in f.text for f in crash_components.fixes(matrix, "open-mpi", ["PMPI_Init"], "4.1.4")
    )


def test_frames_of_each_printed_form() -> None:
    ucx = frames.parse(_lines("ucx-7239-ucx-1.10-ucm-prevent-dl-unload.log")[12])
    assert ucx is not None and ucx.function == "ucm_prevent_dl_unload" and "ucx-1.10.0" in (ucx.path or "")
    ompi = frames.parse(_lines("ucx-848-ompi-stack-libucp.log")[3])
    assert ompi is not None and (ompi.function, ompi.library) == ("mca_pml_ucx_progress", "mca_pml_ucx.so")
    numbered = frames.parse(_lines("ucx-8322-ucx-1.12.1-dc-mlx5-stack.log")[1])
    assert numbered is not None and numbered.function == "uct_ib_mlx5_completion_with_err"
    assert frames.parse("NCCL INFO comm 0x55d1 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE") is None


def test_ucx_1_10_stack_names_ucm_and_the_later_fixes(matrix) -> None:  # type: ignore[no-untyped-def]
    got = crash_components.cause(matrix, _lines("ucx-7239-ucx-1.10-ucm-prevent-dl-unload.log"))
    assert got is not None and got.status == CAUSE_UNCONDITIONAL
    assert "UCX 1.10.0" in got.text and "UCM" in got.text and "ucm_prevent_dl_unload" in got.text
    assert "1.11.0" in got.next  # the first later release whose fix changed the crashing function
    # and the crashing part's own off switch (UCM's unload-prevention dlopen), from ucm_opts.c
    assert "UCX_MEM_MODULE_UNLOAD_PREVENT_MODE=none" in got.next


def test_a_release_past_every_fix_lists_none_of_them(matrix) -> None:  # type: ignore[no-untyped-def]
    """The same functions with the image's UCX at the newest fix's release: nothing later to try."""
    lines = tuple(
        t.replace("ucx-1.10.0/", "") for t in _lines("ucx-7239-ucx-1.10-ucm-prevent-dl-unload.log")
    )  # the path no longer shows the release; the image's does
    newest = max(
        (r["release"] for r in matrix.rows("mpi_crash_fixes") if "ucm_prevent_dl_unload" in r["functions"]),
        key=lambda v: tuple(int(x) for x in v.split(".")),
    )
    got = crash_components.cause(matrix, lines, image_ucx=newest)
    assert got is not None and "No UCX release fix" in got.text and f"after {newest}" in got.text


def test_ompi_finalize_stack_is_the_mca_dso_crash_site(matrix) -> None:  # type: ignore[no-untyped-def]
    got = crash_components.cause(matrix, _lines("ompi-11632-enable-mca-dso-finalize.log"))
    assert got is not None
    assert "Open MPI" in got.text and "--enable-mca-dso" in got.text
    # the log shows no Open MPI release: the site is named, not decided
    assert got.status == CAUSE_UNCONDITIONAL and got.status != CAUSE_SUPPORTED
    assert "does not show the Open MPI release" in got.text


def test_ucx_error_report_is_not_called_a_ucx_defect(matrix) -> None:  # type: ignore[no-untyped-def]
    got = crash_components.cause(matrix, _lines("ucx-8322-ucx-1.12.1-dc-mlx5-stack.log"))
    assert got is not None and "own error report" in got.text and "fix" not in got.text.lower()


def test_no_frame_in_a_known_component_keeps_the_generic_advice(matrix) -> None:  # type: ignore[no-untyped-def]
    lines = tuple(_lines("ucx-7239-ucx-1.10-ucm-prevent-dl-unload.log")[3:12])  # the handler's and the loader's frames
    assert crash_components.cause(matrix, lines) is None


def test_a_component_whose_releases_are_not_enumerated_claims_no_fix(matrix) -> None:  # type: ignore[no-untyped-def]
    """A hand-made glibc-format frame in libnccl (an error path: a component whose releases are not enumerated)."""
    line = " 3  /usr/lib/x86_64-linux-gnu/libnccl.so.2(ncclCommInitRank+0x2e) [0x7f19545f4604]"
    got = crash_components.cause(matrix, (line,))
    assert got is not None and "NCCL" in got.text and "not compared here" in got.text


def test_release_and_build_lines_of_ucx_info_and_ompi_info(matrix) -> None:  # type: ignore[no-untyped-def]
    ucx = _lines("ucx-8100-ucx-info-version.log")
    release = crash_components.release_from_lines(matrix, ucx, "ucx")
    assert release is not None and release.version == "1.12.1"
    assert crash_components.build_of(matrix, ucx, "ucx") == "--prefix=/path/to/local/dir"
    ompi = _lines("ucx-7845-ompi-info.log")
    release = crash_components.release_from_lines(matrix, ompi, "open-mpi")
    assert release is not None and release.version == "4.1.2"  # not the 'repo revision' or 'release date' lines
    config = crash_components.build_of(matrix, ompi, "open-mpi")
    assert config is not None and "--prefix=/opt/openmpi" in config
    assert crash_components.release_from_lines(matrix, ompi, "ucx") is None


def test_two_releases_in_the_log_are_not_one_release(matrix) -> None:  # type: ignore[no-untyped-def]
    lines = (*_lines("ucx-8100-ucx-info-version.log"), "# Library version: 1.16.0")  # error path: two writers
    assert crash_components.release_from_lines(matrix, lines, "ucx") is None


def test_hcoll_derived_datatype_stack_is_the_known_hcoll_site(matrix) -> None:  # type: ignore[no-untyped-def]
    """MPI.jl's known-issues stack (Julia's 'func at lib (unknown line)' form): the crash is HCOLL's, the A/B is
    coll/hcoll off, and no fixed release is claimed."""
    got = crash_components.cause(matrix, _lines("mpijl-knownissues-hcoll-derived-datatype.log"))
    assert got is not None and got.status == CAUSE_UNCONDITIONAL
    assert got.text.startswith("The crash is in HCOLL") and "derived" in got.text and "no fixed release" in got.text
    assert got.next.count("OMPI_MCA_coll_hcoll_enable=0") == 1
