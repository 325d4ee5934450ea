// SDK UI (SPEC U1-U3, E4): the panel, the floating indicator, confirmation cards,
// the target highlight, and the watch for real user input on the page.
//
// The loader builds the panel shell at once on init(), before Python runs (E4). The Python
// runtime (mao_page.supervision.supervisor) then drives it through the object createPanel returns and
// receives what the user did through connect(handler). The panel decides nothing: every
// click is reported with the browser's `isTrusted` flag and, for a card, that card's nonce;
// Python accepts only trusted input carrying the nonce of the card it is waiting on (U2).
//
// Everything lives in the SDK host's shadow root; the host is excluded from scans,
// screenshots and hit tests, so the agent can never see, target or click any of this.
"use strict";

// Accessible names are part of the outside contract (README "Panel controls"):
// change them only together with the README.
const PANEL_TEXT = {
  en: {
    panel: "Mao Embed", status: "Status", close: "Close panel", open: "Open panel", indicator: "Mao Embed indicator",
    operating: "Operating", level: "Authorization level", per_action: "Ask each time", task: "This task", full: "Full access",
    revoke: "Revoke authorization", conversation: "Conversation", message: "Message", send: "Send", log: "Action log",
    errors: "Error details", pause: "Pause", resume: "Resume", stop: "Stop", card: "Confirm action",
    once: "Allow once", forTask: "Allow for this task", deny: "Deny", ready: "Page tools are ready.",
    placeholder: "Ask the assistant…", failed: "Could not start",
    "status.standby": "Starts when you need it", "boot.panel": "Starting", "boot.api": "Starting",
    "boot.eager": "Starting", "boot.agent": "Starting for an agent's request",
    "boot.navigation": "Continuing the task",
    "task.ended.reload": "The page was reloaded, so the assistant's task ended.",
    "task.ended.back_forward": "You went back or forward, so the assistant's task ended.",
    "task.ended.user": "You left the page, so the assistant's task ended.",
    "status.starting": "Starting", "status.ready": "Idle", "status.idle": "Idle", "status.running": "Running",
    "status.waiting": "Waiting for you", "status.paused": "Paused", "status.stopped": "Stopped", "status.error": "Error",
    newConversation: "New conversation", newShort: "New", deleteConversation: "Delete conversation", deleteShort: "Delete",
    confirmDelete: "Click again to delete the conversation", question: "Question from the assistant", answer: "Answer",
    answerField: "Your answer", badge: "The assistant is asking you something",
  },
  "zh-CN": {
    panel: "Mao Embed", status: "状态", close: "关闭面板", open: "打开面板", indicator: "Mao Embed 指示器",
    operating: "正在操作", level: "授权级别", per_action: "每次确认", task: "本次任务", full: "完全授权",
    revoke: "撤销授权", conversation: "对话", message: "消息", send: "发送", log: "操作日志",
    errors: "错误详情", pause: "暂停", resume: "继续", stop: "停止", card: "确认操作",
    once: "允许一次", forTask: "本次任务允许", deny: "拒绝", ready: "页面工具已就绪。",
    placeholder: "向助手提问…", failed: "启动失败",
    "status.standby": "需要时启动", "boot.panel": "启动中", "boot.api": "启动中",
    "boot.eager": "启动中", "boot.agent": "应代理请求启动中",
    "boot.navigation": "正在继续任务",
    "task.ended.reload": "页面已刷新，助手的任务已结束。",
    "task.ended.back_forward": "你后退或前进了页面，助手的任务已结束。",
    "task.ended.user": "你离开了页面，助手的任务已结束。",
    "status.starting": "启动中", "status.ready": "空闲", "status.idle": "空闲", "status.running": "运行中",
    "status.waiting": "等待你确认", "status.paused": "已暂停", "status.stopped": "已停止", "status.error": "错误",
    newConversation: "新建对话", newShort: "新建", deleteConversation: "删除对话", deleteShort: "删除",
    confirmDelete: "再次点击以删除对话", question: "助手的提问", answer: "回答",
    answerField: "你的回答", badge: "助手正在向你提问",
  },
};

