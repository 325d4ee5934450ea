// Facts for the widget strategies (mao_page.actions.widgets): what a widget's open produced,
// where its choices are, how to scroll a (virtual) list and expand a tree. Reads and single
// acts only; which of them to use, in what order, is decided in Python.

// Body-level containers with rendered content: portals (popups, menus, dialogs) live there.
// With `before` (the roots rendered before an open), the ones the open produced.
function popupRoots(doc, exclude, before) {
  const out = [];
  const body = doc.body;
  if (!body) return out;
  const known = new Set(before || []);
  for (const child of body.children) {
    if (known.has(child)) continue;
    if (exclude && (child === exclude || composedContains(exclude, child) || composedContains(child, exclude))) continue;
    if (child.localName === "script" || child.localName === "style" || child.localName === "template") continue;
    if (hasRenderedContent(child, 400)) out.push(child);
  }
  return out;
}

// A wrapper may be 0x0 (absolutely positioned content inside): look at a bounded number of
// descendants for one that is rendered.
function hasRenderedContent(root, budget) {
  if (isRendered(root)) return true;
  const walker = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
  let n = walker.nextNode();
  for (let i = 0; n && i < budget; i++, n = walker.nextNode()) {
    if (isRendered(n)) return true;
  }
  return false;
}

// Visible elements under `roots` (or the document) whose own text equals `label` folded
// (mao_page.dom.textrules.fold: case and white space aside), innermost first-found, outside `exclude` and the
// widget `skip`; with their accessible roles, so Python can prefer options and tree items.
function choicesIn(roots, label, skip, exclude) {
  const want = fold(label);
  const out = [];
  const scan = (root) => {
    const walker = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
    for (let n = walker.currentNode; n; n = walker.nextNode()) {
      if (exclude && (n === exclude || composedContains(exclude, n))) continue;
      if (skip && (n === skip || skip.contains(n))) continue;
      const text = fold(n.innerText || "");
      const named = fold(n.getAttribute("aria-label") || n.getAttribute("title") || "");
      if (text !== want && !(named === want && !text)) continue;
      if (!isRendered(n)) continue;
      for (let i = out.length - 1; i >= 0; i--) if (out[i].contains(n)) out.splice(i, 1);
      out.push(n);
    }
  };
  const list = roots && roots.length ? Array.from(roots) : [(skip ? skip.ownerDocument : document).body];
  for (const root of list) if (root) scan(root);
  return out;
}

// The element of a choice that carries its semantics: the nearest ancestor (itself
// included) with an item role, within `limit` levels. Returns [element, role] or [el, ""].
function choiceItem(el, limit) {
  let n = el;
  for (let i = 0; n && i <= limit; i++, n = n.parentElement) {
    const role = n.getAttribute && n.getAttribute("role");
    if (role === "option" || role === "treeitem" || role === "menuitem" || role === "menuitemradio"
        || role === "menuitemcheckbox" || role === "gridcell" || role === "radio" || role === "tab") return [n, role];
  }
  return [el, ""];
}

// The scroll container of a popup: `start` itself or the first descendant (breadth-first)
// whose content overflows it, overflow hidden included (virtual lists hide their native
// scrollbar and scroll on wheel events). Null when nothing overflows.
function scrollableIn(start) {
  const queue = [start];
  for (let i = 0; i < queue.length && i < 2000; i++) {
    const n = queue[i];
    if (n.scrollHeight > n.clientHeight + 2 && n.clientHeight > 0) {
      const style = n.ownerDocument.defaultView.getComputedStyle(n);
      if (style.overflowY !== "visible") return n;
    }
    for (const c of n.children) queue.push(c);
  }
  return null;
}

// One step down a list (a fraction of its height), the way a wheel turn would: the wheel
// event for lists that scroll themselves, scrollTop for those that follow native scrolling.
// Returns [scrollTop, scrollHeight, clientHeight] after the step.
function scrollListStep(el, fraction) {
  const dy = Math.max(16, Math.round(el.clientHeight * fraction));
  const before = el.scrollTop;
  const r = el.getBoundingClientRect();
  const wheel = new WheelEvent("wheel", {
    deltaY: dy, deltaMode: 0, bubbles: true, cancelable: true, composed: true,
    clientX: r.left + r.width / 2, clientY: r.top + r.height / 2,
  });
  const cancelled = !el.dispatchEvent(wheel);
  if (!cancelled && el.scrollTop === before) {
    el.scrollTop = before + dy;
    el.dispatchEvent(new Event("scroll", { bubbles: false }));
  }
  return [el.scrollTop, el.scrollHeight, el.clientHeight];
}

