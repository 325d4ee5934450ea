// Screenshot: render the viewport from the DOM with @zumer/snapdom (see common.js).
//
// Python (mao_page.read.screenshot) decides what is masked, what is labelled, the output size,
// format and quality; these functions only run the library, draw on the output canvas and
// report what could not be drawn. The library is imported on the first screenshot, never at
// start-up; it is served by our backend next to Pyodide (SPEC E3), never from a CDN.
//
// Layout pitfalls of snapdom 3.1.1 this works around (measured against Chromium's own
// screenshots, see tests/browser/test_screenshot.py):
// - clip "viewport" on <html> loses a first child's margin that collapses through <body>,
//   and pruning the subtrees above the viewport loses their collapsed margins: the image
//   shifts by tens of pixels. Capturing <body> with a clip from the top of the page down to
//   the bottom of the viewport, then cropping the viewport, is pixel-exact on our fixtures.
// - exclude mode "hide" keeps a spacer; the SDK host must be absent, so it is "remove".
// - its iframe and placeholder handling ignores the element's inline layout; we hand it
//   stand-ins with the element's own box instead (resolveNode).
// - so that a page scrolled far down does not pay for cloning everything above the viewport,
//   resolveNode prunes subtrees that end well above it (aboveViewportStandIn): an empty box
//   with the subtree's border-box size and the margins it contributes to its neighbours
//   after collapsing, only where that is exactly computable; anything else is cloned.

// Resolved while the loader script runs (document.currentScript is only set then); the
// build step stamps the build id, so the library URL is versioned like every other asset.
const SCREENSHOT_LIBRARY_URL = (() => {
  const script = document.currentScript;
  return script ? new URL("__MAO_BUILD_ID__/snapdom.mjs", new URL(".", script.src)).href : null;
})();
const MAX_FRAME_DEPTH = 3;
const MASK_FILL = "#2b2b2b";
const UNRENDERED_FILL = "repeating-linear-gradient(45deg, #d9d9d9 0 6px, #bdbdbd 6px 12px)";

let screenshotLibrary = null; // Promise of the snapdom function, shared by every screenshot

function loadScreenshotLibrary() {
  if (!screenshotLibrary) {
    if (!SCREENSHOT_LIBRARY_URL) return Promise.reject(new Error("the screenshot library URL is unknown"));
    screenshotLibrary = import(SCREENSHOT_LIBRARY_URL).then((module) => module.snapdom);
    // A failed import is retried on the next screenshot rather than cached.
    screenshotLibrary.catch(() => { screenshotLibrary = null; });
  }
  return screenshotLibrary;
}

// The part of an element's border box that is visible in the top-level viewport, in its
// CSS pixels: clipped by each enclosing frame's content box and the top viewport.
function visibleRect(el) {
  let r = el.getBoundingClientRect();
  let left = r.left, top = r.top, right = r.right, bottom = r.bottom;
  let view = el.ownerDocument.defaultView;
  for (;;) {
    left = Math.max(left, 0); top = Math.max(top, 0);
    right = Math.min(right, view.innerWidth); bottom = Math.min(bottom, view.innerHeight);
    const frame = view.frameElement;
    if (!frame) break;
    const fr = frame.getBoundingClientRect();
    const style = frame.ownerDocument.defaultView.getComputedStyle(frame);
    const dx = fr.left + frame.clientLeft + parseFloat(style.paddingLeft);
    const dy = fr.top + frame.clientTop + parseFloat(style.paddingTop);
    left += dx; right += dx; top += dy; bottom += dy;
    view = frame.ownerDocument.defaultView;
  }
  if (right <= left || bottom <= top) return null;
  return [left, top, right - left, bottom - top];
}

