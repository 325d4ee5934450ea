// Mao Embed loader: defines window.MaoChat (CONTRACT.md "Business page").
//
// It does only what must happen before Python runs: show the SDK host at once (SPEC E4),
// register the page's session with the backend (transport.js), boot the Python runtime on
// first use (SPEC E6: the panel opened, an agent's call, MaoChat.boot(); boot.js) from the
// backend that served this script (SPEC E6), and hand the options and the connection to the
// Python runtime (mao_page.runtime). Everything else lives in Python.
(() => {
  "use strict";

  const BUILD_ID = "__MAO_BUILD_ID__";
  const VERSION = "0.1.0";
  const DEFAULT_STARTUP_TIMEOUT_MS = 60000;
  // init({instructions}): the site's guidance for agents, capped (docs/site-tools.md).
  const MAX_INSTRUCTIONS_CHARS = 4000;
  const script = document.currentScript;
  const sdkBase = new URL(".", script ? script.src : location.href);
  const assetBase = new URL(BUILD_ID + "/", sdkBase).href;

  const runtime = MaoBoot.create(assetBase, BUILD_ID);
  // Where the page's Python runs (SPEC E6): in a Web Worker (the main thread where the page's
  // CSP allows no blob worker), or on the main thread when the page asks.
  const DEFAULT_MODE = "worker";
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
    if (options.boot !== undefined && options.boot !== "eager" && options.boot !== "on-demand") problems.push("boot must be \"eager\" or \"on-demand\" (the default)");
    if (options.instructions !== undefined && typeof options.instructions !== "string") problems.push("instructions must be a string");
    if (options.mode !== undefined && options.mode !== "worker" && options.mode !== "main-thread") problems.push("mode must be \"worker\" or \"main-thread\"");
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
  //
  // Booting on first use, the panel starts as its launcher unless ui.collapsed is false; the
  // user opening it, or using the open panel, boots the runtime (onIntent).
  function createHost(options, onIntent) {
    const host = document.createElement("mao-embed-host");
    host.setAttribute("data-mao-embed-host", "");
    const root = host.attachShadow({ mode: "open" });
    const locale = MaoUi.pickLocale(options.locale, document);
    const asked = options.ui && options.ui.collapsed;
    const collapsed = options.boot === "eager" ? !!asked : asked !== false;
    const ui = MaoUi.createPanel(root, document, locale, { collapsed, onIntent });
    (document.body || document.documentElement).appendChild(host);
    return { host, ui };
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

  // The page's site tools and instructions, sent when the session connects (if there are any)
  // and whenever a tool comes or goes: the backend lists them without booting the runtime
  // and tells MCP clients (tools/list_changed).
  function sendSiteContext(instance, always) {
    if (instance.destroyed || !instance.transport || !instance.transport.connected) return;
    const tools = MaoSiteTools.list();
    const instructions = typeof instance.options.instructions === "string" ? instance.options.instructions.slice(0, MAX_INSTRUCTIONS_CHARS) : "";
    if (!always && !tools.length && !instructions) return;
    instance.transport.send(MaoTransport.frame("site_context", { tools, instructions: instructions || undefined }));
  }

  function pageInfo() {
    return { url: String(location.href).slice(0, 8192), title: String(document.title || "").slice(0, 2000) };
  }

  // What the page's session holds before Python runs (SPEC E6): the connection, the frames
  // that arrived for the runtime, in order, each with the time it arrived, and the boot.
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
    const instance = {
      options, host: null, ui: null, transport: null, controller: null, cleanup: [], destroyed: false,
      queue: [], runtime: null, boot: null, failed: null,
      mode: options.mode || DEFAULT_MODE, worker: null, inflight: new Set(),
    };
    current = instance;
    const { host, ui } = createHost(options, (intent) => {
      if (intent === "hover") prefetch(instance);
      else boot(instance, "panel");
    });
    Object.assign(instance, { host, ui });
    ui.setStatus("standby");
    // SPEC B7: the tab's session, and the task its own action led here (tab.js).
    const tab = MaoTab.open([options.agentId, options.user.id].join("|"), host);
    instance.tab = tab;
    instance.cleanup.push(() => tab.close());
    if (tab.endedNotice) ui.chat("system", ui.text("task.ended." + tab.endedNotice));

    instance.deferred = deferred;
    const rejectReady = (error) => {
      if (deferred.settled) return;
      ui.setStatus("error");
      ui.showError(error.message);
      console.error("[mao-embed]", error.message);
      emit("error", { code: error.code || "startup_failed", message: error.message });
      settle(deferred, false, error);
    };
    // The runtime cannot be had on this page view: what waits for it is answered now.
    const fail = (error) => {
      if (!instance.failed) {
        instance.failed = error;
        answerWaiting(instance, error);
      }
      rejectReady(error);
    };
    instance.fail = fail;
    instance.cleanup.push(watchCsp(fail));

    instance.transport = MaoTransport.create(options.serverUrl, {
      agentId: options.agentId,
      user: { id: options.user.id, name: typeof options.user.name === "string" ? options.user.name : undefined },
      sdkVersion: VERSION,
      token: () => Promise.resolve(typeof options.token === "function" ? options.token() : options.token),
      tokenRefreshable: typeof options.token === "function",
      page: pageInfo,
      ready: () => instance.runtime !== null,
      resumeSessionId: tab.resumeSessionId,
    }, {
      welcome(sessionId) {
        sendSiteContext(instance, false);
        tab.welcomed(sessionId);
        if (instance.runtime) instance.runtime.welcome(sessionId);
        emit("session", { sessionId });
      },
      frame(text, message) {
        const isRequest = message && message.type === "page_tool_request";
        if (instance.runtime) {
          if (isRequest && instance.worker) instance.inflight.add(message.requestId);
          instance.runtime.frame(text, 0);
          return;
        }
        if (instance.failed) {
          if (isRequest) answerFailed(instance, message.requestId, instance.failed);
          return;
        }
        instance.queue.push({ text, at: performance.now(), requestId: isRequest ? message.requestId : null });
        if (isRequest) boot(instance, "agent");
      },
      dropped(reason) {
        // What waited for the boot belongs to the lost connection: the backend has answered
        // it (disconnected, may have applied); running it later would run it twice.
        instance.queue.length = 0;
        if (instance.runtime) instance.runtime.dropped(reason);
        else console.warn("[mao-embed] connection to the backend ended:", reason, "; reconnecting");
      },
      refused(code, message, final) {
        if (instance.runtime) { instance.runtime.refused(code, message, final); return; }
        const error = new StartupError(`Mao Embed was refused by the server (${code}): ${message}`, code);
        // A token function may get a token the next attempt accepts: only a final refusal
        // ends this page view's assistant.
        if (final) fail(error);
        else if (!deferred.settled) rejectReady(error);
        else { emit("error", { code, message }); ui.showError(error.message); }
      },
      state(name) {
        if (instance.runtime) instance.runtime.state(name);
      },
    });
    MaoSiteTools.setPanelOpener(() => ui.open());
    instance.cleanup.push(MaoSiteTools.onChange(() => sendSiteContext(instance, true)));
    instance.cleanup.push(MaoSiteTools.watchForms());
    instance.cleanup.push(() => MaoSiteTools.setPanelOpener(null));
    instance.transport.start();
    // The document unloads: the backend answers what is in flight `navigated` and keeps the
    // session for the tab's next page; from the back/forward cache this page comes back.
    const onPageHide = () => {
      tab.leave();
      instance.transport.leave();
    };
    // Back in the tab from the back/forward cache: the user's navigation, so a task ends.
    const onPageShow = (event) => {
      if (!event.persisted) return;
      tab.comeBack();
      instance.transport.comeBack();
      if (instance.runtime) instance.runtime.returned();
    };
    window.addEventListener("pagehide", onPageHide);
    window.addEventListener("pageshow", onPageShow);
    instance.cleanup.push(() => {
      window.removeEventListener("pagehide", onPageHide);
      window.removeEventListener("pageshow", onPageShow);
    });
    // A task that continues here shows its log at once, so the runtime boots now.
    if (tab.continuation) boot(instance, "navigation");
    else if (options.boot === "eager" || bootAsked) boot(instance, bootAsked || "eager");
    bootAsked = null;
    return deferred.promise;
  }

  // Requests that waited for a boot that failed get their answer now, not at their timeout.
  function answerWaiting(instance, error) {
    for (const { requestId } of instance.queue.splice(0)) {
      if (requestId !== null) answerFailed(instance, requestId, error);
    }
  }

  function answerFailed(instance, requestId, error) {
    if (typeof requestId !== "string") return;
    const crashed = error.code === WIRE.runtimeCrashed;
    instance.transport.send(MaoTransport.frame("page_tool_result", {
      requestId, success: false,
      error: crashed
        ? { code: WIRE.runtimeCrashed, message: "the page's runtime stopped while this call ran (it may have applied): " + error.message }
        : { code: WIRE.startupFailed, message: "the page's runtime could not start: " + error.message },
    }));
  }

  // The results the worker's runtime sends, seen on their way out: a request stays in flight
  // (answered for if the worker dies) until its result passes. Only the frame's head is read.
  const RESULT_HEAD = /^\{"type":"page_tool_result","requestId":"([^"]*)"/;
  function noteSent(instance, text) {
    if (!instance.inflight.size) return;
    const found = RESULT_HEAD.exec(text.slice(0, 300));
    if (found) instance.inflight.delete(found[1]);
  }

  function workerOf(instance) {
    if (!instance.worker) instance.worker = MaoWorker.create(assetBase, BUILD_ID);
    return instance.worker;
  }

  function prefetch(instance) {
    if (instance.mode === "worker") workerOf(instance).prefetch();
    else runtime.prefetch();
  }

  let bootAsked = null; // MaoChat.boot() before init(): boot at init

  // Boots the runtime once per init: trigger is what asked first ("panel", "agent", "api",
  // "eager"). Returns MaoChat.ready.
  function boot(instance, trigger) {
    if (instance.boot || instance.destroyed || instance.failed) return readyDeferred.promise;
    const { options, ui } = instance;
    const started = performance.now();
    instance.boot = { trigger, started };
    performance.mark("mao:boot-start", { detail: { trigger } });
    ui.setStatus("starting", ui.text("boot." + trigger));
    const timeoutMs = Number(options.startupTimeoutMs) > 0 ? Number(options.startupTimeoutMs) : DEFAULT_STARTUP_TIMEOUT_MS;
    const timer = setTimeout(() => instance.fail(new StartupError(
      `Mao Embed did not become ready within ${Math.round(timeoutMs / 1000)} s. Check that ${sdkBase.origin} is reachable, ` +
      `that this page's origin is allowed there, and that any Content-Security-Policy allows 'wasm-unsafe-eval'.`, "startup_timeout")), timeoutMs);
    instance.cleanup.push(() => clearTimeout(timer));

    const transport = instance.transport;
    const hostApi = {
      options,
      buildId: BUILD_ID,
      serverUrl: options.serverUrl,
      primitives: Object.freeze(MaoDom),
      sdkHost: instance.host,
      ui,
      // SPEC B7: this document's tag (in its snapshot ids), the task continued from the tab's
      // previous page (JSON, or null), and where the runtime publishes its current task.
      tab: {
        documentTag: instance.tab.documentTag,
        continuation: instance.tab.continuation ? JSON.stringify(instance.tab.continuation) : null,
        publishTask: (text) => instance.tab.publishTask(String(text || "")),
      },
      window,
      emit,
      // The connection, for mao_page.session.connection: frames that came before the boot are
      // handed over first, in order, with how long each waited.
      transport: {
        send: (text) => { noteSent(instance, text); return transport.send(text); },
        attach(handlers) {
          queueMicrotask(() => {
            if (instance.destroyed) return;
            instance.runtime = handlers;
            if (transport.connected) handlers.welcome(transport.sessionId);
            const now = performance.now();
            for (const { text, at } of instance.queue.splice(0)) handlers.frame(text, now - at);
          });
        },
        detach() { instance.runtime = null; },
      },
      signalReady: (info) => {
        if (instance.destroyed) return;
        clearTimeout(timer);
        const bootMs = Math.round(performance.now() - started);
        performance.mark("mao:session-ready");
        performance.measure("mao:boot", { start: started });
        // The backend lists the session as ready from here on, and audits the boot.
        const mode = instance.mode;
        transport.send(MaoTransport.frame("page_ready", { trigger, bootMs, mode, page: pageInfo() }));
        ui.chat("system", ui.text("ready"));
        const value = info && info.toJs ? info.toJs({ dict_converter: Object.fromEntries }) : info;
        settle(instance.deferred, true, Object.assign({}, value, { mode, trigger, bootMs }));
        emit("ready", { trigger, bootMs });
      },
      signalFailure: (code, message) => instance.fail(new StartupError(message, code)),
      mode: instance.mode,
      origin: location.origin,
    };

    const failed = (error) => instance.fail(new StartupError("Mao Embed could not start: " + (error && error.message || error), "startup_failed"));
    if (instance.mode === "worker") {
      workerOf(instance).boot(hostApi, { crashed: (message) => workerCrashed(instance, message) })
        .then((booted) => {
          performance.mark("mao:python-ready", { detail: { wasmHeapBytes: booted.wasmHeapBytes, mode: "worker" } });
          if (instance.destroyed) stopController(instance);
        })
        .catch((error) => {
          if (!(error instanceof MaoWorker.Unavailable)) { failed(error); return; }
          // No worker on this page (its CSP): the same runtime on the main thread.
          console.warn(`[mao-embed] running on the main thread: ${error.message}; allow worker-src blob: to keep it off the page's thread`);
          instance.worker.terminate();
          instance.worker = null;
          instance.mode = hostApi.mode = "main-thread";
          loadOnMainThread(instance, hostApi, failed);
        });
      return readyDeferred.promise;
    }
    loadOnMainThread(instance, hostApi, failed);
    return readyDeferred.promise;
  }

  // The worker died (out of memory, a crash in the runtime): the calls it was running are
  // answered, and so is every later one; the panel says so.
  function workerCrashed(instance, message) {
    const error = new StartupError("the page's runtime stopped: " + message, WIRE.runtimeCrashed);
    const waiting = [...instance.inflight];
    instance.inflight.clear();
    instance.runtime = null;
    if (instance.worker) instance.worker.terminate();
    instance.worker = null;
    MaoDom.releaseInput(window);
    for (const requestId of waiting) answerFailed(instance, requestId, error);
    instance.failed = error;
    instance.ui.closeCard(null); // what it asked the user can no longer be acted on
    instance.ui.setStatus("error");
    instance.ui.showError(error.message);
    emit("error", { code: WIRE.runtimeCrashed, message: error.message });
  }

  function loadOnMainThread(instance, hostApi, failed) {
    runtime.load()
      .then(async (pyodide) => {
        if (instance.destroyed) return;
        pyodide.registerJsModule("_mao_host", hostApi);
        const module = pyodide.pyimport("mao_page.runtime");
        instance.controller = await module.boot();
        // The heap size is for the start-up benchmark (bench/startup.py): what a page pays in memory.
        performance.mark("mao:python-ready", { detail: { wasmHeapBytes: pyodide._module.HEAPU8.length } });
        module.destroy();
        if (instance.destroyed) stopController(instance);
      })
      .catch(failed);
  }

  function stopController(instance) {
    if (instance.worker) {
      // Python's own clean-up would need the worker's replies; ending it frees its memory, and
      // what it left on the page is disposed here: the watchers by the worker host, the
      // pointer's hover markers and sheets as BrowserPage.close does.
      instance.worker.terminate();
      instance.worker = null;
      MaoDom.releaseInput(window);
      return;
    }
    const controller = instance.controller;
    instance.controller = null;
    if (controller) {
      try { controller.stop(); } finally { controller.destroy(); }
    }
  }

  function destroy() {
    const instance = current;
    if (!instance) return;
    current = null;
    instance.destroyed = true;
    stopController(instance);
    instance.runtime = null;
    instance.queue.length = 0;
    instance.transport.stop();
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

  // Boots the runtime now (idempotent); before init(), at init. Returns MaoChat.ready.
  function bootNow() {
    if (current) return boot(current, "api");
    if (readyDeferred.settled) readyDeferred = makeDeferred(); // the next init's
    bootAsked = "api";
    return readyDeferred.promise;
  }

  const api = {
    init,
    boot: bootNow,
    destroy,
    on,
    get ready() { return readyDeferred.promise; },
    get version() { return VERSION; },
  };
  Object.defineProperty(window, "MaoChat", { value: Object.freeze(api), configurable: false, writable: false });
})();
