// The page's connection to the backend (SPEC B5, W1-W4, E6): the WebSocket, hello and welcome,
// the heartbeat, reconnecting with backoff and resuming the session id.
//
// It lives in JavaScript, not in the Python runtime, so that a page registers its session at
// init() and boots Python only on first use (docs/startup.md "Boot on first use"). It is the
// transport of playwright-python's transport/connection split: it reads and writes only the
// connection's own frames (hello, welcome, ping, pong, error) and hands every other frame, as
// text, to its owner (the loader, then mao_page.session.connection). Which fields those frames
// have comes from the protocol models (WIRE, generated from mao_page/session/wire.py).
//
// The token travels in hello only, never in the URL, and is asked for again on every attempt
// (a token function may mint a new one). Nothing is sent unasked beyond hello and pong (W4).
"use strict";

const MaoTransport = (() => {
  // One frame of `kind` with the given fields, refusing any field the protocol model does not
  // have: the backend would reject the frame anyway, and this names the culprit at once.
  function frame(kind, values) {
    const allowed = WIRE.fields[kind];
    if (!allowed) throw new Error(`protocol: the transport does not write ${kind} frames`);
    const out = { type: kind };
    for (const [key, value] of Object.entries(values)) {
      if (!allowed.includes(key)) throw new Error(`protocol: a ${kind} frame has no field ${key}`);
      if (value !== undefined && value !== null) out[key] = value;
    }
    return JSON.stringify(out);
  }

  function backoffDelay(attempt) {
    const { initialMs, factor, capMs, jitter } = WIRE.backoff;
    const grown = initialMs * Math.pow(factor, Math.min(attempt, 64));
    return Math.min(capMs, grown) * (1 + Math.random() * jitter);
  }

  function websocketUrl(serverUrl) {
    const url = new URL("/ws/sdk", serverUrl);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    return url.href;
  }

  // handlers: welcome(sessionId, resumed), frame(text, message), dropped(reason),
  // refused(code, message, final), state(name). identity: {agentId, user: {id, name},
  // sdkVersion, token: () => Promise<string>, tokenRefreshable, page: () => {url, title},
  // ready: () => bool, resumeSessionId: the session of this tab's previous page (SPEC B7),
  // resumed with resumeKind "navigation" on the first attempt}.
  function create(serverUrl, identity, handlers) {
    const url = websocketUrl(serverUrl);
    let socket = null;
    let stopped = false;
    let connected = false;
    let sessionId = identity.resumeSessionId || null;
    // The first hello of a document carrying the previous page's id is a navigation; once
    // welcomed, every later attempt is a reconnect of this document.
    let resumeKind = sessionId ? "navigation" : undefined;
    let attempt = 0;
    let retryTimer = 0;
    let handshakeTimer = 0;
    let silenceTimer = 0;
    let silenceMs = 0;
    let state = "";

    const setState = (name) => {
      if (state === name) return;
      state = name;
      handlers.state(name);
    };
    const clearTimers = () => {
      clearTimeout(retryTimer);
      clearTimeout(handshakeTimer);
      clearTimeout(silenceTimer);
    };
    // A backend silent for three heartbeats is dead (W4): drop the socket and reconnect.
    const armSilence = () => {
      clearTimeout(silenceTimer);
      silenceTimer = setTimeout(() => drop(socket, `the backend was silent for ${Math.round(silenceMs / 1000)} s`), silenceMs);
    };

    function connect() {
      if (stopped) return;
      setState("connecting");
      const ws = new WebSocket(url);
      socket = ws;
      let welcomed = false;
      handshakeTimer = setTimeout(() => drop(ws, "no welcome within the handshake timeout"), WIRE.handshakeTimeoutMs);
      ws.addEventListener("open", async () => {
        let token;
        try {
          token = await identity.token();
        } catch (error) {
          drop(ws, `the token function failed: ${error && error.message || error}`);
          return;
        }
        if (ws !== socket || ws.readyState !== WebSocket.OPEN) return;
        const user = { id: identity.user.id, name: identity.user.name };
        ws.send(frame("hello", {
          protocolVersion: WIRE.version, token: String(token), agentId: identity.agentId, user,
          page: identity.page(), sdkVersion: identity.sdkVersion, resumeSessionId: sessionId,
          resumeKind: sessionId ? resumeKind : undefined, ready: identity.ready(),
        }));
      });
      ws.addEventListener("message", (event) => {
        if (ws !== socket) return;
        const text = typeof event.data === "string" ? event.data : String(event.data);
        let message = null;
        try { message = JSON.parse(text); } catch (error) { message = null; }
        const type = message && typeof message === "object" ? message.type : undefined;
        if (!welcomed) {
          clearTimeout(handshakeTimer);
          if (type === "welcome" && typeof message.sessionId === "string") {
            welcomed = true;
            connected = true;
            sessionId = message.sessionId;
            resumeKind = "reconnect";
            attempt = 0;
            silenceMs = Math.max(Number(message.heartbeatIntervalMs) * WIRE.silentHeartbeats || 0, 1000);
            armSilence();
            setState("connected");
            handlers.welcome(sessionId, !!message.resumed);
          } else if (type === "error") {
            refused(ws, String(message.code), String(message.message || ""));
          } else {
            drop(ws, "the backend's first frame was not welcome");
          }
          return;
        }
        armSilence(); // any frame proves the backend alive
        if (type === "ping") {
          send(frame("pong", { ts: message.ts, page: identity.page() }));
        } else if (type === "error") {
          // The backend tells us about a frame of ours it rejected; nothing to redo.
        } else {
          handlers.frame(text, message);
        }
      });
      ws.addEventListener("close", (event) => {
        if (ws !== socket) return;
        drop(ws, `the connection closed (code ${event.code})`);
      });
    }

    function refused(ws, code, message) {
      const final = WIRE.finalRefusals.includes(code) && !identity.tokenRefreshable;
      close(ws);
      handlers.refused(code, message, final);
      if (final) {
        stopped = true;
        setState("refused");
        return;
      }
      retry();
    }

    // The socket ended or is given up on: tell the owner once, then try again after a delay.
    function drop(ws, reason) {
      if (ws !== socket || stopped) return;
      close(ws);
      if (connected) {
        connected = false;
        handlers.dropped(reason);
      }
      retry();
    }

    function close(ws) {
      clearTimers();
      socket = null;
      try { ws.close(1000); } catch (error) { /* already closing */ }
    }

    function retry() {
      if (stopped) return;
      setState("backing_off");
      retryTimer = setTimeout(connect, backoffDelay(attempt));
      attempt += 1;
    }

    // False (nothing sent) while not connected: the owner decides what that means.
    function send(text) {
      if (!connected || !socket || socket.readyState !== WebSocket.OPEN) return false;
      socket.send(text);
      return true;
    }

    return {
      start: connect,
      send,
      get connected() { return connected; },
      get sessionId() { return sessionId; },
      get state() { return state; },
      stop() {
        if (stopped) return;
        stopped = true;
        const ws = socket;
        clearTimers();
        socket = null;
        connected = false;
        if (ws) { try { ws.close(1000, "stopped"); } catch (error) { /* already closing */ } }
        setState("stopped");
      },
      // The document unloads (pagehide): close with the code that tells the backend this tab's
      // next page will resume the session (SPEC B7), and stop reconnecting.
      leave() {
        if (stopped) return;
        stopped = true;
        const ws = socket;
        clearTimers();
        socket = null;
        connected = false;
        if (ws) { try { ws.close(WIRE.closeNavigating, "navigating"); } catch (error) { /* already closing */ } }
      },
      // The document came back from the back/forward cache: connect again, as the tab's
      // current page (its session was left at pagehide).
      comeBack() {
        if (!stopped) return;
        stopped = false;
        attempt = 0;
        resumeKind = sessionId ? "navigation" : undefined;
        connect();
      },
    };
  }

  return { create, frame, backoffDelay };
})();
