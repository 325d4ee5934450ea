// Acting: fixed, named event sequences and the reads that verify them (see common.js).
// Python decides whether and what to do (mao_page/actions/); these only perform it, and answer
// a closed set of outcomes where they can fail (mao_page.bridge.page.Outcome).

function viewOf(el) {
  return el.ownerDocument.defaultView;
}

// The focused element through open shadow roots and same-origin frames. Focus inside the
// `exclude` element (the SDK host) counts as none, so keys never reach SDK UI (SPEC U1):
// the body is returned instead, as when nothing has focus.
function deepActiveElement(doc, exclude) {
  let active = doc.activeElement;
  if (exclude && active && (active === exclude || composedContains(exclude, active))) return doc.body;
  for (;;) {
    if (active && active.shadowRoot && active.shadowRoot.activeElement) active = active.shadowRoot.activeElement;
    else if (active && active.localName === "iframe" && sameOriginDocument(active)) active = sameOriginDocument(active).activeElement;
    else return active;
  }
}

function hitAt(doc, x, y) {
  let hit = doc.elementFromPoint(x, y);
  while (hit && hit.shadowRoot) {
    const inner = hit.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  return hit;
}

// Hit test at the centre of the element's visible box, like a real pointer would land
// (SPEC A2): in the element's own document (descending into open shadow roots), then in each
// enclosing same-origin frame, where the point must land on the frame element itself.
// Answers [outcome, x, y, what is at the point]; outcome is one of "done", "not_connected",
// "outside_viewport", "covered", "covered_by_sdk" (mao_page.bridge.page.Outcome).
function hitTest(el, exclude) {
  if (!el.isConnected) return ["not_connected", 0, 0, ""];
  const doc = el.ownerDocument;
  const view = doc.defaultView;
  const r = el.getBoundingClientRect();
  const left = Math.max(r.left, 0);
  const top = Math.max(r.top, 0);
  const right = Math.min(r.right, view.innerWidth);
  const bottom = Math.min(r.bottom, view.innerHeight);
  if (right <= left || bottom <= top) return ["outside_viewport", 0, 0, "outside the viewport"];
  const x = (left + right) / 2;
  const y = (top + bottom) / 2;
  const hit = hitAt(doc, x, y);
  const sdk = !!(exclude && hit && composedContains(exclude, hit));
  if (!hit || sdk || !(hit === el || composedContains(el, hit) || isOwnWrapper(hit, el))) {
    return sdk ? ["covered_by_sdk", x, y, "the Mao Embed panel"] : ["covered", x, y, describe(hit)];
  }
  // Up through the frames: the frame must be what receives the point in its parent.
  let frame = view.frameElement;
  let fx = x;
  let fy = y;
  while (frame) {
    const fr = frame.getBoundingClientRect();
    fx += fr.left + frame.clientLeft;
    fy += fr.top + frame.clientTop;
    const parentDoc = frame.ownerDocument;
    const outer = hitAt(parentDoc, fx, fy);
    const outerSdk = !!(exclude && outer && composedContains(exclude, outer));
    if (outer !== frame) return outerSdk ? ["covered_by_sdk", x, y, "the Mao Embed panel"] : ["covered", x, y, describe(outer)];
    frame = parentDoc.defaultView.frameElement;
  }
  return ["done", x, y, describe(hit)];
}

// Component libraries keep the real control transparent (opacity 0) and draw it with a
// wrapper that takes the pointer: a hit on a close ancestor not much larger than the control
// is the control's own visual, not something covering it. Events dispatched on the control
// bubble to that wrapper, as a real click on it would reach both.
function isOwnWrapper(hit, el) {
  const a = el.getBoundingClientRect();
  const limit = Math.max(16 * a.width * a.height, 40000);
  let depth = 0;
  for (let n = el.parentElement; n && depth < 3; n = n.parentElement, depth++) {
    // The document's own containers are never a control's wrapper (a short <body> holding a
    // modal overlay would otherwise pass the size test).
    if (n.localName === "body" || n.localName === "html") return false;
    const b = n.getBoundingClientRect();
    if (b.width * b.height > limit) return false;
    // The hit is the wrapper itself or part of the widget it draws (the chosen value shown
    // over a transparent combobox input), not something from outside covering it.
    if (n === hit || n.contains(hit)) return true;
  }
  return false;
}

// Focus moves that frameworks see even when the page's window has no system focus (a
// background tab, another window in front, the user typing elsewhere). Chromium then moves
// activeElement but fires no blur/focus/focusin/focusout; they would only come when the
// window regains focus. React (focusin/focusout), Vue (focus/blur) and pickers that commit
// on blur would never learn of the move, so the missing events are dispatched here,
// exactly once: a move whose events the browser did fire is left alone.
function focusEvents(el, type, related) {
  const F = viewOf(el).FocusEvent;
  const [own, bubbling] = type === "focus" ? ["focus", "focusin"] : ["blur", "focusout"];
  el.dispatchEvent(new F(own, { relatedTarget: related || null, composed: true }));
  el.dispatchEvent(new F(bubbling, { relatedTarget: related || null, bubbles: true, composed: true }));
}

function watchEvent(el, type) {
  const seen = { fired: false };
  const mark = () => { seen.fired = true; };
  el.addEventListener(type, mark, true);
  return () => {
    el.removeEventListener(type, mark, true);
    return seen.fired;
  };
}

function moveFocusTo(el) {
  const previous = deepActiveElement(el.ownerDocument);
  if (previous === el) return el;
  const blurred = previous && previous !== previous.ownerDocument.body ? watchEvent(previous, "blur") : null;
  const focused = watchEvent(el, "focus");
  el.focus({ preventScroll: true });
  const blurFired = blurred ? blurred() : true;
  const focusFired = focused();
  if (deepActiveElement(el.ownerDocument) !== el) return null; // not focusable: nothing moved
  if (!blurFired) focusEvents(previous, "blur", el);
  if (!focusFired) focusEvents(el, "focus", blurred ? previous : null);
  return el;
}

function blurElement(el) {
  if (deepActiveElement(el.ownerDocument) !== el) return;
  const blurred = watchEvent(el, "blur");
  el.blur();
  if (!blurred()) focusEvents(el, "blur", null);
}

// What an action may have changed that no mutation record shows: focus, the values and
// checked states of form controls (properties, not attributes) and the scroll position.
// `effectProbe` takes the picture before; `effectsSince` names what differs after.
function controlsDigest(doc, exclude) {
  let hash = 2166136261;
  const mix = (text) => {
    for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619);
    hash = Math.imul(hash ^ 31, 16777619);
  };
  for (const el of doc.querySelectorAll("input,select,textarea")) {
    if (exclude && composedContains(exclude, el)) continue;
    if (el.type === "checkbox" || el.type === "radio") mix(el.checked ? "1" : "0");
    else if (el.localName === "select") mix(Array.from(el.selectedOptions, (o) => o.index).join(","));
    else mix(el.value);
  }
  return hash >>> 0;
}

