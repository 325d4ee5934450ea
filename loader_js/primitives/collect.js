// Reading facts: one row per element, one call per document (see common.js).
// The FACT_* column order is mirrored by mao_page/facts.py; change both together.

const TEXT_LIMIT = 300;
const SELECT_OPTION_LIMIT = 500;

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

Object.assign(MaoDom, {
  collectDocument, isRendered, viewport,
  rowOf: (el) => factsOf(el, -1, -1, el.ownerDocument.defaultView.getComputedStyle(el)),
});