// Whether pixels of a canvas, video or image can be read back (false: cross-origin data
// would taint the output). Draws into a 1x1 scratch canvas and reads that one pixel.
function isReadable(el) {
  const scratch = document.createElement("canvas");
  scratch.width = 1;
  scratch.height = 1;
  const ctx = scratch.getContext("2d");
  try {
    ctx.drawImage(el, 0, 0, 1, 1);
    ctx.getImageData(0, 0, 1, 1);
    return true;
  } catch (error) {
    if (error && error.name === "SecurityError") return false;
    return true; // nothing drawable yet (e.g. a video without data): nothing to lose
  }
}

// An element with the source's outer box and nothing inside: what snapdom renders in place
// of a masked field or a surface it cannot copy, so the layout around it is unchanged.
function standIn(source, tag, background) {
  const style = source.ownerDocument.defaultView.getComputedStyle(source);
  const el = document.createElement(tag);
  const display = style.display === "inline" ? "inline-block" : style.display;
  el.style.cssText =
    `display:${display};box-sizing:border-box;width:${source.offsetWidth}px;height:${source.offsetHeight}px;` +
    `vertical-align:${style.verticalAlign};margin:${style.margin};border:${style.border};` +
    `border-radius:${style.borderRadius};background:${background};`;
  return el;
}

// --- Pruning what lies above the viewport -------------------------------------------------
//
// The library's own pruning (its clip test, then a hidden clone of the element with a fixed
// size and margins guessed from the gaps to its siblings) shifts what follows by tens of
// pixels: it rounds sizes, ignores negative gaps, and loses margins that collapse with a
// first or last child. So the library is given a clip from the top of the page (it prunes
// nothing above the viewport) and this prunes instead, exactly or not at all. A subtree is
// replaced when all of this holds, and cloned as before (its children then get the same
// test) otherwise:
// - every box in it (border box and scrollable overflow) ends PRUNE_MARGIN px above the
//   viewport (that margin is for shadows and outlines painting outside a box);
// - its root is an in-flow block-level box (display block, flow-root, flex, grid or table;
//   position static or relative; no float, no clear) of nonzero height and untransformed size,
//   in a block container (not multi-column) or a grid;
// - nothing in it creates, sets or increments a CSS counter, and no list item in it counts in
//   a list outside it (later numbers would change);
// - no float in it reaches below the root's bottom (it would push later lines aside);
// - in a block container, the margins it contributes after collapsing through its first and
//   last in-flow children can be worked out (see collapsedMargin), else it is cloned.
// The stand-in is a plain empty block, so it takes no part in float avoidance and collapses
// with its neighbours exactly as the subtree's outer margins did. In a grid, margins do not
// collapse; the stand-in keeps the item's placement properties and its used size.
const PRUNE_MARGIN = 256;
const BLOCK_CONTAINERS = new Set(["block", "flow-root", "list-item", "inline-block", "table-cell"]);
const PRUNABLE_DISPLAYS = new Set(["block", "flow-root", "flex", "grid", "table"]);
const MAX_COLLAPSE_DEPTH = 32;

function establishesBfc(style) {
  if (style.display !== "block" && style.display !== "list-item") return true;
  if (style.float !== "none" || style.position === "absolute" || style.position === "fixed") return true;
  const scrolls = (v) => v === "hidden" || v === "auto" || v === "scroll";
  if (scrolls(style.overflowX) || scrolls(style.overflowY)) return true;
  if (/\b(layout|paint|content|strict)\b/.test(style.contain || "")) return true;
  return style.columnCount !== "auto" || style.columnWidth !== "auto";
}

// The first (or last) in-flow child whose margin collapses with the parent's: an element;
// null when there is none, or when a line box comes first (text, or an inline box with
// width) and stops the collapsing; false when it cannot be told for sure (an empty inline
// box, display: contents, preserved white space).
function edgeChild(el, style, last) {
  const view = el.ownerDocument.defaultView;
  const preserves = /^(pre|pre-wrap|break-spaces|pre-line)$/.test(style.whiteSpace);
  const nodes = el.childNodes;
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[last ? nodes.length - 1 - i : i];
    if (node.nodeType === 3) {
      if (/\S/.test(node.data)) return null;
      if (preserves && node.data.length) return false;
      continue;
    }
    if (node.nodeType !== 1) continue;
    const cs = view.getComputedStyle(node);
    if (cs.display === "none" || cs.position === "absolute" || cs.position === "fixed" || cs.float !== "none") continue;
    if (cs.display === "contents") return false;
    if (cs.display.startsWith("inline") || cs.display.startsWith("ruby")) {
      return node.getBoundingClientRect().width > 0 ? null : false;
    }
    return node;
  }
  return null;
}

