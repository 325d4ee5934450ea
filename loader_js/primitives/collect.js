// Reading facts: one row per element, one call per page (see common.js).
//
// The walk covers the composed tree of the top document: open shadow roots (a slot yields
// its assigned nodes, in assignment order), and same-origin iframes, nested, each iframe's
// document hanging under its <iframe> row. Cross-origin iframes and detectable closed
// shadow hosts are rows too (flagged), so Python can give them placeholders (SPEC S6).
// Nothing here decides anything: what is interactive, visible, clipped, named or in the
// viewport is computed in Python (mao_page/snapshot/scanner.py, dom/names.py).
//
// The fact columns (FACT.TAG ...) are mao_page/dom/facts.py's, generated from it (jstables.py).

const TEXT_LIMIT = 300;
const utf8 = new TextEncoder();
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
// a slot yields what is assigned to it in assignment order (or its fallback content).
function composedChildNodes(el) {
  if (el.shadowRoot) return el.shadowRoot.childNodes;
  if (el.localName === "slot" && typeof el.assignedNodes === "function") {
    const assigned = el.assignedNodes({ flatten: true });
    return assigned.length ? assigned : el.childNodes;
  }
  return el.childNodes;
}

// The element children of composedChildNodes, without visiting text nodes.
function composedChildElements(el) {
  if (el.shadowRoot) return el.shadowRoot.children;
  if (el.localName === "slot" && typeof el.assignedElements === "function") {
    const assigned = el.assignedNodes({ flatten: true });
    return assigned.length ? el.assignedElements({ flatten: true }) : el.children;
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

function optionsOf(el, limit = SELECT_OPTION_LIMIT) {
  if (el.localName !== "select") return 0;
  const out = [];
  const opts = el.options;
  for (let i = 0; i < opts.length && i < limit; i++) {
    const o = opts[i];
    out.push([o.value, squash(o.label || o.text), o.selected, o.disabled]);
  }
  return out;
}

// A closed shadow root cannot be seen, only inferred: a defined custom element with no
// open shadow root that renders a box while none of its light children renders one (they
// are not slotted anywhere). Undetectable cases (slotted light content) stay unflagged.
function looksLikeClosedShadowHost(el, rect) {
  if (el.shadowRoot || el.localName.indexOf("-") < 0 || rect.width === 0 || rect.height === 0) return false;
  const registry = el.ownerDocument.defaultView.customElements;
  if (!registry || !registry.get(el.localName)) return false;
  for (let n = el.firstChild; n; n = n.nextSibling) {
    if (n.nodeType === 3 && n.data.trim()) return false;
    if (n.nodeType === 1) {
      const r = n.getBoundingClientRect();
      if (r.width > 0 || r.height > 0) return false;
    }
  }
  return true;
}

// Whether any style sheet of this document or shadow root may generate ::before/::after
// content; reading pseudo-element styles costs as much as the element's own, so it is done
// only where it can matter (accname 2F.ii). Unreadable (cross-origin) sheets count as "may".
function mayGenerateContent(root) {
  const scan = (rules) => {
    for (const rule of rules) {
      if (rule.selectorText && rule.selectorText.indexOf(":") >= 0 && /:(before|after)/.test(rule.selectorText)) return true;
      if (rule.cssRules && scan(rule.cssRules)) return true;
    }
    return false;
  };
  const sheets = [...(root.styleSheets || []), ...(root.adoptedStyleSheets || [])];
  for (const sheet of sheets) {
    let rules;
    try {
      rules = sheet.cssRules;
    } catch (error) {
      return true;
    }
    if (scan(rules)) return true;
  }
  return false;
}

function pseudoOf(el, view) {
  const before = view.getComputedStyle(el, "::before");
  const after = view.getComputedStyle(el, "::after");
  const b = before.content;
  const a = after.content;
  // Generated content that is not rendered (display: none, as vertical antd forms hide their
  // label colon) or not visible (visibility: hidden) is not text a user sees, so it is no part
  // of a name; Chromium's accessibility tree leaves it out too.
  const none = (c, style) => !c || c === "none" || c === "normal" || style.display === "none"
    || style.visibility !== "visible";
  if (none(b, before) && none(a, after)) return 0;
  return [none(b, before) ? "" : b, before.display, none(a, after) ? "" : a, after.display];
}

// Element children in the composed tree, and the text between them as a flat list
// [position, text, ...] (text before the element child at `position`; runs joined), so Python
// can interleave text and elements without a crossing per text node.
function childrenAndTexts(el, keep) {
  const kids = [];
  const texts = [];
  for (const n of composedChildNodes(el)) {
    if (n.nodeType === 1) {
      if (!keep || keep.has(n)) kids.push(n);
    } else if (n.nodeType === 3 && n.data) {
      const last = texts.length - 2;
      const text = n.data.replace(ASCII_SPACE_RUN, " ");
      if (last >= 0 && texts[last] === kids.length) texts[last + 1] = (texts[last + 1] + text).slice(0, TEXT_LIMIT);
      else texts.push(kids.length, text.slice(0, TEXT_LIMIT));
    }
  }
  return [kids, texts];
}

// One row of facts per element; see mao_page/dom/facts.py for the column names.
// `texts` is [position, text, position, text, ...]: the element's own text nodes in the
// composed tree, each after `position` element children (so Python can interleave them).
function factsOf(el, parentIndex, formIndex, style, scope, texts, pseudo, fresh) {
  const r = el.getBoundingClientRect();
  const a = (name) => el.getAttribute(name) ?? "";
  const tag = el.localName;
  const form = tag === "form" ? el : null;
  const control = tag === "input" || tag === "select" || tag === "textarea";
  const frame = tag === "iframe" || tag === "frame" ? (sameOriginDocument(el) ? "same" : "cross") : "";
  const row = new Array(FACT_COLUMNS);
  row[FACT.TAG] = tag;
  row[FACT.PARENT] = parentIndex;
  row[FACT.ID] = el.id || "";
  row[FACT.ROLE] = a("role");
  row[FACT.TYPE] = a("type").toLowerCase();
  row[FACT.ARIA_LABEL] = a("aria-label");
  row[FACT.ARIA_LABELLEDBY] = a("aria-labelledby");
  row[FACT.TITLE] = a("title");
  row[FACT.PLACEHOLDER] = a("placeholder");
  row[FACT.NAME] = a("name");
  row[FACT.HREF] = el.hasAttribute("href") && "href" in el ? String(el.href) : "";
  row[FACT.TABINDEX] = el.hasAttribute("tabindex") ? a("tabindex") : "";
  row[FACT.CONTENTEDITABLE] = el.isContentEditable === true;
  row[FACT.CURSOR] = style.cursor;
  row[FACT.DISPLAY] = style.display;
  row[FACT.VISIBILITY] = style.visibility;
  row[FACT.OPACITY] = parseFloat(style.opacity);
  row[FACT.X] = r.x;
  row[FACT.Y] = r.y;
  row[FACT.WIDTH] = r.width;
  row[FACT.HEIGHT] = r.height;
  row[FACT.DISABLED] = el.matches(":disabled");
  row[FACT.READONLY] = el.readOnly === true || el.hasAttribute("readonly");
  row[FACT.REQUIRED] = el.required === true;
  row[FACT.CHECKED] = checkedState(el);
  row[FACT.VALUE] = valueOf(el);
  row[FACT.OWN_TEXT] = ownText(el);
  row[FACT.ARIA_CHECKED] = a("aria-checked");
  row[FACT.ARIA_EXPANDED] = a("aria-expanded");
  row[FACT.ARIA_SELECTED] = a("aria-selected");
  row[FACT.ARIA_DISABLED] = a("aria-disabled");
  row[FACT.ARIA_HIDDEN] = a("aria-hidden");
  row[FACT.AUTOCOMPLETE] = a("autocomplete").toLowerCase();
  row[FACT.LABEL_FOR] = a("for");
  row[FACT.ALT] = el.hasAttribute("alt") ? a("alt") : null; // null when absent (alt="" means decorative)
  row[FACT.FORM] = formIndex; // index of the owning form row, -1 when none
  row[FACT.OPTIONS] = optionsOf(el);
  row[FACT.PRIVACY] = el.hasAttribute("data-mao-private") ? "private" : el.hasAttribute("data-mao-ignore") ? "ignore" : "";
  row[FACT.POINTER_EVENTS] = style.pointerEvents;
  row[FACT.FORM_ACTION] = form ? String(form.action || "") : "";
  row[FACT.FORM_METHOD] = form ? String(form.method || "") : "";
  row[FACT.MULTIPLE] = el.multiple === true;
  row[FACT.ARIA_REQUIRED] = a("aria-required");
  row[FACT.ARIA_READONLY] = a("aria-readonly");
  row[FACT.IS_PASSWORD] = tag === "input" && el.type === "password" ? 1 : 0;
  row[FACT.VALUE_ATTR] = a("value"); // value attribute (button labels)
  row[FACT.SCOPE] = scope; // tree scope (document or shadow root), index into scopes
  row[FACT.SHADOW] = el.shadowRoot ? "open" : looksLikeClosedShadowHost(el, r) ? "closed" : "";
  row[FACT.FRAME] = frame; // "same" / "cross" for frames
  row[FACT.CONTENT_VISIBILITY] = style.contentVisibility;
  row[FACT.OVERFLOW] = style.overflow;
  row[FACT.POSITION] = style.position;
  row[FACT.ARIA_INVALID] = a("aria-invalid");
  row[FACT.USER_INVALID] = control && el.matches(":user-invalid") ? 1 : 0;
  row[FACT.ARIA_PRESSED] = a("aria-pressed");
  row[FACT.ARIA_DESCRIBEDBY] = a("aria-describedby");
  row[FACT.OPEN] = el.open === true; // <details>/<dialog> open
  row[FACT.INERT] = el.hasAttribute("inert");
  row[FACT.PSEUDO] = pseudo; // 0 or [before content, before display, after content, after display]
  row[FACT.ARIA_LEVEL] = a("aria-level");
  row[FACT.ARIA_VALUE] = el.hasAttribute("aria-valuetext") ? a("aria-valuetext") : a("aria-valuenow");
  row[FACT.TEXT_PARTS] = texts;
  row[FACT.LIST] = tag === "input" && el.hasAttribute("list") ? 1 : tag === "select" && el.size > 1 ? 2 : 0;
  row[FACT.ARIA_OWNS] = a("aria-owns");
  row[FACT.TEXT_TRANSFORM] = style.textTransform;
  row[FACT.FRESH] = fresh === true; // not painted at the previous snapshot (see paintedBefore)
  row[FACT.CLASS_STATE] = classState(el, style); // "switch" / "checked" words of its class names (classState)
  return row;
}

// A switch a library builds with no role (a clickable div) or without aria-checked states
// what it is and whether it is on only in its class names ("t-switch t-is-checked",
// "el-switch is-checked"): the words "switch" and "checked" among their parts, sorted
// ("checked switch"), for an element that introduces the pointer or is focusable and has no
// role, or has a checkable role and no aria-checked; "" for every other element.
const CLASS_STATE_ROLES = new Set(["switch", "checkbox", "radio", "menuitemcheckbox", "menuitemradio"]);
const CLASS_STATE_TAGS = new Set(["input", "select", "textarea", "option", "a", "area"]);
function classState(el, style) {
  const names = el.getAttribute("class");
  if (!names || !/switch|checked/i.test(names) || el.hasAttribute("aria-checked")) return "";
  const role = el.getAttribute("role");
  if (role) {
    if (!CLASS_STATE_ROLES.has(role.trim().split(/\s+/)[0].toLowerCase())) return "";
  } else {
    if (CLASS_STATE_TAGS.has(el.localName)) return "";
    const parent = el.parentElement;
    const ownPointer = style.cursor === "pointer" && !(parent && getComputedStyle(parent).cursor === "pointer");
    if (!ownPointer && !(el.hasAttribute("tabindex") && el.tabIndex >= 0)) return "";
  }
  const words = new Set();
  for (const token of names.split(/\s+/)) {
    for (const part of token.split(/[-_]+|(?<=[a-z])(?=[A-Z])/)) {
      const word = part.toLowerCase();
      if (word === "switch" || word === "checked") words.add(word);
    }
  }
  return [...words].sort().join(" ");
}

// What was painted at the previous snapshot (page_inspect): a box and, where the walk read its
// style, visible and not transparent. An element listed now that was not is new to the agent
// (SPEC S9: what its last action opened); null until the first snapshot. A walk for a
// snapshot builds the next set (`painted`) and makes it the reference when it ends; other
// walks (screenshot masks, a ref's name check) only read it.
let paintedBefore = null;
const isFresh = (el) => paintedBefore !== null && !paintedBefore.has(el);

// Walk the top document in composed tree order, into same-origin frames. Returns
// {nodes, facts, scopes, frames, roots, fullRows}: nodes[i] is the element described by facts[i];
// scopes[s] = [kind, frame, host row]; frames[f] = [owner row, url, x, y, width, height]
// (the frame's content box in its parent frame's viewport; frame 0 is the top window).
// `exclude` is the SDK host: it and its subtree never appear (SPEC S4, U2). `keep`, when
// given (viewportKeep), is the set of elements to walk; it holds every ancestor of its members.
// With `keep`, fullRows[i] is the row count of nodes[i]'s whole subtree, walked or not.
function collectDocument(doc, exclude, keep) {
  const walk = documentWalk(doc, exclude, keep, null);
  walk.step(Infinity);
  return walk.result();
}

// The walk as steps: `step(deadline)` walks until done (true) or until the clock passes
// `deadline` (false), so that a walk can run in slices (collectDocumentColumnsSliced).
// `painted`, when given, collects the elements painted now (for the next walk's FRESH).
function documentWalk(doc, exclude, keep, painted) {
  const nodes = [];
  const facts = [];
  const scopes = [["document", 0, -1]];
  const win = doc.defaultView;
  const frames = [[-1, String(doc.URL), 0, 0, win.innerWidth, win.innerHeight]];
  const formRow = new Map();
  const roots = []; // the open shadow roots and frame documents met (for the page watch)
  const pseudoIn = [mayGenerateContent(doc)];
  const fullRows = keep ? [] : null;
  const stack = [[doc.documentElement, -1, 0, false]];
  function step(deadline) {
    let visited = 0;
    while (stack.length) {
      if ((++visited & 31) === 0 && performance.now() > deadline) return false;
      const [el, parent, scope, transparent] = stack.pop();
      if (!el || el === exclude || (keep && !keep.has(el))) continue;
      const index = nodes.length;
      let formIndex = -1;
      const form = el.form;
      if (form && formRow.has(form)) formIndex = formRow.get(form);
      if (el.localName === "form") formRow.set(el, index);
      const view = el.ownerDocument.defaultView;
      const style = view.getComputedStyle(el);
      const [kids, texts] = childrenAndTexts(el, keep);
      const pseudo = pseudoIn[scope] && style.display !== "none" ? pseudoOf(el, view) : 0;
      nodes.push(el);
      const row = factsOf(el, parent, formIndex, style, scope, texts, pseudo, isFresh(el));
      facts.push(row);
      if (fullRows) fullRows.push(keep.get(el));
      const clear = transparent || row[FACT.OPACITY] <= 0;
      if (painted && !clear && row[FACT.WIDTH] > 0 && row[FACT.HEIGHT] > 0 && style.visibility === "visible") painted.add(el);
      let childScope = scope;
      if (el.shadowRoot) {
        childScope = scopes.length;
        scopes.push(["shadow", scopes[scope][1], index]);
        pseudoIn[childScope] = mayGenerateContent(el.shadowRoot);
        roots.push(el.shadowRoot);
      }
      if (el.localName === "iframe" || el.localName === "frame") {
        const inner = sameOriginDocument(el);
        if (inner) {
          const r = el.getBoundingClientRect();
          const s = style;
          const x = r.x + el.clientLeft + parseFloat(s.paddingLeft);
          const y = r.y + el.clientTop + parseFloat(s.paddingTop);
          const frameIndex = frames.length;
          frames.push([index, String(inner.URL), x, y, inner.defaultView.innerWidth, inner.defaultView.innerHeight]);
          const docScope = scopes.length;
          scopes.push(["document", frameIndex, index]);
          roots.push(inner);
          pseudoIn[docScope] = mayGenerateContent(inner);
          if (keep && !keep.has(inner.documentElement)) countFrames(inner, frames);
          else stack.push([inner.documentElement, index, docScope, clear]);
          continue;
        }
      }
      for (let i = kids.length - 1; i >= 0; i--) stack.push([kids[i], index, childScope, clear]);
    }
    return true;
  }
  return { step, roots, result: () => ({ nodes, facts, scopes, frames, roots, fullRows }) };
}

// A frame the viewport-limited walk does not enter: the same-origin frames inside it still
// get their numbers (frame labels count every frame of the page, in walk order), with no
// owner row. Known gap: frames inside open shadow roots of such a frame are not counted.
function countFrames(doc, frames) {
  for (const el of doc.querySelectorAll("iframe, frame")) {
    const inner = sameOriginDocument(el);
    if (!inner) continue;
    frames.push([-1, String(inner.URL), 0, 0, 0, 0]);
    countFrames(inner, frames);
  }
}

// The rows a viewport-limited scan needs (the default page_inspect, screenshot masks): every
// element whose border box intersects the top viewport, with its ancestors, and what the scan
// reads about the elements among them, so that each in-viewport element comes out of the
// scan exactly as it does from a full walk (tests/browser/test_snapshot_viewport.py):
// - for every element that may be listed (mayBeListed: a superset of the scanner's
//   candidates): its whole subtree (name from content, its text, the "wrapper around one real
//   control collapses" count of SPEC S1 over all its descendants, not just the visible ones),
//   and the nearby-text fallback's preceding siblings (SPEC S3, mao_page.dom.names.nearby_text:
//   back to the first one that surely has text, wherever it is on the page);
// - labels, aria-labelledby / -describedby / -owns targets (with subtrees), the form owner,
//   the hidden real input behind an in-viewport label, and every aria-owns owner of the page
//   (an owner elsewhere takes content out of an in-viewport element's name);
// - every same-origin frame element (frame numbers in labels count all frames of the page).
// Every element of the page is still visited, but only for its box: nothing is skipped on the
// guess that a subtree lies outside (fixed and absolute descendants, overflowing content and
// scroll containers can all paint inside the viewport from an ancestor outside it).
// Same-origin frames whose box misses the viewport are not entered: a frame's content never
// paints outside its box (collectDocument still numbers the frames nested in them).
// Returns the elements to keep, for collectDocument: a Map from each to the number of rows of
// its whole subtree (what Python counts in a field container, mao_page.dom.names.container_label,
// whether the walk keeps all of it or not).
const REFERENCE_ATTRIBUTES = ["aria-labelledby", "aria-describedby", "aria-owns"];
const LISTABLE_TAGS = new Set(["button", "select", "textarea", "summary", "input", "iframe", "frame"]);

// Whether any token of the element's role attribute is in `roles` (a generated table).
function hasRoleIn(el, roles) {
  const role = el.getAttribute("role");
  if (role) for (const token of role.toLowerCase().split(/\s+/)) if (roles.has(token)) return true;
  return false;
}

// Whether the scanner may list this element (mao_page.snapshot.scanner.is_interactive and the opaque
// placeholders), erring towards yes: a yes only keeps more rows.
function mayBeListed(el) {
  const tag = el.localName;
  if (LISTABLE_TAGS.has(tag) || el.isContentEditable || tag.indexOf("-") >= 0) return true;
  // An item of a listbox, menu or tree container (mao_page.snapshot.scanner.delegated_items).
  if (el.parentElement && hasRoleIn(el.parentElement, ITEM_CONTAINER_ROLES)) return true;
  if ((tag === "a" || tag === "area") && el.hasAttribute("href")) return true;
  if (hasRoleIn(el, WIDGET_ROLES)) return true;
  const tabindex = el.getAttribute("tabindex");
  if (tabindex !== null && tabindex.trim() !== "" && !(parseInt(tabindex, 10) < 0)) return true;
  // A pointer, or a drag cursor (a role-less slider's thumb: the scanner checks its shape).
  const cursor = el.ownerDocument.defaultView.getComputedStyle(el).cursor;
  return cursor === "pointer" || DRAG_CURSORS.has(cursor);
}

// Whether mao_page.dom.names.nearby_text surely finds text in this sibling: rendered (not
// display:none, content-visibility:hidden or visibility:hidden), not a no-text element, and
// a text node of its own in the composed tree holding more than ASCII whitespace.
function surelyHasText(el) {
  if (NO_TEXT_TAGS.has(el.localName)) return false;
  if (typeof el.checkVisibility === "function" && !el.checkVisibility({ visibilityProperty: true, contentVisibilityAuto: false })) return false;
  for (const n of composedChildNodes(el)) if (n.nodeType === 3 && NOT_ASCII_SPACE.test(n.data)) return true;
  return false;
}

// Where an element's name (and, with more attributes, its description or owned children)
// may come from: its <label>s, then the elements its idref `attributes` point to, in order,
// looked up in the element's own tree scope.
function nameSources(el, attributes) {
  const sources = [...(el.labels || [])];
  const root = el.getRootNode();
  for (const name of attributes) {
    for (const id of (el.getAttribute(name) || "").split(/\s+/)) {
      const target = id && root.getElementById ? root.getElementById(id) : null;
      if (target) sources.push(target);
    }
  }
  return sources;
}

function viewportKeep(doc, exclude, painted = null) {
  const win = doc.defaultView;
  const width = win.innerWidth;
  const height = win.innerHeight;
  const all = [];
  const parents = [];
  const hits = [];
  const frameRows = [];
  const scopeRoots = [doc];
  const stack = [doc.documentElement, -1, 0, 0];
  while (stack.length) {
    const oy = stack.pop();
    const ox = stack.pop();
    const parent = stack.pop();
    const el = stack.pop();
    if (!el || el === exclude) continue;
    const index = all.length;
    all.push(el);
    parents.push(parent);
    const r = el.getBoundingClientRect();
    const x = r.x + ox;
    const y = r.y + oy;
    const boxed = r.width > 0 && r.height > 0;
    const hit = boxed && x < width && x + r.width > 0 && y < height && y + r.height > 0;
    hits.push(hit);
    // Outside the viewport the walk reads no style: a box counts as painted (collectDocument
    // records the kept rows itself, with their visibility).
    if (painted && boxed && !hit) painted.add(el);
    const tag = el.localName;
    if (el.shadowRoot) scopeRoots.push(el.shadowRoot);
    if (tag === "iframe" || tag === "frame") {
      frameRows.push(index);
      const inner = hit ? sameOriginDocument(el) : null;
      if (inner) {
        scopeRoots.push(inner);
        const s = el.ownerDocument.defaultView.getComputedStyle(el);
        stack.push(inner.documentElement, index, x + el.clientLeft + parseFloat(s.paddingLeft), y + el.clientTop + parseFloat(s.paddingTop));
      }
      continue;
    }
    const kids = composedChildElements(el);
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i], index, ox, oy);
  }
  const count = all.length;
  // end[i]: the last row of i's subtree (rows are in preorder).
  const end = new Int32Array(count);
  for (let i = 0; i < count; i++) end[i] = i;
  for (let i = count - 1; i > 0; i--) {
    const p = parents[i];
    if (p >= 0 && end[i] > end[p]) end[p] = end[i];
  }
  const keep = new Uint8Array(count);
  const keepWithAncestors = (i) => {
    for (let a = i; a >= 0 && !keep[a]; a = parents[a]) keep[a] = 1;
  };
  const whole = new Uint8Array(count); // rows kept with their whole subtree
  const keepSubtree = (i) => {
    if (whole[i]) return;
    keepWithAncestors(parents[i]);
    for (let j = i; j <= end[i]; j++) keep[j] = whole[j] = 1;
  };
  let position = null;
  const rowOf = (el) => {
    if (!position) {
      position = new Map();
      for (let i = 0; i < count; i++) position.set(all[i], i);
    }
    const i = position.get(el);
    return i === undefined ? -1 : i;
  };
  // Names, descriptions and owned children of any element may come from elsewhere.
  const keepNameSources = (el) => {
    for (const source of nameSources(el, REFERENCE_ATTRIBUTES)) {
      const row = rowOf(source);
      if (row >= 0) keepSubtree(row);
    }
  };
  const listed = []; // rows that may be listed: their nearby text is kept below
  for (let i = 0; i < count; i++) {
    if (!hits[i]) continue;
    keepWithAncestors(i);
    const el = all[i];
    const tag = el.localName;
    keepNameSources(el);
    // A custom checkbox: the visible label stands for a hidden real input.
    if (tag === "label" && el.control) {
      const row = rowOf(el.control);
      if (row >= 0) {
        keepSubtree(row);
        listed.push(row);
        keepNameSources(el.control);
      }
    }
    // Form ownership (SPEC S2): form="id" may point anywhere.
    if (el.form && el.form !== el) {
      const row = rowOf(el.form);
      if (row >= 0) keepWithAncestors(row);
    }
    if (mayBeListed(el)) {
      keepSubtree(i);
      listed.push(i);
    }
  }
  // Nearby text (SPEC S3, mao_page.dom.names.nearby_text): the closest preceding sibling that is
  // not rendered-hidden and has text. Siblings are kept whole, back to the first one that
  // surely has text (a text node of its own); it may lie anywhere, above the viewport too.
  const texted = new Int8Array(count); // 0 unknown, 1 surely has text, -1 not sure
  for (const i of listed) {
    const p = parents[i];
    if (p < 0) continue;
    const before = [];
    for (let j = p + 1; j < i; j = end[j] + 1) before.push(j);
    for (let k = before.length - 1; k >= 0; k--) {
      const j = before[k];
      keepSubtree(j);
      if (!texted[j]) texted[j] = surelyHasText(all[j]) ? 1 : -1;
      if (texted[j] > 0) break;
    }
  }
  // A field container's label (SPEC S3, mao_page.dom.names.container_label and stepper_label):
  // the small ancestors of a listed element, whole, as far up as Python may look.
  for (const i of listed) {
    let node = i;
    for (let level = 0; level < FIELD_CONTAINER_LEVELS; level++) {
      const p = parents[node];
      if (p < 0 || end[p] - p + 1 > FIELD_CONTAINER_ROWS) break;
      keepSubtree(p);
      node = p;
    }
  }
  // Items that appeared since the previous snapshot (SPEC S9, mao_page.snapshot.scanner.delegated_items):
  // a small container of an appeared element in the viewport is kept whole, so its siblings
  // out of view count the same in both walks.
  if (paintedBefore !== null) {
    for (let i = 0; i < count; i++) {
      if (!hits[i] || paintedBefore.has(all[i])) continue;
      const p = parents[i];
      if (p >= 0 && !whole[p] && end[p] - p + 1 <= ITEM_CONTAINER_ROWS) keepSubtree(p);
    }
  }
  // aria-owns anywhere re-parents content in the scan's tree (mao_page.dom.index: owner_of).
  for (const root of scopeRoots) {
    if (!root.querySelectorAll) continue;
    for (const owner of root.querySelectorAll("[aria-owns]")) {
      const row = rowOf(owner);
      if (row >= 0) keepWithAncestors(row);
    }
  }
  // Frames are numbered in walk order ("frame 2: Checkout"): every frame row is walked.
  for (const i of frameRows) keepWithAncestors(i);
  const kept = new Map();
  for (let i = 0; i < count; i++) if (keep[i]) kept.set(all[i], end[i] - i + 1);
  return kept;
}

