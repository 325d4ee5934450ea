"""Text rules the page's Python shares with the JS primitives: what is white space, which
elements hold no text, which displays flow inline, and how a wanted option is matched.

The asset build writes the tables here (and the fact layout, the widget roles) into the
loader as JavaScript (``mao_page.dom.jstables``), so ``loader_js/primitives`` use these very
definitions; tests/browser/test_js_mirrors.py runs both sides on the same inputs. Standard
library only: the asset build imports this module outside Pyodide, with no dependencies.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

# HTML's ASCII whitespace: what CSS collapses in rendered text and what accessible names
# collapse, as Chromium computes them. NBSP and the other Unicode spaces are content: a name
# keeps them (WPT accname: "nbsp is preserved in name").
ASCII_WHITESPACE = " \t\n\f\r"
# Every character shown or typed as a space between words (JavaScript's ``\s``: Unicode
# White_Space and the BOM): comparing what an agent asked for with what a page shows, where an
# option "Jan\u00a01" is "Jan 1" to the person reading it.
ANY_WHITESPACE = (
    ASCII_WHITESPACE + "\v\u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
    + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def char_class(chars: str) -> str:
    """A regular-expression character class of ``chars``, written the same way for Python's
    ``re`` and JavaScript (``\\uXXXX`` escapes)."""
    return "[" + "".join(f"\\u{ord(c):04x}" for c in chars) + "]"


# Runs of each kind (ASCII_SPACE_RUN and ANY_SPACE_RUN in the page, generated from these).
ASCII_SPACE_RUN = re.compile(char_class(ASCII_WHITESPACE) + "+")
ANY_SPACE_RUN = re.compile(char_class(ANY_WHITESPACE) + "+")

# Elements whose content is never text a user reads (not rendered; an SVG <title> is a name).
NO_TEXT_TAGS = frozenset({"script", "style", "noscript", "template", "head", "title"})
# Displays whose element flows in the line around it: no word break around its text (accname
# 2F.iii as browsers do it: block-level children are separated by spaces). "" is a row whose
# style is unknown (an element of a document without a view), taken as inline.
INLINE_DISPLAYS = frozenset({"inline", "contents", ""})


def squash(text: str) -> str:
    """Accessible-name white space: ASCII whitespace runs to one space, trimmed; NBSP kept."""
    if "  " in text or "\n" in text or "\t" in text or "\r" in text or "\f" in text:
        return ASCII_SPACE_RUN.sub(" ", text).strip(" ")
    # Single spaces only (most texts: the walk squashed each text node already): nothing to
    # collapse, and a substring test is far cheaper than a regular-expression substitution.
    return text.strip(" ")


def squash_any(text: str) -> str:
    """Every white space run (``ANY_WHITESPACE``) to one space, trimmed: a value as a person
    reads it, for comparing with what was asked for."""
    return ANY_SPACE_RUN.sub(" ", text).strip(" ")


def fold(text: str) -> str:
    """``squash_any`` and lower-cased (``str.lower`` and JavaScript's ``toLowerCase`` apply the
    same Unicode mapping): the loose form two texts are compared in."""
    return squash_any(text).lower()


@dataclass(frozen=True, slots=True)
class OptionMatch:
    """The options matching a wanted choice at the first rule that matched any; ``index`` is
    set when exactly one did. ``how``: "value", "label", "loose", or "" when none matched."""

    wanted: str
    matches: tuple[int, ...]
    how: str

    @property
    def index(self) -> int | None:
        return self.matches[0] if len(self.matches) == 1 else None

    @property
    def ambiguous(self) -> bool:
        return len(self.matches) > 1


def match_option(options: Sequence[tuple[str, str]], wanted: str) -> OptionMatch:
    """The one rule every select uses (SPEC A1): the options (label, value) whose value is
    ``wanted``, else whose label is, else whose label equals it ``fold``-ed (case and white
    space aside). The first rule that matches anything decides; two matches under it are
    ambiguous, never a guess between them."""
    for how, key, want in (
        ("value", lambda o: o[1], wanted),
        ("label", lambda o: o[0], wanted),
        ("loose", lambda o: fold(o[0]), fold(wanted)),
    ):
        if not want:
            continue
        found = tuple(i for i, option in enumerate(options) if key(option) == want)
        if found:
            return OptionMatch(wanted, found, how)
    return OptionMatch(wanted, (), "")
