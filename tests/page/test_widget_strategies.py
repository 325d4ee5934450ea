"""Widget strategy decisions (``mao_page.actions.widgets``) against a scripted page: which way
an option is reached, what is clicked, and what a blocked or missing choice is reported as.
The browser matrix (tests/browser/widgets) proves the same strategies on real libraries; this
proves the decisions (SPEC A1, A6; truthful errors)."""

from __future__ import annotations

from typing import Any

import pytest
from mao_page.actions.widgets import popup, rate, slider
from mao_page.actions.widgets import select as custom_select
from mao_page.bridge.page import HitTest, Outcome
from mao_page.errors import ToolFailure
from mao_page.protocol import ErrorCode

from .fake_page import Element, FakeInspector, FakePage, context, element


@pytest.fixture(autouse=True)
def quick_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    # The fake renders at once: the waits for popups animating in only slow the tests down.
    monkeypatch.setattr(popup, "OPTION_WAIT_S", 0.01)
    monkeypatch.setattr(popup, "AFTER_STEP_WAIT_S", 0.0)
    monkeypatch.setattr(popup, "FIRST_WAIT_S", 0.0)


class WidgetFakePage(FakePage):
    """A select whose click renders a popup of ``options``, ``window`` of them at a time
    (a virtual list) from ``offset``; typing into an editable select filters them."""

    def __init__(self, options: list[str], *, window: int = 100, popup_opens: bool = True) -> None:
        super().__init__()
        self.options = {
            label: element(f"opt:{label}", "div", role="option", label=label) for label in options
        }
        self.order = list(options)
        self.window = window
        self.offset = 0
        self.open = False
        self.popup_opens = popup_opens
        self.popup = element("popup", "div")
        self.scroller = element("scroller", "div")
        self.query = ""
        self.shown = ""
        self.radios: list[Element] = []
        self.slider_now = 0.0
        self.slider_moves = 1.0
        # A slider stating no value: read from its thumb's place (1; 2: in an assumed range),
        # its thumb focusable or not, its rail 0..100 px wide so that x is the value.
        self.slider_source = 0
        self.slider_thumb: Element | None = None
        self.slider_rail = element("rail", "div")
        self.slider_ends = True  # the page handles Home/End
        self.rail_takes_clicks = True

    def visible(self) -> list[str]:
        if not self.open:
            return []
        labels = [label for label in self.order if self.query.casefold() in label.casefold()]
        return labels[self.offset:self.offset + self.window]

    def click(
        self, handle: Element, x: float, y: float, click_count: int = 1, button: str = "left"
    ) -> None:
        super().click(handle, x, y)
        if handle is self.slider_rail:
            self.slider_now = round(x) if self.rail_takes_clicks else self.slider_now
        elif handle.name == "select" and self.popup_opens:
            self.open = not self.open
        elif handle.name.startswith("opt:"):
            self.shown = handle.label
            self.open = False

    # widget reads
    def popup_roots(self, before: list[Any] | None = None) -> list[Any]:
        return [self.popup] if self.open else []

    def choices_in(self, roots: list[Any], label: str, skip: Any) -> list[Any]:
        return [self.options[label]] if label in self.visible() else []

    def choice_item(self, handle: Element) -> tuple[Element, str]:
        return handle, "option"

    def aria_options(self, handle: Any) -> tuple[list[list[Any]], list[Any], str]:
        return [], [], ""

    def scrollable_in(self, handle: Any) -> Element | None:
        return self.scroller if len(self.order) > self.window else None

    def scroll_list_top(self, handle: Any) -> float:
        self.offset = 0
        return 0.0

    def scroll_list_step(self, handle: Any, fraction: float) -> list[float]:
        self.acts.append(("scroll_step",))
        self.offset = min(
            self.offset + max(1, int(self.window * fraction)), max(0, len(self.order) - self.window)
        )
        return [float(self.offset), float(len(self.order)), float(self.window)]

    def collapsed_tree_items(self, roots: list[Any]) -> list[Any]:
        return []

    def popup_rows(self, roots: list[Any], limit: int) -> list[str]:
        return []

    def row_toggles(self, roots: list[Any], tried: list[Any]) -> list[Any]:
        return []

    def row_toggle_of(self, handle: Any) -> None:
        return None

    def search_field_in(self, roots: list[Any]) -> None:
        return None

    def insert_text(self, handle: Element, text: str) -> str:
        self.query = text
        return super().insert_text(handle, text)

    def combobox_display(self, handle: Any) -> str:
        return self.shown

    def radios_in(self, handle: Any) -> list[Element]:
        return self.radios

    def slider_range(self, handle: Any) -> list[float]:
        return [self.slider_now, 0.0, 100.0, float("nan"), float(self.slider_source)]

    def slider_track(self, handle: Any) -> tuple[Any, ...] | None:
        if not self.slider_source:
            return None
        return (self.slider_thumb, self.slider_rail, 0.0, 100.0, 5.0, 5.0)

    def dispatch_key(self, handle: Element | None, type_: str, init: dict[str, Any]) -> bool:
        if type_ == "keydown" and (not self.slider_source or handle is self.slider_thumb):
            step = {"ArrowRight": self.slider_moves, "ArrowLeft": -self.slider_moves}.get(
                init["key"], 0.0
            )
            ends = {"Home": 0.0, "End": 100.0} if self.slider_ends else {}
            self.slider_now = ends.get(init["key"], self.slider_now + step)
        return super().dispatch_key(handle, type_, init)


