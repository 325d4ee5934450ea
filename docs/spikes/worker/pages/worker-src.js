// Module-worker source. The page fetches this text, substitutes __BACKEND__/__BUILD__/
// __PYODIDE_PATH__, prepends loader_js/runtime-image.js (MaoImage) and starts it from a Blob URL.
// Protocol: page -> worker {type:"cmd", id, name, arg}; worker -> page {type:"done", id, value|error}
// Python -> main thread RPC: worker -> page {type:"rpc", id, name, args}; page -> worker {type:"rpc-reply", id, value|error}
const T0 = performance.now();
const BACKEND = "__BACKEND__";
const BUILD = "__BUILD__";
const PYODIDE_PATH = "__PYODIDE_PATH__"; // "sdk/<build>/" or "nocors/sdk/<build>/"
const assetBase = BACKEND + "/" + PYODIDE_PATH;
const marks = {};
// CSP violations inside the worker fire on the worker's global, not on the page's document: forward.
self.addEventListener("securitypolicyviolation", (e) => self.postMessage({ type: "violation", detail: {
  violatedDirective: e.violatedDirective, effectiveDirective: e.effectiveDirective, blockedURI: e.blockedURI, t: performance.now() - T0 } }));
const mark = (n) => { marks[n] = Math.round(performance.now() - T0); };
let pyodide = null;

// --- RPC to the main thread --------------------------------------------------------------
const pending = new Map();
let nextRpc = 1;
self.maoRpc = (name, args) => new Promise((resolve, reject) => {
  const id = nextRpc++;
  pending.set(id, { resolve, reject });
  self.postMessage({ type: "rpc", id, name, args });
});
// ready-resolved promise, to measure JSPI suspend/resume without a message
self.resolvedPromise = (v) => Promise.resolve(v);
self.jsIdentity = (v) => v;

// --- boot ---------------------------------------------------------------------------------
async function fetchOk(url) {
  const r = await fetch(url, { credentials: "omit" });
  if (!r.ok) throw new Error(url + ": HTTP " + r.status);
  return r;
}
const pyodideOptions = () => ({
  indexURL: assetBase,
  stdLibURL: assetBase + MaoImage.STDLIB,
  lockFileURL: assetBase + "pyodide-lock.json",
  stdout: (line) => console.debug("[worker py]", line),
  stderr: (line) => console.warn("[worker py]", line),
});
// Copied from loader_js/mao-chat.js fetchImage/restoreImage (same MaoImage.prepare path).
function fetchImage() {
  const meta = fetchOk(assetBase + "snapshot.json").then((r) => r.json());
  const createModule = import(assetBase + "pyodide.asm.mjs").then((m) => m.default);
  const snapshot = fetchOk(assetBase + "snapshot.bin").then((r) => r.arrayBuffer()).then((b) => new Uint8Array(b));
  const files = fetchOk(assetBase + "site-packages.tar").then((r) => r.arrayBuffer()).then((b) => MaoImage.untar(b));
  const dylibs = meta.then((m) => Promise.all(m.dylibs.map(async (path) => {
    if (m.scope === "full") return { path, module: await WebAssembly.compileStreaming(fetchOk(assetBase + "dylibs/" + path)) };
    const bytes = new Uint8Array(await (await fetchOk(assetBase + "dylibs/" + path)).arrayBuffer());
    return { path, bytes, module: await WebAssembly.compile(bytes) };
  })));
  for (const p of [meta, createModule, snapshot, files, dylibs]) p.catch(() => {});
  return { meta, createModule, snapshot, files, dylibs };
}
async function restoreImage(loadPyodide, image) {
  const meta = await image.meta;
  if (meta.buildId !== BUILD) throw new Error(`snapshot is from build ${meta.buildId}, this loader is build ${BUILD}`);
  const snapshot = image.snapshot.then((bytes) => {
    if (bytes.length !== meta.bytes) throw new Error(`snapshot has ${bytes.length} bytes, expected ${meta.bytes}`);
    return bytes;
  });
  const prepared = MaoImage.prepare({
    createModule: await image.createModule, files: image.files, dylibs: image.dylibs,
    snapshot, expected: meta.layout, freshBits: meta.freshPages,
  });
  const py = await loadPyodide({ ...pyodideOptions(), ...prepared.options, _loadSnapshot: snapshot });
  MaoImage.afterRestore(py._module, prepared.state, meta.handles);
  mark("pyodide-loaded");
  if (FIX_RUN_SYNC) runSyncFix = fixRunSync(py);
  const restored = py.pyimport("mao_page.image");
  restored.after_restore();
  restored.destroy();
  mark("after-restore");
  return { py, imports: meta.imports || [] };
}