const HIGHLIGHT_FADE_MS = 700;
// SPEC U4: the panel has one size whatever it holds (the chat, the log and a card scroll
// inside it), so a long action log never grows it over more of the page.
const PANEL_HEIGHT = 400;
// Where the panel (or the indicator) may sit, home first; it moves to another when it
// covers what the agent acts on (ui.moveAside).
const PLACES = ["bottom-right", "bottom-left", "top-right", "top-left"];
const PANEL_MARGIN = 16;

function pickLocale(option, doc) {
  const wanted = typeof option === "string" && option ? option : (doc.documentElement.getAttribute("lang") || "");
  return wanted.trim().toLowerCase().startsWith("zh") ? "zh-CN" : "en";
}

const PANEL_CSS = `
  :host { all: initial; position: fixed; left: 0; top: 0; width: 0; height: 0; z-index: 2147483647; }
  * { box-sizing: border-box; }
  [hidden] { display: none !important; }
  .panel, .indicator { font: 13px/1.45 system-ui, -apple-system, "Segoe UI", "PingFang SC", "Microsoft YaHei", sans-serif;
    color: #1f2430; position: fixed; right: 16px; bottom: 16px; background: #fff; border: 1px solid #d5d9e0;
    border-radius: 12px; box-shadow: 0 6px 24px rgba(0,0,0,.18); pointer-events: auto; }
  .panel { width: 340px; height: min(${PANEL_HEIGHT}px, calc(100vh - 32px)); display: flex; flex-direction: column; overflow: hidden; }
  .panel > * { flex: none; }
  [data-place$="left"] { right: auto; left: 16px; }
  [data-place^="top"] { bottom: auto; top: 16px; }
  header { display: flex; align-items: center; gap: 8px; padding: 8px 10px; background: #1f2430; color: #fff; }
  header h2 { font-size: 13px; margin: 0; font-weight: 600; }
  .status { flex: 1; display: flex; align-items: center; gap: 6px; font-size: 12px; opacity: .9; }
  .dot { width: 8px; height: 8px; border-radius: 50%; background: #f5a623; flex: none; }
  [data-state="idle"] .dot, [data-state="ready"] .dot { background: #3ccf6e; }
  [data-state="running"] .dot { background: #3b82f6; }
  [data-state="waiting"] .dot { background: #f5a623; }
  [data-state="paused"] .dot, [data-state="stopped"] .dot, [data-state="error"] .dot { background: #e5484d; }
  button { font: inherit; cursor: pointer; border-radius: 6px; border: 1px solid #c5cad3; background: #f6f7f9; color: #1f2430; padding: 3px 9px; }
  button:disabled { opacity: .5; cursor: default; }
  header button { background: transparent; color: #fff; border: none; font-size: 16px; line-height: 1; padding: 2px 6px; }
  .levels { display: flex; gap: 4px; padding: 8px 10px 4px; flex-wrap: wrap; align-items: center; }
  .levels [role="radio"][aria-checked="true"] { background: #1f2430; color: #fff; border-color: #1f2430; }
  .levels .revoke { margin-left: auto; }
  .card { margin: 6px 10px; padding: 8px; border: 2px solid #f5a623; border-radius: 8px; background: #fffaf0; }
  .card[data-risk="high"] { border-color: #e5484d; background: #fff5f5; }
  .card p { margin: 2px 0; word-break: break-word; }
  .card .risk { font-weight: 600; }
  .card .buttons { display: flex; gap: 6px; margin-top: 6px; flex-wrap: wrap; }
  .card .allow { background: #1f7a45; color: #fff; border-color: #1f7a45; }
  .chat, .log { overflow: auto; padding: 4px 10px; margin: 0; list-style: none; }
  .panel > .chat { flex: 1 1 0; min-height: 48px; }
  .panel > .middle { flex: 0 1 auto; min-height: 0; overflow: auto; }
  .chat p { margin: 3px 0; white-space: pre-wrap; word-break: break-word; }
  .chat [data-role="user"] { text-align: right; color: #1d4ed8; }
  .chat [data-role="system"], .chat [data-role="tool"] { color: #6b7280; font-size: 12px; }
  .chat [data-role="error"] { color: #b91c1c; }
  details { padding: 0 10px; font-size: 12px; }
  .log { max-height: 96px; font-size: 12px; padding: 0; }
  .log li[data-ok="false"] { color: #b91c1c; }
  .errors { margin: 4px 10px; padding: 4px 6px; font-size: 12px; color: #b91c1c; background: #fff5f5; border-radius: 6px; white-space: pre-wrap; word-break: break-word; }
  form { display: flex; gap: 6px; padding: 6px 10px; border-top: 1px solid #eceef2; }
  textarea { flex: 1; font: inherit; resize: none; height: 34px; border: 1px solid #c5cad3; border-radius: 6px; padding: 5px; }
  footer { display: flex; gap: 6px; padding: 6px 10px 8px; justify-content: flex-end; }
  footer .conversation { margin-right: auto; display: flex; gap: 4px; }
  footer .conversation button { font-size: 12px; padding: 2px 7px; }
  footer .conversation button[data-confirm] { background: #e5484d; color: #fff; border-color: #e5484d; }
  .question { border-color: #3b82f6; background: #f5f9ff; }
  .question .choices { display: flex; gap: 6px; flex-wrap: wrap; margin-top: 6px; }
  .question .reply { display: flex; gap: 6px; margin-top: 6px; }
  .badge { display: inline-flex; align-items: center; justify-content: center; min-width: 18px; height: 18px; padding: 0 5px;
    border-radius: 9px; background: #3b82f6; color: #fff; font-size: 12px; font-weight: 700; }
  footer .stop, .indicator .stop { background: #e5484d; color: #fff; border-color: #e5484d; }
  .indicator { display: flex; gap: 6px; align-items: center; padding: 5px 8px; border-radius: 18px; }
  .indicator .open { border: none; background: transparent; display: flex; align-items: center; gap: 6px; }
  .overlay { position: fixed; left: 0; top: 0; width: 0; height: 0; pointer-events: none; }
  .hl { position: fixed; pointer-events: none; outline: 2px solid #3b82f6; outline-offset: 2px; border-radius: 3px;
    background: rgba(59,130,246,.08); transition: opacity ${HIGHLIGHT_FADE_MS}ms ease-out; }
  .hl[data-sticky] { outline-color: #f5a623; background: rgba(245,166,35,.12); }
  .hl span { position: absolute; left: -2px; top: -22px; font: 11px/16px system-ui, sans-serif; color: #fff; background: #3b82f6;
    padding: 1px 5px; border-radius: 3px; white-space: nowrap; max-width: 260px; overflow: hidden; text-overflow: ellipsis; }
  .hl[data-sticky] span { background: #d97706; }`;