// Back to the top of a list (before a search from the start).
function scrollListTop(el) {
  const r = el.getBoundingClientRect();
  el.dispatchEvent(new WheelEvent("wheel", {
    deltaY: -el.scrollHeight, deltaMode: 0, bubbles: true, cancelable: true, composed: true,
    clientX: r.left + r.width / 2, clientY: r.top + r.height / 2,
  }));
  if (el.scrollTop !== 0) {
    el.scrollTop = 0;
    el.dispatchEvent(new Event("scroll", { bubbles: false }));
  }
  return el.scrollTop;
}

// Collapsed tree items (aria-expanded="false") under `roots` that are rendered, in order.
function collapsedTreeItems(roots) {
  const out = [];
  for (const root of roots) {
    const items = root.querySelectorAll('[role=treeitem][aria-expanded="false"]');
    for (const item of items) if (isRendered(item)) out.push(item);
  }
  return out;
}

// The toggle of a collapsed tree item: the first rendered descendant, outside the element
// holding the item's text, that a pointer can act on (role=button, a pointer cursor, or an
// icon). Clicking the text itself would choose the item instead of expanding it.
function treeToggle(item) {
  const text = squashAny(item.innerText || "");
  const view = item.ownerDocument.defaultView;
  const walker = item.ownerDocument.createTreeWalker(item, NodeFilter.SHOW_ELEMENT);
  let fallback = null;
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.getAttribute("role") === "group") break;  // the nested children
    if (!isRendered(n)) continue;
    const own = squashAny(n.innerText || "");
    if (own && text && own === text) continue;  // the label's element (or one wrapping it)
    if (own) continue;
    if (n.getAttribute("role") === "button") return n;
    if (view.getComputedStyle(n).cursor === "pointer") return n;
    if (!fallback && (n.localName === "svg" || n.getAttribute("role") === "img")) fallback = n;
  }
  return fallback;
}

// Rows of popups that state no roles: the members of each group of at least two rendered
// same-tag siblings that show text (tree nodes or list entries drawn as plain elements), in
// document order, at most `limit`. `innermost` keeps only rows holding no other row (the
// entries themselves, not a nested tree node around its children).
function popupRows(roots, innermost, limit) {
  const out = [];
  const budget = 4000;
  for (const root of roots) {
    const walker = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
    let seen = 0;
    for (let n = walker.currentNode; n && seen < budget && out.length < limit; n = walker.nextNode(), seen++) {
      const kids = n.children;
      if (kids.length < 2) continue;
      const byTag = new Map();
      for (const kid of kids) {
        if (!squashAny(kid.innerText || "") || !isRendered(kid)) continue;
        const group = byTag.get(kid.localName) || [];
        group.push(kid);
        byTag.set(kid.localName, group);
      }
      for (const group of byTag.values()) if (group.length >= 2) out.push(...group);
    }
  }
  out.sort((a, b) => (a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1));
  const rows = innermost ? out.filter((row) => !out.some((other) => other !== row && row.contains(other))) : out;
  return rows.slice(0, limit);
}

// The texts of the innermost roleless rows (what the popup offers, for an error's details
// and to tell whether a toggle showed more rows).
const popupRowTexts = (roots, limit) => popupRows(roots, true, limit).map((row) => squash(row.innerText || ""));

// The expand toggle of a row that states no role: a rendered element without text before the
// row's first text, that a pointer acts on apart from the row (role=button, or a pointer
// cursor the row itself does not have: a tree node's caret, not the icon of an option whose
// whole row is one click target). Null when the row has none (a leaf, a plain entry).
function leadingToggle(row) {
  const view = row.ownerDocument.defaultView;
  const rowPointer = view.getComputedStyle(row).cursor === "pointer";
  const walker = row.ownerDocument.createTreeWalker(row, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.nodeType === 3) {
      if (squashAny(n.data)) return null;  // the row's text begins: no toggle before it
      continue;
    }
    if (squashAny(n.innerText || n.textContent || "") || !isRendered(n)) continue;
    if (n.getAttribute("role") === "button") return n;
    if (!rowPointer && view.getComputedStyle(n).cursor === "pointer") return n;
  }
  return null;
}

