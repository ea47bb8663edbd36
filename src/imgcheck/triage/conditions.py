"""The small condition language of signature data (`when` lists), parsed once at load time.

A condition is a string; a leading "!" negates it, and a leading "?" (before any "!") makes it a precondition: an
unknown fact counts as holding, so only a fact that is known to be false rules the cause out ("?!log.single_node":
unless the log shows one node). Forms:
  line~REGEX          the line that matched the signature contains REGEX
  near~REGEX          one of the few lines just before it in the same input does (scan.NEAR_LINES): the component
                      that printed them (a library call that failed) selects the cause of a generic code; unknown
                      when the matched line is the input's first
  errno:NAME|NAME     the line prints one of these system errno values (its strerror text or number); False when
                      it prints another errno, unknown when it prints none (an errno-less form of the message)
  env:NAME            NAME is set (log "set by environment" lines, then image Env, then image /etc/nccl.conf)
  env:NAME=VALUE      NAME equals VALUE
  env:NAME>N / <N     NAME is an integer above / below N
  hosts>=N / <=N      this signature matched on at least / at most N distinct hosts
  gpus>=N / <=N       ... on N distinct GPUs (host or input file, plus the PCI id a pattern captured)
  count>=N / <=N      ... N times in all
  sig:ID.hosts>=N     the same measures for another signature
  node.X / image.X / nccl.X / log.X / job.X   a named fact predicate (see predicates.py)

Evaluation is three-valued: True, False, or None when the fact is unknown. Any False moves a
cause last; a cause marked `promote` whose conditions all hold moves first; otherwise the data
order (the advice order) stands.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from ..errors import BadInputError


class EvalContext(Protocol):
    """What a condition may ask; implemented by decide.CauseContext."""

    line: str
    near: tuple[str, ...] | None  # the lines just before the matched one (None: not known)

    def env(self, name: str) -> tuple[str | None, str | None]: ...  # (value, where it came from)

    def measure(self, signature_id: str | None, what: str) -> int | None: ...  # hosts | gpus | count

    def predicate(self, name: str) -> tuple[bool | None, str]: ...


@dataclass(frozen=True)
class Condition:
    text: str
    negate: bool
    check: Callable[[EvalContext], tuple[bool | None, str]]
    unless_false: bool = False  # "?": unknown counts as holding

    def evaluate(self, ctx: EvalContext) -> tuple[bool | None, str]:
        value, why = self.check(ctx)
        if value is None:
            return (True, f"not known, not ruled out ({why})") if self.unless_false else (None, why)
        if not self.negate:
            return value, why
        return (not value), why


_ERRNO = re.compile(r"errno:(?P<names>E[A-Z0-9]+(?:\|E[A-Z0-9]+)*)$")
_ENV = re.compile(r"env:(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>[=<>])(?P<value>.*))?$")
_MEASURE = re.compile(r"(?:sig:(?P<sig>[A-Z0-9-]+)\.)?(?P<what>hosts|gpus|count)(?P<op>>=|<=)(?P<n>\d+)$")
_PRED = re.compile(r"(?:node|image|nccl|log|job)\.[a-z0-9_]+$")


def parse_condition(
    text: str, where: str, known_predicates: set[str], known_signatures: set[str] | None = None
) -> Condition:
    if not isinstance(text, str) or not text.strip():
        raise BadInputError(f"{where}: a condition must be a non-empty string")
    body = text.strip()
    unless_false = body.startswith("?")
    if unless_false:
        body = body[1:]
    negate = body.startswith("!")
    if negate:
        body = body[1:]
    cond = _parse_body(body, negate, text, where, known_predicates, known_signatures)
    return dataclasses.replace(cond, unless_false=True) if unless_false else cond


def _parse_body(
    body: str, negate: bool, text: str, where: str, known_predicates: set[str], known_signatures: set[str] | None
) -> Condition:
    if body.startswith("line~"):
        try:
            rx = re.compile(body[5:])
        except re.error as exc:
            raise BadInputError(f"{where}: bad regex in condition {text!r}: {exc}") from None

        def check_line(ctx: EvalContext, rx: re.Pattern[str] = rx) -> tuple[bool | None, str]:
            hit = rx.search(ctx.line or "") is not None
            return hit, f"the matched line {'contains' if hit else 'does not contain'} /{rx.pattern}/"

        return Condition(text, negate, check_line)
    if body.startswith("near~"):
        try:
            rx = re.compile(body[5:])
        except re.error as exc:
            raise BadInputError(f"{where}: bad regex in condition {text!r}: {exc}") from None

        def check_near(ctx: EvalContext, rx: re.Pattern[str] = rx) -> tuple[bool | None, str]:
            if not ctx.near:
                return None, "no line before the matched one names the component that printed it"
            hit = next((t for t in reversed(ctx.near) if rx.search(t)), None)
            if hit is None:
                return False, f"the {len(ctx.near)} line(s) before the matched one do not contain /{rx.pattern}/"
            return True, f"a line just before it names the component: {hit[:120]!r}"

        return Condition(text, negate, check_near)
    m = _ERRNO.match(body)
    if m:
        return Condition(text, negate, _errno_check(frozenset(m.group("names").split("|"))))
    m = _ENV.match(body)
    if m:
        return Condition(text, negate, _env_check(m.group("name"), m.group("op"), m.group("value"), where, text))
    m = _MEASURE.match(body)
    if m:
        sig = m.group("sig")
        if sig and known_signatures is not None and sig not in known_signatures:
            raise BadInputError(f"{where}: condition {text!r} names unknown signature {sig}")
        what, op, n = m.group("what"), m.group("op"), int(m.group("n"))

        def check_measure(
            ctx: EvalContext, sig: str | None = sig, what: str = what, op: str = op, n: int = n
        ) -> tuple[bool | None, str]:
            got = ctx.measure(sig, what)
            if got is None:
                return None, f"the log does not say on how many {what} {sig or 'this signature'} occurred"
            ok = got >= n if op == ">=" else got <= n
            unit = {"hosts": "host(s)", "gpus": "GPU(s)", "count": "time(s)"}[what]
            return ok, f"{sig or 'this signature'} seen {'on ' if what != 'count' else ''}{got} {unit}"

        return Condition(text, negate, check_measure)
    if _PRED.match(body):
        if body not in known_predicates:
            raise BadInputError(f"{where}: unknown fact predicate {body!r} in condition {text!r}")

        def check_pred(ctx: EvalContext, name: str = body) -> tuple[bool | None, str]:
            return ctx.predicate(name)

        return Condition(text, negate, check_pred)
    raise BadInputError(f"{where}: cannot parse condition {text!r}")


def _errno_check(names: frozenset[str]) -> Callable[[EvalContext], tuple[bool | None, str]]:
    """Which errno the matched line prints, read with the system errno table of the fabric catalog (glibc's names
    and strerror texts): the same call fails with a different errno for a different reason."""

    def check(ctx: EvalContext) -> tuple[bool | None, str]:
        from . import fabric_catalog  # the catalog loads once, on the first errno condition

        found = fabric_catalog.errnos_in(ctx.line or "", fabric_catalog.load())
        printed = sorted({e.name for e in found if e.table == "system"})
        if not printed:
            return None, "the matched line prints no errno"
        hit = any(n in names for n in printed)
        return hit, f"the matched line prints {', '.join(printed)}"

    return check


def _env_check(
    name: str, op: str | None, value: str | None, where: str, text: str
) -> Callable[[EvalContext], tuple[bool | None, str]]:
    if op in ("<", ">"):
        try:
            limit = int(value or "")
        except ValueError:
            raise BadInputError(f"{where}: condition {text!r} compares with a non-integer") from None

    def check(ctx: EvalContext) -> tuple[bool | None, str]:
        got, source = ctx.env(name)
        if op is None:
            if got is None and source is None:
                return None, f"{name} unknown (no image facts and not in the log)"
            return got is not None, (f"{name}={got} ({source})" if got is not None else f"{name} is not set ({source})")
        if got is None:
            if source is None:
                return None, f"{name} is not known"
            return False, f"{name} is not set ({source}), so NCCL uses its default"
        if op == "=":
            return got.strip() == (value or ""), f"{name}={got} ({source})"
        try:
            number = int(got.strip())
        except ValueError:
            return None, f"{name}={got!r} is not an integer ({source})"
        return (number > limit if op == ">" else number < limit), f"{name}={number} ({source})"

    return check
