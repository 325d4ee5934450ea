// Site tools (SPEC B8; docs/site-tools.md): the WebMCP tools a page declares, kept where the
// agents can reach them before, and without, the Python runtime.
//
// The WebMCP draft (W3C Web Machine Learning CG, https://webmachinelearning.github.io/webmcp/)
// moves, so both of its shapes are accepted here, by one registry:
//
// - the current text: `document.modelContext`, an EventTarget whose `registerTool(tool,
//   {signal, exposedTo})` returns a Promise; a tool is removed by aborting its signal; a
//   `toolchange` event (and `ontoolchange`) tells listeners of every change;
// - the earlier shape that Chrome's developer trial and the polyfills ship:
//   `navigator.modelContext` with `registerTool(tool)`, `unregisterTool(name)`,
//   `provideContext({tools})` and `clearContext()`, whose `execute(input, client)` gets a
//   client with `requestUserInteraction(callback)`.
//
// Where the browser (or a script that ran before the loader) already has a model context, it
// is wrapped, not replaced: a registration reaches it unchanged and is also recorded here, so
// the page's own callers keep working. Registrations made before the loader ran are not seen
// (the draft has no way to list tools): the loader must come first.
//
// Declarative tools are forms marked `<form toolname tooldescription [toolautosubmit]>`, found by
// scanning the document, its open shadow roots and same-origin frames; each field with a name
// is a parameter, described by its `toolparamdescription`, else by its label.
//
// What Python gets (mao_page.sitetools through the bridge) is plain data: a tool's
// description as JSON text, and a Promise of the outcome of one call as JSON text. The
// tool's `execute` runs here, in the page's realm.
"use strict";