def combobox(**columns: Any) -> Element:
    return element("select", "input", role="combobox", label="City", type="search", readonly=True,
                   aria_expanded="false", **columns)


def setup(page: WidgetFakePage, target: Element):
    ctx, _ = context(page, FakeInspector(page, [target]))
    return ctx


def clicks(page: FakePage) -> list[str]:
    return [a[1] for a in page.acts if a[0] == "click"]


class OpenState:
    """aria-expanded of the fake combobox follows the fake popup."""

    def __init__(self, page: WidgetFakePage, target: Element) -> None:
        self.page, self.target = page, target

    def __call__(self, handle: Element) -> list[Any]:
        row = list(handle.row)
        if handle is self.target:
            from mao_page.dom import facts as F

            row[F.ARIA_EXPANDED] = "true" if self.page.open else "false"
        return row


def follow_open(page: WidgetFakePage, target: Element) -> None:
    state = OpenState(page, target)
    original = page.row_of
    page.row_of = lambda handle: state(handle) if handle is target else original(handle)  # type: ignore[method-assign]


async def test_an_option_in_view_is_clicked_after_opening_and_the_choice_verified() -> None:
    page = WidgetFakePage(["Paris", "Berlin", "Tokyo"])
    city = combobox()
    follow_open(page, city)
    outcome = await custom_select.choose(setup(page, city), city.target(), ["Berlin"])
    assert clicks(page) == ["select", "opt:Berlin"]
    assert outcome["selected"] == ["Berlin"] and outcome["via"] == ["popup"]


async def test_an_option_below_a_virtual_lists_window_is_reached_by_scrolling() -> None:
    page = WidgetFakePage([f"C{i:02}" for i in range(40)], window=8)
    city = combobox()
    follow_open(page, city)
    outcome = await custom_select.choose(setup(page, city), city.target(), ["C37"])
    assert clicks(page)[-1] == "opt:C37" and outcome["selected"] == ["C37"]
    assert ("scroll_step",) in page.acts


async def test_a_searchable_select_is_typed_into_before_any_scrolling() -> None:
    page = WidgetFakePage([f"C{i:02}" for i in range(40)], window=8)
    city = element(
        "select", "input", role="combobox", label="City", type="search", aria_expanded="false"
    )
    follow_open(page, city)
    outcome = await custom_select.choose(setup(page, city), city.target(), ["C37"])
    assert ("insert_text", "select", "C37") in page.acts
    assert ("scroll_step",) not in page.acts and outcome["selected"] == ["C37"]


