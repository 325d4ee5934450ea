// The booted-runtime image: a Pyodide memory snapshot taken after our packages were imported
// and the protocol models built, plus what lives outside the wasm heap and must be rebuilt
// around it (docs/startup.md).
//
// Shared by the page loader (restoring) and the build step (loader_js/make-snapshot.mjs,
// Pyodide in Node): both must prepare the runtime in exactly the same way, or the heap of the
// snapshot does not fit the runtime it is copied into. What that preparation is:
//
// * site-packages: the unpacked wheels, written into Pyodide's in-memory file system before the
//   interpreter starts. Python's imports are in the heap; the files are JS-side state.
// * dynamic libraries (pydantic-core's extension module): instantiated before the C runtime
//   starts, so Emscripten places them at the bottom of the heap and at the end of the function
//   table, at the same addresses in both runs. A library loaded later, by Python's dlopen,
//   would sit wherever malloc put it and could not be re-created at that address.
// * after restoring: dlopen handles recorded in the heap point at those libraries again.
"use strict";

const MaoImage = (() => {
  const TAR_BLOCK = 512;
  // The standard library as the build repacks it: Pyodide's python_stdlib.zip with its files
  // stored rather than deflated, so the whole archive is served brotli-compressed (a third
  // smaller on the wire) and imports read it without inflating.
  const STDLIB = "stdlib.zip";
  // Steps of a restore, for the start-up benchmark (bench/startup.py reads every mark).
  const mark = (name) => { if (globalThis.performance && performance.mark) performance.mark(name); };

  // Files of a ustar archive as [path, bytes]; the build writes it with Python's tarfile.
  function untar(buffer) {
    const bytes = buffer instanceof Uint8Array ? buffer : new Uint8Array(buffer);
    const text = (start, length) => {
      let end = start;
      while (end < start + length && bytes[end] !== 0) end++;
      return new TextDecoder().decode(bytes.subarray(start, end));
    };
    const files = [];
    for (let offset = 0; offset + TAR_BLOCK <= bytes.length;) {
      const name = text(offset, 100);
      if (!name) break; // two zero blocks end the archive
      const size = parseInt(text(offset + 124, 12).trim() || "0", 8);
      const type = String.fromCharCode(bytes[offset + 156] || 48);
      const prefix = text(offset + 345, 155);
      const body = offset + TAR_BLOCK;
      if (type === "0") files.push([prefix ? prefix + "/" + name : name, bytes.subarray(body, body + size)]);
      offset = body + Math.ceil(size / TAR_BLOCK) * TAR_BLOCK;
    }
    return files;
  }

  function writeFiles(FS, root, files) {
    const made = new Set();
    for (const [path, data] of files) {
      const dir = (root + "/" + path).replace(/\/[^/]*$/, "");
      if (!made.has(dir)) { FS.mkdirTree(dir); made.add(dir); }
      FS.writeFile(root + "/" + path, data, { canOwn: true });
    }
  }

  // Where the libraries went: the heap's break after them, and what the function table holds
  // from `tableStart` on (each wasm function's index in its module, "-" for an empty slot).
  // Function pointers in the heap are table indices, so both runs must agree on every slot.
  function layout(Module, tableStart) {
    const slots = [];
    for (let i = tableStart; i < Module.wasmTable.length; i++) {
      const fn = Module.wasmTable.get(i);
      slots.push(fn ? fn.name : "-");
    }
    return { tableStart, tableLength: Module.wasmTable.length, heapTop: Module.HEAPU32[Module._emscripten_get_sbrk_ptr() >>> 2], slots: slots.join(",") };
  }

  function layoutDifference(actual, expected) {
    if (!actual) return "libraries were not loaded";
    for (const key of ["tableStart", "tableLength", "heapTop"]) {
      if (actual[key] !== expected[key]) {
        const a = actual.slots.split(","), e = expected.slots.split(",");
        const i = a.findIndex((name, n) => name !== e[n]);
        return `${key} ${actual[key]} where the snapshot has ${expected[key]}` +
          (i >= 0 ? `; first differing table slot ${actual.tableStart + i}: ${a[i]} vs ${e[i]}` : "");
      }
    }
    return actual.slots === expected.slots ? null : "the function table differs from the snapshot's";
  }

  // `bytes`, when given, also go into the file system: Python's import needs the file to find
  // the module it then dlopens. The build passes them. The page passes `stub` instead when its
  // interpreter has yet to import the module: an empty file under that name. Nothing reads it:
  // the import only lists the directory, and Emscripten's dlopen returns a library already
  // loaded under that name (loadDynamicLibrary, LDSO.loadedLibsByName) before it would read a
  // file. So the page keeps no copy of the library's bytes besides the engine's compiled module.
  async function loadDylibs(Module, sitePackages, dylibs) {
    for (const { path, module, bytes, stub } of dylibs) {
      const full = sitePackages + "/" + path;
      if (bytes) Module.FS.writeFile(full, bytes);
      else if (stub) Module.FS.writeFile(full, new Uint8Array(0));
      const dso = Module.newDSO(full, undefined, "loading");
      dso.refcount = Infinity; // never unloaded: its memory is part of the image
      dso.global = false; // Python extension modules are opened RTLD_LOCAL
      dso.exports = await Module.loadWebAssemblyModule(module, { loadAsync: true, nodelete: true }, full, {});
    }
  }

  // Pyodide makes a wasm-GC trampoline for calls into C before our hook runs, in the next table
  // slot, and stores its index in the heap. An engine without wasm GC (the Node 20 that builds the
  // snapshot, Safari before 18.2) makes none and the slot stays out; reserve it then, so the
  // libraries land at the same slots either way. After restoring, the heap holds the build's
  // value, so this engine's own is written back.
  function trampolineCell(Module) {
    return (Module.__PyRuntime + Module.HEAP32[Module.__PyEM_EMSCRIPTEN_TRAMPOLINE_OFFSET >>> 2]) >>> 2;
  }

  // dlopen handles (pointers into the heap) by library path, to re-attach after restoring.
  function dlopenHandles(Module) {
    const handles = {};
    for (const [handle, dso] of Object.entries(Module.LDSO.loadedLibsByHandle)) {
      if (Number(handle) !== 0) (handles[dso.name] ||= []).push(Number(handle));
    }
    return handles;
  }

  // What the restored heap expects of this runtime's JS side: dlopen handles that point at our
  // libraries, and this engine's trampoline.
  function afterRestore(Module, state, handles) {
    for (const [name, list] of Object.entries(handles || {})) {
      const dso = Module.LDSO.loadedLibsByName[name];
      if (!dso) throw new Error(`library ${name} of the snapshot was not loaded`);
      for (const handle of list) Module.LDSO.loadedLibsByHandle[handle] = dso;
    }
    Module.HEAP32[trampolineCell(Module)] = state.trampoline;
  }

  // The build's Node has no stack switching (JSPI), so at interpreter start Pyodide wrote
  // `run_sync_not_supported` into the method table entry of `_pyodide_core.run_sync` (static
  // data, in the heap), and the restored heap keeps it: `run_sync` would then fail where this
  // engine supports it (worker mode waits on the main thread with it). Put this engine's
  // function back, as afterRestore does for the trampoline. On wasm32 `id()` of a builtin is
  // its address; PyCFunctionObject.m_ml follows the 8-byte object header, and
  // PyMethodDef.ml_meth the 4-byte ml_name.
  function restoreRunSync(pyodide) {
    const Module = pyodide._module;
    if (!Module.jspiSupported) return false;
    const table = Module.wasmTable;
    const slotOf = (fn) => {
      for (let i = 0; i < table.length; i++) {
        const entry = table.get(i);
        if (entry && (entry === fn || entry.name === fn.name)) return i;
      }
      return -1;
    };
    const supported = slotOf(Module._run_sync);
    const unsupported = slotOf(Module._run_sync_not_supported);
    const address = pyodide.runPython("import _pyodide_core; id(_pyodide_core.run_sync)");
    const methodDef = Module.HEAPU32[(address + 8) >>> 2];
    const cell = (methodDef + 4) >>> 2;
    if (supported < 0 || Module.HEAPU32[cell] !== unsupported) return false;
    Module.HEAPU32[cell] = supported;
    return true;
  }

  // Pyodide keeps loadPyodide's options for the runtime's life (pyodide._api.config); ours
  // hold the snapshot's bytes and, through prepare()'s hooks, the downloaded files and
  // libraries. Pyodide reads none of the three after start-up: drop them once restored.
  function releaseOptions(pyodide) {
    const config = pyodide._api && pyodide._api.config;
    if (!config) return;
    for (const key of ["_loadSnapshot", "createPyodideModule", "fsInit"]) config[key] = undefined;
  }

  // The snapshot's bytes, once copied into the heap, are freed at once by detaching their buffer
  // (ArrayBuffer.prototype.transfer(0)): unreferenced, they would wait for a full garbage
  // collection, which an idle page may not run for a long time. Only a buffer the script made
  // itself is freed so: a response body's buffer is also held by the browser's own wrapper
  // until that collection (boot.js reads the snapshot into its own).
  function discard(bytes) {
    const buffer = bytes && bytes.buffer;
    if (buffer && typeof buffer.transfer === "function" && !buffer.detached) buffer.transfer(0);
  }

  // Pages of the snapshot's heap that are what a freshly started runtime holds anyway (the
  // runtime's and the libraries' static data the interpreter never wrote) are not shipped: the
  // build zeroes them in snapshot.bin and lists them, and the page copies them from its own
  // fresh memory, taken once the C runtime is initialized and before Python starts.
  const PAGE = 4096;
  const SNAPSHOT_MAGIC = 0x706e7300; // Pyodide's, "\0snp"

  function freshPages(heap, fresh) {
    const count = Math.floor(Math.min(heap.length, fresh.length) / PAGE);
    const bits = new Uint8Array(Math.ceil(count / 8));
    for (let p = 0; p < count; p++) {
      const a = heap.subarray(p * PAGE, (p + 1) * PAGE), b = fresh.subarray(p * PAGE, (p + 1) * PAGE);
      let same = true;
      for (let i = 0; i < PAGE; i += 4) if (a[i] !== b[i] || a[i + 1] !== b[i + 1] || a[i + 2] !== b[i + 2] || a[i + 3] !== b[i + 3]) { same = false; break; }
      if (same && a.some((byte) => byte !== 0)) { bits[p >> 3] |= 1 << (p & 7); a.fill(0); }
    }
    return bits;
  }

  function fillFreshPages(heap, fresh, bits) {
    for (let p = 0; p < bits.length * 8; p++) {
      if (bits[p >> 3] & (1 << (p & 7))) heap.set(fresh.subarray(p * PAGE, (p + 1) * PAGE), p * PAGE);
    }
  }

  const toBase64 = (bytes) => btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(""));
  const fromBase64 = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

  // loadPyodide options that prepare the runtime; `files`, `dylibs` and `snapshot` (the bytes
  // to restore, or null when building one) may be promises.
  // `expected` is the layout recorded with the snapshot (restoring), or null (building).
  // Errors inside Emscripten's pre-run hooks are swallowed there, so they are kept and
  // rethrown once the module exists, before any heap is restored into it.
  // `freshBits` (base64, restoring) lists the heap pages to take from the fresh runtime.
  function prepare({ createModule, files, dylibs, snapshot, expected, freshBits }) {
    let failure = null;
    let Module = null;
    const state = { layout: null, trampoline: 0, fresh: null, sitePackages: null };
    return {
      state,
      options: {
        async createPyodideModule(settings) {
          Module = settings;
          // The build keeps the memory a fresh runtime has, before Python starts (main runs
          // right after this callback), to find the pages the page can take from its own.
          if (!snapshot) settings.onRuntimeInitialized = () => { state.fresh = settings.HEAPU8.slice(0, state.layout ? state.layout.heapTop : 0); };
          const module = await createModule(settings);
          mark("image:runtime-created");
          if (failure) throw failure;
          const difference = expected && layoutDifference(state.layout, expected);
          if (difference) throw new Error(`libraries did not land where the snapshot has them: ${difference}`);
          // Pyodide sizes the memory from the snapshot only when the wasm imports its memory;
          // ours defines it, so grow it here, before the heap is copied in.
          if (snapshot) {
            const bytes = await snapshot;
            module.growMemory(bytes.length);
            if (freshBits) {
              const [magic, offset] = new Uint32Array(bytes.buffer, bytes.byteOffset, 2);
              if (magic !== SNAPSHOT_MAGIC || offset >= bytes.length) throw new Error("the snapshot's header is corrupt");
              fillFreshPages(bytes.subarray(offset), module.HEAPU8, fromBase64(freshBits));
            }
            mark("image:heap-prepared");
          }
          return module;
        },
        async fsInit(FS, { sitePackages }) {
          try {
            state.sitePackages = sitePackages;
            state.trampoline = Module.HEAP32[trampolineCell(Module)];
            if (!state.trampoline) Module.wasmTable.grow(1);
            const fileList = await files;
            mark("image:files-ready");
            writeFiles(FS, sitePackages, fileList);
            mark("image:files-written");
            const tableStart = Module.wasmTable.length;
            await loadDylibs(Module, sitePackages, await dylibs);
            mark("image:dylibs-loaded");
            state.layout = layout(Module, tableStart);
          } catch (error) {
            failure = error;
          }
        },
      },
    };
  }

  return { STDLIB, untar, prepare, dlopenHandles, afterRestore, restoreRunSync, releaseOptions, discard, freshPages, toBase64 };
})();
