// The input model (SPEC A7): one virtual pointer per window, whose position persists across
// actions like a real mouse's, and the CSS :hover / :active state it would give the page.
// Every pointer act (hover, click, double and right click, drag) moves it to the action
// point with the UI Events sequence Chromium sends for a real pointer; no action dispatches
// pointer events of its own. Python decides where to act (mao_page.actions); these perform.

// The attributes that stand for :hover and :active on the hovered chain (the pointer's
// element and its flat-tree ancestors). The twin rules of the page's :hover / :active rules
// (hoverTwins below) select on them; the page watch ignores their changes (watch.js).
const HOVER_ATTR = "data-mao-hover";
const ACTIVE_ATTR = "data-mao-active";
const INPUT_MARKERS = new Set([HOVER_ATTR, ACTIVE_ATTR]);

// Per window: the element the pointer is over (weakly), its point, and the elements marked.
const pointerStates = new WeakMap();

function pointerState(view) {
  let state = pointerStates.get(view);
  if (!state) {
    state = { over: null, x: 0, y: 0, marked: [], pressed: [], hovered: [] };
    pointerStates.set(view, state);
  }
  return state;
}

// The parent in the flat tree: a slotted element's slot, a shadow root's host.
function flatParent(n) {
  if (n.assignedSlot) return n.assignedSlot;
  if (n.parentElement) return n.parentElement;
  const parent = n.parentNode;
  return parent && parent.nodeType === 11 && parent.host ? parent.host : null;
}

function lineage(el) {
  const out = [];
  for (let n = el; n; n = flatParent(n)) out.push(n);
  return out;
}

const BUTTON_CODES = { left: 0, middle: 1, right: 2 };
const BUTTON_BITS = { left: 1, middle: 4, right: 2 };

function mouseInit(el, x, y, buttons, detail, modifiers, button) {
  return {
    bubbles: true, cancelable: true, composed: true, view: viewOf(el),
    clientX: x, clientY: y, screenX: x, screenY: y, button: button || 0, buttons, detail,
    ctrlKey: !!(modifiers && modifiers.ctrl), shiftKey: !!(modifiers && modifiers.shift),
    altKey: !!(modifiers && modifiers.alt), metaKey: !!(modifiers && modifiers.meta),
  };
}

// Pointer events carry detail 0 in Chromium, whatever the click count; the mouse pointer is
// pointerId 1 and primary.
function pointerInit(el, x, y, buttons, modifiers, related, bubbles, button) {
  return { ...mouseInit(el, x, y, buttons, 0, modifiers, button), bubbles, relatedTarget: related || null,
    pointerId: 1, pointerType: "mouse", isPrimary: true, width: 1, height: 1,
    pressure: buttons ? 0.5 : 0 };
}

// -- CSS :hover and :active -------------------------------------------------------------------

// Per root (document or shadow root): the sheet the SDK owns there, holding the twins of the
// root's :hover / :active rules, and the signature of the page's sheets it was made from.
const twinSheets = new Map();
const ownSheets = new WeakSet();

const STATE_PSEUDO = /:(hover|active)(?![\w-])/g;
const HAS_STATE_PSEUDO = /:(hover|active)(?![\w-])/;

function twinSelector(text) {
  return text.replace(STATE_PSEUDO, (_m, which) => `[${which === "hover" ? HOVER_ATTR : ACTIVE_ATTR}]`);
}

function pageSheets(root) {
  const sheets = Array.from(root.styleSheets || []);
  for (const sheet of root.adoptedStyleSheets || []) if (!ownSheets.has(sheet)) sheets.push(sheet);
  return sheets;
}

// The twins of the :hover / :active rules in `rules`, with their grouping rules (@media,
// @supports, @layer, @container) around them; imports are followed. Counts unreadable
// (cross-origin) sheets in `stats`.
function twinRules(rules, out, stats, depth) {
  for (const rule of rules) {
    const text = rule.cssText;
    if (!rule.styleSheet && !HAS_STATE_PSEUDO.test(text)) continue;
    if (rule.styleSheet) {  // @import
      if (depth < 4) twinSheet(rule.styleSheet, out, stats, depth + 1);
    } else if (rule.selectorText !== undefined) {
      // A style rule (nested rules come along in its cssText, rewritten the same way).
      out.push(twinSelector(text));
      stats.rules += 1;
    } else if (rule.cssRules && rule.cssRules.length) {
      const inner = [];
      twinRules(rule.cssRules, inner, stats, depth);
      if (inner.length) out.push(`${text.slice(0, text.indexOf("{"))}{${inner.join("\n")}}`);
    }
  }
}

