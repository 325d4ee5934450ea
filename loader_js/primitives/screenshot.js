// Screenshot: render the viewport from the DOM with @zumer/snapdom (see common.js).
//
// Python (mao_page.screenshot) decides what is masked, what is labelled, the output size,
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
  if (job.masked.has(node)) return standIn(node, "div", MASK_FILL);
  const tag = node.localName;
  if (tag === "iframe" || tag === "frame") {
    let doc = null;
    try { doc = node.contentDocument; } catch (error) { doc = null; }
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