// The rows Python needs to recompute one element's accessible name when a ref is used
// (SPEC R2: a changed name makes the ref stale; mao_page/snapshot/refs.py name_changed): the
// element's subtree, its <label>s and the elements its aria-labelledby points to, each with
// their subtrees. roots[i] is the
// row index of each walked root, hidden[i] whether that root is rendered-hidden; aliases
// lists the rows that are the element itself again (inside its own label).
function collectNameSources(el, limit) {
  const nodes = [];
  const facts = [];
  const roots = [];
  const hidden = [];
  const aliases = [];
  const seen = new Set();
  const generated = new Map();
  const mayGenerate = (node) => {
    const root = node.getRootNode();
    if (!generated.has(root)) generated.set(root, mayGenerateContent(root));
    return generated.get(root);
  };
  const walk = (root) => {
    if (seen.has(root)) return;
    roots.push(nodes.length);
    hidden.push(typeof root.checkVisibility === "function" ? !root.checkVisibility({ visibilityProperty: true, contentVisibilityAuto: false }) : false);
    const stack = [[root, -1]];
    while (stack.length && nodes.length < limit) {
      const [node, parent] = stack.pop();
      seen.add(node);
      const index = nodes.length;
      if (node === el && index > 0) aliases.push(index);
      const view = node.ownerDocument.defaultView;
      const style = view.getComputedStyle(node);
      const [kids, texts] = childrenAndTexts(node);
      const pseudo = style.display !== "none" && mayGenerate(node) ? pseudoOf(node, view) : 0;
      nodes.push(node);
      facts.push(factsOf(node, parent, -1, style, 0, texts, pseudo, false));
      for (let i = kids.length - 1; i >= 0; i--) stack.push([kids[i], index]);
    }
  };
  walk(el);
  for (const source of nameSources(el, ["aria-labelledby"])) walk(source);
  return { nodes, facts, roots, hidden, aliases };
}