function effectProbe(win, exclude) {
  const doc = win.document;
  return { win, exclude, active: deepActiveElement(doc, exclude), controls: controlsDigest(doc, exclude),
    x: win.scrollX, y: win.scrollY };
}

// Focus moving to the acted-on element, inside it or to the focusable ancestor a click
// focuses is the act itself, not an effect of it.
function effectsSince(probe, acted) {
  const now = effectProbe(probe.win, probe.exclude);
  const out = [];
  const own = acted && now.active && (composedContains(now.active, acted) || composedContains(acted, now.active));
  if (now.active !== probe.active && !own) out.push("focus");
  if (now.controls !== probe.controls) out.push("values");
  if (now.x !== probe.x || now.y !== probe.y) out.push("scroll");
  return out;
}

// "done", or "not_focusable" when focus did not move there.
function focusElement(el) {
  if (!el.isConnected) return "not_connected";
  moveFocusTo(el);
  return deepActiveElement(el.ownerDocument) === el ? "done" : "not_focusable";
}

function nativeSetter(el) {
  const view = viewOf(el);
  const proto =
    el.localName === "textarea" ? view.HTMLTextAreaElement.prototype
    : el.localName === "select" ? view.HTMLSelectElement.prototype
    : view.HTMLInputElement.prototype;
  return Object.getOwnPropertyDescriptor(proto, "value").set;
}

