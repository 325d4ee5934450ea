// Reading the page's text for page_extract and page_find (mao_page/read/reader.py, pagetext.py).
//
// One walk of the composed tree (open shadow roots with slots in assignment order, same-origin
// frames in place: collect.js's composedChildNodes, common.js's sameOriginDocument) returns what the
// browser renders as a tree, serialised once: an element is an item
//   [tag, display, role, flags, extra, order, listed, children]
// whose children are items and strings (its text, each run of white space squashed to one
// space as its item closes, except inside <pre>, whose text Python keeps as it is).
// Two kinds of item, the commonest on a page, are folded into text as they close, so that
// Python gets one string where it would get an item per element (mao_page.pagetext has the
// format): a link holding only text becomes READ_LINK href READ_LINK_TEXT text READ_LINK_END
// in its parent's text (its text alone without an href), and a table row whose cells hold
// only text becomes one string, each cell's text after READ_CELL (td) or READ_HEADER_CELL
// (th). For page_extract (`foldBlocks`) two more fold, outside <pre>: a table or row group
// whose rows all folded becomes one string, each row after READ_ROW, and a list whose items
// are plain <li> boxes holding only text one string, each item's text after READ_ITEM.
// Anything with a role, a flag, spans or a listed position keeps its item. These
// characters are taken out of the page's own text so that only the walk writes them.
// What is not rendered is not read at all, like innerText: display:none subtrees, the
// content of closed <details> and of hidden="until-found", text whose computed visibility is
// not visible, and the SDK's own UI (`exclude`, as in collectDocument). Two computed styles
// are read per element (display, and visibility for its text), as innerText needs: each more
// (opacity, content-visibility set by a style sheet) cost about as much as the rest of the
// walk, so text in an opacity-0 box is read, as innerText reads it. Form fields are read as
// their tag only: their values (and a textarea's text, a select's options) never leave here.
// Everything else is a fact for Python to decide on: which content is chrome, aria-hidden,
// page-owner private, or a sensitive editable field, and how it renders as Markdown.

// A node's positions (NODE_*), its flags (READ_ARIA_HIDDEN ... READ_BLOCKY) and the marks of
// folded text (READ_LINK ... READ_CELL) come from mao_page/read/pagetext.py (generated tables).
// White space other than single spaces (most text has none: replacing would copy it).
const READ_UNSQUASHED = /[\t\n\r\f]| [ \t\n\r\f]/;
const READ_RAW_TAG = "pre"; // its text is read as it is (Python fences it)
// The marks above, and NUL (Python's line break inside collapsed text).
const READ_MARK = /[\x00-\x03\x1c-\x1f]/;
const READ_MARKS = /[\x00-\x03\x1c-\x1f]/g;
const READ_LIST_TAGS = new Set(["ul", "ol", "menu"]);
const READ_ROW_GROUP_TAGS = new Set(["table", "thead", "tbody", "tfoot"]);
// The attributes readText reads (aria-hidden, data-mao-*, contenteditable, role, hidden).
const READ_MARKED = "[aria-hidden],[data-mao-private],[data-mao-ignore],[contenteditable],[role],[hidden]";
// Elements read without their content: their children are values, options or graphics.
const READ_LEAF_TAGS = new Set([
  "input", "textarea", "select", "option", "optgroup", "datalist", "img", "svg", "math", "canvas", "video", "audio",
  "object", "embed", "picture", "meter", "progress", "br", "hr", "wbr",
]);
const readEncoder = new TextEncoder();

// A space at the end of an item's content, unless there is one.
function readSpace(item) {
  const kids = item[NODE_CHILDREN];
  const last = kids.length - 1;
  if (last < 0 || typeof kids[last] !== "string") kids.push(" ");
  else if (!kids[last].endsWith(" ")) kids[last] += " ";
}