// The browser's own answer to "is this rendered": display, visibility, content-visibility
// and opacity of the element and its ancestors, in one call. Opacity is not held against
// form fields: component libraries draw a transparent real input with a wrapper (the
// scanner lists those the same way; the hit test still checks what takes the pointer).
function isRendered(el) {
  if (!el.isConnected) return false;
  const r = el.getBoundingClientRect();
  const field = el.localName === "input" || el.localName === "select" || el.localName === "textarea";
  const seen = typeof el.checkVisibility === "function"
    ? el.checkVisibility({ opacityProperty: !field, visibilityProperty: true, contentVisibilityAuto: true })
    : r.width > 0;
  return seen && r.width > 0 && r.height > 0;
}

function viewport(win) {
  return [win.innerWidth, win.innerHeight, win.scrollX, win.scrollY, win.devicePixelRatio || 1];
}

function rowOf(el) {
  const view = el.ownerDocument.defaultView;
  return factsOf(el, -1, -1, view.getComputedStyle(el), 0, [], 0, false);
}

function walkAnswer(walk, painted) {
  const result = walk.result();
  if (painted) paintedBefore = painted;
  return { nodes: result.nodes, roots: result.roots, columns: columnsOf(result) };
}

async function walkAnswerInSlices(walk, painted) {
  const result = walk.result();
  if (painted) paintedBefore = painted;
  return { nodes: result.nodes, roots: result.roots, columns: await columnsInSlices(result) };
}