// The margin `el` contributes at its top (or bottom) once collapsed with the chain of first
// (last) in-flow children it collapses with: the largest positive plus the most negative.
// null when unsure (a self-collapsing child, clearance, a bottom edge whose height is not
// auto or has a minimum).
function collapsedMargin(el, style, bottom) {
  const side = bottom ? "Bottom" : "Top";
  const margins = [parseFloat(style["margin" + side]) || 0];
  let cur = el;
  let cs = style;
  for (let depth = 0; depth < MAX_COLLAPSE_DEPTH; depth++) {
    if (establishesBfc(cs) || parseFloat(cs["border" + side + "Width"]) || parseFloat(cs["padding" + side])) break;
    if (bottom) {
      let height = null;
      try { height = String(cur.computedStyleMap().get("height")); } catch (error) { return null; }
      if (height !== "auto") break;
      if (cs.minHeight !== "0px" && cs.minHeight !== "auto") return null;
    }
    const child = edgeChild(cur, cs, bottom);
    if (child === false) return null;
    if (child === null) break;
    const childStyle = cur.ownerDocument.defaultView.getComputedStyle(child);
    if (childStyle.clear !== "none" || child.getBoundingClientRect().height === 0) return null;
    margins.push(parseFloat(childStyle["margin" + side]) || 0);
    cur = child;
    cs = childStyle;
    if (depth === MAX_COLLAPSE_DEPTH - 1) return null;
  }
  return Math.max(0, ...margins) + Math.min(0, ...margins);
}

const hasCounters = (cs) => cs.counterIncrement !== "none" || cs.counterReset !== "none" || cs.counterSet !== "none";

// Whether a style sheet of `doc` may give ::before, ::after or ::marker a counter property
// (then every pruned element's pseudo-elements are checked too). A sheet it cannot read
// (cross-origin) counts as yes. Asked once per document and capture.
function sheetsMayCountInPseudos(doc) {
  const pseudo = /::?(before|after|marker)\b/;
  const scan = (rules) => {
    for (const rule of rules) {
      if (rule.styleSheet && scanSheet(rule.styleSheet)) return true;
      const style = rule.style;
      if (style && (style.counterIncrement || style.counterSet || style.counterReset) &&
          pseudo.test(rule.selectorText || "")) return true;
      if (rule.cssRules && rule.cssRules.length && scan(rule.cssRules)) return true;
    }
    return false;
  };
  const scanSheet = (sheet) => {
    let rules;
    try { rules = sheet.cssRules; } catch (error) { return true; }
    return rules ? scan(rules) : false;
  };
  for (const sheet of [...doc.styleSheets, ...(doc.adoptedStyleSheets || [])]) if (scanSheet(sheet)) return true;
  return false;
}

// Whether nothing under `root` paints within PRUNE_MARGIN of the viewport or leaks layout
// (counters, list numbering, floats reaching below it). Every element is read once.
const pseudoCounts = (el, view) => ["::before", "::after", "::marker"].some((p) => hasCounters(view.getComputedStyle(el, p)));

function subtreeIsInert(root, rootRect, view, pseudos) {
  const limit = -PRUNE_MARGIN;
  if (pseudos && pseudoCounts(root, view)) return false;
  const walker = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
  while (walker.nextNode()) {
    const el = walker.currentNode;
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0 && !el.firstElementChild) continue;
    if (Math.max(r.bottom, r.top + (el.scrollHeight || 0)) > limit) return false;
    const cs = view.getComputedStyle(el);
    if (hasCounters(cs)) return false;
    if (pseudos && pseudoCounts(el, view)) return false;
    if (cs.display === "list-item" && !/^(ol|ul|menu|dir)$/.test(el.parentElement ? el.parentElement.localName : "")) return false;
    if (cs.float !== "none" && r.bottom + (parseFloat(cs.marginBottom) || 0) > rootRect.bottom) return false;
  }
  return true;
}