// Each run of white space in an item's own text as one space (HTML's white-space: normal;
// Python collapses again only where it joins texts).
function readSquash(item) {
  const kids = item[NODE_CHILDREN];
  for (let i = 0; i < kids.length; i++) {
    if (typeof kids[i] === "string" && READ_UNSQUASHED.test(kids[i])) kids[i] = kids[i].replace(ASCII_SPACE_RUN, " ");
  }
}

// The text of an item whose content is text only ("" for none), else null.
function readOnlyText(item) {
  const kids = item[NODE_CHILDREN];
  if (kids.length === 0) return "";
  return kids.length === 1 && typeof kids[0] === "string" ? kids[0] : null;
}

// A link that has just closed, as text in `parent` (whose last child it is), when it holds
// only text and nothing marks it out (role, flag, listed).
function readFoldLink(parent, link) {
  const text = readOnlyText(link);
  if (text === null || text.includes(READ_LINK)) return;
  const kids = parent[NODE_CHILDREN];
  kids.pop();
  const url = link[NODE_EXTRA];
  const folded = url ? READ_LINK + url + READ_LINK_TEXT + text + READ_LINK_END : text;
  const last = kids.length - 1;
  if (last >= 0 && typeof kids[last] === "string") kids[last] += folded;
  else kids.push(folded);
}

// A table row that has just closed, as one string, when its cells are plain td / th boxes
// holding only text (no spans, roles, flags or listed positions) and nothing else is in it
// but white space.
function readFoldRow(row) {
  const kids = row[NODE_CHILDREN];
  let folded = "";
  let cells = 0;
  for (const kid of kids) {
    if (typeof kid === "string") {
      if (NOT_ASCII_SPACE.test(kid)) return;
      continue;
    }
    const tag = kid[NODE_TAG];
    if ((tag !== "td" && tag !== "th") || kid[NODE_DISPLAY] !== "table-cell"
        || kid[NODE_ROLE] !== "" || kid[NODE_FLAGS] !== READ_BLOCKY || kid[NODE_EXTRA] !== ""
        || kid[NODE_LISTED] >= 0) return;
    const text = readOnlyText(kid);
    if (text === null) return;
    folded += (tag === "th" ? READ_HEADER_CELL : READ_CELL) + text;
    cells++;
  }
  if (cells) row[NODE_CHILDREN] = [folded];
}

// A list or row group that has just closed, as one string, when its children are plain
// `tag` boxes (li, or tr) holding only text, each after `mark`, with nothing else in it but
// white space; a row must have folded (its text starts with a cell's mark).
function readFoldBlocks(item, tag, mark) {
  const kids = item[NODE_CHILDREN];
  let folded = "";
  for (const kid of kids) {
    if (typeof kid === "string") {
      if (NOT_ASCII_SPACE.test(kid)) return;
      continue;
    }
    if (kid[NODE_TAG] !== tag || kid[NODE_ROLE] !== "" || kid[NODE_FLAGS] !== READ_BLOCKY
        || kid[NODE_LISTED] >= 0) return;
    const text = readOnlyText(kid);
    if (text === null || tag === "tr" && text[0] !== READ_CELL && text[0] !== READ_HEADER_CELL) return;
    folded += mark + text;
  }
  if (folded) item[NODE_CHILDREN] = [folded];
}

// The flags a subtree's root inherits from above it: reading one element must not return what
// reading the page would leave out (an aria-hidden or page-owner private region around it).
// Up through shadow hosts and same-origin frame elements.
function readAncestorFlags(el) {
  let flags = 0;
  for (let n = el.parentNode; n; ) {
    if (n.nodeType === 1) {
      if (n.getAttribute("aria-hidden") === "true") flags |= READ_ARIA_HIDDEN;
      if (n.hasAttribute("data-mao-private") || n.hasAttribute("data-mao-ignore")) flags |= READ_PRIVATE;
      n = n.parentNode;
    } else if (n.nodeType === 11 && n.host) {
      n = n.host;
    } else if (n.nodeType === 9) {
      n = n.defaultView && n.defaultView.frameElement;
    } else {
      n = n.parentNode;
    }
  }
  return flags;
}