// The snapshot was made by Node 20 (no JSPI): at interpreter start Pyodide's jsproxy_init wrote
// run_sync_not_supported into the PyMethodDef of _pyodide_core.run_sync (a function-table index in
// static data), and the restored heap keeps it. Put this engine's choice back, as afterRestore
// does for the call trampoline.
let FIX_RUN_SYNC = true;
let runSyncFix = null;
function fixRunSync(py) {
  const started = performance.now();
  const M = py._module;
  if (!M.jspiSupported) return { skipped: "no JSPI in this engine" };
  const table = M.wasmTable;
  const find = (fn) => { for (let i = 0; i < table.length; i++) { const f = table.get(i); if (f && (f === fn || f.name === fn.name)) return i; } return -1; };
  const good = find(M._run_sync), bad = find(M._run_sync_not_supported);
  // id() of a builtin function object is its address; PyCFunctionObject.m_ml sits after the
  // 8-byte object header on wasm32, and PyMethodDef.ml_meth after the 4-byte ml_name.
  const address = py.runPython("import _pyodide_core; id(_pyodide_core.run_sync)");
  const same = py.runPython("import _pyodide_core, pyodide.ffi; pyodide.ffi.run_sync is _pyodide_core.run_sync");
  const ml = M.HEAPU32[(address + 8) >>> 2];
  const before = M.HEAPU32[(ml + 4) >>> 2];
  const result = { good, bad, before, same, methodDef: ml };
  if (before === bad && good >= 0) { M.HEAPU32[(ml + 4) >>> 2] = good; result.patched = true; }
  else result.patched = false;
  result.ms = Math.round((performance.now() - started) * 10) / 10;
  return result;
}

async function boot({ snapshot, importRuntime, fixRunSync: fix = true }) {
  FIX_RUN_SYNC = fix;
  mark("boot-start");
  let image = snapshot ? fetchImage() : null;
  const { loadPyodide } = await import(assetBase + "pyodide.mjs");
  mark("pyodide.mjs-imported");
  let path = "fresh";
  let fallback = null;
  if (snapshot) {
    try {
      const { py, imports } = await restoreImage(loadPyodide, image);
      pyodide = py;
      path = "snapshot";
      if (importRuntime) {
        for (const name of imports) pyodide.pyimport(name).destroy();
        mark("imports-done");
      }
    } catch (error) {
      fallback = String(error && error.stack || error);
      console.warn("[worker] snapshot not used: " + fallback);
    }
  }
  if (!pyodide) {
    pyodide = await loadPyodide({ indexURL: assetBase, lockFileURL: assetBase + "pyodide-lock.json" });
    mark("pyodide-loaded");
    if (importRuntime) {
      await pyodide.loadPackage(["mao-embed-page"], { messageCallback: () => {}, errorCallback: (m) => console.warn(m) });
      mark("packages-loaded");
    }
  }
  if (importRuntime) { pyodide.pyimport("mao_page.runtime").destroy(); mark("runtime-imported"); }
  pyodide.runPython(PY_HARNESS);
  mark("harness");
  return { path, fallback, marks, runSyncFix, jspiSupported: !!pyodide._module.jspiSupported,
           heap: pyodide._module.HEAPU8.length, version: pyodide.version,
           isWorker: typeof WorkerGlobalScope !== "undefined" };
}

