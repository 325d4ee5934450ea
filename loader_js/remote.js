// Calls between the page's Python in a Web Worker and the main thread's objects (SPEC E6,
// docs/startup.md "Worker mode").
//
// The runtime in the worker uses the same host object as on the main thread (`_mao_host`:
// primitives, panel, window, connection); here each of those is a *remote*: a stand-in whose
// method calls become one message to the main thread and a Promise of the answer (the Python
// side waits for it with JSPI, `pyodide.ffi.run_sync`: mao_page.bridge.browser.settle).
//
// What crosses, both ways, is structured-clone data. What cannot or must not be copied stays
// where it is and crosses as a reference into a registry on the main thread:
//   - DOM nodes, windows, class instances and functions;
//   - an array holding only nodes (a walk's `nodes`): the array, not each element, so that a
//     10,000-element walk costs one entry; its items are reached by index in the worker
//     (`nodes[i]` makes a path, no message) and resolved on the main thread when used;
//   - a plain object is copied, and if it holds references or functions it is registered too,
//     so that passing the copy back (a probe, a rendering) gives the main thread its original.
// A reference lives as long as the worker holds a stand-in for it: a FinalizationRegistry in
// the worker tells the main thread which ones it dropped, in batches.
// Callbacks go the other way: a function the worker passes (the panel's input handler, the
// connection's frame handler) becomes a function on the main thread that posts its arguments.
"use strict";