function readExtra(el, tag, role) {
  if (tag === "a" || tag === "area") return el.hasAttribute("href") ? String(el.href) : "";
  if (tag === "img") return el.getAttribute("alt") ?? "";
  if (tag === "td" || tag === "th") return el.colSpan > 1 || el.rowSpan !== 1 ? `${el.colSpan},${el.rowSpan}` : "";
  return role === "heading" ? el.getAttribute("aria-level") ?? "" : "";
}

// `root`: a document (its body) or an element (its subtree). `listed`: elements whose
// position in that array is reported on their item (page_find maps hits to refs), or null.
// `textLimit`: stop reading after about this many characters of text (`truncated`).
// `inlineDisplays`, `inlineTags`: Python's choice of what gets an item. An element whose
// display is one of `inlineDisplays` gets none (its text joins its parent's) unless its tag is
// in `inlineTags`, it has a role or a flag, or it is listed: most of a page's elements are
// such spans, labels and buttons. An item gets READ_BLOCKY when it or anything inside it has a
// display outside `inlineDisplays` (its content does not fit on one line).
// `foldBlocks`: fold lists and row groups too (see the top).
// Returns the root's item as JSON (null for an empty document), the elements behind the items
// (`nodes[order]`), the orders of the editable regions' roots and the count of items flagged
// aria-hidden or private.
function readText(root, exclude, listed, textLimit, inlineDisplays, inlineTags, foldBlocks) {
  const passDisplays = new Set(inlineDisplays);
  const keepTags = new Set(inlineTags);
  const start = root.nodeType === 9 ? root.body || root.documentElement : root;
  const inherited = root.nodeType === 9 ? 0 : readAncestorFlags(root);
  const nodes = [];
  const editable = [];
  const listedAt = new Map();
  if (listed) for (let i = 0; i < listed.length; i++) listedAt.set(listed[i], i);
  // Most elements carry none of the attributes the walk asks about: one query per tree scope
  // (document, shadow root, frame) finds those that do, instead of six reads per element.
  const marked = new Set();
  const markScope = (scope) => {
    for (const el of scope.querySelectorAll(READ_MARKED)) marked.add(el);
  };
  const markTree = (el) => {
    if (el.matches(READ_MARKED)) marked.add(el);
    markScope(el);
  };
  if (start) markTree(start);
  let chars = 0;
  let flagged = 0; // items flagged aria-hidden or private
  let truncated = false;
  let top = null; // the innermost open item; its children are item[NODE_CHILDREN]
  let rawDepth = 0; // open <pre> items
  const open = [];
  let result = null;
  // The document being read and its view and body; a frame's item keeps its parent's
  // document on `docs` while the frame's content is read.
  let doc = start ? start.ownerDocument : null;
  let view = doc && doc.defaultView;
  let body = doc && doc.body;
  const docs = [];
  // Explicit stack of nodes, with their parent element's style beside them (two arrays: no
  // pair allocated per node); 0 marks where an item ends, an item where an inline-block ends.
  const stack = start ? [start] : [];
  const styles = start ? [null] : [];
  while (stack.length) {
    const entry = stack.pop();
    const parentStyle = styles.pop();
    if (entry === 0) {
      const done = open.pop();
      top = open.length ? open[open.length - 1] : null;
      if (done[NODE_TAG] === READ_RAW_TAG) rawDepth--;
      else if (rawDepth === 0) readSquash(done);
      if (done[NODE_FLAGS] & READ_FRAME) {
        doc = docs.pop();
        view = doc.defaultView;
        body = doc.body;
      }
      if (top) {
        if (done[NODE_FLAGS] & READ_BLOCKY) top[NODE_FLAGS] |= READ_BLOCKY;
        if (done[NODE_ROLE] === "" && done[NODE_LISTED] < 0) {
          const tag = done[NODE_TAG];
          if (tag === "a" && done[NODE_FLAGS] === 0) readFoldLink(top, done);
          else if (tag === "tr" && done[NODE_FLAGS] === READ_BLOCKY) readFoldRow(done);
          else if (foldBlocks && rawDepth === 0) {
            if (READ_ROW_GROUP_TAGS.has(tag)) readFoldBlocks(done, "tr", READ_ROW);
            else if (READ_LIST_TAGS.has(tag)) readFoldBlocks(done, "li", READ_ITEM);
          }
        }
      }
      continue;
    }
    if (Array.isArray(entry)) {
      readSpace(entry); // the end of an inline-block without an item (see below)
      continue;
    }
    const node = entry;
    if (node.nodeType === 3) {
      if (top && (parentStyle === null || parentStyle.visibility === "visible")) {
        let text = node.data;
        if (text) {
          // White space only (indentation, but a line break inside <pre>).
          if (!NOT_ASCII_SPACE.test(text)) text = rawDepth ? text : " ";
          else if (READ_MARK.test(text)) text = text.replace(READ_MARKS, "");
          const kids = top[NODE_CHILDREN];
          const last = kids.length - 1;
          if (last >= 0 && typeof kids[last] === "string") kids[last] += text;
          else kids.push(text);
          chars += text.length;
          if (chars > textLimit) {
            truncated = true;
            break;
          }
        }
      }
      continue;
    }
    if (node.nodeType !== 1 || node === exclude) continue;
    const el = node;
    const style = view.getComputedStyle(el);
    const display = style.display;
    if (display === "none") continue;
    const tag = el.localName;
    let flags = passDisplays.has(display) ? 0 : READ_BLOCKY;
    if (!top) flags |= inherited;
    const isMarked = marked.has(el);
    if (isMarked) {
      if (el.getAttribute("aria-hidden") === "true") flags |= READ_ARIA_HIDDEN;
      if (el.hasAttribute("data-mao-private") || el.hasAttribute("data-mao-ignore")) flags |= READ_PRIVATE;
    }
    // An editable region's root carries the attribute (or is a designMode document's body).
    if ((isMarked && el.hasAttribute("contenteditable") || el === body) && el.isContentEditable === true
        && !(el.parentElement && el.parentElement.isContentEditable)) flags |= READ_EDITABLE_ROOT;
    let inner = null;
    if (tag === "iframe" || tag === "frame") {
      const frame = sameOriginDocument(el);
      inner = frame ? frame.body || frame.documentElement : null;
      if (inner) {
        flags |= READ_FRAME;
        markTree(inner);
      }
    }
    const role = isMarked ? el.getAttribute("role") || "" : "";
    const at = listedAt.get(el);
    const leaf = READ_LEAF_TAGS.has(tag);
    if (flags || role || at !== undefined || keepTags.has(tag) || !top) {
      const item = [tag, display, role, flags, readExtra(el, tag, role), nodes.length, at === undefined ? -1 : at, []];
      if (flags & READ_EDITABLE_ROOT) editable.push(nodes.length);
      if (flags & (READ_ARIA_HIDDEN | READ_PRIVATE)) flagged++;
      nodes.push(el);
      if (tag === READ_RAW_TAG) rawDepth++;
      if (top) top[NODE_CHILDREN].push(item);
      else result = item;
      open.push(item);
      top = item;
      stack.push(0);
      styles.push(null);
    } else if (leaf) {
      continue; // a form field or graphic inside text: nothing of it is read
    } else if (display !== "inline" && display !== "contents") {
      // An inline-block (a button, a badge) is a box of its own: its text is apart from its
      // neighbours' even with no white space between them in the markup.
      readSpace(top);
      stack.push(top);
      styles.push(null);
    }
    if (inner) {
      docs.push(doc);
      doc = inner.ownerDocument;
      view = doc.defaultView;
      body = doc.body;
      stack.push(inner);
      styles.push(null);
      continue;
    }
    // hidden="until-found" keeps the content in the page unrendered (content-visibility).
    if (leaf || isMarked && el.hasAttribute("hidden")) continue;
    const shadow = el.shadowRoot;
    if (shadow) {
      markScope(shadow);
      for (let kid = shadow.lastChild; kid; kid = kid.previousSibling) {
        stack.push(kid);
        styles.push(style);
      }
    } else if (tag === "details" && !el.open) {
      // Only the summary of a closed <details> is rendered.
      const summary = Array.prototype.find.call(el.children, (child) => child.localName === "summary");
      if (summary) {
        stack.push(summary);
        styles.push(style);
      }
    } else if (tag === "slot") {
      // Assigned nodes may come from outside the scopes queried so far (a read of one
      // element inside a shadow tree).
      const kids = composedChildNodes(el);
      for (let i = kids.length - 1; i >= 0; i--) {
        if (kids[i].nodeType === 1) markTree(kids[i]);
        stack.push(kids[i]);
        styles.push(style);
      }
    } else {
      for (let kid = el.lastChild; kid; kid = kid.previousSibling) {
        stack.push(kid);
        styles.push(style);
      }
    }
  }
  // A walk cut short still hands on what it read, and what that holds.
  if (truncated) {
    for (let i = open.length - 1; i > 0; i--) {
      if (open[i][NODE_FLAGS] & READ_BLOCKY) open[i - 1][NODE_FLAGS] |= READ_BLOCKY;
    }
    for (let i = 0; i < open.length && open[i][NODE_TAG] !== READ_RAW_TAG; i++) readSquash(open[i]);
  }
  return { nodes, truncated, editable, flagged, json: readEncoder.encode(JSON.stringify(result)) };
}