const PY_HARNESS = String.raw`
import asyncio, time, statistics, json
import js
from pyodide.ffi import run_sync, can_run_sync, to_js, create_proxy, JsProxy

def rpc(name, *args):
    """A synchronous call to a main-thread primitive: post a message, block (JSPI) until the reply."""
    return run_sync(js.maoRpc(name, to_js(list(args), dict_converter=js.Object.fromEntries)))

def probe(tag=""):
    ok = bool(can_run_sync())
    try:
        v = rpc("echo", tag or "x")
        return [ok, "ok", str(v)]
    except BaseException as e:
        return [ok, f"{type(e).__name__}: {e}", None]

async def aprobe(tag=""):
    return probe(tag)

async def aprobe_after_js_await(tag=""):
    await js.resolvedPromise(1)
    await asyncio.sleep(0.005)
    return probe(tag)

_results = {}
def store(key):
    _results[key] = probe(key)

def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]

def summary(values):
    values = [v * 1000 for v in values]  # ms
    return {"n": len(values), "median_ms": round(statistics.median(values), 4), "p95_ms": round(pct(values, 0.95), 4),
            "max_ms": round(max(values), 4), "mean_ms": round(statistics.fmean(values), 4)}

def bench(n=1000):
    pc = time.perf_counter
    out = {}
    # 1. JS call without suspension (baseline: a plain FFI crossing)
    ts = []
    for i in range(n):
        t = pc(); js.jsIdentity(i); ts.append(pc() - t)
    out["plain_ffi_call"] = summary(ts)
    # 2. run_sync on an already-resolved promise (JSPI suspend/resume, no message)
    ts = []
    for i in range(n):
        t = pc(); run_sync(js.resolvedPromise(i)); ts.append(pc() - t)
    out["run_sync_resolved_promise"] = summary(ts)
    # 3. round trip to the main thread: postMessage -> main echoes -> reply -> resume
    ts = []
    for i in range(n):
        t = pc(); v = rpc("echo", i); ts.append(pc() - t)
        assert int(v) == i
    out["rpc_echo_roundtrip"] = summary(ts)
    # 4. a 1,600-row array of arrays back (structured clone), kept as JsProxy / converted to lists
    for kind in ("rows1600", "rows1600json", "columns1600"):
        ts, conv = [], []
        for i in range(50):
            t = pc(); v = rpc(kind); t1 = pc()
            if kind == "rows1600":
                rows = v.to_py()
            elif kind == "rows1600json":
                rows = json.loads(str(v))
            else:
                rows = [v.ints.to_bytes(), v.floats.to_bytes(), v.strings.to_bytes().decode()]
            t2 = pc(); ts.append(t1 - t); conv.append(t2 - t1)
        out[kind + "_roundtrip"] = summary(ts)
        out[kind + "_to_python"] = summary(conv)
    # timer granularity seen from Python (performance.now is coarsened unless cross-origin isolated)
    deltas = set()
    t = pc()
    while len(deltas) < 20:
        u = pc()
        if u != t: deltas.add(round((u - t) * 1000, 4)); t = u
    out["timer_step_ms"] = min(deltas)
    return json.dumps(out)

async def abench(n=1000):
    return bench(n)

async def reentrancy():
    """Two tasks each blocked in a synchronous rpc at once (the main thread answers 'slow' after 50 ms)."""
    order = []
    async def a():
        order.append("a-start"); r = rpc("slow", 50); order.append("a-end"); return str(r)
    async def b():
        await asyncio.sleep(0.01)
        order.append("b-start"); r = rpc("echo", "b"); order.append("b-end"); return str(r)
    ra, rb = await asyncio.gather(a(), b())
    return json.dumps({"order": order, "a": ra, "b": rb})
`;

