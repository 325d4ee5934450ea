// The main thread's side of worker mode (SPEC E6): starts the runtime's Web Worker, serves its
// calls on the page's objects (remote.js) and notices when it cannot start or dies.
//
// The worker comes from a blob that imports /sdk/<build>/mao-worker.js, so it needs a page
// whose Content-Security-Policy allows blob workers (`worker-src blob:`); where it does not, the
// browser refuses the worker within milliseconds (an `error` event before the worker's first
// message) and the loader runs the runtime on the main thread instead.
"use strict";

const MaoWorker = (() => {
  const ROOTS = { primitives: 1, ui: 2, window: 3, sdkHost: 4, transport: 5, host: 6 };

  class Unavailable extends Error {
    constructor(message) { super(message); this.name = "MaoWorkerUnavailable"; }
  }

  function create(assetBase, buildId) {
    let worker = null;
    let started = null;   // Promise: the worker said hello (rejects Unavailable)
    let server = null;
    let onEvent = () => {};
    let violation = "";

    function spawn() {
      if (started) return started;
      const onViolation = (event) => {
        if (String(event.blockedURI).startsWith("blob")) violation = event.effectiveDirective || event.violatedDirective || "";
      };
      document.addEventListener("securitypolicyviolation", onViolation);
      started = new Promise((resolve, reject) => {
        let url = null;
        try {
          const source = `import ${JSON.stringify(assetBase + "mao-worker.js")};\n`;
          url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
          worker = new Worker(url, { type: "module", name: "mao-embed" });
        } catch (error) {
          reject(new Unavailable(String(error && error.message || error)));
          return;
        }
        let hello = false;
        worker.addEventListener("error", (event) => {
          if (!hello) {
            // The violation event may come a moment after the error; either names the cause.
            setTimeout(() => reject(new Unavailable(violation
              ? `the page's Content-Security-Policy (${violation}) does not allow blob workers`
              : `the worker did not start (${event.message || "no message"})`)), 20);
          } else {
            onEvent({ type: "crashed", message: event.message || "the runtime's worker stopped" });
          }
        });
        worker.addEventListener("message", (event) => {
          const message = event.data;
          if (message.type === "hello") {
            hello = true;
            URL.revokeObjectURL(url);
            document.removeEventListener("securitypolicyviolation", onViolation);
            resolve(worker);
          } else if (message.type === "call" || message.type === "release") {
            if (server) server.onMessage(message);
          } else {
            onEvent(message);
          }
        });
      });
      started.catch(() => {});
      return started;
    }

    let prefetched = false;
    function prefetch() {
      if (prefetched) return;
      prefetched = true;
      performance.mark("mao:prefetch");
      spawn().then((w) => w.postMessage({ type: "prefetch", assetBase, buildId })).catch(() => {});
    }

    // Boots the runtime in the worker with `hostApi` (the same object main-thread mode hands to
    // Python). Resolves when Python is running; rejects Unavailable when there is no worker.
    async function boot(hostApi, handlers) {
      const w = await spawn();
      const fns = {
        emit: hostApi.emit,
        signalReady: hostApi.signalReady,
        signalFailure: hostApi.signalFailure,
        publishTask: hostApi.tab ? hostApi.tab.publishTask : () => {},
        // The bridge calls so far ride along: what a tool cost in messages (docs/startup.md).
        measure: (name, epochStart) => performance.measure(name, {
          start: epochStart - performance.timeOrigin, detail: { mode: "worker", bridgeCalls: server ? server.calls : 0 },
        }),
      };
      server = MaoRemote.serve(w, {
        [ROOTS.primitives]: hostApi.primitives, [ROOTS.ui]: hostApi.ui, [ROOTS.window]: hostApi.window,
        [ROOTS.sdkHost]: hostApi.sdkHost, [ROOTS.transport]: hostApi.transport, [ROOTS.host]: fns,
      }, { onCallbackError: (error) => console.warn("[mao-embed] a call from the runtime failed:", error) });
      // Only what can be cloned goes to the worker: the token (a string or a function) stays.
      const options = JSON.parse(JSON.stringify(hostApi.options, (key, value) => (key === "token" ? undefined : value)));
      return new Promise((resolve, reject) => {
        onEvent = (message) => {
          if (message.type === "booted") {
            for (const [name, epoch] of message.marks || []) {
              performance.mark(name, { startTime: Math.max(0, epoch - performance.timeOrigin), detail: { mode: "worker" } });
            }
            resolve(message);
          }
          else if (message.type === "failed") reject(new Error(message.message));
          else if (message.type === "crashed") {
            reject(new Error(message.message));
            handlers.crashed(message.message);
          }
        };
        w.postMessage({
          type: "boot", assetBase, buildId, options, roots: ROOTS,
          locale: hostApi.ui.locale, origin: location.origin,
          tab: hostApi.tab ? { documentTag: hostApi.tab.documentTag, continuation: hostApi.tab.continuation } : null,
        });
      });
    }

    // Ends the worker: its memory goes with it (SPEC E2). What it left on the page (watchers)
    // is disposed here, since its own clean-up does not run.
    function terminate() {
      if (worker) worker.terminate();
      if (server) server.disposeAll();
      worker = null;
      server = null;
      started = null;
    }

    return { prefetch, boot, terminate, get calls() { return server ? server.calls : 0; } };
  }

  return { create, Unavailable };
})();