function twinSheet(sheet, out, stats, depth) {
  let rules;
  try {
    rules = sheet.cssRules;
  } catch (error) {
    // SecurityError: another origin's sheet without CORS. Its rules cannot be read, so its
    // :hover rules cannot be applied; the hover result says so when nothing changed.
    stats.unreadable += 1;
    return;
  }
  twinRules(rules, out, stats, depth);
}

function sheetsSignature(sheets) {
  const parts = [sheets.length];
  for (const sheet of sheets) {
    try { parts.push(sheet.cssRules.length); } catch (error) { parts.push("x"); }
  }
  return parts.join(",");
}

// Make (or refresh, when the page's sheets changed: rules added later, a sheet adopted) the
// twins of one root's :hover / :active rules, in a constructed sheet the SDK adopts there.
function syncTwins(root) {
  const sheets = pageSheets(root);
  const signature = sheetsSignature(sheets);
  let entry = twinSheets.get(root);
  if (!entry || entry.signature !== signature) {
    const out = [];
    const stats = { rules: 0, unreadable: 0 };
    for (const sheet of sheets) twinSheet(sheet, out, stats, 0);
    if (!entry) {
      const view = (root.ownerDocument || root).defaultView;
      entry = { sheet: new view.CSSStyleSheet(), signature: "", rules: 0, unreadable: 0 };
      ownSheets.add(entry.sheet);
      twinSheets.set(root, entry);
    }
    entry.sheet.replaceSync(out.join("\n"));
    Object.assign(entry, { signature, rules: stats.rules, unreadable: stats.unreadable });
  }
  // The page may have replaced its adopted sheets since (a component re-rendering).
  if (entry.rules && !root.adoptedStyleSheets.includes(entry.sheet)) {
    root.adoptedStyleSheets = [...root.adoptedStyleSheets, entry.sheet];
  }
  return entry;
}

// The roots whose rules can match the chain: each element's own root, and the shadow roots of
// the chain's hosts (:host(:hover) and rules keyed to the host's state).
function chainRoots(chain) {
  const roots = new Set();
  for (const n of chain) {
    roots.add(n.getRootNode());
    if (n.shadowRoot) roots.add(n.shadowRoot);
  }
  return roots;
}

// Mark `chain` with `attr`, unmarking what was marked and is not in it; returns the new list.
function markChain(previous, chain, attr) {
  const keep = new Set(chain);
  for (const n of previous) if (!keep.has(n) && n.isConnected) n.removeAttribute(attr);
  for (const n of chain) if (!n.hasAttribute(attr)) n.setAttribute(attr, "");
  return chain;
}

// Hover state for `el`: the chain marked, the twins of its roots' rules in place. Answers
// {rules, unreadable}: twin rules in those roots, and sheets that could not be read.
function applyHover(state, el) {
  const chain = el ? lineage(el) : [];
  const stats = { rules: 0, unreadable: 0 };
  for (const root of chainRoots(chain)) {
    const entry = syncTwins(root);
    stats.rules += entry.rules;
    stats.unreadable += entry.unreadable;
  }
  state.marked = markChain(state.marked, chain, HOVER_ATTR);
  return stats;
}

// How many elements a hover twin rule matches now: elements styled by :hover rules, beyond
// the chain's own (a row's hidden button shown on hover). For the effect report.
function hoverStyledElements(el) {
  if (!el) return 0;
  const chain = new Set(lineage(el));
  let count = 0;
  for (const root of chainRoots(lineage(el))) {
    const entry = twinSheets.get(root);
    if (!entry || !entry.rules) continue;
    const seen = new Set();
    const visit = (rules) => {
      for (const rule of rules) {
        if (rule.selectorText !== undefined) {
          const selector = rule.selectorText.replace(/::?(before|after|placeholder|selection|marker|first-line|first-letter|backdrop|-webkit-[\w-]+|-moz-[\w-]+)(\([^)]*\))?/g, "");
          if (!selector.includes(HOVER_ATTR)) continue;
          let found;
          try { found = root.querySelectorAll(selector); } catch (error) { continue; }
          for (const n of found) if (!chain.has(n) && !seen.has(n)) { seen.add(n); count += 1; }
        } else if (rule.cssRules) {
          visit(rule.cssRules);
        }
      }
    };
    visit(entry.sheet.cssRules);
  }
  return count;
}