function inputEvent(el, type, inputType, data) {
  return new (viewOf(el).InputEvent)(type, { bubbles: true, cancelable: type === "beforeinput", composed: true, inputType, data });
}

// Write a value the way React and Vue observe it (SPEC A3): focus, then through the
// prototype's native value setter (React tracks the instance's own setter) with the events
// of a person's edit. Text fields are typed (typeText): the old text selected and deleted,
// then each character as keydown, keypress, beforeinput, input, keyup, so autocomplete
// widgets see typing. Other fields (date, time, number, color) take the value in one
// replacement (beforeinput, input), as their pickers and spinners do. No `change`: that comes
// once, when the field is left (commitValue), or never while the page's suggestions for the
// field are open. Returns the value read back at once.
function fill(el, value) {
  if (typeof el.focus === "function") moveFocusTo(el);
  if (el.isContentEditable) return fillEditable(el, value);
  if (isTypedField(el)) return typeText(el, value);
  if (!el.dispatchEvent(inputEvent(el, "beforeinput", "insertReplacementText", value))) return readValue(el);
  nativeSetter(el).call(el, value);
  el.dispatchEvent(inputEvent(el, "input", "insertReplacementText", value));
  return readValue(el);
}

// Fields whose value is free text a person types character by character. A number field is
// not: its partial values ("1.", "-") are sanitized away by the setter.
function isTypedField(el) {
  return el.localName === "textarea" || (el.localName === "input" && /^(text|search|email|url|tel|password|)$/.test(el.type));
}

// Beyond this many characters the rest goes in as one insertion (one input event), as a paste.
const TYPED_CHARS = 256;

function keyInit(ch) {
  const upper = ch.toUpperCase();
  const code = /^[a-z]$/i.test(ch) ? `Key${upper}` : /^[0-9]$/.test(ch) ? `Digit${ch}` : ch === " " ? "Space" : "";
  return { key: ch, code, keyCode: upper.charCodeAt(0), which: upper.charCodeAt(0) };
}

// One typed insertion at the caret (over the selection): beforeinput, the native setter, input.
function insertAtCaret(el, text, inputType) {
  if (!el.dispatchEvent(inputEvent(el, "beforeinput", inputType, text))) return false;
  const value = el.value;
  let start = value.length;
  let end = value.length;
  try { start = el.selectionStart ?? start; end = el.selectionEnd ?? end; } catch (error) { /* email: no selection API */ }
  nativeSetter(el).call(el, value.slice(0, start) + text + value.slice(end));
  try { el.setSelectionRange(start + text.length, start + text.length); } catch (error) { /* see above */ }
  el.dispatchEvent(inputEvent(el, "input", inputType, text));
  return true;
}

function typeText(el, value) {
  const view = viewOf(el);
  const key = (type, init) => el.dispatchEvent(new view.KeyboardEvent(type, { bubbles: true, cancelable: true, composed: true, view, ...init }));
  if (el.value !== "") {
    // Select all and delete, as a person replacing the text does.
    try { el.select(); } catch (error) { /* no selection API */ }
    const backspace = { key: "Backspace", code: "Backspace", keyCode: 8, which: 8 };
    if (key("keydown", backspace) && el.dispatchEvent(inputEvent(el, "beforeinput", "deleteContentBackward", null))) {
      nativeSetter(el).call(el, "");
      el.dispatchEvent(inputEvent(el, "input", "deleteContentBackward", null));
    }
    key("keyup", backspace);
  }
  const chars = Array.from(value);
  chars.slice(0, TYPED_CHARS).forEach((ch) => {
    const init = keyInit(ch);
    if (key("keydown", init) && key("keypress", { ...init, charCode: ch.charCodeAt(0), keyCode: ch.charCodeAt(0) })) {
      insertAtCaret(el, ch, "insertText");
    }
    key("keyup", init);
  });
  if (chars.length > TYPED_CHARS) insertAtCaret(el, chars.slice(TYPED_CHARS).join(""), "insertFromPaste");
  return readValue(el);
}

