"""Which option a wanted choice names: one rule for native selects, ARIA listboxes and the
options of a widget's popup (``mao_page.dom.textrules.match_option``: value, exact label, then
the label with case and white space aside), and the errors when none or several match."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..dom.textrules import OptionMatch, match_option
from ..errors import ToolFailure
from ..protocol import ErrorCode
from .context import Target

# Option labels an error lists at most.
LISTED_OPTIONS = 50


def find_option(facts: Sequence[Sequence[Any]], wanted: str) -> OptionMatch:
    """Among ARIA option facts (``[label, value, ...]``, ``aria_options``)."""
    return match_option([(fact[0], fact[1]) for fact in facts], wanted)


def find_native(options: Sequence[Sequence[Any]], wanted: str) -> OptionMatch:
    """Among a native select's options (``[value, label, selected, disabled]``)."""
    return match_option([(option[1], option[0]) for option in options], wanted)


def unmatched(
    target: Target,
    match: OptionMatch,
    labels: Sequence[str],
    how: str = "",
    hint: str = "give the exact label or value",
) -> ToolFailure:
    """The error for a choice that names no option (``not_found``) or several
    (``invalid_request``: which one is for the agent to say, ``hint`` how), listing what
    there is."""
    listed = list(labels[:LISTED_OPTIONS])
    if match.ambiguous:
        matching = [labels[i] for i in match.matches if i < len(labels)]
        return target.failure(
            ErrorCode.INVALID_REQUEST,
            f"{len(match.matches)} options of {target.name} match {match.wanted!r} "
            f"({', '.join(map(repr, matching[:10]))}); {hint}. Nothing was chosen",
            {"matches": matching[:LISTED_OPTIONS], "options": listed},
        )
    return target.failure(
        ErrorCode.NOT_FOUND,
        f"no option {match.wanted!r} in {target.name}{how}; nothing was chosen",
        {"options": listed},
    )
