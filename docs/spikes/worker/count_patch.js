// Injected into the built loader (run_count.py): counts every crossing from Python to the JS side
// that would become one message in worker mode: calls of MaoDom primitives, of the panel (ui)
// and of methods on objects the primitives return (watch, probe, dialog guard, rendering).
(() => {
  const counts = {};
  const bump = (name) => { counts[name] = (counts[name] || 0) + 1; };
  const wrapResult = (prefix, value) => {
    if (!value || typeof value !== "object" || Array.isArray(value) || ArrayBuffer.isView(value) || value instanceof Node) return value;
    if (!Object.values(value).some((v) => typeof v === "function")) return value;
    return new Proxy(value, { get(t, k) { const v = Reflect.get(t, k); if (typeof v !== "function") return v;
      return function (...a) { bump(prefix + "()." + String(k)); return v.apply(t, a); }; } });
  };
  window.__maoCount = {
    counts,
    reset() { const c = { ...counts }; for (const k of Object.keys(counts)) delete counts[k]; return c; },
    wrap(prefix, target) {
      const wrapped = {};
      for (const [k, v] of Object.entries(target)) {
        wrapped[k] = typeof v === "function" ? function (...a) { bump(prefix + k); return wrapResult(prefix + k, v.apply(target, a)); } : v;
      }
      return wrapped;
    },
    wrapUi(ui) {
      return new Proxy(ui, { get(t, k) { const v = Reflect.get(t, k); if (typeof v !== "function") return v;
        return function (...a) { bump("ui." + String(k)); return wrapResult("ui." + String(k), v.apply(t, a)); }; } });
    },
  };
})();
