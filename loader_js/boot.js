// Booting the Python runtime (docs/startup.md): the downloads, restoring the booted-runtime
// image (runtime-image.js) or starting Python from scratch, importing the SDK in slices.
// Nothing here runs before the first use (SPEC E6) unless the page asks for an eager boot.
"use strict";

const MaoBoot = (() => {
  // assetBase: /sdk/<build>/ of the backend that served the loader; buildId: the loader's.
  function create(assetBase, buildId) {
    const BUILD_ID = buildId;
    // What blocks the main thread while booting (instantiating the runtime, copying the snapshot
    // into it, Python itself) comes in separate tasks with yields between them, so input that
    // arrives meanwhile is handled between them (SPEC E4).
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
      if (typeof document === "undefined") return Promise.resolve(); // a worker has no page to wait for
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
      // Read into a buffer of our own (its size is in snapshot.json), not the body's buffer the
      // browser makes: detached once restored, ours is freed at once (MaoImage.discard).
      const snapshot = Promise.all([fetchOk(assetBase + "snapshot.bin"), meta]).then(async ([response, m]) => {
        const bytes = new Uint8Array(m.bytes);
        const reader = response.body.getReader();
        let at = 0;
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          if (at + value.length > bytes.length) throw new Error(`snapshot has more than the ${m.bytes} bytes expected`);
          bytes.set(value, at);
          at += value.length;
        }
        return at === bytes.length ? bytes : bytes.subarray(0, at);
      });
      const files = fetchOk(assetBase + "site-packages.tar").then((r) => r.arrayBuffer()).then((b) => MaoImage.untar(b));
      // Only the libraries' code is needed: compiled while it downloads, no copy of the bytes
      // kept. A full image has imported their Python modules already; a smaller one imports them
      // after the restore, and Python's import wants a file there to find (`stub`, runtime-image.js).
      const dylibs = meta.then((m) => Promise.all(m.dylibs.map(async (path) => ({
        path, stub: m.scope !== "full", module: await WebAssembly.compileStreaming(fetchOk(assetBase + "dylibs/" + path)),
      }))));
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
      MaoImage.releaseOptions(pyodide);
      MaoImage.discard(await snapshot);
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

    // The downloads (and the wasm compiles that run while they stream) start here: on the
    // pointer moving over the launcher, before the click that boots. Off the main thread.
    // load() takes them over: once the runtime has them, nothing here holds them any more.
    let downloads = null;
    let pyodidePromise = null; // one interpreter per page; re-init after destroy reuses it
    function prefetch() {
      if (!downloads && !pyodidePromise) {
        performance.mark("mao:prefetch");
        downloads = { image: fetchImage(), pyodideModule: import(assetBase + "pyodide.mjs") };
        downloads.pyodideModule.catch(() => {}); // reported by load()
      }
      return downloads;
    }

    function load() {
      if (!pyodidePromise) {
        pyodidePromise = (async () => {
          let { image, pyodideModule } = prefetch();
          downloads = null;
          const { loadPyodide } = await pyodideModule;
          let pyodide = null;
          let imported = false;
          let imports = [];
          // restoreImage holds the image as long as it needs it; after that only the runtime's
          // file system keeps what it wrote (the files of the archive).
          const restoring = restoreImage(loadPyodide, image);
          image = null;
          try {
            ({ pyodide, imported, imports } = await restoring);
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

    return { prefetch, load };
  }
  return { create };
})();