// Leaving a filled field: one `change` (when the value differs from before the fill, as a
// person's edit has) and blur. Returns the value read back.
function commitValue(el, changed) {
  if (changed && !el.isContentEditable) el.dispatchEvent(new (viewOf(el).Event)("change", { bubbles: true }));
  return blur(el);
}

// What the page answered the typing with, tied to the field (SPEC A3): ["listbox" | "popup" |
// "", texts of up to 10 suggestions]. Suggestions are rendered options, menu items or tree
// items, in the popup the field controls (aria-controls / aria-owns, on it or its combobox)
// or in a popup new since `before` (widgets.js popupRoots) near the field. A calendar or
// clock panel a picker field opened is not a list of suggestions: leaving the field commits it.
function fieldSuggestions(el, before, exclude) {
  const doc = el.ownerDocument;
  const root = el.getRootNode();
  const owner = el.closest("[role=combobox]") || el;
  const texts = (container) => Array.from(container.querySelectorAll("[role=option],[role=menuitem],[role=treeitem]"))
    .filter(isRendered).slice(0, 10).map((n) => squash(n.innerText || n.textContent || "").slice(0, 80));
  for (const n of new Set([el, owner])) {
    for (const attr of ["aria-controls", "aria-owns"]) {
      for (const id of (n.getAttribute(attr) || "").split(/\s+/).filter(Boolean)) {
        const popup = byIdIn(root, id) || doc.getElementById(id);
        const found = popup ? texts(popup) : [];
        if (found.length) return ["listbox", found];
      }
    }
  }
  // A popup new since the typing began, near the field (below or above it, within 400px).
  const box = el.getBoundingClientRect();
  for (const popup of popupRoots(doc, exclude, before)) {
    const r = popup.getBoundingClientRect();
    const inner = r.width && r.height ? r : (popup.firstElementChild || popup).getBoundingClientRect();
    if (Math.abs(inner.top - box.bottom) < 400 || Math.abs(box.top - inner.bottom) < 400) {
      const found = texts(popup);
      if (found.length) return ["popup", found];
    }
  }
  return ["", []];
}

// Whether the field says it may answer typing with suggestions: the page is then given a
// moment to show them before the fill decides to leave the field.
function suggestsWhileTyping(el) {
  const owner = el.closest("[role=combobox]") || el;
  return owner.getAttribute("role") === "combobox" || el.hasAttribute("aria-autocomplete")
    || el.hasAttribute("aria-haspopup") || el.hasAttribute("list") || el.type === "search";
}

// contenteditable: select the contents and insert through the editing machinery, so rich
// editors that listen to beforeinput/input see an ordinary insertion.
function fillEditable(el, value) {
  const doc = el.ownerDocument;
  const selection = doc.getSelection();
  const range = doc.createRange();
  range.selectNodeContents(el);
  selection.removeAllRanges();
  selection.addRange(range);
  let inserted = false;
  if (typeof doc.execCommand === "function") {
    inserted = value === "" ? doc.execCommand("delete", false) : doc.execCommand("insertText", false, value);
  }
  if (!inserted) {
    el.dispatchEvent(inputEvent(el, "beforeinput", "insertText", value));
    el.textContent = value;
    el.dispatchEvent(inputEvent(el, "input", "insertText", value));
  }
  return readValue(el);
}

// The most characters a user can type into a text field (its maxlength), or -1 for no limit.
function maxLength(el) {
  const limited = el.localName === "input" || el.localName === "textarea";
  return limited && el.maxLength >= 0 ? el.maxLength : -1;
}

function blur(el) {
  if (typeof el.blur === "function") blurElement(el);
  return readValue(el);
}

function readValue(el) {
  // As a person reads it (every space one space): what a fill is verified against.
  if (el.isContentEditable) return squashAny(el.innerText || el.textContent);
  return valueOf(el);
}

// Every option of a native <select> (collect.js optionsOf, without the walk's limit): what
// Python matches the wanted choices against (mao_page.dom.textrules.match_option).
const selectOptions = (el) => optionsOf(el, Infinity);