const MaoSiteTools = (() => {
  // The draft's tool name rule (ModelContext.registerTool step "tool name").
  const NAME = /^[A-Za-z0-9_.\-]{1,128}$/;
  const MAX_TOOLS = 64;
  const MAX_DESCRIPTION = 2000;
  const MAX_SCHEMA_CHARS = 20000;
  // What one call may answer (the tool's own output, JSON or text).
  const MAX_OUTPUT_CHARS = 100000;
  const HOOK = Symbol.for("mao-embed.site-tools");

  const tools = new Map(); // name -> entry
  const listeners = new Set();
  const contexts = new Set(); // our document.modelContext objects, for toolchange
  const calls = new Map(); // callId -> {settle}
  const hooks = { showPanel: null };
  let formNames = new Set();
  let changeQueued = false;

  function changed() {
    for (const context of contexts) {
      // The draft fires toolchange in a task of its own (webmcp task source).
      setTimeout(() => context.dispatchEvent(new Event("toolchange")), 0);
    }
    if (changeQueued) return;
    changeQueued = true;
    setTimeout(() => {
      changeQueued = false;
      for (const fn of listeners) {
        try { fn(); } catch (error) { console.error("[mao-embed] site tools listener failed", error); }
      }
    }, 0);
  }

  function invalid(message) {
    return new DOMException(message, "InvalidStateError");
  }

  // The checks of the draft's registerTool, and our limits; returns the entry or throws.
  function makeEntry(tool, source, win) {
    if (!tool || typeof tool !== "object") throw new TypeError("registerTool needs a tool object");
    const name = tool.name;
    if (typeof name !== "string" || !NAME.test(name)) throw invalid("tool name must be 1-128 characters of A-Z, a-z, 0-9, _, - or .");
    if (typeof tool.description !== "string" || !tool.description) throw invalid("tool description must be a non-empty string");
    if (source === "script" && typeof tool.execute !== "function") throw new TypeError("tool execute must be a function");
    let schema = "";
    if (tool.inputSchema !== undefined && (tool.inputSchema === null || typeof tool.inputSchema !== "object" || Array.isArray(tool.inputSchema))) {
      throw new TypeError("inputSchema must be a JSON Schema object");
    }
    if (tool.inputSchema !== undefined) {
      schema = JSON.stringify(tool.inputSchema);
      if (schema === undefined) throw new TypeError("inputSchema is not JSON-serializable");
    }
    if (schema.length > MAX_SCHEMA_CHARS) throw invalid(`inputSchema is longer than ${MAX_SCHEMA_CHARS} characters`);
    const annotations = tool.annotations && typeof tool.annotations === "object" ? tool.annotations : {};
    return {
      name,
      title: typeof tool.title === "string" ? tool.title.slice(0, 200) : "",
      description: tool.description.slice(0, MAX_DESCRIPTION),
      schema: schema || '{"type":"object","properties":{}}',
      readOnly: annotations.readOnlyHint === true,
      untrustedContent: annotations.untrustedContentHint === true,
      execute: tool.execute,
      tool,
      source,
      win,
      running: new Set(),
    };
  }

  function add(entry) {
    const existing = tools.get(entry.name);
    if (existing && existing.source === "form") {
      // A script tool takes its name from a form (the scan then leaves that form out).
      tools.delete(entry.name);
      for (const settle of existing.running) settle({ status: "not_found", message: `the page replaced the form tool ${entry.name}` });
    } else if (existing) throw invalid(`a tool named ${entry.name} is already registered`);
    if (tools.size >= MAX_TOOLS) throw invalid(`a page may register at most ${MAX_TOOLS} tools`);
    tools.set(entry.name, entry);
    changed();
  }

  function remove(entry) {
    if (tools.get(entry.name) !== entry) return;
    tools.delete(entry.name);
    for (const settle of entry.running) settle({ status: "not_found", message: `the page removed the tool ${entry.name} while it ran` });
    changed();
  }

  // -- the current draft: document.modelContext --------------------------------------------

  // registerTool(tool, {signal}) for a document: ours where the browser has none; around the
  // browser's where it has one (`native`), so both hold the registration.
  function registerFor(win, native) {
    return function registerTool(tool, options) {
      const signal = options && options.signal;
      let entry;
      try {
        entry = makeEntry(tool, "script", win);
      } catch (error) {
        if (native) return native.call(this, tool, options); // the browser words its refusal
        return Promise.reject(error);
      }
      if (signal && signal.aborted) return native ? native.call(this, tool, options) : Promise.reject(signal.reason);
      let answer;
      if (native) {
        answer = native.call(this, tool, options); // throws as the browser does
        Promise.resolve(answer).catch(() => remove(entry));
      }
      try {
        add(entry);
      } catch (error) {
        if (!native) return Promise.reject(error);
        return answer; // the browser holds it; we cannot (a name taken in another frame)
      }
      if (signal) signal.addEventListener("abort", () => remove(entry), { once: true });
      if (native) return answer;
      return new Promise((resolve, reject) => {
        setTimeout(resolve, 0);
        if (signal) signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      });
    };
  }

  function makeDocumentContext(win) {
    const context = new EventTarget();
    let handler = null;
    Object.defineProperties(context, {
      registerTool: { value: registerFor(win, null) },
      ontoolchange: {
        get: () => handler,
        set(fn) {
          if (handler) context.removeEventListener("toolchange", handler);
          handler = typeof fn === "function" ? fn : null;
          if (handler) context.addEventListener("toolchange", handler);
        },
      },
      [Symbol.toStringTag]: { value: "ModelContext" },
    });
    contexts.add(context);
    return context;
  }

  // -- the earlier shape: navigator.modelContext ------------------------------------------

  // Built on the document's context (ours or the browser's, wrapped), so a tool registered
  // this way reaches the browser too; unregisterTool aborts the registration's signal.
  function makeNavigatorContext(documentContext) {
    const owned = new Map(); // name -> AbortController
    function registerTool(tool) {
      makeEntry(tool, "script", null); // throws at once, as the earlier shape did
      const held = tools.get(tool.name);
      if (owned.has(tool.name) || (held && held.source === "script")) throw invalid(`a tool named ${tool.name} is already registered`);
      const controller = new AbortController();
      owned.set(tool.name, controller);
      Promise.resolve(documentContext.registerTool(tool, { signal: controller.signal })).catch(() => {});
      return { unregister: () => unregisterTool(tool.name) };
    }
    function unregisterTool(name) {
      const controller = owned.get(name);
      if (!controller) return;
      owned.delete(name);
      controller.abort();
    }
    function clearContext() {
      for (const name of [...owned.keys()]) unregisterTool(name);
    }
    function provideContext(options) {
      clearContext();
      for (const tool of (options && options.tools) || []) registerTool(tool);
    }
    return Object.freeze({ registerTool, unregisterTool, provideContext, clearContext });
  }

  // The browser's earlier-shape context, wrapped method by method: it keeps every call and
  // answer, and the registry follows.
  function wrapNavigatorContext(native) {
    const original = {};
    for (const method of ["registerTool", "unregisterTool", "provideContext", "clearContext"]) {
      if (typeof native[method] === "function") original[method] = native[method];
    }
    const mine = new Map();
    const forget = (name) => { const entry = mine.get(name); mine.delete(name); if (entry) remove(entry); };
    const track = (tool) => {
      let entry;
      try { entry = makeEntry(tool, "script", null); add(entry); } catch (error) { return; }
      mine.set(entry.name, entry);
    };
    const define = (method, fn) => Object.defineProperty(native, method, { value: fn, configurable: true, writable: true });
    if (original.registerTool) define("registerTool", function (tool, ...rest) {
      const answer = original.registerTool.call(this, tool, ...rest);
      track(tool);
      // Polyfills answer {unregister()}: that removes it here too.
      if (answer && typeof answer.unregister === "function") {
        const unregister = answer.unregister;
        try {
          answer.unregister = function (...args) { forget(tool.name); return unregister.apply(this, args); };
        } catch (error) { /* a frozen answer: the tool stays listed until the page changes */ }
      }
      return answer;
    });
    if (original.unregisterTool) define("unregisterTool", function (name, ...rest) {
      const answer = original.unregisterTool.call(this, name, ...rest);
      forget(name);
      return answer;
    });
    const clearMine = () => { for (const name of [...mine.keys()]) forget(name); };
    if (original.clearContext) define("clearContext", function (...rest) {
      const answer = original.clearContext.apply(this, rest);
      clearMine();
      return answer;
    });
    if (original.provideContext) define("provideContext", function (options, ...rest) {
      const answer = original.provideContext.call(this, options, ...rest);
      clearMine();
      for (const tool of (options && options.tools) || []) track(tool);
      return answer;
    });
  }

  // Gives `win` (the page, or a same-origin frame) its model contexts, once.
  function install(win) {
    let doc;
    try { doc = win.document; } catch (error) { return; }
    if (!doc || doc[HOOK]) return;
    Object.defineProperty(doc, HOOK, { value: true });
    let documentContext = doc.modelContext;
    if (documentContext && typeof documentContext.registerTool === "function") {
      const native = documentContext.registerTool;
      Object.defineProperty(documentContext, "registerTool", { value: registerFor(win, native), configurable: true, writable: true });
    } else {
      documentContext = makeDocumentContext(win);
      Object.defineProperty(doc, "modelContext", { value: documentContext, configurable: true });
    }
    const nav = win.navigator;
    if (nav.modelContext && typeof nav.modelContext.registerTool === "function") {
      wrapNavigatorContext(nav.modelContext);
    } else {
      Object.defineProperty(nav, "modelContext", { value: makeNavigatorContext(documentContext), configurable: true });
    }
    // A frame's tools leave with its document.
    if (win !== window) {
      win.addEventListener("pagehide", () => {
        for (const entry of [...tools.values()]) if (entry.win === win) remove(entry);
      });
    }
  }

  // -- declarative forms -------------------------------------------------------------------

  const SKIPPED_TYPES = new Set(["submit", "button", "reset", "image", "hidden", "file"]);
  const FORMATS = { email: "email", url: "uri", date: "date", time: "time", "datetime-local": "date-time" };

  function formName(form) {
    const raw = squash(form.getAttribute("toolname") || "");
    return raw.replace(/[^A-Za-z0-9_.\-]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 128);
  }

  function paramDescription(control) {
    const own = control.getAttribute("toolparamdescription");
    if (own) return squash(own);
    const label = control.labels && control.labels[0];
    const text = label ? squash(label.textContent) : "";
    return (text || squash(control.getAttribute("aria-label") || control.getAttribute("placeholder") || "")).slice(0, 500);
  }

  // The parameters of a form: what a field with a name takes (the draft leaves the synthesis
  // to implementations; this is ours, docs/site-tools.md "Declarative forms").
  function formFields(form) {
    const groups = new Map();
    for (const control of form.elements) {
      const name = control.name;
      const type = String(control.type || "").toLowerCase();
      if (!name || control.disabled || SKIPPED_TYPES.has(type) || control.localName === "fieldset" || control.localName === "output" || control.localName === "button") continue;
      if (!groups.has(name)) groups.set(name, []);
      groups.get(name).push(control);
    }
    return groups;
  }

  function fieldSchema(controls) {
    const first = controls[0];
    const type = String(first.type || "").toLowerCase();
    const schema = {};
    const description = controls.map(paramDescription).find(Boolean);
    if (type === "checkbox") {
      if (controls.length === 1) schema.type = "boolean";
      else Object.assign(schema, { type: "array", items: { type: "string", enum: controls.map((c) => c.value) }, uniqueItems: true });
    } else if (type === "radio") {
      Object.assign(schema, { type: "string", enum: controls.map((c) => c.value) });
    } else if (first.localName === "select") {
      const values = Array.from(first.options).filter((o) => !o.disabled).map((o) => o.value);
      if (first.multiple) Object.assign(schema, { type: "array", items: { type: "string", enum: values }, uniqueItems: true });
      else Object.assign(schema, { type: "string", enum: values });
    } else if (type === "number" || type === "range") {
      schema.type = "number";
      if (first.min !== "" && isFinite(Number(first.min))) schema.minimum = Number(first.min);
      if (first.max !== "" && isFinite(Number(first.max))) schema.maximum = Number(first.max);
    } else {
      schema.type = "string";
      if (FORMATS[type]) schema.format = FORMATS[type];
      if (first.maxLength > 0) schema.maxLength = first.maxLength;
      if (first.minLength > 0) schema.minLength = first.minLength;
      if (first.pattern) schema.pattern = "^(?:" + first.pattern + ")$";
    }
    if (description) schema.description = description;
    return schema;
  }

  function formSchema(form) {
    const properties = {};
    const required = [];
    for (const [name, controls] of formFields(form)) {
      properties[name] = fieldSchema(controls);
      if (controls.some((c) => c.required) && !(controls[0].type === "checkbox" && controls.length === 1)) required.push(name);
    }
    const schema = { type: "object", properties, additionalProperties: false };
    if (required.length) schema.required = required;
    return schema;
  }

  // Every `form[toolname]` of `doc`, its open shadow roots and same-origin frames (which get
  // our model contexts on the way, for tools their scripts register later).
  function findForms(doc, out, depth) {
    if (depth > 8) return;
    const roots = [doc];
    for (let i = 0; i < roots.length; i++) {
      const root = roots[i];
      for (const form of root.querySelectorAll("form[toolname]")) out.push(form);
      const walker = (root.ownerDocument || root).createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
      for (let el = walker.nextNode(); el; el = walker.nextNode()) {
        if (el.shadowRoot) roots.push(el.shadowRoot);
        if (el.localName === "iframe" || el.localName === "frame") {
          const inner = sameOriginDocument(el);
          if (inner && !el.hasAttribute("data-mao-embed-host")) {
            install(inner.defaultView);
            findForms(inner, out, depth + 1);
          }
        }
      }
    }
  }

  // Brings the form tools up to date with the document: new forms in, gone forms out.
  function scanForms() {
    const started = performance.now();
    const found = [];
    findForms(document, found, 0);
    performance.measure("mao:site-tools-scan", { start: started });
    const seen = new Set();
    let dirty = false;
    for (const form of found) {
      const name = formName(form);
      if (!name || seen.has(name)) continue;
      const existing = tools.get(name);
      if (existing && existing.source === "script") continue; // a script tool wins its name
      seen.add(name);
      const description = squash(form.getAttribute("tooldescription") || "") || name;
      const schema = JSON.stringify(formSchema(form));
      const autosubmit = form.hasAttribute("toolautosubmit");
      if (existing && existing.form === form && existing.schema === schema && existing.description === description && existing.autosubmit === autosubmit) continue;
      if (existing) { tools.delete(name); for (const settle of existing.running) settle({ status: "not_found", message: `the form of ${name} changed while it ran` }); }
      if (!existing && tools.size >= MAX_TOOLS) continue;
      tools.set(name, {
        name, title: "", description: description.slice(0, MAX_DESCRIPTION), schema, readOnly: false, untrustedContent: false,
        source: "form", form, autosubmit, win: form.ownerDocument.defaultView, running: new Set(),
      });
      dirty = true;
    }
    for (const name of formNames) {
      const entry = tools.get(name);
      if (entry && entry.source === "form" && !seen.has(name)) {
        tools.delete(name);
        for (const settle of entry.running) settle({ status: "not_found", message: `the page removed the form of ${name} while it ran` });
        dirty = true;
      }
    }
    formNames = seen;
    if (dirty) changed();
  }

  // Whether added nodes may bring a form tool: a form with a toolname, something holding one,
  // a frame, or a custom element (whose open shadow root a later scan walks).
  function mayBringForms(node) {
    if (node.nodeType !== 1) return false;
    if (node.localName.includes("-") || node.shadowRoot) return true;
    return !!(node.matches("form[toolname], iframe, frame") || node.querySelector("form[toolname], iframe, frame"));
  }

  // Watches the document for forms that come, go or change their tool attributes. Mutations
  // that cannot concern a form tool cost a check per record and no scan (a page that changes
  // all the time pays nearly nothing, SPEC E6); the others schedule one scan within 200 ms,
  // however many there are.
  function watchForms() {
    let timer = 0;
    const later = () => { if (!timer) timer = setTimeout(() => { timer = 0; scanForms(); }, 200); };
    const formGone = () => {
      for (const name of formNames) {
        const entry = tools.get(name);
        if (entry && entry.form && !entry.form.isConnected) return true;
      }
      return false;
    };
    const observer = new MutationObserver((records) => {
      if (timer) return;
      for (const record of records) {
        if (record.type === "attributes") { later(); return; }
        // A field added to or removed from a tool's form changes its parameters.
        if (record.target.nodeType === 1 && record.target.closest("form[toolname]")) { later(); return; }
        for (const node of record.addedNodes) if (mayBringForms(node)) { later(); return; }
        if (record.removedNodes.length && formGone()) { later(); return; }
      }
    });
    observer.observe(document, {
      subtree: true, childList: true, attributes: true,
      attributeFilter: ["toolname", "tooldescription", "toolautosubmit", "toolparamdescription", "name", "required"],
    });
    const onLoad = (event) => { if (event.target && event.target.localName === "iframe") later(); };
    document.addEventListener("load", onLoad, true);
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", scanForms, { once: true });
    else scanForms();
    return () => { observer.disconnect(); clearTimeout(timer); document.removeEventListener("load", onLoad, true); };
  }

  // -- running a tool ----------------------------------------------------------------------

  // The tool's output as JSON text, capped: JSON where it has a JSON form, else its text.
  function encodeOutput(value) {
    if (value === undefined) return { status: "ok", json: "null" };
    if (typeof value === "string") return capped({ status: "ok", text: value });
    let json;
    try { json = JSON.stringify(value); } catch (error) { json = undefined; }
    if (json === undefined) return capped({ status: "ok", text: String(value) });
    if (json.length > MAX_OUTPUT_CHARS) return capped({ status: "ok", text: json });
    return { status: "ok", json };
  }

  function capped(outcome) {
    if (outcome.text.length <= MAX_OUTPUT_CHARS) return outcome;
    return { status: "ok", text: outcome.text.slice(0, MAX_OUTPUT_CHARS), truncated: true };
  }

  function errorOutcome(error) {
    const message = error && typeof error === "object" && "message" in error ? String(error.message) : String(error);
    const name = error && typeof error === "object" && typeof error.name === "string" ? error.name : "";
    return { status: "error", message: message.slice(0, 2000), name: name.slice(0, 80) };
  }

  // The earlier shape's second argument to execute: requestUserInteraction opens the panel
  // (the user sees what the agent is doing) and runs the page's callback.
  function makeClient() {
    return Object.freeze({
      requestUserInteraction(callback) {
        if (hooks.showPanel) hooks.showPanel();
        return Promise.resolve().then(() => callback());
      },
    });
  }

  // Sets a form control's value as typing would: the prototype's native setter (frameworks
  // track the own property), then input and change.
  function setControl(control, value) {
    const proto = control.localName === "textarea" ? HTMLTextAreaElement.prototype
      : control.localName === "select" ? HTMLSelectElement.prototype : HTMLInputElement.prototype;
    const setter = Object.getOwnPropertyDescriptor(proto, "value").set;
    setter.call(control, value);
    control.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
    control.dispatchEvent(new Event("change", { bubbles: true }));
  }

  function setChecked(control, checked) {
    if (control.checked === checked) return;
    control.checked = checked;
    control.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
    control.dispatchEvent(new Event("change", { bubbles: true }));
  }

  function fillForm(form, args) {
    const filled = [];
    const groups = formFields(form);
    for (const [name, value] of Object.entries(args)) {
      const controls = groups.get(name);
      if (!controls) continue;
      const first = controls[0];
      const type = String(first.type || "").toLowerCase();
      if (type === "checkbox" && controls.length === 1) setChecked(first, value === true);
      else if (type === "checkbox") for (const c of controls) setChecked(c, Array.isArray(value) && value.includes(c.value));
      else if (type === "radio") for (const c of controls) { if (c.value === String(value)) setChecked(c, true); }
      else if (first.localName === "select" && first.multiple) {
        const wanted = new Set(Array.isArray(value) ? value.map(String) : [String(value)]);
        for (const option of first.options) option.selected = wanted.has(option.value);
        first.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
        first.dispatchEvent(new Event("change", { bubbles: true }));
      } else setControl(first, String(value));
      filled.push(name);
    }
    return filled;
  }

  // A declarative call: fill the form where the user sees it, then submit it when the form
  // says the agent may (toolautosubmit), else wait for the user's own submit. The submit
  // event gets the draft explainer's `agentInvoked` and `respondWith(promise)`, through which
  // the page's handler may answer the agent without navigating.
  function runForm(entry, args, settle, call) {
    const form = entry.form;
    const win = form.ownerDocument.defaultView;
    if (!form.isConnected) { settle({ status: "not_found", message: `the form of ${entry.name} is gone` }); return; }
    try { form.scrollIntoView({ block: "nearest" }); } catch (error) { /* a detached frame */ }
    const filled = fillForm(form, args);
    let lastUserInput = -Infinity;
    const onInput = (event) => { if (event.isTrusted && form.contains(event.target)) lastUserInput = performance.now(); };
    let agentSubmit = false;
    const onSubmit = (event) => {
      if (event.target !== form) return;
      let response = null;
      Object.defineProperty(event, "agentInvoked", { value: agentSubmit, configurable: true });
      Object.defineProperty(event, "respondWith", {
        configurable: true,
        value(promise) {
          if (!event.defaultPrevented) throw new DOMException("call preventDefault() before respondWith()", "InvalidStateError");
          response = Promise.resolve(promise);
        },
      });
      // After the page's own handlers (a task later): prevented, answered, or navigating.
      setTimeout(() => {
        const by = agentSubmit ? "agent" : performance.now() - lastUserInput < 2000 ? "user" : "page";
        const base = { filled, submitted: true, by };
        if (response) {
          response.then(
            (value) => settle(Object.assign(encodeOutput(Object.assign(base, { response: value === undefined ? null : value })))),
            (error) => settle(errorOutcome(error)));
        } else settle(encodeOutput(Object.assign(base, { navigating: !event.defaultPrevented })));
      }, 0);
    };
    const onReset = (event) => { if (event.target === form) settle({ status: "cancelled", message: "the form was reset" }); };
    win.addEventListener("submit", onSubmit, true);
    win.addEventListener("reset", onReset, true);
    win.addEventListener("pointerdown", onInput, true);
    win.addEventListener("keydown", onInput, true);
    call.cleanup = () => {
      win.removeEventListener("submit", onSubmit, true);
      win.removeEventListener("reset", onReset, true);
      win.removeEventListener("pointerdown", onInput, true);
      win.removeEventListener("keydown", onInput, true);
    };
    if (entry.autosubmit) {
      if (!form.checkValidity()) {
        const bad = Array.from(form.elements).filter((c) => c.willValidate && !c.validity.valid)
          .map((c) => `${c.name || c.type}: ${c.validationMessage}`).slice(0, 5);
        settle({ status: "invalid", message: "the form refused the values: " + bad.join("; "), filled });
        return;
      }
      agentSubmit = true;
      form.requestSubmit();
      return;
    }
    // The user checks the form and submits it: show them where.
    const button = form.querySelector("button:not([type]), button[type=submit], input[type=submit]");
    try { (button || form.elements[0]).focus({ preventScroll: true }); } catch (error) { /* nothing focusable */ }
    if (hooks.showPanel) hooks.showPanel();
  }

  // One call of a tool: a Promise of the outcome as JSON text, never a rejection.
  // {status: ok|error|not_found|timeout|cancelled|invalid, json?|text?, message?, ...}
  function run(callId, name, argumentsJson, timeoutMs) {
    return new Promise((resolve) => {
      const entry = tools.get(name);
      if (!entry) { resolve(JSON.stringify({ status: "not_found", message: `the page has no tool named ${name}` })); return; }
      const call = { cleanup: null };
      let timer = 0;
      const settle = (outcome) => {
        if (!calls.has(callId)) return;
        calls.delete(callId);
        entry.running.delete(settle);
        clearTimeout(timer);
        if (call.cleanup) call.cleanup();
        resolve(JSON.stringify(outcome));
      };
      calls.set(callId, settle);
      entry.running.add(settle);
      timer = setTimeout(() => settle({ status: "timeout", message: `${name} did not finish within ${timeoutMs} ms` }), Math.max(0, timeoutMs));
      let args;
      try { args = JSON.parse(argumentsJson); } catch (error) { settle({ status: "invalid", message: "arguments are not JSON" }); return; }
      if (entry.source === "form") { runForm(entry, args, settle, call); return; }
      let answer;
      try {
        answer = entry.execute.call(entry.tool, args, makeClient());
      } catch (error) {
        settle(errorOutcome(error));
        return;
      }
      Promise.resolve(answer).then((value) => settle(encodeOutput(value)), (error) => settle(errorOutcome(error)));
    });
  }

  function cancel(callId) {
    const settle = calls.get(callId);
    if (settle) settle({ status: "cancelled", message: "cancelled" });
  }

  function describe(entry) {
    return { name: entry.name, title: entry.title || undefined, description: entry.description, inputSchema: JSON.parse(entry.schema), readOnly: entry.readOnly, source: entry.source, untrustedContent: entry.untrustedContent || undefined };
  }

  // Drops the tools of frames that went away without a pagehide we heard.
  function prune() {
    for (const entry of [...tools.values()]) {
      let gone = false;
      try { gone = !!entry.win && entry.win !== window && (entry.win.closed || !entry.win.frameElement || !entry.win.frameElement.isConnected); } catch (error) { gone = true; }
      if (gone) remove(entry);
    }
  }

  function list() {
    prune();
    return [...tools.values()].map(describe);
  }

  // In a same-origin frame whose parent runs the SDK, the frame's tools go to the parent's
  // registry (the one agents reach); elsewhere this window keeps its own.
  let parentHook = null;
  try { if (window.parent !== window && window.parent[HOOK]) parentHook = window.parent[HOOK]; } catch (error) { parentHook = null; }
  if (parentHook) parentHook.install(window);
  else install(window);
  // A frame's own loader (a frame that loads the SDK to register tools early) reaches the
  // top page's registry through this: same-origin only, as the property read itself is.
  if (!(HOOK in window)) Object.defineProperty(window, HOOK, { value: Object.freeze({ install }) });

  return {
    list,
    onChange(fn) { listeners.add(fn); return () => listeners.delete(fn); },
    watchForms,
    scanForms,
    setPanelOpener(fn) { hooks.showPanel = fn; },
    run,
    cancel,
    // For the runtime: the listed fields, and for a form whether it submits itself and where.
    describeJson(name) {
      prune();
      const entry = tools.get(name);
      if (!entry) return null;
      const described = describe(entry);
      if (entry.source === "form") Object.assign(described, { autosubmit: entry.autosubmit, formAction: String(entry.form.action || "") });
      return JSON.stringify(described);
    },
  };
})();

// For the runtime (mao_page.bridge.browser.SiteToolBridge): plain arguments, plain answers.
Object.assign(MaoDom, {
  siteToolDescribe: (name) => MaoSiteTools.describeJson(String(name)),
  siteToolRun: (callId, name, argumentsJson, timeoutMs) => MaoSiteTools.run(String(callId), String(name), String(argumentsJson), Number(timeoutMs)),
  siteToolCancel: (callId) => MaoSiteTools.cancel(String(callId)),
});
