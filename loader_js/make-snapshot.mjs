// Build step (run by `mao-embed build-assets`): boot Pyodide in Node from the same npm package
// the page uses, prepared exactly as the loader prepares it (runtime-image.js), import our
// packages, and write the memory snapshot the page restores.
//
//   node make-snapshot.mjs <pyodide dir> <versioned asset dir> <site-packages.tar> <dylibs json> <scope> [<json>]
//
// scope "full": our packages imported and the protocol validators built; "stdlib": only the
// standard-library modules a full boot loads (found by booting fully in a first process, then
// importing just those in a second one), which makes a smaller snapshot; "list" (that first
// process): print {stdlib, imports, pyc} and exit, where `imports` are the site-packages modules
// the page's boot import loads, in the order they finish loading, and `pyc` the byte-compiled
// files of those, written into the directory given as <json>. A stdlib
// snapshot takes that record as <json>.
// Writes snapshot.bin (the heap) and snapshot.json (what the loader needs to restore it) into
// the asset directory, and prints snapshot.json.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

// Errors are reported as message and stack only: Node's default report quotes the failing line,
// which in Pyodide's minified runtime is a megabyte long.
process.on("uncaughtException", (error) => {
  console.error("make-snapshot failed:", error && error.stack ? error.stack : error);
  process.exit(1);
});

// Free memory still holds whatever was there before (import-time buffers, freed objects), which
// compresses badly. Take every free chunk malloc has without growing the heap, zero it, and give
// it back: only malloc's own bookkeeping words stay. Memory above the break is zeroed as well.
function zeroFreeMemory(Module) {
  const top = () => Module.HEAPU32[Module._emscripten_get_sbrk_ptr() >>> 2];
  const taken = [];
  for (let size = 1 << 20; size >= 16; size >>= 1) {
    for (;;) {
      const before = top();
      const pointer = Module._malloc(size);
      if (!pointer) break;
      if (top() !== before) { // it grew the heap: give that back and try smaller chunks
        Module._free(pointer);
        Module._malloc_trim(0);
        break;
      }
      Module.HEAPU8.fill(0, pointer, pointer + size);
      taken.push(pointer);
    }
  }
  for (const pointer of taken) Module._free(pointer);
  Module._malloc_trim(0);
  Module.HEAPU8.fill(0, top());
  return taken.length;
}

const here = path.dirname(fileURLToPath(import.meta.url));
const [pyodideDir, assetDir, tarPath, dylibsJson, scope = "full", extra = "{}"] = process.argv.slice(2);
const MaoImage = new Function(fs.readFileSync(path.join(here, "runtime-image.js"), "utf8") + "\nreturn MaoImage;")();

const { loadPyodide } = await import(pathToFileURL(path.join(pyodideDir, "pyodide.mjs")).href);
const createModule = (await import(pathToFileURL(path.join(pyodideDir, "pyodide.asm.mjs")).href)).default;
const dylibList = JSON.parse(dylibsJson);
const dylibs = await Promise.all(dylibList.map(async (rel) => {
  const bytes = fs.readFileSync(path.join(assetDir, "dylibs", rel));
  return { path: rel, bytes, module: await WebAssembly.compile(bytes) };
}));
const image = MaoImage.prepare({
  createModule,
  files: MaoImage.untar(fs.readFileSync(tarPath)),
  dylibs,
  snapshot: null,
  expected: null,
});
const pyodide = await loadPyodide({
  indexURL: pyodideDir + "/",
  stdLibURL: path.join(assetDir, MaoImage.STDLIB),
  _makeSnapshot: true,
  args: [],
  stdout: (line) => console.error("[py]", line),
  stderr: (line) => console.error("[py]", line),
  ...image.options,
});
const Module = pyodide._module;
const imageModule = pyodide.pyimport("mao_page.image");
if (scope === "list") {
  const imports = imageModule.boot_imports("mao_page.runtime").toJs();
  imageModule.prepare_image("full").destroy();
  const stdlib = imageModule.standard_library_modules().toJs();
  const pyc = imageModule.compile_modules(pyodide.toPy(imports)).toJs();
  for (const rel of pyc) {
    const target = path.join(extra, rel);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, Module.FS.readFile(image.state.sitePackages + "/" + rel));
  }
  console.log(JSON.stringify({ stdlib, imports, pyc }));
  process.exit(0);
}
const record = JSON.parse(extra);
const prepared = imageModule.prepare_image(scope, pyodide.toPy(record.stdlib || []));
const modules = prepared.toJs();
prepared.destroy();
imageModule.destroy();
// Pyodide lists the dist-infos it found in site-packages as loaded; the snapshot wants that
// table empty (it is JS state), and the page does not read it.
for (const name of Object.keys(pyodide.loadedPackages)) delete pyodide.loadedPackages[name];
zeroFreeMemory(Module);
const heapTop = Module.HEAPU32[Module._emscripten_get_sbrk_ptr() >>> 2];
// The snapshot covers the whole memory; everything above the break is zero and need not be
// shipped (the restored runtime grows its memory again when malloc asks).
const full = pyodide.makeMemorySnapshot();
const headerBytes = new Uint32Array(full.buffer, full.byteOffset, 2)[1];
const snapshot = full.subarray(0, headerBytes + Math.ceil(heapTop / 65536) * 65536);
const freshBits = MaoImage.freshPages(snapshot.subarray(headerBytes), image.state.fresh);
fs.writeFileSync(path.join(assetDir, "snapshot.bin"), snapshot);
const meta = {
  format: 1,
  buildId: process.env.MAO_BUILD_ID || null,
  scope,
  pyodideVersion: pyodide.version,
  bytes: snapshot.length,
  heapTop,
  layout: image.state.layout,
  dylibs: dylibList,
  handles: MaoImage.dlopenHandles(Module),
  freshPages: MaoImage.toBase64(freshBits),
  modules: modules.length,
  // What the page imports after restoring a stdlib image, one step at a time.
  imports: scope === "full" ? [] : record.imports || [],
};
fs.writeFileSync(path.join(assetDir, "snapshot.json"), JSON.stringify(meta, null, 1));
// One line for the build log; the whole record (function-table slots, page bitmap) is in
// snapshot.json.
console.error(`snapshot: ${meta.scope}, ${meta.bytes} bytes, ${meta.modules} modules, build ${meta.buildId}`);