// -- the pointer --------------------------------------------------------------------------

// Boundary and move events for the pointer coming to rest over `el` at (x, y), in Chromium's
// order: pointerout, pointerleave (innermost first), pointerover, pointerenter (outermost
// first), then the same four mouse events, then pointermove and mousemove. relatedTarget is
// the element left (on over/enter) or entered (on out/leave): React derives its
// onMouseEnter/onMouseLeave from mouseover/mouseout pairs by it.
function movePointer(el, x, y, modifiers, buttons) {
  const view = viewOf(el);
  const P = view.PointerEvent;
  const M = view.MouseEvent;
  const state = pointerState(view);
  let previous = state.over ? state.over.deref() : null;
  if (previous && (!previous.isConnected || previous.ownerDocument !== el.ownerDocument)) previous = null;
  const stats = applyHover(state, el);
  if (previous !== el) {
    const entered = lineage(el);
    const left = previous ? lineage(previous) : [];
    const staying = new Set(entered);
    const leaving = left.filter((n) => !staying.has(n));
    const before = new Set(left);
    const entering = entered.filter((n) => !before.has(n)).reverse();
    const boundary = (Type, prefix, init) => {
      if (previous) {
        previous.dispatchEvent(new Type(`${prefix}out`, init(previous, el, true)));
        for (const n of leaving) n.dispatchEvent(new Type(`${prefix}leave`, init(n, el, false)));
      }
      el.dispatchEvent(new Type(`${prefix}over`, init(el, previous, true)));
      for (const n of entering) n.dispatchEvent(new Type(`${prefix}enter`, init(n, previous, false)));
    };
    boundary(P, "pointer", (n, related, bubbles) => pointerInit(n, x, y, buttons, modifiers, related, bubbles));
    boundary(M, "mouse", (n, related, bubbles) => ({ ...mouseInit(n, x, y, buttons, 0, modifiers), bubbles, relatedTarget: related || null }));
    state.over = new WeakRef(el);
  }
  el.dispatchEvent(new P("pointermove", pointerInit(el, x, y, buttons, modifiers, null, true)));
  el.dispatchEvent(new M("mousemove", mouseInit(el, x, y, buttons, 0, modifiers)));
  state.x = x;
  state.y = y;
  return stats;
}

// Whether `el` is something a user acts on in its own right (a control, a link, focusable),
// as opposed to text or decoration drawn over a control.
function isInteractive(el) {
  if (el.nodeType !== 1) return false;
  if (el.matches("a[href],button,input,select,textarea,label,summary,[contenteditable=''],[contenteditable=true]")) return true;
  if (el.hasAttribute("tabindex") || el.hasAttribute("onclick")) return true;
  const role = el.getAttribute("role");
  return !!role && WIDGET_ROLES.has(role);
}

function isTextLikeInput(el) {
  if (el.getAttribute("role") === "combobox") return true;
  return el.localName === "input" && /^(text|search|email|url|tel|password|number|)$/.test(el.type);
}

// The element a real pointer at (x, y) reaches, which receives the events:
// - the hit, when it lies inside `el` (its deepest element there: a link inside a tab);
// - the hit inside a label that wraps `el` (a styled radio drawn over its label), which the
//   browser also routes to the control and where some libraries listen;
// - the hit when it is a non-interactive overlay drawn over a text-like `el` by the same
//   widget (the placeholder or chosen value over a readonly combobox input: the widget
//   listens on it, and a real click lands there, not on the input);
// - else `el` itself (a control whose own wrapper receives the pointer).
function pointTarget(el, x, y) {
  const hit = hitAt(el.ownerDocument, x, y);
  if (!hit || hit === el) return el;
  if (composedContains(el, hit)) return hit;
  const labels = el.labels ? Array.from(el.labels) : [];
  if (labels.some((label) => composedContains(label, el) && composedContains(label, hit))) return hit;
  if (isTextLikeInput(el) && isOwnWrapper(hit, el) && !composedContains(hit, el)) {
    // The overlay and everything between it and the widget's wrapper are not controls.
    for (let n = hit; n && !n.contains(el); n = n.parentElement) if (isInteractive(n)) return el;
    return hit;
  }
  return el;
}