// Native <select>: choose the options at `indexes` (Python matched them) as a user's pick
// does: focus, set, input and change. Answers ["done", selectedValues], or
// ["not_connected", []] when the options changed since they were read (nothing was set).
function selectNative(el, indexes) {
  const view = viewOf(el);
  const options = Array.from(el.options);
  const chosen = indexes.map((i) => options[i]);
  if (chosen.some((o) => !o)) return ["not_connected", []];
  moveFocusTo(el);
  if (el.multiple) {
    for (const o of options) o.selected = chosen.includes(o);
  } else {
    nativeSetter(el).call(el, chosen[0].value);
  }
  el.dispatchEvent(new view.Event("input", { bubbles: true, composed: true }));
  el.dispatchEvent(new view.Event("change", { bubbles: true }));
  return ["done", options.filter((o) => o.selected).map((o) => o.value)];
}

function accessibleText(el) {
  const label = el.getAttribute("aria-label");
  if (label) return squash(label);
  const ids = (el.getAttribute("aria-labelledby") || "").split(/\s+/).filter(Boolean);
  if (ids.length) {
    const doc = el.ownerDocument;
    const text = ids.map((id) => doc.getElementById(id)).filter(Boolean).map((n) => n.textContent).join(" ");
    if (squash(text)) return squash(text);
  }
  return squash(el.innerText || el.textContent || el.getAttribute("title") || "");
}

function byIdIn(root, id) {
  return (root.getElementById ? root.getElementById(id) : null) || root.ownerDocument?.getElementById(id) || null;
}

// ARIA combobox/listbox options (SPEC A1): through aria-controls / aria-owns /
// aria-activedescendant, wherever they are rendered (body-level portals included). Returns
// {listbox, nodes, facts: [[label, value, selected, visible, disabled], ...], active}.
function ariaOptions(el) {
  const root = el.getRootNode();
  const doc = el.ownerDocument;
  const containers = [];
  if (el.getAttribute("role") === "listbox") containers.push(el);
  for (const attr of ["aria-controls", "aria-owns"]) {
    for (const id of (el.getAttribute(attr) || "").split(/\s+/).filter(Boolean)) {
      const target = byIdIn(root, id) || doc.getElementById(id);
      if (target) containers.push(target);
    }
  }
  // A combobox input inside a wrapper: the wrapper may carry the relation instead.
  const wrapper = el.closest("[role=combobox]");
  if (wrapper && wrapper !== el) {
    for (const id of (wrapper.getAttribute("aria-controls") || wrapper.getAttribute("aria-owns") || "").split(/\s+/).filter(Boolean)) {
      const target = byIdIn(root, id) || doc.getElementById(id);
      if (target) containers.push(target);
    }
  }
  const seen = new Set();
  const nodes = [];
  for (const container of containers) {
    const candidates = container.getAttribute("role") === "option" ? [container] : container.querySelectorAll("[role=option]");
    for (const option of candidates) {
      if (!seen.has(option)) { seen.add(option); nodes.push(option); }
    }
  }
  const activeId = el.getAttribute("aria-activedescendant") || (wrapper && wrapper.getAttribute("aria-activedescendant")) || "";
  const active = activeId ? (byIdIn(root, activeId) || doc.getElementById(activeId)) : null;
  if (active && active.getAttribute("role") === "option" && !seen.has(active)) nodes.push(active);
  const facts = nodes.map((option) => {
    const r = option.getBoundingClientRect();
    const visible = r.width > 0 && r.height > 0 && isRendered(option);
    return [accessibleText(option), option.getAttribute("data-value") || option.getAttribute("value") || "",
      option.getAttribute("aria-selected") === "true" || option.getAttribute("aria-checked") === "true",
      visible, option.getAttribute("aria-disabled") === "true"];
  });
  return { listbox: containers[0] || null, nodes, facts, active: active ? accessibleText(active) : "" };
}

// Elements that became visible since `before` and whose text equals `label`: how a
// portal-rendered option without ARIA roles is found after opening a combobox. Innermost wins.
// Compared folded (mao_page.dom.textrules.fold: case and white space aside).
function visibleTextMatches(doc, label, exclude) {
  const want = fold(label);
  const out = [];
  const walker = doc.createTreeWalker(doc.body || doc.documentElement, NodeFilter.SHOW_ELEMENT);
  for (let n = walker.currentNode; n; n = walker.nextNode()) {
    if (exclude && (n === exclude || composedContains(exclude, n))) continue;
    if (fold(n.innerText || "") !== want) continue;
    if (!isRendered(n)) continue;
    // Innermost: drop an ancestor already collected.
    for (let i = out.length - 1; i >= 0; i--) if (out[i].contains(n)) out.splice(i, 1);
    out.push(n);
  }
  return out;
}

