// The page's Python in a module Web Worker (SPEC E6, docs/startup.md "Worker mode").
//
// The build writes this file, after runtime-image.js, boot.js and remote.js, as
// /sdk/<build>/mao-worker.js. The loader starts it from a blob that imports it (a cross-origin
// module import, allowed by the backend's CORS headers) and sends "prefetch" and "boot".
// Booted, the runtime here sees the same `_mao_host` as on the main thread, made of remotes
// (remote.js): every DOM read or act is a message to the main thread, which runs the
// JavaScript primitives; Python, snapshot building and authorization never block the page.
"use strict";

let runtime = null;   // MaoBoot: downloads and the interpreter
let channel = null;   // MaoRemote.connect
let pyodide = null;

function start(message) {
  if (!runtime) runtime = MaoBoot.create(message.assetBase, message.buildId);
  return runtime;
}

async function boot(message) {
  const py = await start(message).load();
  pyodide = py;
  // Only the worker waits on the main thread (run_sync); a restored image needs this engine's
  // run_sync put back first (runtime-image.js).
  MaoImage.restoreRunSync(py);
  const PyProxy = py.ffi.PyProxy;
  channel = MaoRemote.connect(self, {
    isPyCallable: (v) => v instanceof PyProxy && typeof v === "function",
    toJs: (v) => (v instanceof PyProxy ? v.toJs({ dict_converter: Object.fromEntries, create_pyproxies: false }) : v),
  });
  const { roots } = message;
  const hostFns = channel.root(roots.host);
  const post = (name) => (...args) => channel.post(hostFns[name], args);
  const hostApi = {
    mode: "worker",
    options: message.options,
    buildId: message.buildId,
    serverUrl: message.options.serverUrl,
    origin: message.origin,
    primitives: channel.root(roots.primitives),
    ui: channel.root(roots.ui, { locale: message.locale }),
    window: channel.root(roots.window),
    sdkHost: channel.root(roots.sdkHost),
    transport: channel.root(roots.transport),
    // SPEC B7: this document's tag and the task continued from the tab's previous page
    // (values), and where the runtime publishes its current task.
    tab: message.tab ? { ...message.tab, publishTask: post("publishTask") } : null,
    emit: post("emit"),
    signalReady: post("signalReady"),
    signalFailure: post("signalFailure"),
    // performance.measure on the page's timeline (what the owner's tools observe): the start
    // is sent as an epoch time, the worker's clock has its own origin.
    measure: (name, start) => channel.post(hostFns.measure, [name, performance.timeOrigin + start]),
  };
  py.registerJsModule("_mao_host", hostApi);
  const module = py.pyimport("mao_page.runtime");
  await module.boot();
  module.destroy();
  // The boot's marks (image:*, mao:*) go onto the page's timeline, where the owner's tools and
  // the start-up benchmark read them: as epoch times, the worker's clock has its own origin.
  // `mao:prefetch` is marked by the page itself when the launcher is pointed at (worker-host.js).
  const marks = performance.getEntriesByType("mark").filter((m) => m.name !== "mao:prefetch")
    .map((m) => [m.name, performance.timeOrigin + m.startTime]);
  self.postMessage({ type: "booted", wasmHeapBytes: py._module.HEAPU8.length, marks });
}

self.onmessage = (event) => {
  const message = event.data;
  if (channel && channel.onMessage(message)) return;
  if (message.type === "prefetch") start(message).prefetch();
  else if (message.type === "boot") {
    boot(message).catch((error) => self.postMessage({ type: "failed", message: String(error && error.message || error) }));
  }
};
self.postMessage({ type: "hello" });