// --- commands -----------------------------------------------------------------------------
async function entryTests() {
  const py = (s) => pyodide.runPython(s);
  const out = {};
  const conv = (v) => (v && v.toJs ? v.toJs() : v);
  out.runPython_sync = conv(py("probe('runPython')"));
  out.runPythonAsync = conv(await pyodide.runPythonAsync("probe('runPythonAsync')"));
  out.runPythonAsync_await_task = conv(await pyodide.runPythonAsync("await asyncio.ensure_future(aprobe('task'))"));
  // task created from synchronous code, its steps driven by the webloop alone
  const fut = py("asyncio.ensure_future(aprobe('task-from-sync'))");
  out.webloop_task_from_runPython = conv(await fut);
  const fut2 = py("asyncio.ensure_future(aprobe_after_js_await('task-after-await'))");
  out.webloop_task_after_js_await_and_sleep = conv(await fut2);
  // a plain callback the loop runs (not a task)
  py("asyncio.get_event_loop().call_soon(store, 'call_soon')");
  py("asyncio.get_event_loop().call_later(0.005, store, 'call_later')");
  // a Python callable handed to setTimeout (create_proxy)
  py("js.setTimeout(create_proxy(lambda: store('setTimeout_proxy')), 0)");
  await new Promise((r) => setTimeout(r, 50));
  const probe = pyodide.globals.get("probe");
  // a JS message handler (this one) calling Python directly, and with callPromising
  out.js_handler_direct_call = conv(probe("direct"));
  out.js_handler_callPromising = conv(await probe.callPromising("callPromising"));
  // a Python callable registered as an event listener
  py("js.self.addEventListener('spike-event', create_proxy(lambda e: store('addEventListener_proxy')))");
  self.dispatchEvent(new Event("spike-event"));
  await new Promise((r) => setTimeout(r, 20));
  Object.assign(out, pyodide.globals.get("_results").toJs({ dict_converter: Object.fromEntries }));
  probe.destroy();
  return out;
}

const commands = {
  boot,
  entryTests,
  async bench(n) {
    // from a webloop task (the runtime's tools run in tasks)
    return JSON.parse(await pyodide.runPythonAsync(`await asyncio.ensure_future(abench(${n | 0}))`));
  },
  async reentrancy() { return JSON.parse(await pyodide.runPythonAsync("await reentrancy()")); },
  async runAsync(code) { const v = await pyodide.runPythonAsync(code); return v && v.toJs ? v.toJs({ dict_converter: Object.fromEntries }) : v; },
  heap() { return pyodide ? pyodide._module.HEAPU8.length : 0; },
  // Pyodide keeps the loadPyodide options for the runtime's life (API.config): with a snapshot
  // they hold the 28.8 MB snapshot bytes and, through the prepare closures, the tar and dylib bytes.
  dropConfig() {
    const config = pyodide && pyodide._api && pyodide._api.config;
    if (!config) return "no pyodide._api.config";
    const dropped = [];
    for (const k of ["_loadSnapshot", "createPyodideModule", "fsInit"]) if (config[k]) { config[k] = undefined; dropped.push(k); }
    return dropped;
  },
  gc() { if (typeof self.gc === "function") { self.gc(); return true; } return false; },
};

const IN_WORKER = typeof WorkerGlobalScope !== "undefined";
if (!IN_WORKER) globalThis.spikeMainCommands = commands; // same code on the main thread (memory comparison)
if (IN_WORKER) self.onmessage = async (event) => {
  const m = event.data;
  if (m.type === "rpc-reply") {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (p) ("error" in m ? p.reject(new Error(m.error)) : p.resolve(m.value));
    return;
  }
  if (m.type === "cmd") {
    try {
      const value = await commands[m.name](m.arg);
      self.postMessage({ type: "done", id: m.id, value });
    } catch (error) {
      self.postMessage({ type: "done", id: m.id, error: String(error && error.stack || error) });
    }
  }
};
if (IN_WORKER) self.postMessage({ type: "started", at: T0 });