function controlOf(el) {
  if (el.localName === "label" && el.control) return el.control;
  return el;
}

function labelFor(input) {
  if (input.labels && input.labels.length) return input.labels[0];
  return null;
}

// Keyboard: one event of a key press; returns true when the page did not cancel it.
function dispatchKey(el, type, init) {
  const target = el || deepActiveElement(document) || document.body;
  const view = viewOf(target);
  return target.dispatchEvent(new view.KeyboardEvent(type, { bubbles: true, cancelable: true, composed: true, view, ...init }));
}

function isTextField(el) {
  return el.localName === "textarea" || (el.localName === "input" && /^(text|search|email|url|tel|password|number|)$/.test(el.type));
}

// Insert text at the caret (or over the selection), as typing would (SPEC A3 default action
// that synthetic key events do not perform by themselves).
function insertText(el, text) {
  if (el.isContentEditable) {
    el.ownerDocument.execCommand("insertText", false, text);
    return readValue(el);
  }
  if (!el.dispatchEvent(inputEvent(el, "beforeinput", "insertText", text))) return readValue(el);
  const value = el.value;
  let start = value.length;
  let end = value.length;
  try { start = el.selectionStart ?? start; end = el.selectionEnd ?? end; } catch (error) { /* number/email have no selection API */ }
  nativeSetter(el).call(el, value.slice(0, start) + text + value.slice(end));
  try { el.setSelectionRange(start + text.length, start + text.length); } catch (error) { /* see above */ }
  el.dispatchEvent(inputEvent(el, "input", "insertText", text));
  return readValue(el);
}

function deleteText(el, forward) {
  if (el.isContentEditable) {
    el.ownerDocument.execCommand(forward ? "forwardDelete" : "delete", false);
    return readValue(el);
  }
  const inputType = forward ? "deleteContentForward" : "deleteContentBackward";
  if (!el.dispatchEvent(inputEvent(el, "beforeinput", inputType, null))) return readValue(el);
  const value = el.value;
  let start = value.length;
  let end = value.length;
  try { start = el.selectionStart ?? start; end = el.selectionEnd ?? end; } catch (error) { /* no selection API */ }
  if (start === end) {
    if (forward) end = Math.min(value.length, end + 1);
    else start = Math.max(0, start - 1);
  }
  nativeSetter(el).call(el, value.slice(0, start) + value.slice(end));
  try { el.setSelectionRange(start, start); } catch (error) { /* no selection API */ }
  el.dispatchEvent(inputEvent(el, "input", inputType, null));
  return readValue(el);
}

function selectAll(el) {
  if (el.isContentEditable) {
    const doc = el.ownerDocument;
    const range = doc.createRange();
    range.selectNodeContents(el);
    doc.getSelection().removeAllRanges();
    doc.getSelection().addRange(range);
    return true;
  }
  if (typeof el.select === "function") { el.select(); return true; }
  return false;
}

// Implicit submission (HTML §4.10.21.2) of the form of `el`, the focused element, on Enter.
// Which focused elements trigger it is the browser's choice; these follow Chromium: text
// fields fully; checkboxes, radios, ranges and date/time fields only through the default
// button. The rules once triggered are the standard's: the default button is the form's first
// submit button in tree order; when there is one, a disabled one means nothing happens, else
// it gets a synthetic click. Without one the form is submitted only if it has no more than one
// field that blocks implicit submission. Answers what happened: "clicked_default",
// "submitted", "default_disabled", "too_many_fields" or "none".
const TEXT_TRIGGERS = new Set(["text", "search", "url", "tel", "email", "password", "number"]);
const BUTTON_ONLY_TRIGGERS = new Set(["checkbox", "radio", "range", "date", "month", "week", "time", "datetime-local"]);
const BLOCKING_TYPES = new Set(["text", "search", "url", "tel", "email", "password", "date", "month", "week", "time",
  "datetime-local", "number"]);