// The same walk in slices of WALK_SLICE_MS with the page's own work between them (SPEC E4:
// no SDK task over 50 ms): what worker mode uses, where the runtime waits for the answer
// anyway. A snapshot stays one moment of the page: a change to the document, its open shadow
// roots or frames while the walk pauses starts it over; the last attempt runs unbroken.
const WALK_SLICE_MS = 8;
const WALK_ATTEMPTS = 3;
// scheduler.yield() lets the page's input and rendering go first and then resumes the walk at
// once; chained zero timers would be clamped to 4 ms each after the fifth (HTML timers), a
// quarter of a second over a 10k-element walk's ~60 slices. A MessageChannel where the browser
// has no scheduler.yield.
const yieldForWalk = () => (globalThis.scheduler && typeof scheduler.yield === "function")
  ? scheduler.yield()
  : new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => resolve();
    channel.port2.postMessage(null);
  });
async function collectDocumentColumnsSliced(doc, exclude, viewportOnly, snapshot) {
  for (let attempt = 1; ; attempt++) {
    const unbroken = attempt === WALK_ATTEMPTS;
    const painted = snapshot ? new WeakSet() : null;
    const keep = viewportOnly ? viewportKeep(doc, exclude, painted) : null;
    const walk = documentWalk(doc, exclude, keep, painted);
    if (walk.step(unbroken ? Infinity : performance.now() + WALK_SLICE_MS)) return walkAnswerInSlices(walk, painted);
    const changes = watchDocumentChanges(doc, exclude);
    let done = false;
    try {
      while (!done && !changes.seen(walk.roots)) {
        await yieldForWalk();
        if (changes.seen(walk.roots)) break;
        done = walk.step(performance.now() + WALK_SLICE_MS);
      }
    } finally {
      changes.stop();
    }
    if (done) return walkAnswerInSlices(walk, painted);
  }
}

