// The tab's identity across its documents (SPEC B7, docs/panel.md "Navigations").
//
// A tab is one session: the loader keeps the session id in sessionStorage (per tab and per
// origin; never the token) and the tab's next page resumes it. What this module decides:
//
// * Which page is "the tab's next page". The entry says `live` while a page of the tab holds
//   the session and `leaving` from its pagehide on. Only a `leaving` entry is resumed. A
//   duplicated tab (or a window opened with a copy of sessionStorage) copies a `live` entry
//   while the original page still holds the session: it starts a session of its own. The
//   backend checks the same rule (a navigation never takes over a live connection).
// * Whether the task goes on (the task's own action led here) or ends (the user navigated).
//   At pagehide the old page writes the task's record only when its last action ran within
//   CONTINUE_WINDOW_MS, no real user input on the page came after it (a user's click on a
//   link is a trusted pointerdown), and the Navigation API, where the browser has it, saw a
//   same-origin push or replace (none at all for an address typed or a bookmark; "reload" or
//   "traverse" for the browser's reload and back/forward buttons). The next page
//   takes it only from the same origin (sessionStorage is per origin anyway), within
//   ARRIVAL_WINDOW_MS of the pagehide, and when the browser says it is a plain navigation,
//   not a reload or a back/forward move.
//
// The record holds the task id, whether the `task` level belonged to it, the chat turn and the
// action log: nothing secret, nothing a page script could not also see in the panel. A page
// script can write sessionStorage as it can write the localStorage of a stored full grant, and
// click the page's buttons itself (docs/security.md, threat model).
"use strict";

const MaoTab = (() => {
  const VERSION = 1;
  const CONTINUE_WINDOW_MS = 5000;
  const ARRIVAL_WINDOW_MS = 30000;

  function storage() {
    try { return window.sessionStorage; } catch (error) { return null; } // sandboxed frame, disabled storage
  }

  function randomTag() {
    const bytes = new Uint8Array(2);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  // How this document was reached, from the browser: "navigate", "reload", "back_forward".
  function arrivalType() {
    const entry = performance.getEntriesByType ? performance.getEntriesByType("navigation")[0] : null;
    return entry ? entry.type : "navigate";
  }

  // key: one entry per agent and user, so two SDK setups on one origin never mix. Not per
  // server URL: behind a load balancer, or with pages that name different instances of one
  // cluster, the next page may reach another instance (the backend refuses an id it cannot
  // resume, and the page starts a new session).
  function open(key, exclude) {
    const store = storage();
    const name = "mao-embed.tab." + key;
    let previous = null;
    try { previous = store ? JSON.parse(store.getItem(name) || "null") : null; } catch (error) { previous = null; }
    if (!previous || previous.v !== VERSION || typeof previous.sessionId !== "string") previous = null;

    const now = Date.now();
    const arrival = arrivalType();
    const fromLeaving = previous && previous.state === "leaving";
    const resumeSessionId = fromLeaving ? previous.sessionId : null;
    let continuation = null;
    let endedNotice = null; // why the previous page's task did not go on
    if (fromLeaving && previous.task) {
      const sameOrigin = previous.origin === location.origin;
      const inTime = now - Number(previous.leftAt) <= ARRIVAL_WINDOW_MS;
      if (previous.task.continues && sameOrigin && inTime && arrival === "navigate") {
        continuation = Object.assign({}, previous.task, { sessionId: previous.sessionId });
      } else {
        endedNotice = arrival === "reload" ? "reload" : arrival === "back_forward" ? "back_forward" : "user";
      }
    }

    const state = {
      documentTag: randomTag(), sessionId: resumeSessionId, task: null,
      lastUserInputAt: 0, lastNavigate: null, left: false,
    };
    const write = (fields) => {
      if (!store) return;
      const entry = Object.assign({ v: VERSION, sessionId: state.sessionId, origin: location.origin }, fields);
      try { store.setItem(name, JSON.stringify(entry)); } catch (error) { /* quota: the next page starts afresh */ }
    };
    // Claimed at once, before the welcome: a tab duplicated from now on copies `live`.
    if (state.sessionId) write({ state: "live" });

    // Real input on the page, outside SDK UI (a click on a confirmation card is not the user
    // leaving the task's path). The SDK's own events are never isTrusted.
    const onInput = (event) => {
      if (!event.isTrusted) return;
      const path = event.composedPath ? event.composedPath() : [];
      if (exclude && path.includes(exclude)) return;
      state.lastUserInputAt = Date.now();
    };
    window.addEventListener("pointerdown", onInput, true);
    window.addEventListener("keydown", onInput, true);
    const navigationApi = window.navigation;
    const onNavigate = (event) => {
      state.lastNavigate = {
        at: Date.now(), type: event.navigationType,
        sameOrigin: (() => { try { return new URL(event.destination.url).origin === location.origin; } catch (error) { return false; } })(),
      };
    };
    if (navigationApi && navigationApi.addEventListener) navigationApi.addEventListener("navigate", onNavigate);

    // Whether the task the runtime published goes on to the next page (module docstring).
    function taskContinues(task, at) {
      if (!task || !task.actionAt) return false;
      if (at - task.actionAt > CONTINUE_WINDOW_MS) return false;
      if (state.lastUserInputAt >= task.actionAt) return false;
      const nav = state.lastNavigate;
      if (navigationApi && navigationApi.addEventListener) {
        // No navigate event at all: the browser's own UI (an address typed, a bookmark).
        if (!nav || at - nav.at > CONTINUE_WINDOW_MS) return false;
        // Not nav.userInitiated: Chromium sets it for a form submitted by a script's click()
        // too. Real input is what tells the user's navigation apart (lastUserInputAt).
        if (!nav.sameOrigin) return false;
        if (nav.type === "reload" || nav.type === "traverse") return false;
      }
      return true;
    }

    return {
      resumeSessionId,
      continuation,
      endedNotice,
      get documentTag() { return state.documentTag; },
      welcomed(sessionId) {
        state.sessionId = sessionId;
        if (!state.left) write({ state: "live" });
      },
      // The runtime's current task (JSON text, or "" when there is none).
      publishTask(text) {
        try { state.task = text ? JSON.parse(text) : null; } catch (error) { state.task = null; }
      },
      // pagehide: hand the session, and the task if it goes on, to the tab's next page.
      leave() {
        if (state.left || !state.sessionId) return;
        state.left = true;
        const at = Date.now();
        const task = state.task;
        const entry = { state: "leaving", leftAt: at };
        if (task) entry.task = Object.assign({}, task, { continues: taskContinues(task, at) });
        write(entry);
      },
      // pageshow from the back/forward cache: this document holds the session again.
      comeBack() {
        state.left = false;
        if (state.sessionId) write({ state: "live" });
      },
      close() {
        window.removeEventListener("pointerdown", onInput, true);
        window.removeEventListener("keydown", onInput, true);
        if (navigationApi && navigationApi.removeEventListener) navigationApi.removeEventListener("navigate", onNavigate);
      },
    };
  }

  return { open, CONTINUE_WINDOW_MS, ARRIVAL_WINDOW_MS };
})();