function isSubmitButton(control) {
  return (control.localName === "button" && control.type === "submit")
    || (control.localName === "input" && (control.type === "submit" || control.type === "image"));
}

function submitImplicitly(el) {
  const form = el.form;
  if (!form || el.localName !== "input") return "none";
  const textField = TEXT_TRIGGERS.has(el.type);
  if (!textField && !BUTTON_ONLY_TRIGGERS.has(el.type)) return "none";
  const controls = Array.from(form.elements);
  const defaultButton = controls.find(isSubmitButton);
  if (defaultButton) {
    if (defaultButton.matches(":disabled")) return "default_disabled";
    defaultButton.click();
    return "clicked_default";
  }
  if (!textField) return "none";
  const blocking = controls.filter((c) => c.localName === "input" && BLOCKING_TYPES.has(c.type)).length;
  if (blocking > 1) return "too_many_fields";
  form.requestSubmit();
  return "submitted";
}

// Sequential focus navigation order of one document: positive tabindex first, then 0 in
// tree order; skips disabled, hidden and inert elements and the SDK host.
function tabbables(doc, exclude) {
  const out = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll("*")) {
      if (exclude && (el === exclude || composedContains(exclude, el))) continue;
      if (el.shadowRoot) walk(el.shadowRoot);
      if (el.tabIndex < 0 || el.disabled || el.inert || el.closest("[inert]")) continue;
      if (!isRendered(el)) continue;
      if (el.localName === "input" && el.type === "hidden") continue;
      out.push(el);
    }
  };
  walk(doc);
  const positive = out.filter((el) => el.tabIndex > 0).sort((a, b) => a.tabIndex - b.tabIndex);
  return positive.concat(out.filter((el) => el.tabIndex === 0));
}

function moveFocus(current, backwards, exclude) {
  const doc = current ? current.ownerDocument : document;
  const order = tabbables(doc, exclude);
  if (!order.length) return null;
  let index = current ? order.indexOf(current) : -1;
  index = backwards ? (index <= 0 ? order.length - 1 : index - 1) : (index + 1) % order.length;
  const next = order[index];
  moveFocusTo(next);
  return next;
}

// Arrow keys in a radio group move the checked state, as browsers do for real keys.
function stepRadio(el, delta) {
  if (!(el.localName === "input" && el.type === "radio" && el.name)) return null;
  const scope = el.form || el.getRootNode();
  const group = Array.from(scope.querySelectorAll("input[type=radio]")).filter((r) => r.name === el.name && !r.disabled);
  const index = group.indexOf(el);
  const next = group[(index + delta + group.length) % group.length];
  moveFocusTo(next);
  next.click();
  return next;
}

function stepSelect(el, delta) {
  if (el.localName !== "select" || el.multiple) return false;
  const view = viewOf(el);
  const index = Math.max(0, Math.min(el.options.length - 1, el.selectedIndex + delta));
  if (index === el.selectedIndex) return false;
  el.selectedIndex = index;
  el.dispatchEvent(new view.Event("input", { bubbles: true, composed: true }));
  el.dispatchEvent(new view.Event("change", { bubbles: true }));
  return true;
}

function scrollIntoView(el) {
  const r = el.getBoundingClientRect();
  const view = viewOf(el);
  const inside = r.top >= 0 && r.left >= 0 && r.bottom <= view.innerHeight && r.right <= view.innerWidth;
  if (!inside) el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
  return !inside;
}

// [scrollLeft, scrollTop, maxLeft, maxTop, clientWidth, clientHeight, scrollable]
function scrollState(target) {
  if (target.nodeType === 9 || target === target.window) {
    const win = target.defaultView || target;
    const root = win.document.scrollingElement || win.document.documentElement;
    return [win.scrollX, win.scrollY, root.scrollWidth - win.innerWidth, root.scrollHeight - win.innerHeight, win.innerWidth, win.innerHeight, true];
  }
  const style = viewOf(target).getComputedStyle(target);
  const scrollable = /(auto|scroll|overlay)/.test(style.overflowY + " " + style.overflowX)
    && (target.scrollHeight > target.clientHeight || target.scrollWidth > target.clientWidth);
  return [target.scrollLeft, target.scrollTop, target.scrollWidth - target.clientWidth, target.scrollHeight - target.clientHeight, target.clientWidth, target.clientHeight, scrollable];
}