function el(doc, tag, props, children) {
  const node = doc.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key === "text") node.textContent = value;
    else if (key === "class") node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children || []) node.append(child);
  return node;
}

// Where an element is in the top viewport: its box plus the offsets of the same-origin
// frames it sits in.
function topViewportRect(target) {
  const r = target.getBoundingClientRect();
  let x = r.left, y = r.top;
  let frame = target.ownerDocument.defaultView.frameElement;
  while (frame) {
    const fr = frame.getBoundingClientRect();
    x += fr.left + frame.clientLeft;
    y += fr.top + frame.clientTop;
    frame = frame.ownerDocument.defaultView.frameElement;
  }
  return { x, y, width: r.width, height: r.height };
}

// Whether a field holds what the user typed (SPEC U2, U5): every change since it was last
// empty came from trusted input (typing, pasting, dictation). A script setting `.value` fires
// no input event, and one it dispatches is not trusted, so text a page script put there
// never counts as the user's answer.
function typedValue(field) {
  let typed = field.value;
  let tainted = field.value !== "";
  field.addEventListener("beforeinput", (event) => {
    if (!event.isTrusted || field.value !== typed) tainted = true;
  });
  field.addEventListener("input", (event) => {
    if (!event.isTrusted) tainted = true;
    typed = field.value;
    if (event.isTrusted && field.value === "") tainted = false;
  });
  return {
    isTyped: () => !tainted && field.value === typed,
    clear() { field.value = ""; typed = ""; tainted = false; },
  };
}

