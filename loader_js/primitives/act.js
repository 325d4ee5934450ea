// Acting: fixed, named event sequences and reads that verify them (see common.js).

// Hit test at the centre of the element's visible box, descending into open shadow roots,
// like a real pointer would land (SPEC A2).
function hitTest(el, exclude) {
  const doc = el.ownerDocument;
  const view = doc.defaultView;
  const r = el.getBoundingClientRect();
  const left = Math.max(r.left, 0);
  const top = Math.max(r.top, 0);
  const right = Math.min(r.right, view.innerWidth);
  const bottom = Math.min(r.bottom, view.innerHeight);
  if (right <= left || bottom <= top) return { ok: false, x: 0, y: 0, hit: "outside the viewport", sdk: false };
  const x = (left + right) / 2;
  const y = (top + bottom) / 2;
  let hit = doc.elementFromPoint(x, y);
  while (hit && hit.shadowRoot) {
    const inner = hit.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  const sdk = !!(exclude && hit && composedContains(exclude, hit));
  const ok = !!hit && !sdk && (hit === el || composedContains(el, hit));
  return { ok, x, y, hit: sdk ? "the Mao Embed panel" : describe(hit), sdk };
}

function mouseInit(el, x, y, buttons, detail) {
  return {
    bubbles: true, cancelable: true, composed: true, view: el.ownerDocument.defaultView,
    clientX: x, clientY: y, screenX: x, screenY: y, button: 0, buttons, detail,
  };
}

// The event sequence of a real left click: pointer and mouse down/up, focus, click.
function click(el, x, y) {
  const view = el.ownerDocument.defaultView;
  const P = view.PointerEvent;
  const M = view.MouseEvent;
  const pointer = (type, buttons) =>
    new P(type, { ...mouseInit(el, x, y, buttons, 0), pointerId: 1, pointerType: "mouse", isPrimary: true });
  el.dispatchEvent(pointer("pointerover", 0));
  el.dispatchEvent(new M("mouseover", mouseInit(el, x, y, 0, 0)));
  el.dispatchEvent(pointer("pointerdown", 1));
  const downAllowed = el.dispatchEvent(new M("mousedown", mouseInit(el, x, y, 1, 1)));
  if (downAllowed && typeof el.focus === "function") el.focus({ preventScroll: true });
  el.dispatchEvent(pointer("pointerup", 0));
  el.dispatchEvent(new M("mouseup", mouseInit(el, x, y, 0, 1)));
  el.dispatchEvent(new M("click", mouseInit(el, x, y, 0, 1)));
}

// Write a value the way React and Vue observe it (SPEC A3): the prototype's native value
// setter (React tracks the instance setter), then beforeinput/input/change, then blur.
function fill(el, value) {
  const view = el.ownerDocument.defaultView;
  if (typeof el.focus === "function") el.focus({ preventScroll: true });
  if (el.isContentEditable) {
    el.dispatchEvent(new view.InputEvent("beforeinput", { bubbles: true, cancelable: true, composed: true, inputType: "insertText", data: value }));
    el.textContent = value;
    el.dispatchEvent(new view.InputEvent("input", { bubbles: true, composed: true, inputType: "insertText", data: value }));
  } else {
    const proto =
      el.localName === "textarea" ? view.HTMLTextAreaElement.prototype
      : el.localName === "select" ? view.HTMLSelectElement.prototype
      : view.HTMLInputElement.prototype;
    const setter = Object.getOwnPropertyDescriptor(proto, "value").set;
    el.dispatchEvent(new view.InputEvent("beforeinput", { bubbles: true, cancelable: true, composed: true, inputType: "insertReplacementText", data: value }));
    setter.call(el, value);
    el.dispatchEvent(new view.InputEvent("input", { bubbles: true, composed: true, inputType: "insertReplacementText", data: value }));
    el.dispatchEvent(new view.Event("change", { bubbles: true }));
  }
  if (typeof el.blur === "function") el.blur();
  el.dispatchEvent(new view.FocusEvent("focusout", { bubbles: true, composed: true }));
  return readValue(el);
}

function readValue(el) {
  if (el.isContentEditable) return squash(el.textContent);
  return valueOf(el);
}

function scrollIntoView(el) {
  const r = el.getBoundingClientRect();
  const view = el.ownerDocument.defaultView;
  const inside = r.top >= 0 && r.left >= 0 && r.bottom <= view.innerHeight && r.right <= view.innerWidth;
  if (!inside) el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
  return !inside;
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

Object.assign(MaoDom, { hitTest, click, fill, readValue, scrollIntoView, scrollPage, scrollElement, nextFrame });
