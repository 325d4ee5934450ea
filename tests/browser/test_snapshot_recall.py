"""Everything a user can click is reachable (SPEC S1, S9), in real Chromium: items a page
handles through one delegated listener on their list (no role, tabindex or pointer cursor)
get refs, clicking one runs the page's handler, and what an action opened is marked new in
the next snapshot while what was there before is not."""

from __future__ import annotations

from frameworks import AgentView, failure

PAGE = """
<style>
  #suggest { position: absolute; top: 40px; left: 8px; margin: 0; padding: 4px; list-style: none;
             background: #fff; border: 1px solid #999; width: 240px; }
  #suggest[hidden] { display: none; }
  #menu { position: fixed; top: 120px; left: 300px; background: #fff; border: 1px solid #999;
    padding: 4px; }
  #menu > div { padding: 2px 6px; }
</style>
<input id="city" aria-label="City" autocomplete="off" style="width:240px">
<ul id="suggest" hidden></ul>
<p>Choose where to ship. Free shipping on orders over 50 euros.</p>
<ul id="facts"><li>Ships in two days</li><li>Free returns</li></ul>
<button id="more" type="button">More</button>
<div id="chosen">none</div>
<script>
  const cities = ["Paris", "Parma", "Porto"];
  const input = document.getElementById("city");
  const list = document.getElementById("suggest");
  input.addEventListener("input", () => {
    const typed = input.value.toLowerCase();
    list.replaceChildren(...cities.filter((c) => c.toLowerCase().startsWith(typed))
      .map((c) => Object.assign(document.createElement("li"), { textContent: c })));
    list.hidden = !input.value || !list.children.length;
  });
  // One listener for all items: nothing on the items says they are clickable.
  list.addEventListener("mousedown", (event) => {
    const item = event.target.closest("li");
    if (!item) return;
    event.preventDefault();
    input.value = item.textContent;
    document.getElementById("chosen").textContent = item.textContent;
    list.hidden = true;
  });
  document.getElementById("more").addEventListener("click", () => {
    if (document.getElementById("menu")) return;
    const menu = document.createElement("div");
    menu.id = "menu";
    for (const name of ["Rename", "Duplicate",
      "Archive"]) menu.appendChild(Object.assign(document.createElement("div"), {
        textContent: name }));
    menu.addEventListener("click", (event) => {
      document.getElementById("chosen").textContent = event.target.textContent; menu.remove(); });
    document.body.appendChild(menu);
  });
  window.__mount = () => {
    input.value = ""; list.hidden = true; list.replaceChildren();
    document.getElementById("chosen").textContent = "none";
    document.getElementById("menu")?.remove();
  };
</script>
"""


def _labels(snapshot, role=None):
    return [e["label"] for e in snapshot["elements"] if role is None or e["role"] == role]


def test_a_delegated_suggestion_list_gets_refs_and_a_click_runs_the_pages_handler(
    reusable_pages,
):  # SPEC S1, S9
    view = AgentView(reusable_pages.open("recall", PAGE, title="Recall"))
    result = view.call("page_fill", "City", value="Par")
    assert result["success"], failure(result)
    snapshot = view.embedded.inspect(format="text")
    items = {e["label"]: e for e in snapshot["elements"] if e["role"] == "listitem"}
    assert set(items) == {"Paris", "Parma"}, _labels(snapshot)
    assert all(e.get("new") is True and e["nameFrom"] == "text" for e in items.values())
    assert '- listitem "Parma" [new] [ref=' in snapshot["text"]
    # Text that was there before stays text: the paragraph and the bullet list.
    assert (
        "Ships in two days" not in _labels(snapshot) and '"Ships in two days"' in snapshot["text"]
    )
    result = view.embedded.call(
        "page_click", snapshotId=snapshot["snapshotId"], elementId=items["Parma"]["elementId"]
    )
    assert result["success"], failure(result)
    assert view.embedded.page.input_value("#city") == "Parma"
    assert view.embedded.page.text_content("#chosen") == "Parma"


def test_a_popup_an_action_opened_is_marked_new_and_the_rest_is_not(reusable_pages):  # SPEC S9
    view = AgentView(reusable_pages.open("recall", PAGE, title="Recall"))
    assert not any(e.get("new") for e in view.snapshot["elements"])
    result = view.call("page_click", "More")
    assert result["success"], failure(result)
    snapshot = view.embedded.inspect()
    new = sorted(e["label"] for e in snapshot["elements"] if e.get("new"))
    assert new == ["Archive", "Duplicate", "Rename"], [
        (e["label"], e.get("new")) for e in snapshot["elements"]
    ]
    assert {"City", "More"} <= {e["label"] for e in snapshot["elements"] if not e.get("new")}
    archive = view.embedded.find(snapshot, label="Archive")
    result = view.embedded.call(
        "page_click", snapshotId=snapshot["snapshotId"], elementId=archive["elementId"]
    )
    assert result["success"], failure(result)
    assert view.embedded.page.text_content("#chosen") == "Archive"
    # The next snapshot compares with that one: the menu is gone and nothing is new.
    again = view.embedded.inspect()
    assert not any(e.get("new") for e in again["elements"]), again["elements"]