// Whether anything outside the SDK's own host changed in `doc` or the roots a walk has met.
function watchDocumentChanges(doc, exclude) {
  let changed = false;
  const watched = new Set();
  const observer = new MutationObserver((records) => {
    if (records.some((r) => !exclude || !exclude.contains(r.target))) changed = true;
  });
  const options = { subtree: true, childList: true, attributes: true, characterData: true };
  const watch = (root) => { if (!watched.has(root)) { watched.add(root); observer.observe(root, options); } };
  watch(doc);
  return {
    seen(roots) {
      for (const root of roots) watch(root);
      if (!changed) {
        const pending = observer.takeRecords();
        if (pending.some((r) => !exclude || !exclude.contains(r.target))) changed = true;
      }
      return changed;
    },
    stop: () => observer.disconnect(),
  };
}

// Column transport of a walk (collectDocumentColumns): numbers cross as typed arrays (a
// memcpy into Python), strings as one UTF-8 buffer of the distinct values (NUL-separated) with
// an index per cell, and the few structured columns (alt, options, pseudo) as a small JSON.
// The int array also carries, after the int columns, each row's subtree end (the last row of
// its subtree, rows being in preorder), the non-empty cells of the sparse string columns and
// the text parts (their strings in the table), which Python would otherwise compute or parse
// from JSON.
// Python keeps the columns and builds a row only when one is asked for (mao_page/dom/facts.py:
// rows_from_columns), a fraction of parsing the same rows from JSON. The column groups are
// facts.py's (FACT_INT_COLUMNS ..., generated from it).
// A string column crosses as pairs too when under this share of its cells is non-empty
// (two numbers per cell: 0.5 is a quarter of the rows).
const SPARSE_LIMIT = 0.5;