// The leading toggle of the row that shows just `el`'s text (up to `limit` levels above it),
// or null: `el` is the title of a tree node that states no role, not a leaf or an option.
function rowToggleOf(el, limit) {
  const text = squashAny(el.innerText || "");
  let n = el;
  for (let i = 0; n && i <= limit; i++, n = n.parentElement) {
    if (squashAny(n.innerText || "") !== text) return null;  // past the row: other rows' text
    const toggle = leadingToggle(n);
    if (toggle) return toggle;
  }
  return null;
}

// The leading toggles of the roleless rows under `roots` (popupRows), except those `tried`.
function rowToggles(roots, tried) {
  const known = new Set(tried || []);
  const out = [];
  for (const row of popupRows(roots, false, 400)) {
    if (row.getAttribute("aria-expanded") === "true") continue;
    const toggle = leadingToggle(row);
    if (toggle && !known.has(toggle) && !out.includes(toggle)) out.push(toggle);
  }
  return out;
}

// The numeric range of a slider-like element: [now, min, max, step] from ARIA or a native
// range input (NaN where unknown).
// [now, min, max, step, from]: `from` is 0 when the value is stated (the input's value,
// aria-valuenow), 1 when it is read from where the thumb sits on its rail (a slider that
// states no aria-valuenow: its value is what the user sees), with the range from aria-valuemin
// and -max, else ARIA's defaults 0 and 100 (2: the range is assumed).
function sliderRange(el) {
  if (el.localName === "input" && el.type === "range") {
    return [Number(el.value), Number(el.min || 0), Number(el.max || 100), Number(el.step || 1) || 1, 0];
  }
  const num = (name) => (el.hasAttribute(name) ? Number(el.getAttribute(name)) : NaN);
  const now = num("aria-valuenow");
  if (!Number.isNaN(now)) return [now, num("aria-valuemin"), num("aria-valuemax"), NaN, 0];
  const parts = sliderParts(el);
  if (!parts) return [NaN, num("aria-valuemin"), num("aria-valuemax"), NaN, 0];
  const [low, high, assumed] = parts.range;
  const thumb = parts.thumb.getBoundingClientRect();
  const rail = parts.rail.getBoundingClientRect();
  const fraction = parts.vertical
    ? (rail.bottom - (thumb.top + thumb.height / 2)) / rail.height
    : (thumb.left + thumb.width / 2 - rail.left) / rail.width;
  const clamped = Math.min(1, Math.max(0, fraction));
  // Only as exact as one pixel of the rail: the decimals a pixel can tell apart.
  const perPixel = (high - low) / (parts.vertical ? rail.height : rail.width);
  const decimals = Math.max(0, Math.min(6, Math.floor(-Math.log10(perPixel))));
  const value = Number((low + clamped * (high - low)).toFixed(decimals));
  return [value, low, high, NaN, assumed ? 2 : 1];
}

// A slider's thumb and rail from its structure: the thumb is a positioned element (the
// element itself, a few levels around it, or a focusable one inside it) lying on its
// containing block, the rail, which is long and thin along one axis and much longer than the
// thumb. {thumb, rail, keys (the focusable element arrow keys go to, or null), vertical,
// range: [min, max, assumed]}, or null when nothing there is shaped like a slider.
function sliderParts(el) {
  const seen = new Set();
  const candidates = [];
  const add = (n) => { if (n && n.nodeType === 1 && !seen.has(n)) { seen.add(n); candidates.push(n); } };
  for (const n of el.querySelectorAll("[tabindex]")) if (n.tabIndex >= 0) add(n);
  for (let n = el, i = 0; n && i < 3; n = n.parentElement, i++) add(n);
  let budget = 40;
  for (const n of el.querySelectorAll("*")) { if (budget-- <= 0) break; add(n); }
  for (const candidate of candidates) {
    for (let thumb = candidate, i = 0; thumb && i < 3; thumb = thumb.parentElement, i++) {
      const found = thumbOnRail(thumb);
      if (!found) continue;
      const [rail, vertical] = found;
      const keys = [thumb, ...thumb.querySelectorAll("[tabindex]")].find((n) => n.tabIndex >= 0)
        || (el.tabIndex >= 0 ? el : null);
      return {thumb, rail, keys, vertical, range: sliderBounds(el, thumb, rail)};
    }
  }
  return null;
}