async def test_a_covered_option_is_obscured_naming_what_covers_it_not_not_found() -> None:
    page = WidgetFakePage(["Paris", "Berlin"])
    page.options["Berlin"].hits = [HitTest(Outcome.COVERED, 5, 5, "<div#toast>")]
    city = combobox()
    follow_open(page, city)
    with pytest.raises(ToolFailure) as raised:
        await custom_select.choose(setup(page, city), city.target(), ["Berlin"])
    assert raised.value.code is ErrorCode.OBSCURED
    assert raised.value.details["coveredBy"] == "<div#toast>"
    assert "opt:Berlin" not in clicks(page)


class TwinPopupPage(WidgetFakePage):
    """Its popup shows the wanted text ``copies`` times: each copy an element of its own, or
    (``one_item``) texts inside one option; copies after the first answer ``hit`` when hit
    tested (a copy left covered or off screen by a stale popup)."""

    def __init__(self, copies: int, *, one_item: bool = False, hit: HitTest | None = None):
        super().__init__(["Paris", "Berlin"])
        self.copies = [self.options["Berlin"]] + [
            element(f"opt:Berlin#{n}", "span", label="Berlin") for n in range(1, copies)
        ]
        for copy in self.copies[1:]:
            copy.hits = [hit] if hit is not None else []
        self.one_item = one_item

    def choices_in(self, roots: list[Any], label: str, skip: Any) -> list[Any]:
        return list(self.copies) if label == "Berlin" and self.open else []

    def choice_item(self, handle: Element) -> tuple[Element, str]:
        return (self.copies[0] if self.one_item else handle), "option"

    def contains(self, ancestor: Any, node: Any) -> bool:
        return ancestor is node


async def test_a_choice_shown_in_two_places_at_once_is_refused_and_nothing_chosen() -> None:
    # SPEC A1, A6: two open popups (or the same text twice outside the widget's popup) both
    # offer the choice where a user could click it; which one is meant is never guessed.
    page = TwinPopupPage(2)
    city = combobox()
    follow_open(page, city)
    with pytest.raises(ToolFailure) as raised:
        await custom_select.choose(setup(page, city), city.target(), ["Berlin"])
    assert raised.value.code is ErrorCode.INVALID_REQUEST
    assert raised.value.details["matches"] == ["Berlin", "Berlin"]
    assert "separate places" in raised.value.message
    assert clicks(page) == ["select"] and page.shown == ""


@pytest.mark.parametrize(
    ("one_item", "hit"),
    [(True, None), (False, HitTest(Outcome.COVERED, 5, 5, "<div.popup>")),
     (False, HitTest(Outcome.OUTSIDE_VIEWPORT))],
    ids=["two-texts-of-one-option", "a-covered-stale-copy", "an-off-screen-copy"],
)
async def test_a_choice_shown_once_where_a_click_lands_is_chosen_from_the_freshest_popup(
    one_item: bool, hit: HitTest | None
) -> None:
    # SPEC A1: a copy no click can reach, or a second text of the same option, is one choice.
    page = TwinPopupPage(2, one_item=one_item, hit=hit)
    city = combobox()
    follow_open(page, city)
    outcome = await custom_select.choose(setup(page, city), city.target(), ["Berlin"])
    assert outcome["selected"] == ["Berlin"] and page.shown == "Berlin"


async def test_a_missing_option_is_not_found_and_the_popup_closed_again() -> None:
    page = WidgetFakePage(["Paris", "Berlin"])
    city = combobox()
    follow_open(page, city)
    with pytest.raises(ToolFailure) as raised:
        await custom_select.choose(setup(page, city), city.target(), ["Atlantis"])
    assert raised.value.code is ErrorCode.NOT_FOUND
    assert ("key", "keydown", "Escape") in page.acts


