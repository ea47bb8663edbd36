"""`verify_image`: run the verifier in IMAGE on this node and join the result with the static check."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..errors import BadInputError, ImgcheckError
from .build import locate_verifier
from .join import Observation, check_from_finding, checks_from_facts, observations
from .report import RunInfo, VerifyReport, verdict_of
from .result import parse_output
from .runtimes import get_runtime
from .runtimes.base import DEFAULT_TIMEOUT, RunOutcome, RunRequest, host_has_gpu, rdma_device_nodes, verifier_env

if TYPE_CHECKING:
    from ..model.image import ImageFacts
    from ..model.report import Finding


def static_reference(image: str, runtime: str) -> str | None:
    """The imgcheck reference that reads the same image without running it, if there is one."""
    if runtime == "docker":
        return f"docker:{image}"
    if runtime == "enroot" and os.path.isfile(image):
        return f"enroot:{image}"
    if runtime == "apptainer":
        if os.path.isfile(image):
            return f"sif:{image}"
        if image.startswith("docker://"):
            return image  # read from the registry, as Pyxis/Apptainer users write it
    return None


def _static_facts(image: str, runtime: str, static_ref: str | None, use_static: bool) -> tuple[ImageFacts | None, str]:
    if not use_static:
        return None, "none: static check disabled"
    ref = static_ref or static_reference(image, runtime)
    if ref is None:
        return None, f"none: {runtime} image {image!r} has no readable image file (give --static REF)"
    from ..api import inspect_image

    try:
        return inspect_image(ref), "image facts"
    except ImgcheckError as exc:
        return None, f"none: could not read {ref} ({exc})"


def _engine_findings(facts: ImageFacts) -> tuple[tuple[Finding, ...] | None, str | None]:
    """The engine's findings for this node, or (None, why): a failure here must not lose the run."""
    from ..api import check_facts
    from ..node.probe import probe

    try:
        node = probe("/")
        report = check_facts(facts, [node], recommend=False)
    except Exception as exc:  # the join is optional: an engine or probe failure must not lose the run
        return None, f"engine not run ({exc.__class__.__name__}: {exc})"
    return report.findings, None


def _run_observations(outcome: RunOutcome, parsed_error: str | None) -> list[Observation]:
    if outcome.start_error:
        why = outcome.start_error
        if "no such file or directory" in why.lower():
            why += " (the image has no glibc dynamic loader the verifier can run with: a musl or static-only image?)"
        return [Observation("run", "error", f"{outcome.runtime} could not start the verifier: {why}")]
    if outcome.timed_out:
        return [
            Observation(
                "run",
                "error",
                f"the verifier did not finish within the time limit: it was killed "
                f"and its container removed (last step: {_last_step(outcome.stderr)})",
            )
        ]
    if parsed_error:
        return [
            Observation(
                "run",
                "error",
                f"the verifier exited {outcome.exit_code} without a report "
                f"({parsed_error}); last step: {_last_step(outcome.stderr)}",
            )
        ]
    if outcome.exit_code not in (0, None):
        return [Observation("run", "warning", f"the verifier exited {outcome.exit_code} after writing its report")]
    return []


def _last_step(stderr: str) -> str:
    steps = [ln for ln in stderr.splitlines() if ln.startswith("imgcheck-verifier: ")]
    return steps[-1][len("imgcheck-verifier: ") :] if steps else (stderr.strip().splitlines() or ["none"])[-1]


def verify_image(
    image: str,
    runtime: str = "docker",
    *,
    timeout: float = DEFAULT_TIMEOUT,
    gpus: str = "auto",
    memlock: int | None = -1,
    static_ref: str | None = None,
    use_static: bool = True,
    test_gpu: bool = True,
) -> VerifyReport:
    """Run the verifier inside `image` with `runtime` on this node; raise UnavailableError (exit 3)
    when the runtime, the image or a compiler is missing. Everything the verifier finds is in the report."""
    rt = get_runtime(runtime)
    verifier = locate_verifier()
    want_gpus = host_has_gpu() if gpus == "auto" else gpus == "all"
    env = verifier_env({} if test_gpu else {"IMGCHECK_VERIFY_GPU": "0"})
    request = RunRequest(
        image=image,
        verifier=verifier,
        timeout=timeout,
        env=env,
        devices=rdma_device_nodes(),
        gpus=want_gpus,
        memlock=memlock,
    )
    outcome = rt.run(request)

    out, parse_error = None, None
    if outcome.start_error:
        parse_error = "not started"
    elif not outcome.timed_out:
        try:
            out = parse_output(outcome.stdout)
        except BadInputError as exc:
            parse_error = str(exc)
    elif outcome.stdout.strip():
        parse_error = "killed"

    facts, static = _static_facts(image, runtime, static_ref, use_static)
    checks, obs = [], _run_observations(outcome, parse_error if out is None else None)
    if out is not None:
        if facts is not None:
            checks.extend(checks_from_facts(facts, out))
            findings, why = _engine_findings(facts)
            if findings is None:
                static += f" (engine findings: {why})"
            else:
                static += " + engine findings for this node"
                checks.extend(check_from_finding(f, out) for f in findings)
        obs.extend(observations(out))
    tail = tuple(ln for ln in outcome.stderr.splitlines() if ln.strip())[-5:]
    run = RunInfo(
        runtime=outcome.runtime,
        exit_code=outcome.exit_code,
        timed_out=outcome.timed_out,
        settings=outcome.settings,
        notes=outcome.notes,
        stderr_tail=tail,
    )
    return VerifyReport(
        image=image,
        run=run,
        verifier=out,
        static=static,
        checks=tuple(checks),
        observations=tuple(obs),
        verdict=verdict_of(checks, obs, out is not None),
    )