function columnsOf(result) {
  const steps = columnSteps(result);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

// The same in slices (worker mode): it reads only the walk's rows, never the DOM, so a pause
// cannot make it inconsistent.
async function columnsInSlices(result) {
  const steps = columnSteps(result);
  let deadline = performance.now() + WALK_SLICE_MS;
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() > deadline) {
      await yieldForWalk();
      deadline = performance.now() + WALK_SLICE_MS;
    }
  }
}

// columnsOf's work, pausing every 512 rows (a generator: the caller decides whether to yield).
function* columnSteps(result) {
  const facts = result.facts;
  const n = facts.length;
  const columnCount = FACT_STRING_COLUMNS.length;
  // Strings repeat a lot (tags, computed styles, empty attributes): each distinct one crosses
  // once, and the string columns are indexes into that table.
  // The empty string (most attribute cells) is entry 0, the array's initial value: no lookup.
  const table = new Map([["", 0]]);
  const strings = [""];
  const stringIndex = new Int32Array(n * columnCount);
  // Most attribute columns are empty but in a few rows (title, name, href, placeholder):
  // for such a column the (row, id) pairs of its other cells cross too, and Python fills
  // those few cells instead of looking up every row's.
  // pairs[c]: the [row, id, ...] pairs of column c while it may be sparse (sparseColumns[c]).
  const pairs = FACT_STRING_COLUMNS.map(() => []);
  const sparseColumns = new Uint8Array(columnCount).fill(1);
  const limit = SPARSE_LIMIT * n;
  // Row by row (each row's cells are read together), and a cell equal to the one above it in
  // its column (computed styles, tags in runs) reuses its id without a table lookup.
  const lastValue = new Array(columnCount).fill("");
  const lastId = new Int32Array(columnCount);
  // The number columns and the structured ones are gathered in the same pass.
  const intCount = FACT_INT_COLUMNS.length;
  const intColumns = new Int32Array(n * intCount);
  const floatCount = FACT_FLOAT_COLUMNS.length;
  const floats = new Float64Array(n * floatCount);
  const alt = [];
  const options = [];
  const pseudo = [];
  // Text parts ([position, text, ...] per row): all rows' parts as flat [position, string id]
  // pairs; per row the number of its first pair + 1 (0: no text); the rows with more than one
  // part as [first pair, pair count] (mixed content, a few rows). Parsed from JSON, most
  // rows' one-part lists were half the decode of a page.
  const textPairs = [];
  const textFirst = new Int32Array(n);
  const textSpans = [];
  const stringId = (value) => {
    let id = table.get(value);
    if (id === undefined) {
      id = strings.length;
      table.set(value, id);
      strings.push(value);
    }
    return id;
  };
  for (let i = 0; i < n; i++) {
    if ((i & 511) === 511) yield;
    const row = facts[i];
    for (let c = 0; c < intCount; c++) {
      const value = row[FACT_INT_COLUMNS[c]];
      intColumns[c * n + i] = value ? +value : 0;
    }
    for (let c = 0; c < floatCount; c++) floats[c * n + i] = row[FACT_FLOAT_COLUMNS[c]];
    if (row[FACT.ALT] !== null) alt.push(i, row[FACT.ALT]);
    if (row[FACT.OPTIONS] !== 0) options.push(i, row[FACT.OPTIONS]);
    if (row[FACT.PSEUDO] !== 0) pseudo.push(i, row[FACT.PSEUDO]);
    const parts = row[FACT.TEXT_PARTS];
    if (parts.length) {
      const first = textPairs.length / 2;
      textFirst[i] = first + 1;
      if (parts.length > 2) textSpans.push(first, parts.length / 2);
      for (let j = 0; j < parts.length; j += 2) textPairs.push(parts[j], stringId(parts[j + 1]));
    }
    for (let c = 0; c < columnCount; c++) {
      const value = row[FACT_STRING_COLUMNS[c]];
      if (value === "") continue;
      let id;
      if (value === lastValue[c]) {
        id = lastId[c];
      } else {
        id = stringId(value);
        lastValue[c] = value;
        lastId[c] = id;
      }
      stringIndex[c * n + i] = id;
      if (sparseColumns[c]) {
        const cells = pairs[c];
        cells.push(i, id);
        if (!(cells.length < limit)) {
          sparseColumns[c] = 0;
          cells.length = 0;
        }
      }
    }
  }
  let pairCount = 0;
  for (let c = 0; c < columnCount; c++) {
    if (!(pairs[c].length < limit)) sparseColumns[c] = 0; // no rows at all: dense (and empty)
    pairCount += pairs[c].length; // a dense column's pairs were dropped
  }
  // ints: the int columns, the subtree ends, then per string column the count of its pair
  // numbers (-1 when it crosses dense) and the [row, id, ...] pairs; then the text parts: the
  // count of their numbers and the [position, id, ...] pairs, each row's first pair + 1, the
  // count of the multi-part numbers and the [first pair, pair count, ...] of those rows.
  const sparseSize = columnCount + pairCount;
  const textSize = 2 + textPairs.length + n + textSpans.length;
  const ints = new Int32Array(n * (intCount + 1) + sparseSize + textSize);
  ints.set(intColumns);
  let k = n * intCount;
  // end[i]: the last row of i's subtree (PARENT is the first int column).
  const endAt = k;
  for (let i = 0; i < n; i++) ints[endAt + i] = i;
  for (let i = n - 1; i > 0; i--) {
    const p = ints[i];
    if (p >= 0 && ints[endAt + i] > ints[endAt + p]) ints[endAt + p] = ints[endAt + i];
  }
  k = endAt + n;
  for (let c = 0; c < columnCount; c++) {
    const cells = pairs[c];
    ints[k++] = sparseColumns[c] ? cells.length : -1;
    for (let j = 0; j < cells.length; j++) ints[k++] = cells[j];
  }
  ints[k++] = textPairs.length;
  ints.set(textPairs, k);
  k += textPairs.length;
  ints.set(textFirst, k);
  k += n;
  ints[k++] = textSpans.length;
  ints.set(textSpans, k);
  // The rows a viewport-limited walk kept only part of: [row, rows of its whole subtree, ...].
  const partial = [];
  if (result.fullRows) {
    for (let i = 0; i < n; i++) {
      const size = result.fullRows[i];
      if (size !== ints[endAt + i] - i + 1) partial.push(i, size);
    }
  }
  return {
    count: n,
    ints,
    floats,
    strings: utf8.encode(strings.join("\0")),
    stringCount: strings.length,
    stringIndex,
    json: utf8.encode(JSON.stringify([result.scopes, result.frames, alt, options, pseudo, partial])),
    // The same walk as JSON rows, for the rare page whose strings hold a NUL. UTF-8 bytes:
    // copying a Uint8Array into Python is a memcpy, while a JS string of megabytes into a
    // Python str cost ~20 ms at 8k elements (measured; docs/performance.md).
    rowsJson: () => utf8.encode(JSON.stringify([result.facts, result.scopes, result.frames, partial])),
  };
}

Object.assign(MaoDom, {
  collectDocument, collectNameSources, isRendered, viewport, rowOf, viewportKeep,
  // `snapshot`: this walk is a page_inspect's, whose painted elements the next one compares with.
  collectDocumentColumns: (doc, exclude, viewportOnly, snapshot) => {
    const painted = snapshot ? new WeakSet() : null;
    const walk = documentWalk(doc, exclude, viewportOnly ? viewportKeep(doc, exclude, painted) : null, painted);
    walk.step(Infinity);
    return walkAnswer(walk, painted);
  },
  collectDocumentColumnsSliced,
  collectNameSourcesJson: (el, limit) => {
    const result = collectNameSources(el, limit);
    return { nodes: result.nodes, json: JSON.stringify([result.facts, result.roots, result.hidden, result.aliases]) };
  },
});