async def test_a_text_field_whose_click_opens_nothing_is_unsupported() -> None:
    page = WidgetFakePage(["Paris"], popup_opens=False)
    name = element("select", "input", type="text", label="Name")
    with pytest.raises(ToolFailure) as raised:
        await custom_select.choose(setup(page, name), name.target(), ["Paris"])
    assert raised.value.code is ErrorCode.UNSUPPORTED


@pytest.mark.parametrize(("tag", "columns", "opens"), [
    ("input", {"role": "combobox"}, True),
    ("div", {"role": "listbox"}, True),
    ("button", {"aria_expanded": "false"}, True),
    ("input", {"type": "text"}, True),
    ("button", {}, False),
    ("input", {"type": "checkbox"}, False),
    ("a", {"href": "/delete"}, False),
], ids=["combobox", "listbox", "expandable", "text-field", "button", "checkbox", "link"])
def test_only_elements_that_state_a_popup_or_are_text_fields_are_opened(
    tag: str, columns: dict[str, Any], opens: bool
) -> None:
    columns = dict(columns)
    target = element("x", tag, role=columns.pop("role", ""), **columns)
    assert custom_select.opens_choices(target.target()) is opens


def test_a_covered_hit_names_the_cover_and_an_off_screen_one_is_not_visible() -> None:
    covered = popup.blocked_by(HitTest(Outcome.COVERED, 1, 1, "<div.mask>"), "Berlin")
    assert covered.code is ErrorCode.OBSCURED and covered.details == {"coveredBy": "<div.mask>"}
    assert popup.blocked_by(HitTest(Outcome.COVERED_BY_SDK), "Berlin").details == {
        "coveredBy": "the Mao Embed panel"
    }
    assert (
        popup.blocked_by(HitTest(Outcome.OUTSIDE_VIEWPORT), "Berlin").code is ErrorCode.NOT_VISIBLE
    )


@pytest.mark.parametrize(("now", "wanted", "key"), [
    (0, 30, "ArrowRight"), (50, 30, "ArrowLeft"), (30, 30, None), (40, 0, "Home"), (10, 100, "End"),
])
def test_a_slider_key_moves_toward_the_number(now: float, wanted: float, key: str | None) -> None:
    assert slider.key_for(now, wanted, 0, 100) == key


async def test_a_slider_is_set_by_arrow_keys_until_it_shows_the_number() -> None:
    page = WidgetFakePage([])
    volume = element("volume", "div", role="slider", label="Volume")
    outcome = await slider.set_value(setup(page, volume), volume.target(), "30")
    assert outcome["value"] == "30" and outcome["keyPresses"] == 30


async def test_a_slider_whose_step_skips_the_number_fails_verification() -> None:
    page = WidgetFakePage([])
    page.slider_moves = 7.0
    volume = element("volume", "div", role="slider", label="Volume")
    with pytest.raises(ToolFailure) as raised:
        await slider.set_value(setup(page, volume), volume.target(), "30")
    assert raised.value.code is ErrorCode.VERIFICATION_FAILED
    assert raised.value.details["shown"] == 35.0


async def test_a_slider_stating_no_value_is_set_by_arrows_on_its_thumb_without_home_and_end() -> (
    None
):
    # Element UI, TDesign Vue: the value is where the thumb sits; the thumb takes the arrows.
    page = WidgetFakePage([])
    page.slider_source, page.slider_ends, page.slider_now = 1, False, 40.0
    page.slider_thumb = element("thumb", "div", tabindex="0")
    volume = element("volume", "div", role="slider", label="Volume")
    outcome = await slider.set_value(setup(page, volume), volume.target(), "0")
    assert (outcome["value"], outcome["by"], "range" in outcome) == ("0", ["keyboard"], False)
    assert page.focused is page.slider_thumb
    assert outcome["keyPresses"] == 41  # one Home that did nothing, then 40 arrows