// mousedown focuses the nearest click-focusable ancestor (HTML "focusing steps" run on the
// focusable area of the click); with none, focus leaves whatever had it, as a click on plain
// text does. A press inside a label leaves focus to the label's activation.
function focusOnPress(el) {
  for (let n = el; n; n = n.parentElement || (n.getRootNode && n.getRootNode().host) || null) {
    if (n.nodeType !== 1) continue;
    if (typeof n.focus === "function" && !n.disabled
      && (n.tabIndex >= 0 || n.isContentEditable || n.matches("a[href],button,input,select,textarea,[tabindex]"))) {
      moveFocusTo(n);
      return n;
    }
    if (n.localName === "label") return null;
  }
  const active = deepActiveElement(el.ownerDocument);
  if (active && active !== active.ownerDocument.body && composedContains(el.ownerDocument, active)) blurElement(active);
  return null;
}

// Elements page_hover rested on, newest first (weakly held): the hosts whose :hover rules may
// have shown an element an agent acts on later, after the pointer moved elsewhere.
const HOVER_HISTORY = 8;

function hover(el, x, y, modifiers) {
  const target = pointTarget(el, x, y);
  const stats = movePointer(target, x, y, modifiers, 0);
  const state = pointerState(viewOf(target));
  state.hovered = [new WeakRef(el), ...state.hovered.filter((r) => r.deref() && r.deref() !== el)].slice(0, HOVER_HISTORY);
  return [stats.rules, stats.unreadable, hoverStyledElements(target)];
}

// One press and release at the pointer's point, as the `count`th click of a series.
function pressOnce(target, x, y, modifiers, button, count) {
  const view = viewOf(target);
  const P = view.PointerEvent;
  const M = view.MouseEvent;
  const code = BUTTON_CODES[button];
  const bits = BUTTON_BITS[button];
  const state = pointerState(view);
  target.dispatchEvent(new P("pointerdown", pointerInit(target, x, y, bits, modifiers, null, true, code)));
  state.pressed = markChain(state.pressed, lineage(target), ACTIVE_ATTR);
  const downAllowed = target.dispatchEvent(new M("mousedown", mouseInit(target, x, y, bits, count, modifiers, code)));
  if (downAllowed) focusOnPress(target);
  // Chromium on Linux and macOS opens the context menu on press.
  if (button === "right") target.dispatchEvent(new M("contextmenu", mouseInit(target, x, y, bits, count, modifiers, code)));
  target.dispatchEvent(new P("pointerup", pointerInit(target, x, y, 0, modifiers, null, true, code)));
  state.pressed = markChain(state.pressed, [], ACTIVE_ATTR);
  target.dispatchEvent(new M("mouseup", mouseInit(target, x, y, 0, count, modifiers, code)));
  if (button === "left") target.dispatchEvent(new M("click", mouseInit(target, x, y, 0, count, modifiers, code)));
  else target.dispatchEvent(new P("auxclick", pointerInit(target, x, y, 0, modifiers, null, true, code)));
}

// A real click at (x, y): the pointer moves there (boundary events included), then per click
// pointer and mouse down, focus, pointer and mouse up and click (detail 1, then 2), and after a
// second left click dblclick; a right click sends contextmenu on press and auxclick for click.
// All go to the element the point lands on (pointTarget). Answers "done".
function click(el, x, y, modifiers, clickCount, button) {
  const target = pointTarget(el, x, y);
  const which = button || "left";
  const count = clickCount || 1;
  movePointer(target, x, y, modifiers, 0);
  for (let i = 1; i <= count; i++) {
    // A handler of the first click may have replaced the element (a row turning editable).
    const current = i === 1 || target.isConnected ? target : pointTarget(el, x, y);
    pressOnce(current, x, y, modifiers, which, i);
  }
  if (which === "left" && count === 2) {
    const last = target.isConnected ? target : pointTarget(el, x, y);
    last.dispatchEvent(new (viewOf(last).MouseEvent)("dblclick", mouseInit(last, x, y, 0, 2, modifiers, 0)));
  }
  return "done";
}

// -- drag ------------------------------------------------------------------------------------

// The element a drag from `el` carries in HTML5 drag and drop: the nearest one the page made
// draggable (draggable="true", as sortable libraries set on press); draggable="false" only
// takes that element out (a link inside a draggable row), as in Chromium. Links and images,
// which browsers drag by default, are left out: dragging one is seldom what a page wants.
function draggableOf(el) {
  for (let n = el; n; n = flatParent(n)) {
    if (n.nodeType === 1 && n.getAttribute("draggable") === "true") return n;
  }
  return null;
}

