// Main-thread side of the spike: starts the blob module worker, answers its RPCs (the "primitives").
"use strict";
const BACKEND = "http://127.0.0.1:8802";
const BUILD = "0cf527aff572fa6e";
const log = [];
const events = [];
document.addEventListener("securitypolicyviolation", (e) => events.push({
  t: performance.now(), kind: "securitypolicyviolation", violatedDirective: e.violatedDirective,
  effectiveDirective: e.effectiveDirective, blockedURI: e.blockedURI, disposition: e.disposition }));

// A fact-row-like table: 1,600 rows x 50 columns of mixed types.
function makeRows(n) {
  const rows = [];
  for (let i = 0; i < n; i++) {
    const r = [];
    for (let c = 0; c < 50; c++) {
      const k = c % 5;
      r.push(k === 0 ? i + c : k === 1 ? (i * 1.25 + c) : k === 2 ? `text ${i}/${c}` : k === 3 ? (i % 2 === 0) : (c % 10 === 4 ? null : "div"));
    }
    rows.push(r);
  }
  return rows;
}
const ROWS = makeRows(1600);
const ROWS_JSON = JSON.stringify(ROWS);
function makeColumns(rows) { // the shape collect.js sends today: typed arrays + one string buffer
  const ints = new Int32Array(rows.length * 20), floats = new Float64Array(rows.length * 10);
  const strings = new TextEncoder().encode(rows.map((r) => r.filter((v) => typeof v === "string").join("\u0001")).join("\u0002"));
  return { count: rows.length, ints, floats, strings };
}
const primitives = {
  echo: (x) => x,
  slow: (ms) => new Promise((r) => setTimeout(() => r("slow done"), ms)),
  rows1600: () => ROWS,
  rows1600json: () => ROWS_JSON,
  columns1600: () => makeColumns(ROWS),
};

let worker = null;
const handlerMs = {}; // main-thread time per RPC: the primitive + postMessage (structured-clone serialization)
function handlerSummary() {
  const out = {};
  for (const [name, list] of Object.entries(handlerMs)) {
    const v = [...list].sort((a, b) => a - b);
    out[name] = { n: v.length, median_ms: v[v.length >> 1], p95_ms: v[Math.min(v.length - 1, Math.floor(v.length * 0.95))], max_ms: v[v.length - 1] };
  }
  return out;
}
const waiting = new Map();
let nextCmd = 1;
async function startWorker({ cors = true, echo = false, runtimeImage = true } = {}) {
  const t0 = performance.now();
  const src = (await (await fetch("worker-src.js")).text())
    .replace(/__BACKEND__/g, BACKEND).replace(/__BUILD__/g, BUILD)
    .replace(/__PYODIDE_PATH__/g, (cors ? "" : "nocors/") + (echo ? "echo/" : "") + "sdk/" + BUILD + "/");
  const image = runtimeImage ? await (await fetch("runtime-image.js")).text() : "";
  const url = URL.createObjectURL(new Blob([image, "\n", src], { type: "text/javascript" }));
  const result = { created: false, syncError: null, t0 };
  const started = new Promise((resolve) => {
    try {
      const tNew = performance.now();
      result.tNew = tNew;
      worker = new Worker(url, { type: "module", name: "mao-spike" });
      result.created = true;
      result.constructMs = performance.now() - tNew;
    } catch (error) {
      result.syncError = `${error.name}: ${error.message}`;
      result.syncErrorAfterNewMs = performance.now() - result.tNew;
      result.syncErrorAfterMs = performance.now() - t0;
      resolve(result);
      return;
    }
    worker.onerror = (e) => {
      events.push({ t: performance.now(), kind: "worker.error", message: e.message, filename: e.filename });
      result.errorEvent = { message: e.message || null, afterNewMs: performance.now() - result.tNew, type: e.constructor.name };
      resolve(result);
    };
    worker.onmessageerror = (e) => events.push({ t: performance.now(), kind: "messageerror" });
    worker.onmessage = async (event) => {
      const m = event.data;
      if (m.type === "started") { result.startedAfterNewMs = performance.now() - result.tNew; resolve(result); return; }
      if (m.type === "violation") { events.push({ t: performance.now(), kind: "worker securitypolicyviolation (forwarded)", ...m.detail }); return; }
      if (m.type === "rpc") {
        try {
          const t = performance.now();
          let value = primitives[m.name](...(m.args || []));
          if (value instanceof Promise) value = await value;
          worker.postMessage({ type: "rpc-reply", id: m.id, value });
          (handlerMs[m.name] ||= []).push(performance.now() - t);
        } catch (error) {
          worker.postMessage({ type: "rpc-reply", id: m.id, error: String(error) });
        }
        return;
      }
      if (m.type === "done") {
        const w = waiting.get(m.id); waiting.delete(m.id);
        if (w) ("error" in m ? w.reject(new Error(m.error)) : w.resolve(m.value));
      }
    };
  });
  return started;
}
function cmd(name, arg) {
  return new Promise((resolve, reject) => {
    const id = nextCmd++;
    waiting.set(id, { resolve, reject });
    worker.postMessage({ type: "cmd", id, name, arg });
  });
}
// The same worker source evaluated on the main thread (module script from a blob), for comparisons.
async function startMain() {
  const src = (await (await fetch("worker-src.js")).text())
    .replace(/__BACKEND__/g, BACKEND).replace(/__BUILD__/g, BUILD).replace(/__PYODIDE_PATH__/g, "sdk/" + BUILD + "/");
  const image = await (await fetch("runtime-image.js")).text();
  const url = URL.createObjectURL(new Blob([image, "\n", src], { type: "text/javascript" }));
  await import(url);
  return true;
}
function mainCmd(name, arg) { return globalThis.spikeMainCommands[name](arg); }
window.spike = { handlerSummary, crossOriginIsolated: () => self.crossOriginIsolated, startWorker, cmd, startMain, mainCmd, events, log, terminate: () => worker && worker.terminate() };