// An empty box standing in for `node` when the whole subtree lies above the viewport (see
// above), else undefined (the library clones it).
function aboveViewportStandIn(node, job) {
  const r = node.getBoundingClientRect();
  if (r.top + Math.max(r.height, node.scrollHeight || 0) > -PRUNE_MARGIN || r.height <= 0) return undefined;
  const parent = node.parentElement;
  if (!parent) return undefined;
  const view = node.ownerDocument.defaultView;
  const style = view.getComputedStyle(node);
  if (!PRUNABLE_DISPLAYS.has(style.display) || style.float !== "none" || style.clear !== "none") return undefined;
  if (style.position !== "static" && style.position !== "relative") return undefined;
  if (style.writingMode !== "horizontal-tb" || style.zoom !== "1" || hasCounters(style)) return undefined;
  if (Math.abs(node.offsetHeight - r.height) > 1 || Math.abs(node.offsetWidth - r.width) > 1) return undefined;
  const parentStyle = view.getComputedStyle(parent);
  const grid = parentStyle.display === "grid" || parentStyle.display === "inline-grid";
  if (!grid) {
    if (!BLOCK_CONTAINERS.has(parentStyle.display) || parentStyle.writingMode !== "horizontal-tb") return undefined;
    if (parentStyle.columnCount !== "auto" || parentStyle.columnWidth !== "auto") return undefined;
  }
  const doc = node.ownerDocument;
  if (!job.pseudoCounters.has(doc)) job.pseudoCounters.set(doc, sheetsMayCountInPseudos(doc));
  if (!subtreeIsInert(node, r, view, job.pseudoCounters.get(doc))) return undefined;
  let top, bottom;
  if (grid) {
    top = parseFloat(style.marginTop) || 0;
    bottom = parseFloat(style.marginBottom) || 0;
  } else {
    top = collapsedMargin(node, style, false);
    bottom = top === null ? null : collapsedMargin(node, style, true);
    if (top === null || bottom === null) return undefined;
  }
  const el = document.createElement("div");
  let css =
    `display:block;box-sizing:border-box;visibility:hidden;padding:0;border:0;float:none;clear:none;` +
    `width:${r.width}px;min-width:${r.width}px;max-width:${r.width}px;` +
    `height:${r.height}px;min-height:${r.height}px;max-height:${r.height}px;` +
    `margin:${top}px ${style.marginRight} ${bottom}px ${style.marginLeft};`;
  if (grid) {
    css += `grid-row-start:${style.gridRowStart};grid-row-end:${style.gridRowEnd};` +
      `grid-column-start:${style.gridColumnStart};grid-column-end:${style.gridColumnEnd};` +
      `order:${style.order};align-self:start;justify-self:start;`;
  }
  el.style.cssText = css;
  el.setAttribute("data-mao-pruned", "");
  return el;
}

function rootBackground(doc) {
  const transparent = (c) => !c || c === "transparent" || /^rgba\(.*,\s*0\)$/.test(c);
  const view = doc.defaultView;
  for (const el of [doc.documentElement, doc.body]) {
    if (!el) continue;
    const color = view.getComputedStyle(el).backgroundColor;
    if (!transparent(color)) return color;
  }
  return "#ffffff";
}

