// Bulk DOM primitives handed to the Python runtime (mao_page.bridge).
//
// Why JavaScript at all: crossing the Pyodide proxy boundary costs 1-7 us per property
// (NOTES-pyodide.md), so reading a page element by element from Python is 5-7x slower
// than one call per document that returns flat facts. These functions only READ facts or
// PERFORM one fixed, named act; every decision (what is interactive, its role, its name,
// whether it is visible, whether an action is allowed) is made in Python.
//
// The FACT_* column order is mirrored by mao_page/facts.py; change both together.
const MaoDomPrimitives = (() => {
  "use strict";

  const TEXT_LIMIT = 300;
  const SELECT_OPTION_LIMIT = 500;

  const squash = (s) => (s || "").replace(/\s+/g, " ").trim();

  function ownText(el) {
    let out = "";
    for (let n = el.firstChild; n; n = n.nextSibling) {
      if (n.nodeType === 3) {
        out += n.data;
        if (out.length > TEXT_LIMIT * 2) break;
      }
    }
    return squash(out).slice(0, TEXT_LIMIT);
  }

  // Children in the flat (composed) tree: an open shadow root replaces the light children,
  // a slot yields what is assigned to it (or its fallback content).
  function composedChildren(el) {
    if (el.shadowRoot) return el.shadowRoot.children;
    if (el.localName === "slot") {
      const assigned = el.assignedElements();
      return assigned.length ? assigned : el.children;
    }
    return el.children;
  }

  function checkedState(el) {
    if (el.localName === "input" && (el.type === "checkbox" || el.type === "radio")) {
      if (el.indeterminate) return 2;
      return el.checked ? 1 : 0;
    }
    return -1;
  }

  function valueOf(el) {
    const tag = el.localName;
    if (tag === "input" || tag === "textarea" || tag === "select") return String(el.value ?? "");
    return "";
  }

  function optionsOf(el) {
    if (el.localName !== "select") return 0;
    const out = [];
    const opts = el.options;
    for (let i = 0; i < opts.length && i < SELECT_OPTION_LIMIT; i++) {
      const o = opts[i];
      out.push([o.value, squash(o.label || o.text), o.selected, o.disabled]);
    }
    return out;
  }

  // One row of facts per element; see mao_page/facts.py for the column names.
  function factsOf(el, parentIndex, formIndex, style) {
    const r = el.getBoundingClientRect();
    const a = (name) => el.getAttribute(name) ?? "";
    const form = el.localName === "form" ? el : null;
    return [
      el.localName, // 0 tag
      parentIndex, // 1 parent
      el.id || "", // 2 id
      a("role"), // 3
      a("type").toLowerCase(), // 4
      a("aria-label"), // 5
      a("aria-labelledby"), // 6
      a("title"), // 7
      a("placeholder"), // 8
      a("name"), // 9
      el.hasAttribute("href") && "href" in el ? String(el.href) : "", // 10
      el.hasAttribute("tabindex") ? a("tabindex") : "", // 11
      el.isContentEditable === true, // 12
      style.cursor, // 13
      style.display, // 14
      style.visibility, // 15
      parseFloat(style.opacity), // 16
      r.x, r.y, r.width, r.height, // 17-20
      el.matches(":disabled"), // 21
      el.readOnly === true || el.hasAttribute("readonly"), // 22
      el.required === true, // 23
      checkedState(el), // 24
      valueOf(el), // 25
      ownText(el), // 26
      a("aria-checked"), // 27
      a("aria-expanded"), // 28
      a("aria-selected"), // 29
      a("aria-disabled"), // 30
      a("aria-hidden"), // 31
      a("autocomplete").toLowerCase(), // 32
      a("for"), // 33
      a("alt"), // 34
      formIndex, // 35 index of the owning form row, -1 when none
      optionsOf(el), // 36
      el.hasAttribute("data-mao-private") ? "private" : el.hasAttribute("data-mao-ignore") ? "ignore" : "", // 37
      style.pointerEvents, // 38
      form ? String(form.action || "") : "", // 39
      form ? String(form.method || "") : "", // 40
      el.multiple === true, // 41
      a("aria-required"), // 42
      a("aria-readonly"), // 43
      el.localName === "input" && el.type === "password" ? 1 : 0, // 44
      a("value"), // 45 value attribute (button labels)
    ];
  }

  // Walk one document in composed tree order. Returns {nodes, facts}: nodes[i] is the
  // element described by facts[i]. `exclude` is the SDK host: it and its subtree never
  // appear (SPEC S4, U2).
  function collectDocument(doc, exclude) {
    const nodes = [];
    const facts = [];
    const formRow = new Map();
    const view = doc.defaultView;
    const stack = [[doc.documentElement, -1]];
    while (stack.length) {
      const [el, parent] = stack.pop();
      if (!el || el === exclude) continue;
      const index = nodes.length;
      let formIndex = -1;
      const form = el.form;
      if (form && formRow.has(form)) formIndex = formRow.get(form);
      if (el.localName === "form") formRow.set(el, index);
      nodes.push(el);
      facts.push(factsOf(el, parent, formIndex, view.getComputedStyle(el)));
      const kids = composedChildren(el);
      for (let i = kids.length - 1; i >= 0; i--) stack.push([kids[i], index]);
    }
    return { nodes, facts };
  }

  function describe(el) {
    if (!el || el.nodeType !== 1) return "nothing";
    const label = squash(el.getAttribute("aria-label") || el.textContent || "").slice(0, 40);
    return `<${el.localName}${el.id ? "#" + el.id : ""}>${label ? ' "' + label + '"' : ""}`;
  }

  function composedContains(ancestor, node) {
    for (let n = node; n; n = n.parentNode || (n instanceof ShadowRoot ? n.host : null)) {
      if (n === ancestor) return true;
    }
    return false;
  }

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

  // Page watch: counters only, read by Python on demand. Python is never called per
  // mutation, and nothing is pushed anywhere (SPEC W4).
  function watchPage(win, exclude) {
    const state = { mutations: 0, navigations: 0, lastMutation: performance.now() };
    const bump = () => { state.navigations += 1; state.lastMutation = performance.now(); };
    const observer = new win.MutationObserver((records) => {
      for (const record of records) {
        if (exclude && composedContains(exclude, record.target)) continue;
        state.mutations += 1;
        state.lastMutation = performance.now();
      }
    });
    observer.observe(win.document, { subtree: true, childList: true, attributes: true, characterData: true });
    const listeners = [["popstate", bump], ["hashchange", bump]];
    for (const [type, fn] of listeners) win.addEventListener(type, fn);
    // The Navigation API sees pushState/replaceState without patching the page's history.
    const nav = win.navigation;
    if (nav) nav.addEventListener("navigate", bump);
    return {
      read() {
        return [state.mutations, state.navigations, performance.now() - state.lastMutation, String(win.location.href), String(win.document.title)];
      },
      dispose() {
        observer.disconnect();
        for (const [type, fn] of listeners) win.removeEventListener(type, fn);
        if (nav) nav.removeEventListener("navigate", bump);
      },
    };
  }

  // The browser's own answer to "is this rendered": display, visibility, content-visibility
  // and opacity of the element and its ancestors, in one call.
  function isRendered(el) {
    if (!el.isConnected) return false;
    const r = el.getBoundingClientRect();
    const seen = typeof el.checkVisibility === "function"
      ? el.checkVisibility({ opacityProperty: true, visibilityProperty: true, contentVisibilityAuto: true })
      : r.width > 0;
    return seen && r.width > 0 && r.height > 0;
  }

  function viewport(win) {
    return [win.innerWidth, win.innerHeight, win.scrollX, win.scrollY, win.devicePixelRatio || 1];
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

  return Object.freeze({
    collectDocument, hitTest, click, fill, readValue, scrollIntoView, watchPage, viewport,
    scrollPage, scrollElement, nextFrame, describe, isRendered,
    isConnected: (el) => el.isConnected === true,
    rowOf: (el) => factsOf(el, -1, -1, el.ownerDocument.defaultView.getComputedStyle(el)),
  });
})();