// A regular expression over page text, run in a Web Worker so that a pattern that backtracks
// without end can be stopped: JavaScript cannot interrupt a RegExp on its own thread, and
// Python's `re` has no time limit either. Resolves {hits: [start, end, ...], total} (at most
// `maxHits` pairs, counting stops at `countLimit`), {timedOut: true} after `timeoutMs`, or
// {unavailable: message} when the page's Content-Security-Policy forbids blob: workers.
// The pattern was compiled on this thread first (syntax errors answer at once).
const REGEX_WORKER = `onmessage = (event) => {
  const [text, pattern, maxHits, countLimit] = event.data;
  const re = new RegExp(pattern, "gi");
  const hits = [];
  let total = 0;
  let match;
  while ((match = re.exec(text)) !== null) {
    if (match[0].length === 0) { re.lastIndex++; continue; }
    total++;
    if (hits.length < maxHits * 2) hits.push(match.index, match.index + match[0].length);
    if (total >= countLimit) break;
  }
  postMessage({ hits, total });
};`;

function checkRegex(pattern) {
  try {
    new RegExp(pattern, "gi");
    return "";
  } catch (error) {
    return String(error.message || error);
  }
}

function regexSearch(win, text, pattern, maxHits, countLimit, timeoutMs) {
  return new Promise((resolve) => {
    let worker;
    let url;
    try {
      url = win.URL.createObjectURL(new win.Blob([REGEX_WORKER], { type: "text/javascript" }));
      worker = new win.Worker(url);
    } catch (error) {
      if (url) win.URL.revokeObjectURL(url);
      resolve({ unavailable: String(error.message || error) });
      return;
    }
    let done = false;
    const finish = (answer) => {
      if (done) return;
      done = true;
      win.clearTimeout(timer);
      worker.terminate();
      win.URL.revokeObjectURL(url);
      resolve(answer);
    };
    const timer = win.setTimeout(() => finish({ timedOut: true }), timeoutMs);
    worker.onmessage = (event) => finish(event.data);
    // A worker the CSP refuses fails here, after construction.
    worker.onerror = (event) => {
      event.preventDefault();
      finish({ unavailable: String(event.message || "the worker could not start") });
    };
    worker.postMessage([text, pattern, maxHits, countLimit]);
  });
}

Object.assign(MaoDom, { readText, checkRegex, regexSearch });
