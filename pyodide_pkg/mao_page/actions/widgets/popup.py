"""Choosing in a popup a widget opened: listbox options, menu items, cascader columns, trees.

The search for one wanted choice, cheapest first, each round ending as soon as the choice can
be clicked:

1. wait (briefly, frames included: popups animate in) for it to be visible — an option in
   the widget's ARIA relations (aria-controls / aria-owns / aria-activedescendant), else an
   element showing exactly that text in the popup the open produced, else anywhere outside
   the widget;
2. type it into the widget's search field (its own input when editable, or a search box the
   popup rendered) to filter the list;
3. scroll the popup's list from the top, a screenful at a time: virtual lists render only
   the options in view;
4. expand collapsed tree items of the popup: those that state it (aria-expanded), then rows
   that state no role, through the toggle before their text (a tree node's caret);
5. move the active descendant with the arrow keys (ARIA listboxes that render the active
   option only).

A choice that exists but cannot be clicked is reported for what blocked it (covered,
disabled, never visible), not as missing.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from ...bridge.page import HitTest, Outcome
from ...dom import facts as F
from ...dom.textrules import OptionMatch, fold
from ...protocol import ErrorCode
from .. import keyboard, options
from ..actionability import hit_test
from ..context import ActionContext, Target
from ..keys import parse_key
from ..settle import FrameCounter

# An option that is not visible yet gets this long, and at least this many animation frames
# (popups animate in on frames, which a background tab gets at 1 Hz), within the cap.
OPTION_WAIT_S, OPTION_WAIT_FRAMES, OPTION_WAIT_CAP_S, OPTION_POLL_S = 1.0, 4, 5.0, 0.05
# Right after opening, before typing or scrolling to reach an option that is not in view.
FIRST_WAIT_S = 0.3
# After typing, scrolling or expanding, the list re-renders on the next frames.
AFTER_STEP_WAIT_S, AFTER_STEP_FRAMES = 0.1, 2
MAX_SCROLL_STEPS = 120
MAX_TREE_EXPANSIONS = 40
# Rows of a roleless popup read at most (their texts go into an error's details).
MAX_ROWS = 400
MAX_KEY_STEPS = 200
# How far down one scroll step goes, as a fraction of the list's height: some overlap, so an
# option cut at the bottom edge is whole in the next screenful.
SCROLL_FRACTION = 0.8


# What the agent can do when the wanted choice is shown in several places at once.
SHOWN_APART = (
    "they are shown in separate places at once (several open popups, or the same text "
    "elsewhere on the page): close the others, or act on the one meant through its ref"
)


@dataclass(slots=True)
class Blocked:
    """A matching choice that could not be clicked, and why."""

    code: ErrorCode
    reason: str
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Search:
    """One choosing: what the popup search has seen so far (for the error if it fails)."""

    wanted: str
    before: list[Any]  # popup roots rendered before the widget was opened
    blocked: Blocked | None = None
    seen: list[str] = field(default_factory=list)
    typed: bool = False
    # Several options match the wanted choice: the search stops, and the agent says which.
    ambiguous: tuple[OptionMatch, list[str]] | None = None
    shown_apart: bool = False  # ... shown in separate places at once, not one list's options


@dataclass(frozen=True, slots=True)
class Choice:
    handle: Any
    label: str
    via: str  # option | popup | visible-text | keyboard
    hit: HitTest | None = None


def blocked_by(hit: HitTest, label: str) -> Blocked:
    """What a failed hit test on a matching choice means for the agent."""
    if hit.outcome is Outcome.OUTSIDE_VIEWPORT:
        return Blocked(ErrorCode.NOT_VISIBLE, f"option {label!r} is outside the viewport")
    if hit.outcome is Outcome.NOT_CONNECTED:
        return Blocked(ErrorCode.NOT_STABLE, f"option {label!r} was removed while choosing it")
    covered = "the Mao Embed panel" if hit.outcome is Outcome.COVERED_BY_SDK else hit.hit
    return Blocked(
        ErrorCode.OBSCURED, f"option {label!r} is covered by {covered or 'another element'}",
        {"coveredBy": covered},
    )


def produced(ctx: ActionContext, search: Search) -> list[Any]:
    """The popup roots rendered now that were not before the open (empty: none new)."""
    return ctx.page.popup_roots(search.before)  # type: ignore[attr-defined]


def find(ctx: ActionContext, target: Target, search: Search) -> Choice | None:
    """The wanted choice if it can be clicked now; notes a blocked match on ``search``."""
    page = ctx.page
    facts, handles, _active = page.aria_options(target.handle)
    for fact in facts:
        if fact[0] and fact[0] not in search.seen:
            search.seen.append(fact[0])
    found = options.find_option(facts, search.wanted)
    if found.ambiguous:
        search.ambiguous = (found, [fact[0] for fact in facts])
        return None
    match = found.index
    label = facts[match][0] if match is not None else search.wanted
    if match is not None and facts[match][4]:
        search.blocked = Blocked(ErrorCode.NOT_ENABLED, f"option {label!r} is disabled")
        return None
    if match is not None and facts[match][3]:
        hit = hit_test(ctx, handles[match])
        if hit.ok:
            return Choice(handles[match], label, "option", hit)
        search.blocked = blocked_by(hit, label)
    roots = produced(ctx, search)
    for via, scope in (("popup", roots), ("visible-text", [])):
        if via == "popup" and not roots:
            continue
        candidates = page.choices_in(scope, label, target.handle)  # type: ignore[attr-defined]
        clickable = _clickable(ctx, candidates, label, search)
        if len(clickable) > 1:
            # Shown in several places a user could click (two open popups, the same text
            # elsewhere on the page): which one is meant is the agent's to say.
            search.ambiguous = (
                OptionMatch(search.wanted, tuple(range(len(clickable))), "loose"),
                [label] * len(clickable),
            )
            search.shown_apart = True
            return None
        if clickable:
            handle, hit = clickable[0]
            return Choice(handle, label, via, hit)
    return None


def _clickable(
    ctx: ActionContext, candidates: list[Any], label: str, search: Search
) -> list[tuple[Any, HitTest]]:
    """The distinct choices among ``candidates`` a click would reach, freshest first, each as
    (what to click, its hit test); notes why a match could not be clicked on ``search``. A
    hidden or covered copy (a stale popup) is no choice; two texts of one item (an option, a
    tree row) are one."""
    page = ctx.page
    found: list[tuple[Any, HitTest, Any]] = []
    # Portals are appended at the end of <body>: the last match is the freshest popup.
    for candidate in reversed(candidates):
        # The text itself first, where a user clicks: a tree item's row is wider than its
        # title, and only the title chooses; a click on an option's text reaches the option.
        item, _role = page.choice_item(candidate)  # type: ignore[attr-defined]
        for handle in (candidate, item) if item is not None else (candidate,):
            hit = hit_test(ctx, handle)
            if not hit.ok:
                search.blocked = blocked_by(hit, label)
                continue
            mine = candidate if item is None else item
            if not any(_same(page, mine, kept) for _handle, _hit, kept in found):
                found.append((handle, hit, mine))
            break
    return [(handle, hit) for handle, hit, _item in found]


def _same(page: Any, a: Any, b: Any) -> bool:
    """Whether two handles are the same element (each contains the other)."""
    return bool(page.contains(a, b) and page.contains(b, a))


async def wait_for(
    ctx: ActionContext, target: Target, search: Search, *, short: bool = False, first: bool = False
) -> Choice | None:
    """``find`` until the choice shows up or the (frame-aware) wait runs out: ``first`` the
    wait right after opening, before typing or scrolling; ``short`` after one such step."""
    limit_s, limit_frames = (OPTION_WAIT_S, OPTION_WAIT_FRAMES)
    if short:
        limit_s, limit_frames = AFTER_STEP_WAIT_S, AFTER_STEP_FRAMES
    elif first:
        limit_s = FIRST_WAIT_S
    began = time.monotonic()
    with FrameCounter(ctx.page) as frames:
        while True:
            choice = find(ctx, target, search)
            if choice is not None or search.ambiguous:
                return choice
            waited = time.monotonic() - began
            if (waited >= limit_s and frames.count >= limit_frames) or waited >= OPTION_WAIT_CAP_S:
                return None
            await asyncio.sleep(OPTION_POLL_S)


async def locate(ctx: ActionContext, target: Target, search: Search) -> Choice | None:
    """Every way of reaching the choice, cheapest first (module docstring)."""
    choice = await wait_for(ctx, target, search, first=True)
    if choice is not None or search.ambiguous:
        return choice
    for reach in (_by_typing, _by_scrolling, _by_expanding, _by_keys):
        if search.ambiguous:
            return None
        choice = await reach(ctx, target, search)
        if choice is not None:
            return choice
    # A popup still animating in (a background tab gets frames at 1 Hz): the whole wait.
    choice = await wait_for(ctx, target, search)
    if choice is None:
        note_rows(ctx, search)
    return choice


async def _by_typing(ctx: ActionContext, target: Target, search: Search) -> Choice | None:
    page = ctx.page
    field_ = target.handle if keyboard.editable(ctx, target.handle) else None
    if field_ is None:
        field_ = page.search_field_in(produced(ctx, search))  # type: ignore[attr-defined]
    if field_ is None:
        return None
    page.focus(field_)
    page.select_all(field_)
    page.insert_text(field_, search.wanted)
    search.typed = True
    await ctx.settle(short=True)
    return await wait_for(ctx, target, search)


async def _by_scrolling(ctx: ActionContext, target: Target, search: Search) -> Choice | None:
    page = ctx.page
    for root in produced(ctx, search):
        scroller = page.scrollable_in(root)  # type: ignore[attr-defined]
        if scroller is None:
            continue
        page.scroll_list_top(scroller)  # type: ignore[attr-defined]
        await page.next_frame()
        choice = await wait_for(ctx, target, search, short=True)
        last = -1.0
        for _ in range(MAX_SCROLL_STEPS):
            if choice is not None:
                return choice
            top, _height, _client = page.scroll_list_step(scroller, SCROLL_FRACTION)  # type: ignore[attr-defined]
            if top <= last:
                break  # the end of the list
            last = top
            await page.next_frame()
            choice = await wait_for(ctx, target, search, short=True)
        if choice is not None:
            return choice
    return None


async def _by_expanding(ctx: ActionContext, target: Target, search: Search) -> Choice | None:
    choice = await _expand_stated(ctx, target, search)
    return choice if choice is not None else await _expand_roleless(ctx, target, search)


async def _expand_stated(ctx: ActionContext, target: Target, search: Search) -> Choice | None:
    """Tree items that state they are collapsed (role=treeitem, aria-expanded="false")."""
    page = ctx.page
    skip = 0  # collapsed items whose toggle did not expand them
    for _ in range(MAX_TREE_EXPANSIONS):
        items = page.collapsed_tree_items(produced(ctx, search))  # type: ignore[attr-defined]
        if skip >= len(items):
            return None
        toggle = page.tree_toggle(items[skip])  # type: ignore[attr-defined]
        hit = hit_test(ctx, toggle) if toggle is not None else None
        if hit is None or not hit.ok:
            skip += 1
            continue
        page.click(toggle, hit.x, hit.y)
        await ctx.settle(short=True)
        choice = await wait_for(ctx, target, search, short=True)
        if choice is not None:
            return choice
        if len(page.collapsed_tree_items(produced(ctx, search))) >= len(items):  # type: ignore[attr-defined]
            skip += 1
    return None


async def _expand_roleless(ctx: ActionContext, target: Target, search: Search) -> Choice | None:
    """Rows that state no role or expanded state: click each one's leading toggle (a caret
    beside the node's text) once, in order, the children it shows included. A toggle whose
    click left fewer rows folded a node that was open: it is clicked again to unfold it."""
    page = ctx.page
    tried: list[Any] = []
    for _ in range(MAX_TREE_EXPANSIONS):
        roots = produced(ctx, search)
        toggles = page.row_toggles(roots, tried)  # type: ignore[attr-defined]
        if not toggles:
            return None
        toggle = toggles[0]
        tried.append(toggle)
        hit = hit_test(ctx, toggle)
        if not hit.ok:
            continue
        rows = len(page.popup_rows(roots, MAX_ROWS))  # type: ignore[attr-defined]
        page.click(toggle, hit.x, hit.y)
        await ctx.settle(short=True)
        choice = await wait_for(ctx, target, search, short=True)
        if choice is not None:
            return choice
        if len(page.popup_rows(produced(ctx, search), MAX_ROWS)) < rows:  # type: ignore[attr-defined]
            await _click_toggle(ctx, toggle)
    return None


async def expand_node(ctx: ActionContext, search: Search, choice: Choice) -> bool:
    """Unfold the tree node ``choice`` is the title of, a step of a path down a tree: True
    when it is a node (open now), False when it is a leaf or an option (to be chosen). A node
    that states its state is unfolded only when collapsed; one that states none is toggled,
    and toggled back when the click left fewer rows (it was open and folded)."""
    page = ctx.page
    item, role = page.choice_item(choice.handle)  # type: ignore[attr-defined]
    if role == "treeitem":
        state = page.row_of(item)[F.ARIA_EXPANDED]
        if state != "false":
            return state == "true"
        toggle = page.tree_toggle(item)  # type: ignore[attr-defined]
        if toggle is not None:
            await _click_toggle(ctx, toggle)
        return True
    toggle = page.row_toggle_of(choice.handle)  # type: ignore[attr-defined]
    if toggle is None:
        return False
    rows = len(page.popup_rows(produced(ctx, search), MAX_ROWS))  # type: ignore[attr-defined]
    await _click_toggle(ctx, toggle)
    if len(page.popup_rows(produced(ctx, search), MAX_ROWS)) < rows:  # type: ignore[attr-defined]
        await _click_toggle(ctx, toggle)
    return True


async def _click_toggle(ctx: ActionContext, toggle: Any) -> None:
    hit = hit_test(ctx, toggle)
    if hit.ok:
        ctx.page.click(toggle, hit.x, hit.y)
        await ctx.settle(short=True)


def note_rows(ctx: ActionContext, search: Search) -> None:
    """What a popup without option roles offers (its rows' texts), for the error."""
    if search.seen:
        return
    for text in ctx.page.popup_rows(produced(ctx, search), MAX_ROWS):  # type: ignore[attr-defined]
        if text and text not in search.seen:
            search.seen.append(text)


async def _by_keys(ctx: ActionContext, target: Target, search: Search) -> Choice | None:
    page = ctx.page
    facts, _handles, _active = page.aria_options(target.handle)
    match = options.find_option(facts, search.wanted).index
    if match is None:
        return None
    label = fold(facts[match][0])
    for _ in range(MAX_KEY_STEPS):
        _facts, _handles, active = page.aria_options(target.handle)
        if fold(active) == label:
            return Choice(target.handle, facts[match][0], "keyboard")
        await keyboard.press(ctx, target.handle, parse_key("ArrowDown"))
        await page.next_frame()
    return None


async def activate(ctx: ActionContext, target: Target, choice: Choice) -> None:
    """Choose it: a click at its hit point, or Enter on the active descendant."""
    if choice.via == "keyboard":
        await keyboard.press(ctx, target.handle, parse_key("Enter"))
        return
    assert choice.hit is not None
    ctx.page.click(choice.handle, choice.hit.x, choice.hit.y)


def failure(target: Target, search: Search) -> Exception:
    """Why the choice was not made: several options match, what blocked a match, else that
    there is none."""
    if search.ambiguous is not None:
        match, labels = search.ambiguous
        if search.shown_apart:
            return options.unmatched(target, match, labels, hint=SHOWN_APART)
        return options.unmatched(target, match, labels)
    if search.blocked is not None:
        blocked = search.blocked
        return target.failure(
            blocked.code, f"{blocked.reason} in {target.name}; nothing was chosen",
            {**blocked.details, "options": search.seen[: options.LISTED_OPTIONS]},
        )
    how = " (typed into its search field, scrolled its list)" if search.typed else ""
    return options.unmatched(target, OptionMatch(search.wanted, (), ""), search.seen, how)