const MaoRemote = (() => {
  const REF = "__maoRef";   // {__maoRef: id, path?: [...], kind?: "node" | "nodes" | "fn", length?}
  const OBJ = "__maoObj";   // {__maoObj: {...copied}, __maoRef?: id}
  const FN = "__maoFn";     // {__maoFn: id}: a worker callback

  const isView = (v) => ArrayBuffer.isView(v) || v instanceof ArrayBuffer;
  const isPlain = (v) => {
    const proto = Object.getPrototypeOf(v);
    return proto === Object.prototype || proto === null;
  };
  // Not `instanceof Node`: a same-origin frame's nodes come from another realm.
  const isNode = (v) => v !== null && typeof v === "object" && typeof v.nodeType === "number" && "ownerDocument" in v;

  // ---- the main thread: the registry and the handler of the worker's calls ------------------
  function serve(worker, roots, { onCallbackError } = {}) {
    const objects = new Map(); // id -> object
    let nextId = 1;
    const register = (value) => { const id = nextId++; objects.set(id, value); return id; };
    for (const [id, value] of Object.entries(roots)) objects.set(Number(id), value);
    nextId = Math.max(nextId, ...Object.keys(roots).map(Number)) + 1;

    function resolve(ref) {
      let value = objects.get(ref[REF]);
      if (value === undefined) throw new Error(`released reference ${ref[REF]}`);
      for (const key of ref.path || []) value = value[key];
      return value;
    }

    function encode(value) {
      if (value === null || value === undefined) return null;
      const type = typeof value;
      if (type !== "object" && type !== "function") return value;
      if (isView(value)) return value;
      if (type === "function") return { [REF]: register(value), kind: "fn" };
      if (isNode(value)) return { [REF]: register(value), kind: value.nodeType === 1 ? "node" : "other" };
      if (Array.isArray(value)) {
        if (value.length && value.every((v) => v === null || v === undefined || isNode(v))) {
          return { [REF]: register(value), kind: "nodes", length: value.length };
        }
        return value.map(encode);
      }
      if (!isPlain(value)) return { [REF]: register(value), kind: "other" };
      const copied = {};
      let id = 0;
      for (const [key, item] of Object.entries(value)) {
        if (typeof item === "function") {
          id = id || register(value);
          copied[key] = { [REF]: id, path: [key], kind: "fn" };
        } else {
          copied[key] = encode(item);
          if (!id && item !== null && typeof item === "object" && !isView(item) && containsRef(copied[key])) id = register(value);
        }
      }
      return id ? { [OBJ]: copied, [REF]: id } : { [OBJ]: copied };
    }
    const containsRef = (v) => v !== null && typeof v === "object" && !isView(v) &&
      (REF in v || (OBJ in v ? Object.values(v[OBJ]).some(containsRef) : Array.isArray(v) && v.some(containsRef)));

    function decode(value) {
      if (value === null || typeof value !== "object" || isView(value)) return value;
      if (Array.isArray(value)) return value.map(decode);
      if (REF in value) return resolve(value);
      if (FN in value) {
        const id = value[FN];
        return (...args) => { worker.postMessage({ type: "callback", id, args: args.map(encode) }); };
      }
      if (OBJ in value) {
        const out = {};
        for (const [key, item] of Object.entries(value[OBJ])) out[key] = decode(item);
        return out;
      }
      return value;
    }

    async function call(message) {
      const target = resolve({ [REF]: message.target, path: message.path.slice(0, -1) });
      const name = message.path[message.path.length - 1];
      const fn = name === undefined ? target : target[name];
      if (typeof fn !== "function") throw new TypeError(`${message.path.join(".") || "target"} is not a function`);
      const args = message.args.map(decode);
      let result = name === undefined ? fn(...args) : fn.apply(target, args);
      if (result && typeof result.then === "function") result = await result;
      return encode(result);
    }

    let calls = 0;
    async function onMessage(message) {
      if (message.type === "call") {
        calls++;
        try {
          const value = await call(message);
          if (message.id) worker.postMessage({ type: "reply", id: message.id, value });
        } catch (error) {
          if (message.id) worker.postMessage({ type: "reply", id: message.id, error: String(error && error.message || error) });
          else if (onCallbackError) onCallbackError(error);
        }
      } else if (message.type === "release") {
        for (const id of message.ids) objects.delete(id);
      }
    }
    // Everything registered that can be disposed (the page watchers), for a worker that ends
    // without running its own clean-up.
    function disposeAll() {
      for (const value of objects.values()) {
        if (value && typeof value === "object" && !isNode(value) && typeof value.dispose === "function") {
          try { value.dispose(); } catch (error) { /* already gone */ }
        }
      }
      objects.clear();
    }
    return { onMessage, disposeAll, get size() { return objects.size; }, get calls() { return calls; } };
  }

  // ---- the worker: stand-ins for the main thread's objects ---------------------------------
  function connect(port, { isPyCallable, toJs }) {
    const pending = new Map();
    let nextCall = 1;
    const callbacks = new Map(); // id -> PyProxy (called with callPromising: may wait on the main thread)
    let nextCallback = 1;
    const callbackIds = new WeakMap();
    const refOf = new WeakMap(); // stand-in or copied object -> {id, path}
    const kindOf = new WeakMap();
    // Stand-ins dropped by Python: their ids go back to the main thread, a batch per tick.
    let released = [];
    const finalizer = new FinalizationRegistry((id) => {
      if (!released.length) setTimeout(() => { port.postMessage({ type: "release", ids: released }); released = []; }, 0);
      released.push(id);
    });
    // Names Pyodide asks of any object it wraps, to decide what Python sees (awaitable, iterator,
    // mapping, sized): a stand-in has none of them, or every call would go remote.
    const LOCAL = new Set(["then", "next", "get", "set", "has", "includes", "entries", "keys", "values",
      "size", "byteLength", "toJSON", "constructor", "prototype", "call", "apply", "bind",
      "toString", "valueOf", "__proto__"]);

    function remote(token, path, kind, length, statics) {
      // An array of nodes stands in as an array (Python indexes it); anything else as a function
      // (Python calls it: a method of the object it belongs to).
      const target = kind === "nodes" ? [] : function () {};
      const proxy = new Proxy(target, {
        get(_, key) {
          if (typeof key === "symbol") return undefined;
          if (statics && key in statics) return statics[key];
          if (key === "nodeType") return kind === "node" ? 1 : undefined;
          if (key === "length") return length;
          if (LOCAL.has(key)) return undefined;
          const index = /^\d+$/.test(key) ? Number(key) : key;
          return remote(token, [...path, index], kind === "nodes" ? "node" : undefined, undefined, null);
        },
        apply(_, __, args) { return send(token.id, path, args); },
      });
      refOf.set(proxy, { token, path });
      return proxy;
    }
    function root(id, statics) {
      return remote({ id }, [], "other", undefined, statics);
    }

    function send(target, path, args, wantsReply = true) {
      const id = wantsReply ? nextCall++ : 0;
      const message = { type: "call", id, target, path, args: args.map(encode) };
      if (!wantsReply) { port.postMessage(message); return undefined; }
      const answer = new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        port.postMessage(message);
      });
      answer.catch(() => {}); // a call nobody waits for (a panel update) fails quietly
      return answer;
    }

    function encode(value) {
      if (value === null || value === undefined) return null;
      const type = typeof value;
      if (type !== "object" && type !== "function") return value;
      if (isView(value)) return value;
      const ref = refOf.get(value);
      if (ref) return { [REF]: ref.token.id, path: ref.path };
      if (isPyCallable(value)) {
        let id = callbackIds.get(value);
        if (!id) { id = nextCallback++; callbackIds.set(value, id); callbacks.set(id, value); }
        return { [FN]: id };
      }
      const converted = toJs(value);
      if (converted !== value) return encode(converted);
      if (Array.isArray(value)) return value.map(encode);
      const copied = {};
      for (const [key, item] of Object.entries(value)) copied[key] = encode(item);
      return { [OBJ]: copied };
    }

    function decode(value) {
      if (value === null || typeof value !== "object" || isView(value)) return value;
      if (Array.isArray(value)) return value.map(decode);
      if (OBJ in value) {
        const out = {};
        const token = REF in value ? { id: value[REF] } : null;
        if (token) {
          finalizer.register(token, token.id);
          refOf.set(out, { token, path: [] });
        }
        for (const [key, item] of Object.entries(value[OBJ])) {
          // Its methods are stand-ins holding the object's token: alive while any of them is.
          out[key] = token && item && item[REF] === token.id
            ? remote(token, item.path, "fn", undefined, null)
            : decode(item);
        }
        return out;
      }
      if (REF in value) {
        const token = { id: value[REF] };
        finalizer.register(token, token.id);
        return remote(token, value.path || [], value.kind, value.length, null);
      }
      return value;
    }

    function onMessage(message) {
      if (message.type === "reply") {
        const call = pending.get(message.id);
        if (!call) return true;
        pending.delete(message.id);
        if ("error" in message) call.reject(new Error(message.error));
        else call.resolve(decode(message.value));
        return true;
      }
      if (message.type === "callback") {
        const fn = callbacks.get(message.id);
        if (fn && !fn.destroyed) {
          Promise.resolve(fn.callPromising(...message.args.map(decode))).catch((error) => console.error("[mao-embed] callback failed", error));
        }
        return true;
      }
      return false;
    }
    // A call whose answer nobody needs (the panel's updates): one message, no reply.
    const post = (stand, args) => { const ref = refOf.get(stand); send(ref.token.id, ref.path, args, false); };
    const failAll = (error) => { for (const call of pending.values()) call.reject(error); pending.clear(); };
    return { root, onMessage, post, failAll, get waiting() { return pending.size; } };
  }

  return { serve, connect };
})();
