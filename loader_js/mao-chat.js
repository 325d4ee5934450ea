// Mao Embed loader: defines window.MaoChat (CONTRACT.md "Business page").
//
// It does only what must happen before Python runs: show the SDK host at once (SPEC E4),
// load Pyodide and our wheels from the backend that served this script (SPEC E3), and hand
// the options to the Python runtime (mao_page.runtime). Everything else lives in Python.
(() => {
  "use strict";

  const BUILD_ID = "__MAO_BUILD_ID__";
  const VERSION = "0.1.0";
  const DEFAULT_STARTUP_TIMEOUT_MS = 60000;
  const script = document.currentScript;
  const sdkBase = new URL(".", script ? script.src : location.href);
  const assetBase = new URL(BUILD_ID + "/", sdkBase).href;

  let pyodidePromise = null; // one interpreter per page; re-init after destroy reuses it
  let current = null; // the running instance: {host, controller, listeners, ...}
  let readyDeferred = makeDeferred();
  const handlers = new Map();

  function makeDeferred() {
    let resolve, reject;
    const promise = new Promise((res, rej) => { resolve = res; reject = rej; });
    // A rejected `ready` nobody awaited must not become an unhandled rejection in the page.
    promise.catch(() => {});
    return { promise, resolve, reject, settled: false };
  }

  function settle(deferred, ok, value) {
    if (deferred.settled) return;
    deferred.settled = true;
    (ok ? deferred.resolve : deferred.reject)(value);
  }

  function emit(event, detail) {
    for (const fn of handlers.get(event) || []) {
      try { fn(detail); } catch (error) { console.error("[mao-embed] event handler failed", error); }
    }
  }

  class StartupError extends Error {
    constructor(message, code) { super(message); this.name = "MaoEmbedStartupError"; this.code = code; }
  }

  function checkOptions(options) {
    const problems = [];
    if (!options || typeof options !== "object") return ["MaoChat.init needs an options object"];
    if (typeof options.serverUrl !== "string" || !/^https?:\/\//.test(options.serverUrl)) problems.push("serverUrl must be an http(s) URL");
    if (typeof options.agentId !== "string" || !options.agentId) problems.push("agentId must be a non-empty string");
    if (!options.user || typeof options.user.id !== "string" || !options.user.id) problems.push("user.id must be a non-empty string");
    if (typeof options.token !== "string" && typeof options.token !== "function") problems.push("token must be a string or a function returning a Promise of one");
    if (options.locale !== undefined && typeof options.locale !== "string") problems.push("locale must be a string such as 'en' or 'zh-CN'");
    if (options.authorization !== undefined && (typeof options.authorization !== "object" || options.authorization === null || Array.isArray(options.authorization))) problems.push("authorization must be an object {level, actions, policyVersion, confirmationTimeoutMs}");
    return problems;
  }

  // The SDK host: one element holding the panel (loader_js/primitives/ui.js), excluded from
  // every scan, screenshot and hit test. Its shadow root is OPEN on purpose (README "Panel
  // controls"): Playwright and assistive technology reach open roots only, and CONTRACT.md
  // promises tests can drive the panel by role and name. A closed root would not keep page
  // scripts out anyway (they can patch attachShadow before we run); what keeps them from
  // approving anything is that only `isTrusted` input with the card's nonce counts, and the
  // handlers live in this closure.
  function createHost(options) {
    const host = document.createElement("mao-embed-host");
    host.setAttribute("data-mao-embed-host", "");
    const root = host.attachShadow({ mode: "open" });
    const locale = MaoUi.pickLocale(options.locale, document);
    const ui = MaoUi.createPanel(root, document, locale, { collapsed: !!(options.ui && options.ui.collapsed) });
    (document.body || document.documentElement).appendChild(host);
    return { host, ui };
  }

  // Start-up begins at init(): downloads and wasm compiles run off the main thread, so starting
  // them at once costs the page nothing. What does block the main thread (instantiating the
  // runtime, copying the snapshot into it, Python itself) comes in separate tasks with yields
  // between them, so input that arrives meanwhile is handled between them (SPEC E4).
  const yieldToPage = () => new Promise((resolve) => setTimeout(resolve, 0));
  // A yield that puts the rest of start-up right behind what is waiting (input first), without
  // the 4 ms that chained timers cost: scheduler.yield() where the browser has it.
  const yieldBriefly = () => (globalThis.scheduler && typeof scheduler.yield === "function")
    ? scheduler.yield()
    : new Promise((resolve) => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => resolve();
      channel.port2.postMessage(null);
    });
  // Longest the loader runs Python before letting the page handle what is queued.
  const IMPORT_SLICE_MS = 40;
  // Importing pydantic and the SDK takes seconds on a cold load. After a standard-library image
  // the build's list says which modules, in the order they finish loading, so they are imported
  // one by one in slices with yields between: no task longer than the slowest single module.
  async function importInSlices(pyodide, names) {
    let sliceStart = performance.now();
    for (const name of names) {
      try {
        pyodide.pyimport(name).destroy();
      } catch (error) {
        return; // the boot import below reports it, with Python's own message
      }
      if (performance.now() - sliceStart > IMPORT_SLICE_MS) {
        await yieldBriefly();
        sliceStart = performance.now();
      }
    }
  }
  // Without that list (a fresh boot), the import is one synchronous block of seconds: it waits
  // for the page's own start-up (load, then idle).
  function whenPageIdle() {
    const idle = () => new Promise((resolve) =>
      typeof requestIdleCallback === "function" ? requestIdleCallback(() => resolve(), { timeout: 1000 }) : setTimeout(resolve, 0));
    if (document.readyState === "complete") return idle();
    return new Promise((resolve) => window.addEventListener("load", () => resolve(), { once: true })).then(idle);
  }
  const pyodideOptions = () => ({
    indexURL: assetBase,
    stdLibURL: assetBase + MaoImage.STDLIB,
    lockFileURL: assetBase + "pyodide-lock.json",
    stdout: (line) => console.debug("[mao-embed py]", line),
    stderr: (line) => console.warn("[mao-embed py]", line),
  });

  async function fetchOk(url) {
    const response = await fetch(url, { credentials: "omit" });
    if (!response.ok) throw new Error(`${url.slice(assetBase.length)}: HTTP ${response.status}`);
    return response;
  }

  // The booted-runtime image the build made (runtime-image.js, docs/startup.md): the heap of an
  // interpreter that has imported our packages, restored instead of starting Python. Every
  // download starts here, in parallel; nothing waits for anything it does not need.
  function fetchImage() {
    const meta = fetchOk(assetBase + "snapshot.json").then((r) => r.json());
    const createModule = import(assetBase + "pyodide.asm.mjs").then((m) => m.default);
    const snapshot = fetchOk(assetBase + "snapshot.bin").then((r) => r.arrayBuffer()).then((b) => new Uint8Array(b));
    const files = fetchOk(assetBase + "site-packages.tar").then((r) => r.arrayBuffer()).then((b) => MaoImage.untar(b));
    // A full image has imported the libraries' Python modules already and needs only their
    // code; a smaller one imports them after the restore, and Python's import wants the file.
    const dylibs = meta.then((m) => Promise.all(m.dylibs.map(async (path) => {
      if (m.scope === "full") return { path, module: await WebAssembly.compileStreaming(fetchOk(assetBase + "dylibs/" + path)) };
      const bytes = new Uint8Array(await (await fetchOk(assetBase + "dylibs/" + path)).arrayBuffer());
      return { path, bytes, module: await WebAssembly.compile(bytes) };
    })));
    for (const p of [meta, createModule, snapshot, files, dylibs]) p.catch(() => {}); // reported by restoreImage
    return { meta, createModule, snapshot, files, dylibs };
  }

  async function restoreImage(loadPyodide, image) {
    const meta = await image.meta;
    // Everything in /sdk/<build>/ comes from one build; a snapshot.json naming another build is
    // a stale or mixed-up deployment (Pyodide checks its own build id inside the snapshot too).
    if (meta.buildId !== BUILD_ID) throw new Error(`snapshot is from build ${meta.buildId}, this loader is build ${BUILD_ID}`);
    const snapshot = image.snapshot.then((bytes) => {
      if (bytes.length !== meta.bytes) throw new Error(`snapshot has ${bytes.length} bytes, expected ${meta.bytes}`);
      return bytes;
    });
    const prepared = MaoImage.prepare({
      createModule: await image.createModule, files: image.files, dylibs: image.dylibs,
      snapshot, expected: meta.layout, freshBits: meta.freshPages,
    });
    // The snapshot is passed as a promise: Pyodide starts fetching its wasm before awaiting it.
    const pyodide = await loadPyodide({ ...pyodideOptions(), ...prepared.options, _loadSnapshot: snapshot });
    MaoImage.afterRestore(pyodide._module, prepared.state, meta.handles);
    performance.mark("mao:pyodide-loaded");
    await yieldToPage();
    const restored = pyodide.pyimport("mao_page.image");
    restored.after_restore();
    restored.destroy();
    performance.mark("image:after-restore");
    return { pyodide, imported: meta.scope === "full", imports: meta.imports || [] };
  }

  async function bootFresh(loadPyodide) {
    const pyodide = await loadPyodide(pyodideOptions());
    performance.mark("mao:pyodide-loaded");
    await yieldToPage();
    await pyodide.loadPackage(["mao-embed-page"], { messageCallback: () => {}, errorCallback: (m) => console.warn("[mao-embed]", m) });
    performance.mark("mao:packages-loaded");
    return pyodide;
  }

  function loadRuntime() {
    if (!pyodidePromise) {
      pyodidePromise = (async () => {
        const image = fetchImage();
        const { loadPyodide } = await import(assetBase + "pyodide.mjs");
        let pyodide = null;
        let imported = false;
        let imports = [];
        try {
          ({ pyodide, imported, imports } = await restoreImage(loadPyodide, image));
          performance.mark("mao:snapshot-restored");
        } catch (error) {
          console.warn(`[mao-embed] memory snapshot not used (${error && error.message || error}); starting Python from scratch`);
          pyodide = await bootFresh(loadPyodide);
        }
        if (imported) await yieldToPage();
        else if (imports.length) await importInSlices(pyodide, imports);
        else await whenPageIdle();
        pyodide.pyimport("mao_page.runtime").destroy();
        await yieldToPage();
        return pyodide;
      })();
      pyodidePromise.catch(() => { pyodidePromise = null; });
    }
    return pyodidePromise;
  }

  // Under a CSP without 'wasm-unsafe-eval' loadPyodide() never settles (docs/embedding.md, CSP);
  // the violation event lets us fail at once with the reason instead of at the timeout.
  function watchCsp(fail) {
    const onViolation = (event) => {
      if (event.blockedURI === "wasm-eval" || /wasm/.test(event.violatedDirective || "") || String(event.blockedURI || "").startsWith(assetBase)) {
        fail(new StartupError(
          `Mao Embed cannot start: the page's Content-Security-Policy blocked ${event.blockedURI || "WebAssembly"} (${event.violatedDirective}). ` +
          `Allow script-src '${new URL(assetBase).origin}' 'wasm-unsafe-eval' and connect-src for the Mao Embed server.`, "csp_blocked"));
      }
    };
    document.addEventListener("securitypolicyviolation", onViolation);
    return () => document.removeEventListener("securitypolicyviolation", onViolation);
  }

  function init(options) {
    if (current) {
      console.warn("[mao-embed] MaoChat.init called twice; call MaoChat.destroy() first");
      return readyDeferred.promise;
    }
    if (readyDeferred.settled) readyDeferred = makeDeferred();
    const deferred = readyDeferred;
    const problems = checkOptions(options);
    if (problems.length) {
      settle(deferred, false, new StartupError("MaoChat.init: " + problems.join("; "), "invalid_options"));
      return deferred.promise;
    }
    const { host, ui } = createHost(options);
    const instance = { host, ui, controller: null, cleanup: [], destroyed: false };
    current = instance;
    const timeoutMs = Number(options.startupTimeoutMs) > 0 ? Number(options.startupTimeoutMs) : DEFAULT_STARTUP_TIMEOUT_MS;
    const fail = (error) => {
      if (deferred.settled) return;
      ui.setStatus("error");
      ui.showError(error.message);
      console.error("[mao-embed]", error.message);
      emit("error", { code: error.code || "startup_failed", message: error.message });
      settle(deferred, false, error);
    };
    instance.cleanup.push(watchCsp(fail));
    const timer = setTimeout(() => fail(new StartupError(
      `Mao Embed did not become ready within ${Math.round(timeoutMs / 1000)} s. Check that ${sdkBase.origin} is reachable, ` +
      `that this page's origin is allowed there, and that any Content-Security-Policy allows 'wasm-unsafe-eval'.`, "startup_timeout")), timeoutMs);
    instance.cleanup.push(() => clearTimeout(timer));

    const hostApi = {
      options,
      buildId: BUILD_ID,
      sdkVersion: VERSION,
      serverUrl: options.serverUrl,
      primitives: Object.freeze(MaoDom),
      sdkHost: host,
      ui,
      window,
      getToken: () => Promise.resolve(typeof options.token === "function" ? options.token() : options.token),
      emit,
      signalReady: (info) => {
        if (instance.destroyed) return;
        clearTimeout(timer);
        performance.mark("mao:session-ready");
        ui.chat("system", ui.text("ready"));
        settle(deferred, true, info && info.toJs ? info.toJs({ dict_converter: Object.fromEntries }) : info);
        emit("ready", {});
      },
      signalFailure: (code, message) => fail(new StartupError(message, code)),
    };

    loadRuntime()
      .then(async (pyodide) => {
        if (instance.destroyed) return;
        pyodide.registerJsModule("_mao_host", hostApi);
        const runtime = pyodide.pyimport("mao_page.runtime");
        instance.controller = await runtime.boot();
        // The heap size is for the start-up benchmark (bench/startup.py): what a page pays in memory.
        performance.mark("mao:python-ready", { detail: { wasmHeapBytes: pyodide._module.HEAPU8.length } });
        runtime.destroy();
        if (instance.destroyed) instance.controller.stop();
      })
      .catch((error) => fail(new StartupError("Mao Embed could not start: " + (error && error.message || error), "startup_failed")));
    return deferred.promise;
  }

  function destroy() {
    const instance = current;
    if (!instance) return;
    current = null;
    instance.destroyed = true;
    if (instance.controller) {
      try { instance.controller.stop(); } finally { instance.controller.destroy(); }
    }
    for (const undo of instance.cleanup) undo();
    instance.ui.destroy();
    instance.host.remove();
    settle(readyDeferred, false, new StartupError("MaoChat.destroy() was called", "destroyed"));
    emit("destroyed", {});
  }

  function on(event, fn) {
    if (!handlers.has(event)) handlers.set(event, new Set());
    handlers.get(event).add(fn);
    return () => handlers.get(event).delete(fn);
  }

  const api = {
    init,
    destroy,
    on,
    get ready() { return readyDeferred.promise; },
    get version() { return VERSION; },
  };
  Object.defineProperty(window, "MaoChat", { value: Object.freeze(api), configurable: false, writable: false });
})();
