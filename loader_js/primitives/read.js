// Reading the page's text for page_extract and page_find (mao_page/reading.py).
//
// One walk of the composed tree (open shadow roots with slots in assignment order, same-origin
// frames in place: collect.js's composedChildNodes and collectFrameDocument) returns what the
// browser renders as a flat list, serialised once:
//   a string                      a text node's text (raw; Python collapses white space)
//   [tag, display, role, flags, extra, node, listed]   an element starts; its content follows
//   0                             the element ends
// What is not rendered is not read at all, like innerText: display:none subtrees, the
// content of closed <details> and content-visibility:hidden, text whose computed visibility is
// not visible, subtrees with opacity 0 (the scanner's "transparent": nothing is painted), and
// the SDK's own UI (`exclude`, as in collectDocument). Form fields are read as their tag only:
// their values (and a textarea's text, a select's options) never leave this file.
// Everything else is a fact for Python to decide on: which content is chrome, aria-hidden,
// page-owner private, or a sensitive editable field, and how it renders as Markdown.

const READ_ARIA_HIDDEN = 1;
const READ_PRIVATE = 2; // data-mao-private or data-mao-ignore on the element
const READ_PRE = 4; // white space is preserved (pre, pre-wrap, pre-line, break-spaces)
const READ_EDITABLE_ROOT = 8; // contenteditable, its parent not
const READ_FRAME = 16; // a same-origin frame: its document's body follows as content
// Elements read without their content: their children are values, options or graphics.
const READ_LEAF_TAGS = new Set([
  "input", "textarea", "select", "option", "optgroup", "datalist", "img", "svg", "math", "canvas", "video", "audio",
  "object", "embed", "picture", "meter", "progress", "br", "hr", "wbr",
]);
const readEncoder = new TextEncoder();

function readExtra(el, tag) {
  if (tag === "a" || tag === "area") return el.hasAttribute("href") ? String(el.href) : "";
  if (tag === "img") return el.getAttribute("alt") ?? "";
  if (tag === "td" || tag === "th") return `${el.colSpan || 1},${el.rowSpan || 1}`;
  return el.getAttribute("aria-level") ?? (tag === "svg" ? el.getAttribute("aria-label") ?? "" : "");
}

// `root`: a document (its body) or an element (its subtree). `listed`: elements whose
// position in that array is reported on their item (page_find maps hits to refs), or null.
// `textLimit`: stop reading after about this many characters of text (`truncated`).
function readText(root, exclude, listed, textLimit) {
  const start = root.nodeType === 9 ? root.body || root.documentElement : root;
  const items = [];
  const nodes = [];
  const listedAt = new Map();
  if (listed) for (let i = 0; i < listed.length; i++) listedAt.set(listed[i], i);
  let chars = 0;
  let truncated = false;
  // Explicit stack of [node, parent element's style]; 0 marks where an element ends.
  const stack = start ? [[start, null]] : [];
  while (stack.length) {
    const entry = stack.pop();
    if (entry === 0) {
      items.push(0);
      continue;
    }
    const [node, parentStyle] = entry;
    if (node.nodeType === 3) {
      if (parentStyle === null || parentStyle.visibility === "visible") {
        const text = node.data;
        if (text) {
          items.push(text);
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
    const style = el.ownerDocument.defaultView.getComputedStyle(el);
    const display = style.display;
    if (display === "none" || parseFloat(style.opacity) <= 0) continue;
    const tag = el.localName;
    let flags = 0;
    if (el.getAttribute("aria-hidden") === "true") flags |= READ_ARIA_HIDDEN;
    if (el.hasAttribute("data-mao-private") || el.hasAttribute("data-mao-ignore")) flags |= READ_PRIVATE;
    const ws = style.whiteSpace;
    if (ws.startsWith("pre") || ws === "break-spaces") flags |= READ_PRE;
    if (el.isContentEditable === true && !(el.parentElement && el.parentElement.isContentEditable)) flags |= READ_EDITABLE_ROOT;
    let inner = null;
    if (tag === "iframe" || tag === "frame") {
      const doc = collectFrameDocument(el);
      inner = doc ? doc.body || doc.documentElement : null;
      if (inner) flags |= READ_FRAME;
    }
    const at = listedAt.get(el);
    items.push([tag, display, el.getAttribute("role") || "", flags, readExtra(el, tag), nodes.length, at === undefined ? -1 : at]);
    nodes.push(el);
    stack.push(0);
    if (inner) {
      stack.push([inner, null]);
      continue;
    }
    if (READ_LEAF_TAGS.has(tag) || style.contentVisibility === "hidden") continue;
    let kids = composedChildNodes(el);
    if (tag === "details" && !el.open) {
      // Only the summary of a closed <details> is rendered.
      const summary = Array.prototype.find.call(el.children, (child) => child.localName === "summary");
      kids = summary ? [summary] : [];
    }
    for (let i = kids.length - 1; i >= 0; i--) stack.push([kids[i], style]);
  }
  // Close what a truncated walk left open, so the list stays well formed.
  if (truncated) for (const entry of stack) if (entry === 0) items.push(0);
  return { nodes, truncated, json: readEncoder.encode(JSON.stringify(items)) };
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