// One document's viewport as a canvas of its CSS size. `job` collects what happened.
async function captureDocument(snapdom, doc, job, depth) {
  const view = doc.defaultView;
  const width = view.innerWidth;
  const height = view.innerHeight;
  const canvas = document.createElement("canvas");
  canvas.width = width;
  canvas.height = height;
  job.documents.push(doc);
  const ctx = canvas.getContext("2d");
  ctx.fillStyle = rootBackground(doc);
  ctx.fillRect(0, 0, width, height);
  if (!doc.body) return canvas;
  const scrollX = view.scrollX;
  const scrollY = view.scrollY;
  const plugin = {
    name: "mao-embed-screenshot",
    resolveNode: (node) => resolveNode(snapdom, node, job, depth),
  };
  const result = await snapdom(doc.body, {
    clip: { x: scrollX, y: 0, width, height: scrollY + height },
    dpr: 1,
    backgroundColor: null,
    embedFonts: "auto",
    exclude: [(el) => el === job.exclude],
    excludeMode: "remove",
    plugins: [plugin],
    // Called with the clone's <img> and the URL the library could not read (no CORS);
    // returning nothing keeps its placeholder. The page's images with that URL are listed.
    fallbackURL: (info) => {
      if (info && info.src) job.failedSources.add(String(info.src));
      return "";
    },
  });
  for (const warning of result.warnings || []) job.warnings.add(String(warning.code));
  const image = await result.toCanvas({ crop: { x: 0, y: scrollY, width, height } });
  ctx.drawImage(image, 0, 0, width, height);
  image.width = 0; // release the intermediate bitmap now rather than at GC
  return canvas;
}

// Called by the library for every node it clones, and awaited each time: plain nodes get a
// plain `undefined` back, not a promise (an async function here cost every node of a 10k
// page extra promise turns); only a same-origin frame, drawn by a nested capture, waits.
function resolveNode(snapdom, node, job, depth) {
  if (node.nodeType !== 1) return undefined;
  if (job.masked.has(node)) return standIn(node, "div", MASK_FILL);
  if (job.prune) {
    const pruned = aboveViewportStandIn(node, job);
    if (pruned) {
      job.pruned++;
      return pruned;
    }
  }
  const tag = node.localName;
  if (tag === "iframe" || tag === "frame") {
    const doc = sameOriginDocument(node);
    if (!doc || !doc.defaultView || depth >= MAX_FRAME_DEPTH) {
      job.unrendered.push([node, doc ? "frame_too_deep" : "cross_origin_frame"]);
      return standIn(node, "div", UNRENDERED_FILL);
    }
    return frameImage(snapdom, node, doc, job, depth);
  }
  if ((tag === "canvas" || tag === "video") && !isReadable(node)) {
    job.unrendered.push([node, tag === "canvas" ? "tainted_canvas" : "cross_origin_video"]);
    return standIn(node, "div", UNRENDERED_FILL);
  }
  if (tag === "embed" || tag === "object") {
    job.unrendered.push([node, "plugin_content"]);
    return standIn(node, "div", UNRENDERED_FILL);
  }
  return undefined;
}

// A same-origin frame's viewport, captured on its own, as an image in the frame's place.
async function frameImage(snapdom, node, doc, job, depth) {
  const inner = await captureDocument(snapdom, doc, job, depth + 1);
  const img = standIn(node, "img", "transparent");
  const style = node.ownerDocument.defaultView.getComputedStyle(node);
  img.style.padding = style.padding;
  img.src = inner.toDataURL("image/png");
  inner.width = 0;
  await img.decode();
  return img;
}

function drawLabel(ctx, text, x, y) {
  ctx.font = "bold 11px system-ui, sans-serif";
  const width = ctx.measureText(text).width + 6;
  const top = Math.max(0, y - 14);
  ctx.fillStyle = "#d4145a";
  ctx.fillRect(x, top, width, 14);
  ctx.fillStyle = "#ffffff";
  ctx.textBaseline = "top";
  ctx.fillText(text, x + 3, top + 2);
}

// The library keeps a hidden, aria-hidden decode iframe in the page between captures; the
// page must look as it did before the screenshot, so it goes (the library recreates it when
// it finds it detached). Only that signature is removed, and only if it appeared during ours.
function removeLibraryLeftovers(doc, before) {
  if (!doc.body) return;
  for (const el of [...doc.body.children]) {
    if (!before.has(el) && el.localName === "iframe" && el.getAttribute("aria-hidden") === "true" &&
        el.style.visibility === "hidden" && el.style.left === "-9999px") el.remove();
  }
}