function createPanel(root, doc, locale, opts) {
  const T = PANEL_TEXT[locale] || PANEL_TEXT.en;
  let handler = null; // Python's, set by connect(); until then controls are disabled
  const report = (kind, event, extra) => {
    if (handler) handler(kind, Object.assign({ trusted: event.isTrusted === true }, extra || {}));
  };
  const button = (text, props, onClick) => {
    const node = el(doc, "button", Object.assign({ type: "button" }, props || {}), [text]);
    if (onClick) node.addEventListener("click", onClick);
    return node;
  };

  // Header: title, status, close.
  const statusText = el(doc, "span", { text: T["status.starting"] });
  const status = el(doc, "div", { class: "status", role: "status", "aria-label": T.status, "data-state": "starting" },
    [el(doc, "span", { class: "dot" }), statusText]);
  const closeButton = button("×", { "aria-label": T.close, title: T.close }, () => setOpen(false));
  const header = el(doc, "header", {}, [el(doc, "h2", { text: T.panel }), status, closeButton]);

  // Authorization controls: a radio group of the three levels, and revoke.
  const levelButtons = {};
  const levels = el(doc, "div", { class: "levels", role: "radiogroup", "aria-label": T.level });
  for (const level of ["per_action", "task", "full"]) {
    const node = button(T[level], { role: "radio", "aria-checked": String(level === "per_action"), "data-level": level },
      (event) => report("level", event, { level }));
    levelButtons[level] = node;
    levels.append(node);
  }
  const revoke = button(T.revoke, { class: "revoke" }, (event) => report("revoke", event));
  levels.append(revoke);

  const cardSlot = el(doc, "div", {});
  const chat = el(doc, "div", { class: "chat", role: "log", "aria-label": T.conversation });
  const errors = el(doc, "div", { class: "errors", role: "alert", "aria-label": T.errors, hidden: "" });
  const logList = el(doc, "ol", { class: "log", role: "log", "aria-label": T.log });
  const logDetails = el(doc, "details", { open: "" }, [el(doc, "summary", { text: T.log }), logList]);

  const input = el(doc, "textarea", { "aria-label": T.message, placeholder: T.placeholder, rows: "1" });
  const inputTyped = typedValue(input);
  const send = button(T.send, { type: "submit" });
  const form = el(doc, "form", {}, [input, send]);
  const submitChat = (event) => {
    const text = input.value.trim();
    if (!text || !handler) return;
    // `typed`: while a question waits, the box answers it, and only typed text may.
    report("chat", event, { text, typed: inputTyped.isTyped() });
    if (event.isTrusted) inputTyped.clear();
  };
  form.addEventListener("submit", (event) => { event.preventDefault(); submitChat(event); });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) { event.preventDefault(); submitChat(event); }
  });

  // Pause, Resume and Stop exist twice, in the panel's footer and in the indicator left when
  // the panel is closed; both sets report the same input.
  const taskButtons = () => [
    button(T.pause, {}, (event) => report("pause", event)),
    button(T.resume, { hidden: "" }, (event) => report("resume", event)),
    button(T.stop, { class: "stop" }, (event) => report("stop", event)),
  ];
  const [pause, resume, stop] = taskButtons();
  // The stored conversation (SPEC U5): start a new one, or delete the user's (a second click
  // within a few seconds confirms; only real clicks count, in Python too).
  const newConversation = button(T.newShort, { "aria-label": T.newConversation, title: T.newConversation },
    (event) => report("conversation", event, { action: "new" }));
  let deleteTimer = 0;
  const deleteConversation = button(T.deleteShort, { "aria-label": T.deleteConversation, title: T.deleteConversation }, (event) => {
    if (!event.isTrusted) return;
    if (!deleteConversation.hasAttribute("data-confirm")) {
      deleteConversation.setAttribute("data-confirm", "");
      deleteConversation.setAttribute("aria-label", T.confirmDelete);
      deleteTimer = setTimeout(disarmDelete, 4000);
      return;
    }
    disarmDelete();
    report("conversation", event, { action: "delete" });
  });
  function disarmDelete() {
    clearTimeout(deleteTimer);
    deleteConversation.removeAttribute("data-confirm");
    deleteConversation.setAttribute("aria-label", T.deleteConversation);
  }
  const conversationButtons = el(doc, "div", { class: "conversation" }, [newConversation, deleteConversation]);
  const footer = el(doc, "footer", {}, [conversationButtons, pause, resume, stop]);

  // The card, errors and the action log scroll together when they outgrow the panel.
  const middle = el(doc, "div", { class: "middle" }, [cardSlot, errors, logDetails]);
  const panel = el(doc, "section", { class: "panel", role: "region", "aria-label": T.panel },
    [header, levels, chat, middle, form, footer]);

  // The floating indicator left when the panel is closed: operating · pause · stop.
  const indicatorText = el(doc, "span", { text: T["status.starting"] });
  const openButton = button("", { class: "open", "aria-label": T.open, "data-state": "starting" }, () => setOpen(true));
  openButton.append(el(doc, "span", { class: "dot" }), el(doc, "span", { text: "Mao · " }), indicatorText);
  const [indicatorPause, indicatorResume, indicatorStop] = taskButtons();
  // Shown on the closed panel while a question from the assistant waits (SPEC U5).
  const badge = el(doc, "span", { class: "badge", role: "status", "aria-label": T.badge, hidden: "" }, ["?"]);
  const indicator = el(doc, "div", { class: "indicator", role: "region", "aria-label": T.indicator, hidden: "" },
    [openButton, badge, indicatorPause, indicatorResume, indicatorStop]);

  // The runtime boots on first use (SPEC E6): the pointer over the launcher or the panel
  // starts the downloads ("hover"); opening the panel, or using it while open, boots ("use").
  const intent = (kind) => () => { if (opts && opts.onIntent) opts.onIntent(kind); };
  openButton.addEventListener("pointerover", intent("hover"));
  openButton.addEventListener("click", intent("use"));
  panel.addEventListener("pointerover", intent("hover"));
  for (const type of ["pointerdown", "focusin", "keydown"]) panel.addEventListener(type, intent("use"));

  const overlay = el(doc, "div", { class: "overlay", "aria-hidden": "true" });
  const style = el(doc, "style", { text: PANEL_CSS });
  root.append(style, overlay, panel, indicator);

  const controls = [...Object.values(levelButtons), revoke, send, pause, resume, stop, indicatorPause, indicatorResume, indicatorStop,
    newConversation, deleteConversation];
  for (const node of controls) node.disabled = true;

  function setOpen(open) {
    panel.hidden = !open;
    indicator.hidden = open;
    badge.hidden = open || !currentQuestion;
  }
  let currentCard = null;
  let currentQuestion = null;
  let highlightBox = null;
  if (opts && opts.collapsed) setOpen(false);

  let fadeTimer = 0;

  function clearHighlight() {
    clearTimeout(fadeTimer);
    if (highlightBox) highlightBox.remove();
    highlightBox = null;
  }

  const ui = {
    locale,
    text: (key) => T[key] || key,
    // Opens the panel (a site tool asking for the user, docs/site-tools.md).
    open() { setOpen(true); },
    connect(fn) {
      handler = fn;
      for (const node of controls) node.disabled = false;
    },
    disconnect() {
      handler = null;
      for (const node of controls) node.disabled = true;
    },
    setStatus(state, message) {
      const text = message || T["status." + state] || state;
      status.dataset.state = state;
      openButton.dataset.state = state;
      statusText.textContent = text;
      indicatorText.textContent = state === "running" || state === "waiting" ? T.operating + " · " + text : text;
      const held = state === "paused" || state === "stopped";
      // Before the runtime is up there is no task to pause or stop: the launcher shows none.
      const noTask = state === "standby" || state === "starting";
      pause.hidden = held;
      indicatorPause.hidden = held || noTask;
      indicatorStop.hidden = noTask;
      resume.hidden = indicatorResume.hidden = !held;
    },
    setLevel(level, _actions) {
      for (const [name, node] of Object.entries(levelButtons)) node.setAttribute("aria-checked", String(name === level));
    },
    showCard(card) {
      ui.closeCard(null);
      const nonce = card.nonce;
      const answer = (decision) => (event) => report("card", event, { nonce, decision });
      const once = button(T.once, { class: "allow" }, answer("once"));
      const forTask = button(T.forTask, {}, answer("task"));
      const deny = button(T.deny, {}, answer("deny"));
      const buttons = [once, forTask, deny];
      // Armed only after a moment, so a click already on its way cannot answer (see supervisor).
      for (const node of buttons) node.disabled = true;
      setTimeout(() => { for (const node of buttons) node.disabled = false; }, Number(card.armMs) || 0);
      const lines = [
        el(doc, "p", { text: card.title }),
        el(doc, "p", {}, [el(doc, "strong", { text: card.action }), " · " + card.target]),
      ];
      if (card.value) lines.push(el(doc, "p", { text: card.valueLabel + ": " + card.value }));
      lines.push(el(doc, "p", { class: "risk", text: card.riskText }), el(doc, "p", { text: card.timeoutText }));
      const node = el(doc, "div", { class: "card", role: "alertdialog", "aria-label": T.card, "data-risk": card.risk },
        [...lines, el(doc, "div", { class: "buttons" }, buttons)]);
      // Where focus was on the page, to give it back when the card closes (the dialog pattern):
      // answering with a click focuses a card button, and page_keyboard without a ref must
      // still type into the field the user saw on the card.
      const returnFocus = deepActiveElement(doc, root.host);
      currentCard = { nonce, node, returnFocus: returnFocus === doc.body ? null : returnFocus };
      cardSlot.append(node);
      setOpen(true); // the user must see what is being asked
    },
    closeCard(nonce) {
      if (currentCard && (nonce === null || currentCard.nonce === nonce)) {
        const { node, returnFocus } = currentCard;
        const focusOnCard = node.contains(root.activeElement);
        node.remove();
        currentCard = null;
        if (focusOnCard && returnFocus && returnFocus.isConnected) returnFocus.focus({ preventScroll: true });
      }
    },
    log(entry) {
      const id = String(entry.id);
      let item = [...logList.children].find((li) => li.dataset.id === id);
      if (!item) {
        item = el(doc, "li", { "data-id": id });
        logList.append(item);
        while (logList.children.length > 200) logList.firstElementChild.remove();
      }
      for (const key of ["tool", "target", "outcome", "durationMs"]) if (entry[key] !== undefined) item.dataset[key] = entry[key];
      if (entry.ok !== undefined) item.dataset.ok = String(entry.ok);
      const d = item.dataset;
      item.textContent = [d.tool, d.target, d.outcome, d.durationMs !== undefined ? d.durationMs + " ms" : ""].filter(Boolean).join(" · ");
      logList.scrollTop = logList.scrollHeight;
    },
    chat(role, text) {
      chat.append(el(doc, "p", { "data-role": role, text }));
      while (chat.children.length > 300) chat.firstElementChild.remove();
      chat.scrollTop = chat.scrollHeight;
    },
    // One entry whose text is replaced as it grows: the assistant's answer streaming in.
    chatEntry(id, role, text) {
      const key = String(id);
      let node = [...chat.children].find((p) => p.dataset.entry === key);
      if (!node) {
        node = el(doc, "p", { "data-role": role, "data-entry": key });
        chat.append(node);
        while (chat.children.length > 300) chat.firstElementChild.remove();
      }
      node.textContent = text;
      chat.scrollTop = chat.scrollHeight;
    },
    // The stored conversation, put before what this page view has shown so far.
    restoreChat(entries) {
      const nodes = [...entries].map((entry) => el(doc, "p", { "data-role": entry.role, "data-restored": "", text: entry.text }));
      chat.prepend(...nodes);
      while (chat.children.length > 300) chat.firstElementChild.remove();
      chat.scrollTop = chat.scrollHeight;
    },
    clearChat() {
      chat.replaceChildren();
    },
    // A question from the assistant (page_ask_user, SPEC U5): choices to click, a field to
    // type the answer in. Like a card it carries a nonce and is armed after a moment; unlike a
    // card it does not open a closed panel: the indicator shows a badge instead.
    showQuestion(question) {
      ui.closeQuestion(null);
      const nonce = question.nonce;
      const field = el(doc, "textarea", { "aria-label": T.answerField, rows: "1" });
      const fieldTyped = typedValue(field);
      const submitAnswer = (event) => {
        const text = field.value.trim();
        if (!text || !handler) return;
        handler("answer", { trusted: event.isTrusted === true && fieldTyped.isTyped(), nonce, text });
      };
      const choices = [...(question.choices || [])].map((text, index) =>
        button(text, { class: "choice" }, (event) => report("answer", event, { nonce, choice: index })));
      const answer = button(T.answer, { class: "allow" }, submitAnswer);
      field.addEventListener("keydown", (event) => {
        if (event.key === "Enter" && !event.shiftKey && !event.isComposing) { event.preventDefault(); submitAnswer(event); }
      });
      const buttons = [...choices, answer];
      for (const node of buttons) node.disabled = true;
      setTimeout(() => { for (const node of buttons) node.disabled = false; }, Number(question.armMs) || 0);
      const node = el(doc, "div", { class: "card question", role: "dialog", "aria-label": T.question }, [
        el(doc, "p", { text: question.title }),
        el(doc, "p", {}, [el(doc, "strong", { text: question.question })]),
        el(doc, "div", { class: "choices" }, choices),
        el(doc, "div", { class: "reply" }, [field, answer]),
        el(doc, "p", { text: question.timeoutText }),
      ]);
      currentQuestion = { nonce, node };
      cardSlot.append(node);
      badge.hidden = !panel.hidden;
    },
    closeQuestion(nonce) {
      if (currentQuestion && (nonce === null || currentQuestion.nonce === nonce)) {
        currentQuestion.node.remove();
        currentQuestion = null;
      }
      badge.hidden = true;
    },
    showError(text) {
      errors.textContent = text || "";
      errors.hidden = !text;
    },
    highlight(target, label, sticky) {
      clearHighlight();
      if (!target || !target.isConnected) return;
      const rect = topViewportRect(target);
      const box = el(doc, "div", { class: "hl" }, [el(doc, "span", { text: label })]);
      if (sticky) box.setAttribute("data-sticky", "");
      Object.assign(box.style, { left: rect.x + "px", top: rect.y + "px", width: rect.width + "px", height: rect.height + "px" });
      overlay.append(box);
      highlightBox = box;
      if (!sticky) {
        // Fade out (~700 ms, long enough to be seen), then remove.
        requestAnimationFrame(() => requestAnimationFrame(() => { box.style.opacity = "0"; }));
        fadeTimer = setTimeout(() => { if (highlightBox === box) clearHighlight(); }, HIGHLIGHT_FADE_MS + 50);
      }
    },
    clearHighlight,
    // SPEC U4: the panel (or the indicator, when closed) moves to another corner of the
    // viewport when it covers the element an action is about to hit: the first corner clear
    // of the element's box, else the first clear of the action point (the centre of its
    // visible box). Answers the corner it moved to, or "" when it stayed.
    moveAside(target) {
      if (!target || !target.isConnected) return "";
      const view = doc.defaultView;
      const shown = panel.hidden ? indicator : panel;
      const size = shown.getBoundingClientRect();
      const t = topViewportRect(target);
      const left = Math.max(t.x, 0), top = Math.max(t.y, 0);
      const right = Math.min(t.x + t.width, view.innerWidth), bottom = Math.min(t.y + t.height, view.innerHeight);
      const at = (place) => {
        const x = place.endsWith("left") ? PANEL_MARGIN : view.innerWidth - PANEL_MARGIN - size.width;
        const y = place.startsWith("top") ? PANEL_MARGIN : view.innerHeight - PANEL_MARGIN - size.height;
        return [x, y, x + size.width, y + size.height];
      };
      const overlaps = ([x0, y0, x1, y1], a, b, c, d) => x0 < c && x1 > a && y0 < d && y1 > b;
      const cx = (left + right) / 2, cy = (top + bottom) / 2;
      const others = PLACES.filter((place) => place !== (shown.dataset.place || PLACES[0]));
      const place = others.find((p) => !overlaps(at(p), left, top, right, bottom))
        || others.find((p) => !overlaps(at(p), cx, cy, cx, cy));
      if (!place) return "";
      panel.dataset.place = indicator.dataset.place = place;
      return place;
    },
    // Real user input on the page, outside the SDK UI (SPEC U3). Python is called only while
    // armed (a task is running), never per keystroke otherwise; synthetic events (the SDK's
    // own, or any script's) are not trusted and never count.
    watchInput(win, host, callback) {
      let armed = false;
      const onInput = (event) => {
        if (!armed || !event.isTrusted) return;
        if (event.composedPath().includes(host)) return;
        armed = false;
        callback(event.type);
      };
      const types = ["pointerdown", "keydown"];
      for (const type of types) win.addEventListener(type, onInput, true);
      return {
        arm(value) { armed = !!value; },
        dispose() { armed = false; for (const type of types) win.removeEventListener(type, onInput, true); },
      };
    },
    destroy() {
      handler = null;
      clearHighlight();
    },
  };
  return ui;
}