// A DataTransfer the page can use as a real drag's: Chromium ignores dropEffect and
// effectAllowed set on one made by its constructor (it is not "for drag and drop"), so those
// two are kept on the instance, and the drag sets dropEffect as the HTML drag steps do.
function dragData(view) {
  const data = new view.DataTransfer();
  const kept = { dropEffect: "none", effectAllowed: "uninitialized" };
  for (const name of Object.keys(kept)) {
    Object.defineProperty(data, name, { configurable: true, get: () => kept[name], set: (v) => { kept[name] = String(v); } });
  }
  return data;
}

// HTML "drag-and-drop processing model": before dragenter/dragover, dropEffect starts from
// what effectAllowed permits.
function initialDropEffect(data) {
  const allowed = data.effectAllowed;
  if (allowed === "none") return "none";
  if (allowed === "move") return "move";
  if (allowed === "link" || allowed === "linkMove") return "link";
  return "copy";
}

function sleep(view, ms) {
  return new Promise((resolve) => view.setTimeout(resolve, ms));
}

// What the pointer is over at (x, y) during a drag; `fallback` when that is nothing or the SDK.
function overAt(doc, x, y, exclude, fallback) {
  const hit = hitAt(doc, x, y);
  return !hit || (exclude && composedContains(exclude, hit)) ? fallback : hit;
}

function dragEvent(view, type, x, y, dataTransfer, related) {
  return new view.DragEvent(type, { bubbles: true, cancelable: !["dragleave", "dragend"].includes(type),
    composed: true, view, clientX: x, clientY: y, screenX: x, screenY: y, buttons: type === "dragend" || type === "drop" ? 0 : 1,
    dataTransfer, relatedTarget: related || null });
}

const DRAG_STEPS = 6;  // pointer moves from the source's point to the destination's
const DRAG_REST_MS = 120;

