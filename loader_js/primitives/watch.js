// Page watch (see common.js).

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

Object.assign(MaoDom, { watchPage });
