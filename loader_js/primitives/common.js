// Bulk DOM primitives handed to the Python runtime (mao_page.bridge).
//
// Why JavaScript at all: crossing the Pyodide proxy boundary costs 1-7 us per property
// (measured; docs/performance.md), so reading a page element by element from Python is 5-7x slower
// than one call per document that returns flat facts. These functions only READ facts or
// PERFORM one fixed, named act; every decision (what is interactive, its role, its name,
// whether it is visible, whether an action is allowed) is made in Python.
//
// The files in this folder are concatenated, common.js first, into one closure with the
// loader (mao_embed/assets.py); each adds its functions to MaoDom with Object.assign. Before
// them come the tables generated from the page's Python (FACT, WIDGET_ROLES, NO_TEXT_TAGS,
// the white space classes: mao_page/dom/jstables.py).
"use strict";

const MaoDom = {};
// Names and text (mao_page.dom.textrules.squash): ASCII whitespace runs to one space, trimmed;
// NBSP is content, as in the names Chromium computes.
const squash = (s) => (s || "").replace(ASCII_SPACE_RUN, " ").replace(/^ | $/g, "");
// Comparing with what was asked for (textrules.squash_any, fold): every space counts.
const squashAny = (s) => (s || "").replace(ANY_SPACE_RUN, " ").replace(/^ | $/g, "");
const fold = (s) => squashAny(s).toLowerCase();

// The document of a same-origin frame, or null: cross-origin (the browser refuses, by design;
// the walk reports the frame as a placeholder, SPEC S6), sandboxed, or not loaded.
function sameOriginDocument(frame) {
  try {
    const doc = frame.contentDocument;
    return doc && doc.documentElement ? doc : null;
  } catch (error) {
    return null;
  }
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

// The elements at `indices` (an Int32Array of row numbers) of a walk's `nodes`, in an array of
// their own: what a snapshot holds on to, so that it keeps its listed elements alive and not
// every element the walk visited (mao_page.bridge.browser.DocumentFacts.handles).
const nodesAt = (nodes, indices) => Array.from(indices, (i) => nodes[i]);

Object.assign(MaoDom, { describe, isConnected: (el) => el.isConnected === true, nodesAt });