async def test_a_slider_without_a_focusable_thumb_is_set_by_a_click_on_its_rail() -> None:
    # TDesign React: no role, no tabindex, no range stated (ARIA's 0..100 assumed and said).
    page = WidgetFakePage([])
    page.slider_source = 2
    volume = element("volume", "div", label="Volume")
    outcome = await slider.set_value(setup(page, volume), volume.target(), "30")
    assert (outcome["value"], outcome["by"], outcome["keyPresses"]) == ("30", ["pointer"], 0)
    assert outcome["range"].startswith("assumed 0-100")
    assert clicks(page) == ["rail"]


async def test_a_slider_ignoring_the_keys_gets_a_click_on_its_rail() -> None:
    page = WidgetFakePage([])
    page.slider_source = 1
    page.slider_thumb = element("thumb", "div", tabindex="0")
    page.slider_moves = 0.0
    page.slider_ends = False
    volume = element("volume", "div", role="slider", label="Volume")
    outcome = await slider.set_value(setup(page, volume), volume.target(), "30")
    assert (outcome["value"], outcome["by"]) == ("30", ["keyboard", "pointer"])


async def test_a_slider_whose_rail_click_lands_elsewhere_fails_verification() -> None:
    page = WidgetFakePage([])
    page.slider_source = 1
    page.rail_takes_clicks = False  # a click on the rail does not move the thumb
    volume = element("volume", "div", role="slider", label="Volume")
    with pytest.raises(ToolFailure) as raised:
        await slider.set_value(setup(page, volume), volume.target(), "30")
    assert raised.value.code is ErrorCode.VERIFICATION_FAILED
    assert raised.value.details["shown"] == 0.0


@pytest.mark.parametrize("value", ["abc", "150", "-1"])
async def test_a_slider_refuses_what_it_cannot_show_before_acting(value: str) -> None:
    page = WidgetFakePage([])
    volume = element("volume", "div", role="slider", label="Volume")
    with pytest.raises(ToolFailure) as raised:
        await slider.set_value(setup(page, volume), volume.target(), value)
    assert raised.value.code is ErrorCode.INVALID_REQUEST
    assert [a for a in page.acts if a[0] in ("key", "focus")] == []


async def test_a_rating_clicks_the_nth_star_and_reads_the_stars_back() -> None:
    page = WidgetFakePage([])
    page.radios = [
        element(f"star{i}", "div", role="radio", aria_checked="false") for i in range(1, 6)
    ]

    def rate_to(n: int) -> None:
        from mao_page.dom import facts as F

        for i, star in enumerate(page.radios, start=1):
            star.row[F.ARIA_CHECKED] = "true" if i <= n else "false"

    page.on_click["star4"] = lambda: rate_to(4)
    rating = element("rating", "ul", label="Rating")
    ctx = setup(page, rating)
    assert rate.is_rating(ctx, rating.target(), "4")
    outcome = await rate.set_value(ctx, rating.target(), "4")
    assert clicks(page) == ["star4"] and outcome["value"] == "4"
    with pytest.raises(ToolFailure) as raised:
        await rate.set_value(ctx, rating.target(), "6")
    assert raised.value.code is ErrorCode.INVALID_REQUEST


class TreeFakePage(WidgetFakePage):
    """A tree select whose popup rows state no role or expanded state: each parent row has
    a caret toggle before its text (``row_toggles``), and only expanded parents show their
    children."""

    TREE = {"Engineering": ["Frontend", "Backend"], "Sales": ["EMEA"]}

    def __init__(self, expanded: set[str] = frozenset()) -> None:
        labels = [label for parent, kids in self.TREE.items() for label in (parent, *kids)]
        super().__init__(labels)
        self.expanded = set(expanded)
        self.toggles = {parent: element(f"toggle:{parent}", "span") for parent in self.TREE}

    def visible(self) -> list[str]:
        if not self.open:
            return []
        return [label for parent, kids in self.TREE.items()
                for label in (parent, *(kids if parent in self.expanded else ()))]

    def click(
        self, handle: Element, x: float, y: float, click_count: int = 1, button: str = "left"
    ) -> None:
        if handle.name.startswith("toggle:"):
            FakePage.click(self, handle, x, y)
            self.expanded ^= {handle.name.removeprefix("toggle:")}
            return
        super().click(handle, x, y)

    def popup_rows(self, roots: list[Any], limit: int) -> list[str]:
        return self.visible()[:limit]

    def row_toggles(self, roots: list[Any], tried: list[Any]) -> list[Any]:
        return [
            self.toggles[p]
            for p in self.TREE
            if p in self.visible() and self.toggles[p] not in tried
        ]

    def row_toggle_of(self, handle: Element) -> Element | None:
        return self.toggles.get(handle.label)