function scrollPage(win, dx, dy) {
  const before = [win.scrollX, win.scrollY];
  win.scrollBy({ left: dx, top: dy, behavior: "instant" });
  return [before[0], before[1], win.scrollX, win.scrollY];
}

function scrollElement(el, dx, dy) {
  const before = [el.scrollLeft, el.scrollTop];
  el.scrollBy({ left: dx, top: dy, behavior: "instant" });
  return [before[0], before[1], el.scrollLeft, el.scrollTop];
}

function nextFrame(win) {
  return new Promise((resolve) => win.requestAnimationFrame(() => resolve(true)));
}

// Page dialogs raised during an action are answered (alert: ok, confirm: false, prompt:
// null) and recorded, then the page's own functions are restored (SPEC A6).
function interceptDialogs(win) {
  const records = [];
  const originals = { alert: win.alert, confirm: win.confirm, prompt: win.prompt };
  const record = (type, answer) => function (message) {
    records.push([type, String(message ?? "").slice(0, 500)]);
    return answer;
  };
  win.alert = record("alert", undefined);
  win.confirm = record("confirm", false);
  win.prompt = record("prompt", null);
  return {
    restore() {
      win.alert = originals.alert;
      win.confirm = originals.confirm;
      win.prompt = originals.prompt;
      return records;
    },
  };
}

// Visible messages an app shows after an action: ARIA alerts, status and live regions,
// <output>, open dialogs. [[kind, text], ...]
function liveMessages(doc, exclude) {
  const out = [];
  const selector = "[role=alert],[role=alertdialog],[role=status],[role=log],[aria-live]:not([aria-live=off]),output,dialog[open],[role=dialog]";
  for (const el of doc.querySelectorAll(selector)) {
    if (exclude && composedContains(exclude, el)) continue;
    if (!isRendered(el)) continue;
    const text = squash(el.innerText || el.textContent || "").slice(0, 300);
    if (!text) continue;
    const role = el.getAttribute("role") || (el.localName === "dialog" ? "dialog" : el.localName === "output" ? "status" : "live");
    out.push([role, text]);
  }
  return out;
}

function pageText(doc) {
  return doc.body ? doc.body.innerText : "";
}

Object.assign(MaoDom, {
  hitTest, effectProbe, effectsSince, focusElement, fill, commitValue, fieldSuggestions, suggestsWhileTyping, blur, readValue, selectNative, ariaOptions, visibleTextMatches,
  controlOf, labelFor, dispatchKey, insertText, deleteText, selectAll, submitImplicitly, moveFocus,
  stepRadio, stepSelect, scrollIntoView, scrollState, scrollPage, scrollElement, nextFrame,
  interceptDialogs, liveMessages, pageText, deepActiveElement: (doc, exclude) => deepActiveElement(doc || document, exclude),
  isTextField, maxLength,
});

// Keyboard activation of a button or link: a click event without pointer events, as the
// browser sends for Enter/Space.
function activate(el) {
  el.click();
  return true;
}

// What a combobox shows as its current choice: its own value and the text of its nearest
// labelled container (custom selects render the choice in a sibling of their input).
function comboboxDisplay(el) {
  const parts = [];
  if ("value" in el && typeof el.value === "string") parts.push(el.value);
  let container = el.closest("[role=combobox]") || el;
  // Multiple-choice widgets nest their input a few levels below the row of chosen tags.
  for (let i = 0; i < 5 && container; i++) {
    const text = squashAny(container.innerText || container.textContent || "");
    if (text) { parts.push(text); break; }
    container = container.parentElement;
  }
  for (const input of (container || el).querySelectorAll ? (container || el).querySelectorAll("input") : []) {
    if (input.value) parts.push(input.value);
  }
  return squashAny(parts.join(" "));
}

Object.assign(MaoDom, { activate, comboboxDisplay, selectOptions });
