"""Small text helpers shared by the report formats (no rich, no XML), so every format shows a value alike."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..model.report import QuestionGroup, Unknown


def value_text(value: object) -> str:
    """An evidence value as people read it: None -> unknown, booleans -> yes/no."""
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def short_layer(layer: str | None) -> str:
    """sha256:abcdef... -> abcdef012345 (12 hex digits, like docker's short ids)."""
    return layer.split(":", 1)[-1][:12] if layer else ""


RULES_SHOWN = 6  # rule ids listed after a deciding question; the rest are counted


def rule_list(rules: tuple[str, ...]) -> str:
    """'A, B, C' or 'A, B, ... and 17 more': a question may decide dozens of rules."""
    shown = ", ".join(rules[:RULES_SHOWN])
    return shown + (f" and {len(rules) - RULES_SHOWN} more" if len(rules) > RULES_SHOWN else "")


def decides_words(rules: tuple[str, ...], error_rules: tuple[str, ...]) -> str:
    """'decides 23 rules (9 could give an error)'."""
    words = f"decides {len(rules)} rule{'' if len(rules) == 1 else 's'}"
    return words + (f" ({len(error_rules)} could give an error)" if error_rules else "")


def condition_words(assumes: tuple[str, ...]) -> str:
    """How a conditional finding is introduced: 'only if the image ships NCCL (not read: ...)'."""
    return "only if " + "; and ".join(assumes)


def unknown_layout(unknowns: Sequence[Unknown]) -> tuple[list[QuestionGroup], list[Unknown]]:
    """(question groups asked of two or more rules, the unknowns they do not cover): each shared question once with
    the rules it decides, then, one by one, the rules whose own words (or a question only they ask) decide them.
    -o json keeps every rule's unknown."""
    from ..model.report import NOT_DECIDED, question_groups

    shared = [g for g in question_groups(list(unknowns)) if len(g.rules) > 1]
    covered = {g.question for g in shared}
    singles = [u for u in unknowns if not set(u.questions or (u.reason.removeprefix(NOT_DECIDED),)) <= covered]
    return shared, singles