# SPEC A1
async def test_a_leaf_under_a_collapsed_roleless_node_is_reached_through_its_toggle() -> None:
    page = TreeFakePage()
    department = combobox()
    follow_open(page, department)
    outcome = await custom_select.choose(setup(page, department), department.target(), ["Backend"])
    assert clicks(page) == ["select", "toggle:Engineering", "opt:Backend"]
    assert outcome["selected"] == ["Backend"] and page.shown == "Backend"


async def test_a_toggle_that_folded_an_open_node_is_clicked_again() -> None:  # SPEC A1
    page = TreeFakePage(expanded={"Engineering"})
    department = combobox()
    follow_open(page, department)
    outcome = await custom_select.choose(setup(page, department), department.target(), ["EMEA"])
    assert clicks(page) == [
        "select",
        "toggle:Engineering",
        "toggle:Engineering",
        "toggle:Sales",
        "opt:EMEA",
    ]
    assert outcome["selected"] == ["EMEA"] and "Engineering" in page.expanded


async def test_a_missing_leaf_lists_the_rows_the_roleless_tree_showed() -> None:  # SPEC A6
    page = TreeFakePage()
    department = combobox()
    follow_open(page, department)
    with pytest.raises(ToolFailure) as raised:
        await custom_select.choose(setup(page, department), department.target(), ["Legal"])
    assert raised.value.code is ErrorCode.NOT_FOUND
    assert raised.value.details["options"] == [
        "Engineering",
        "Frontend",
        "Backend",
        "Sales",
        "EMEA",
    ]


@pytest.mark.parametrize(
    ("expanded", "toggles"), [(set(), 1), ({"Engineering"}, 2)], ids=["collapsed", "open"]
)
async def test_a_path_down_a_roleless_tree_unfolds_the_node_and_chooses_the_leaf(
    expanded: set[str], toggles: int
) -> None:  # SPEC A1
    # The node is not chosen (a tree select would take it as the value); an open node's toggle
    # folds it, which shows fewer rows, so it is clicked again.
    page = TreeFakePage(expanded=expanded)
    department = combobox()
    follow_open(page, department)
    outcome = await custom_select.choose(
        setup(page, department), department.target(), ["Engineering", "Backend"]
    )
    assert clicks(page) == ["select", *["toggle:Engineering"] * toggles, "opt:Backend"]
    assert (outcome["selected"], outcome["unfolded"], page.shown) == (
        ["Backend"],
        ["Engineering"],
        "Backend",
    )


async def test_a_cascader_path_clicks_each_column_choice() -> None:  # SPEC A1
    # Options without a toggle are chosen at every step: each opens the next column.
    class Cascader(WidgetFakePage):
        def click(
        self, handle: Element, x: float, y: float, click_count: int = 1, button: str = "left"
    ) -> None:
            super().click(handle, x, y)
            self.open = self.open or handle.name == "opt:Zhejiang"  # the next column opens

    page = Cascader(["Zhejiang", "Hangzhou"])
    region = combobox()
    follow_open(page, region)
    outcome = await custom_select.choose(
        setup(page, region), region.target(), ["Zhejiang", "Hangzhou"]
    )
    assert clicks(page) == ["select", "opt:Zhejiang", "opt:Hangzhou"]
    assert outcome["selected"] == ["Zhejiang", "Hangzhou"] and "unfolded" not in outcome