// Whether the page owner marked the element or any ancestor `data-mao-private` (README
// "Page-owner controls"), across open shadow roots and same-origin frames like a scan.
function markedPrivate(target) {
  for (let n = target; n; ) {
    if (n.nodeType === 1 && n.hasAttribute("data-mao-private")) return true;
    n = n.nodeType === 11 ? n.host : n.nodeType === 9 ? (n.defaultView && n.defaultView.frameElement) : n.parentNode;
  }
  return false;
}

// What the risk rules need about an action's target (mao_page.supervision.risk.Target): whether it
// belongs to a form, where that form posts, the element's `type` property ("submit" for a
// <button> without a type), its visible text, and whether the page owner marked it private.
function riskFacts(target) {
  const form = target.form || (target.closest ? target.closest("form") : null);
  return [
    !!form,
    form ? String(form.action || "") : "",
    form ? String(form.method || "") : "",
    typeof target.type === "string" ? target.type.toLowerCase() : "",
    // A button's text; for <input type=submit|button|reset|image> its value is its label. Never
    // the value of a field: that is what the user typed.
    squash(target.localName === "input" ? (/^(submit|button|reset|image)$/.test(target.type) ? target.value : "") : target.innerText || "").slice(0, 200),
    markedPrivate(target),
  ];
}

const MaoUi = { PANEL_TEXT, pickLocale, createPanel };
Object.assign(MaoDom, { riskFacts });