// Render the top-level viewport. `masks` are elements whose boxes are blanked (Python picks
// them); `labels` are [text, element] pairs drawn as ref tags. Returns the rendering, kept
// in JS until releaseRendering: Python encodes it once or more to meet its byte budget.
async function renderViewport(win, exclude, masks, labels) {
  const snapdom = await loadScreenshotLibrary();
  const started = performance.now();
  const doc = win.document;
  const job = {
    exclude,
    masked: new Set(masks),
    failedSources: new Set(),
    documents: [],
    unrendered: [],
    warnings: new Set(),
    prune: true,
    pruned: 0,
    pseudoCounters: new Map(),
  };
  // Boxes are measured before the clone, in the same task, so they match what is captured.
  const maskRects = masks.map((el) => visibleRect(el));
  const labelRects = labels.map(([, el]) => (el.isConnected ? visibleRect(el) : null));
  const before = new Set(doc.body ? doc.body.children : []);
  let canvas;
  try {
    canvas = await captureDocument(snapdom, doc, job, 0);
  } finally {
    removeLibraryLeftovers(doc, before);
  }
  const ctx = canvas.getContext("2d");
  // SPEC X3: the stand-ins already left the values out; solid boxes over the measured rects
  // cover whatever else the field painted (and fields the clone placed differently).
  ctx.fillStyle = MASK_FILL;
  for (const r of maskRects) if (r) ctx.fillRect(r[0] - 1, r[1] - 1, r[2] + 2, r[3] + 2);
  ctx.lineWidth = 2;
  labels.forEach(([text], i) => {
    const r = labelRects[i];
    if (!r) return;
    ctx.strokeStyle = "#d4145a";
    ctx.strokeRect(r[0] + 1, r[1] + 1, Math.max(r[2] - 2, 1), Math.max(r[3] - 2, 1));
    drawLabel(ctx, String(text), r[0], r[1]);
  });
  const unrendered = [];
  for (const [el, kind] of job.unrendered) {
    const r = visibleRect(el);
    if (r) unrendered.push([kind, ...r]);
  }
  if (job.failedSources.size) {
    for (const captured of job.documents) {
      for (const img of captured.images) {
        if (!job.failedSources.has(img.currentSrc) && !job.failedSources.has(img.src)) continue;
        const r = visibleRect(img);
        if (r) unrendered.push(["cross_origin_image", ...r]);
      }
    }
  }
  return {
    canvas,
    facts: [
      canvas.width, canvas.height, win.scrollX, win.scrollY, win.devicePixelRatio || 1,
      performance.now() - started,
    ],
    masked: maskRects,
    labelled: labelRects,
    unrendered,
    warnings: [...job.warnings],
  };
}

// Encode a rendering at a size and quality; returns a data URL. A canvas holding
// cross-origin pixels throws SecurityError here, which Python reports as screenshot_failed.
function encodeRendering(rendering, mime, quality, width, height) {
  const source = rendering.canvas;
  let target = source;
  if (width !== source.width || height !== source.height) {
    target = document.createElement("canvas");
    target.width = width;
    target.height = height;
    const ctx = target.getContext("2d");
    ctx.imageSmoothingEnabled = true;
    ctx.imageSmoothingQuality = "high";
    ctx.drawImage(source, 0, 0, width, height);
  }
  try {
    return quality == null ? target.toDataURL(mime) : target.toDataURL(mime, quality);
  } finally {
    if (target !== source) target.width = 0;
  }
}

function releaseRendering(rendering) {
  if (rendering && rendering.canvas) {
    rendering.canvas.width = 0;
    rendering.canvas = null;
  }
}

Object.assign(MaoDom, { loadScreenshotLibrary, renderViewport, encodeRendering, releaseRendering });
