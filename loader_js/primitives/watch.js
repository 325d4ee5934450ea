// Page watch (see common.js).

// Page watch: counters only, read by Python on demand. Python is never called per
// mutation, and nothing is pushed anywhere (SPEC W4).
//
// A MutationObserver on a document does not see into shadow roots or other documents, so
// one observer also observes every open shadow root and every same-origin frame document
// of the composed tree (SPEC S6 scope; R1: pageVersion moves with mutations there too).
// They are found by a sweep at start, a sweep of every added subtree, the frames' `load`
// events (a frame that navigates gets a new document), and `adopt` with the roots a
// collect walk met (a custom element upgraded after insertion attaches its shadow root
// without any mutation record).
function watchPage(win, exclude) {
  const state = { mutations: 0, navigations: 0, lastMutation: performance.now() };
  const bump = () => { state.navigations += 1; state.lastMutation = performance.now(); };
  const changed = () => { state.mutations += 1; state.lastMutation = performance.now(); };
  const options = { subtree: true, childList: true, attributes: true, characterData: true };
  const observed = new WeakSet();
  const frames = new Set();
  const observer = new win.MutationObserver((records) => {
    for (const record of records) {
      if (exclude && composedContains(exclude, record.target)) continue;
      // The pointer's hover and active markers (input.js) are the SDK's, not the page's.
      if (record.type === "attributes" && INPUT_MARKERS.has(record.attributeName)) continue;
      changed();
      for (const node of record.addedNodes) if (node.nodeType === 1) observeTree(node);
    }
  });
  const observeRoot = (root) => {
    if (observed.has(root)) return;
    observed.add(root);
    observer.observe(root, options);
    observeTree(root);
  };
  const onFrameLoad = (event) => {
    changed();
    const doc = sameOriginDocument(event.target);
    if (doc) observeRoot(doc);
  };
  const watchFrame = (frame) => {
    if (!frames.has(frame)) {
      frames.add(frame);
      frame.addEventListener("load", onFrameLoad);
    }
    const doc = sameOriginDocument(frame);
    if (doc) observeRoot(doc);
  };
  // Open shadow roots and frames in the subtree of `node` (element, document or shadow root).
  function observeTree(node) {
    const stack = [node];
    while (stack.length) {
      const n = stack.pop();
      if (n === exclude) continue;
      if (n.nodeType === 1) {
        if (n.shadowRoot) observeRoot(n.shadowRoot);
        const tag = n.localName;
        if (tag === "iframe" || tag === "frame") watchFrame(n);
      }
      const kids = n.children;
      for (let i = 0; i < kids.length; i++) stack.push(kids[i]);
    }
  }
  observed.add(win.document);
  observer.observe(win.document, options);
  observeTree(win.document);
  const listeners = [["popstate", bump], ["hashchange", bump]];
  for (const [type, fn] of listeners) win.addEventListener(type, fn);
  // The Navigation API sees pushState/replaceState without patching the page's history.
  const nav = win.navigation;
  if (nav) nav.addEventListener("navigate", bump);
  return {
    read() {
      return [state.mutations, state.navigations, performance.now() - state.lastMutation, String(win.location.href), String(win.document.title)];
    },
    // Shadow roots and frame documents a walk found (collectDocument's `roots`).
    adopt(roots) {
      for (const root of roots) observeRoot(root);
    },
    dispose() {
      observer.disconnect();
      for (const frame of frames) frame.removeEventListener("load", onFrameLoad);
      frames.clear();
      for (const [type, fn] of listeners) win.removeEventListener(type, fn);
      if (nav) nav.removeEventListener("navigate", bump);
    },
  };
}

Object.assign(MaoDom, { watchPage });
