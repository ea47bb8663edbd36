"""job/shell.py: what a bash script decides statically, on the constructs sbatch and docker scripts use."""

from __future__ import annotations

import pytest

from imgcheck.errors import BadInputError
from imgcheck.job.shell import Unknown, is_open, parse_script


def words(script: str, name: str = "srun"):
    (command,) = [c for c in parse_script(script).commands if c.words and c.words[0] == name]
    return command.words


def test_arrays_variables_and_appends_expand():
    script = 'IMG=nvcr.io#nvidia/pytorch:24.05-py3\ndeclare -a ARGS=(\n  --container-image "$IMG"\n)\nARGS+=(--container-mounts /dev/infiniband:/dev/infiniband)\nsrun "${ARGS[@]}" python t.py\n'
    assert words(script) == (
        "srun",
        "--container-image",
        "nvcr.io#nvidia/pytorch:24.05-py3",
        "--container-mounts",
        "/dev/infiniband:/dev/infiniband",
        "python",
        "t.py",
    )


def test_unquoted_variable_splits_and_single_quotes_stay_literal():
    assert words("F='-N 2 --exclusive'\nsrun $F '$HOME' x\n") == ("srun", "-N", "2", "--exclusive", "$HOME", "x")


def test_what_the_script_does_not_decide_is_unknown_with_a_reason():
    w = words(
        'if [ -n "$X" ]; then ARGS=(--container-image a#b); fi\nsrun "${ARGS[@]}" --mpi=pmix $(which app) "$SLURM_JOB_ID"\n'
    )
    assert isinstance(w[1], Unknown) and is_open(w[1]) and "under a condition (line 1)" in w[1].why
    assert isinstance(w[3], Unknown) and "command substitution" in w[3].why
    assert isinstance(w[4], Unknown) and not is_open(w[4]) and "not set by the script" in w[4].why


def test_default_assignment_names_the_default_but_stays_unknown():
    (w,) = words(': "${IMAGE:=/fsx/app.sqsh}"\nsrun --container-image $IMAGE\n')[2:]
    assert isinstance(w, Unknown) and "IMAGE defaults to /fsx/app.sqsh unless the submitting shell sets it" in w.why


def test_script_arguments_are_any_number_of_words():
    (w,) = words('EXTRA=("$@")\nsrun "${EXTRA[@]}"\n')[1:]
    assert is_open(w) and w.text == "${EXTRA[@]}"
    assert words("EMPTY=()\nsrun ${EMPTY[@]} x\n") == ("srun", "x")


def test_exports_keep_known_values_and_lines():
    script = parse_script("export A=1\nexport B=$(hostname)\nC=3\nexport C\n")
    assert script.exports == {"A": ("1", 1), "B": (None, 2), "C": ("3", 4)}


def test_broken_or_deep_input_is_one_line_not_a_traceback():
    assert parse_script('srun "unterminated\n').commands is not None  # tree-sitter recovers; nothing raised
    with pytest.raises(BadInputError, match="nested too deeply"):
        parse_script("if true; then " * 3000 + "a" + "; fi" * 3000, "deep.sh")


def test_a_docker_run_the_line_reader_cannot_split_is_one_line_bad_input():
    from imgcheck.job import parse_job_spec

    with pytest.raises(BadInputError, match="line 2: cannot read the `docker run` command"):
        parse_job_spec('#!/bin/bash\ndocker run-d img\necho "docker run x"\n', "a.sh")


def test_string_append_and_array_append():
    assert words('F=--mpi\nF+==pmix\nA=(a)\nA+=(b c)\nsrun $F "${A[@]}"\n') == ("srun", "--mpi=pmix", "a", "b", "c")