// A drag from `source` at (sx, sy) to `dest` at (dx, dy), as a person's (SPEC A7): press on the
// source; a first small move (past the libraries' drag thresholds); then, if the page made the
// pressed element draggable and does not cancel dragstart, HTML5 drag and drop with one real
// DataTransfer (dragstart, drag, dragenter/dragover/dragleave along the way, drop where the
// last dragover was accepted, dragend); otherwise the pointer keeps moving with the button held
// and is released over the destination (the sequence pointer-based sortable libraries follow).
// One animation frame passes between moves, as between a real mouse's. Answers
// [mode ("html5" | "pointer"), dropped (html5: the drop was accepted), what is under the point
// released].
async function drag(source, sx, sy, dest, ex, ey, exclude) {
  const doc = source.ownerDocument;
  // A person lets go a little above the middle of what they drop on, never on its exact
  // centre, where sortable libraries cannot tell before from after (Sortable's swap
  // thresholds meet there and it does not move the item).
  const shift = dest.getBoundingClientRect().height * 0.15;
  const aimed = hitAt(dest.ownerDocument, ex, ey - shift);
  const dx = ex;
  const dy = aimed && (aimed === dest || composedContains(dest, aimed)) ? ey - shift : ey;
  const view = viewOf(source);
  const P = view.PointerEvent;
  const M = view.MouseEvent;
  const state = pointerState(view);
  const start = pointTarget(source, sx, sy);
  movePointer(start, sx, sy, null, 0);
  start.dispatchEvent(new P("pointerdown", pointerInit(start, sx, sy, 1, null, null, true, 0)));
  state.pressed = markChain(state.pressed, lineage(start), ACTIVE_ATTR);
  if (start.dispatchEvent(new M("mousedown", mouseInit(start, sx, sy, 1, 1, null, 0)))) focusOnPress(start);
  await nextFrame(view);
  // A first move of a few pixels: libraries start their drag past a threshold (Sortable 0-5px).
  const nudgeX = sx + Math.sign(dx - sx || 1) * 6;
  const nudgeY = sy + Math.sign(dy - sy || 1) * 6;
  movePointer(overAt(doc, nudgeX, nudgeY, exclude, start), nudgeX, nudgeY, null, 1);
  await nextFrame(view);
  const carried = draggableOf(start);
  const path = Array.from({ length: DRAG_STEPS }, (_v, i) => {
    const t = (i + 1) / DRAG_STEPS;
    return [nudgeX + (dx - nudgeX) * t, nudgeY + (dy - nudgeY) * t];
  });
  let mode = "pointer";
  let dropped = false;
  let released = dest;
  if (carried) {
    const data = dragData(view);
    if (carried.dispatchEvent(dragEvent(view, "dragstart", nudgeX, nudgeY, data))) {
      mode = "html5";
      // The browser takes the pointer over for the drag: the page sees pointercancel.
      start.dispatchEvent(new P("pointercancel", pointerInit(start, nudgeX, nudgeY, 0, null, null, true, 0)));
      await nextFrame(view);
      let over = null;
      let accepted = false;
      let operation = "none";
      for (const [x, y] of path) {
        carried.dispatchEvent(dragEvent(view, "drag", x, y, data));
        const now = overAt(doc, x, y, exclude, dest);
        if (now !== over) {
          now.dispatchEvent(dragEvent(view, "dragenter", x, y, data, over));
          if (over) over.dispatchEvent(dragEvent(view, "dragleave", x, y, data, now));
          over = now;
        }
        // A drop target says so by cancelling dragover; the operation is its dropEffect.
        data.dropEffect = initialDropEffect(data);
        accepted = !now.dispatchEvent(dragEvent(view, "dragover", x, y, data)) && data.dropEffect !== "none";
        operation = accepted ? data.dropEffect : "none";
        await nextFrame(view);
      }
      released = over || dest;
      if (accepted) {
        data.dropEffect = operation;
        released.dispatchEvent(dragEvent(view, "drop", dx, dy, data));
        dropped = true;
      } else {
        released.dispatchEvent(dragEvent(view, "dragleave", dx, dy, data, null));
      }
      data.dropEffect = accepted ? operation : "none";
      carried.dispatchEvent(dragEvent(view, "dragend", dx, dy, data));
      state.over = new WeakRef(released);
      state.x = dx;
      state.y = dy;
      applyHover(state, released);
    }
  }
  if (mode === "pointer") {
    for (const [x, y] of path) {
      movePointer(overAt(doc, x, y, exclude, dest), x, y, null, 1);
      await nextFrame(view);
    }
    // A person rests on the destination before letting go; libraries that poll the pointer
    // (Sortable's fallback every 50 ms) see it there.
    await sleep(view, DRAG_REST_MS);
    movePointer(overAt(doc, dx, dy, exclude, dest), dx, dy, null, 1);
    await nextFrame(view);
    released = overAt(doc, dx, dy, exclude, dest);
    released.dispatchEvent(new P("pointerup", pointerInit(released, dx, dy, 0, null, null, true, 0)));
    released.dispatchEvent(new M("mouseup", mouseInit(released, dx, dy, 0, 1, null, 0)));
  }
  state.pressed = markChain(state.pressed, [], ACTIVE_ATTR);
  return [mode, dropped, describe(released)];
}

// The element an earlier hover rested on whose :hover rules show `el`, which is hidden now
// that the pointer is elsewhere (a row's delete button after hovering the row, then another
// row): SPEC A7, a click on such a control first hovers its host. Each candidate's chain is
// marked for a moment (no events) to see whether `el` shows; the markers are put back.
// Answers the host, or null.
function hoverHostFor(el) {
  if (!el.isConnected || isRendered(el)) return null;
  const state = pointerStates.get(viewOf(el));
  if (!state) return null;
  const current = state.marked;
  for (const ref of state.hovered) {
    const host = ref.deref();
    if (!host || !host.isConnected || host.ownerDocument !== el.ownerDocument) continue;
    const chain = lineage(host);
    for (const root of chainRoots(chain)) syncTwins(root);
    state.marked = markChain(state.marked, chain, HOVER_ATTR);
    const shown = isRendered(el);
    state.marked = markChain(state.marked, current, HOVER_ATTR);
    if (shown) return host;
  }
  return null;
}

// The SDK goes away (MaoChat.destroy): hover and active markers off, owned sheets removed.
function releaseInput(win) {
  const state = pointerStates.get(win);
  if (state) {
    markChain(state.marked, [], HOVER_ATTR);
    markChain(state.pressed, [], ACTIVE_ATTR);
    pointerStates.delete(win);
  }
  for (const [root, entry] of twinSheets) {
    if (root.adoptedStyleSheets) root.adoptedStyleSheets = root.adoptedStyleSheets.filter((s) => s !== entry.sheet);
  }
  twinSheets.clear();
  return true;
}

Object.assign(MaoDom, { hover, click, drag, hoverHostFor, releaseInput });