function thumbOnRail(thumb) {
  const style = getComputedStyle(thumb);
  if (style.position !== "absolute" || !isRendered(thumb)) return null;
  const rail = thumb.offsetParent;
  if (!rail || rail.localName === "body" || rail.localName === "html") return null;
  const t = thumb.getBoundingClientRect();
  const r = rail.getBoundingClientRect();
  if (t.width <= 0 || t.height <= 0 || r.width <= 0 || r.height <= 0) return null;
  const cx = t.left + t.width / 2;
  const cy = t.top + t.height / 2;
  if (r.width >= 4 * r.height && r.width >= 4 * t.width) {
    const across = Math.abs(cy - (r.top + r.height / 2)) <= Math.max(t.height, r.height) / 2;
    if (across && cx >= r.left - 1 && cx <= r.right + 1) return [rail, false];
  }
  if (r.height >= 4 * r.width && r.height >= 4 * t.height) {
    const across = Math.abs(cx - (r.left + r.width / 2)) <= Math.max(t.width, r.width) / 2;
    if (across && cy >= r.top - 1 && cy <= r.bottom + 1) return [rail, true];
  }
  return null;
}

// aria-valuemin / -max on the slider, its thumb or the elements between them and the rail's
// container; else ARIA's defaults for a slider (0, 100), marked assumed.
function sliderBounds(el, thumb, rail) {
  const holders = [el, thumb];
  for (let n = thumb.parentElement; n && n !== rail.parentElement; n = n.parentElement) holders.push(n);
  if (rail.parentElement) holders.push(rail.parentElement);
  for (let n = el.parentElement, i = 0; n && i < 3; n = n.parentElement, i++) holders.push(n);
  const holder = holders.find((n) => n.hasAttribute("aria-valuemin") && n.hasAttribute("aria-valuemax"));
  if (!holder) return [0, 100, true];
  const low = Number(holder.getAttribute("aria-valuemin"));
  const high = Number(holder.getAttribute("aria-valuemax"));
  return Number.isFinite(low) && Number.isFinite(high) && high > low ? [low, high, false] : [0, 100, true];
}

// [keys element or null, rail, x at the rail's start, x at its end, y at its start, y at
// its end] of a slider whose value sits in its thumb's position (sliderParts), or null.
function sliderTrack(el) {
  const parts = sliderParts(el);
  if (!parts) return null;
  const r = parts.rail.getBoundingClientRect();
  const midX = r.left + r.width / 2;
  const midY = r.top + r.height / 2;
  return parts.vertical
    ? [parts.keys, parts.rail, midX, midX, r.bottom, r.top]
    : [parts.keys, parts.rail, r.left, r.right, midY, midY];
}

// A text field the user types into to filter a popup's choices (a search box rendered in
// the popup itself), or null.
function searchFieldIn(roots) {
  for (const root of roots) {
    for (const input of root.querySelectorAll("input")) {
      const type = (input.getAttribute("type") || "text").toLowerCase();
      if (type !== "text" && type !== "search") continue;
      if (input.disabled || input.readOnly || !isRendered(input)) continue;
      return input;
    }
  }
  return null;
}

// The rendered radios inside a rating-like group, in document order.
function radiosIn(el) {
  const out = [];
  for (const n of el.querySelectorAll('[role=radio], input[type=radio]')) if (isRendered(n) || n.localName === "input") out.push(n);
  return out;
}

Object.assign(MaoDom, {
  searchFieldIn, radiosIn, popupRoots, choicesIn, choiceItem, scrollableIn, scrollListStep, scrollListTop,
  collapsedTreeItems, treeToggle, sliderRange, sliderTrack, popupRowTexts, rowToggles, rowToggleOf,
});
