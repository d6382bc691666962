/* rag-agent chat widget: one <script> tag, no build step, no dependencies, no third-party requests.
 *
 * <script src="https://AGENT/widget/rag-agent.js" defer
 *         data-title="Ask the docs" data-starters="First question|Second question"
 *         data-handoff-url="https://forum.example.com" data-handoff-label="Ask in the forum"></script>
 *
 * Talks to the LangGraph server's own API (threads, runs/stream) with plain fetch and server-sent
 * events, as an anonymous visitor holding a signed token from /widget/token. See docs/widget.md.
 */
(() => {
  "use strict";
  const script = document.currentScript;
  if (!script || window.__ragAgentWidget) return;
  window.__ragAgentWidget = true;

  const data = script.dataset;
  const server = (data.server || new URL(script.src, location.href).origin).replace(/\/$/, "");
  const cfg = {
    title: data.title || "Ask the docs",
    assistant: data.assistant || "agent",
    starters: (data.starters || "").split("|").map((s) => s.trim()).filter(Boolean),
    handoffUrl: data.handoffUrl || "",
    handoffLabel: data.handoffLabel || "Contact us",
    maxQuestion: Number(data.maxQuestion || 1000),
    maxSelection: Number(data.maxSelection || 4000),
  };
  const KEY = "rag-agent:" + server;
  const store = {
    get(name) { try { return JSON.parse(localStorage.getItem(KEY + ":" + name)); } catch { return null; } },
    set(name, value) {
      try {
        if (value === null) localStorage.removeItem(KEY + ":" + name);
        else localStorage.setItem(KEY + ":" + name, JSON.stringify(value));
      } catch { /* private mode: the conversation lasts as long as the page */ }
    },
  };

  // ---- the server API -------------------------------------------------------------------------

  class ApiError extends Error {
    constructor(status, detail) { super(detail); this.status = status; }
  }

  async function token(renew) {
    const saved = store.get("token");
    if (saved && !renew && saved.expires * 1000 > Date.now() + 86400000) return saved.token;
    const res = await fetch(server + "/widget/token", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify(saved && renew !== "new" ? { token: saved.token } : {}),
    });
    if (!res.ok) throw await failure(res);
    const issued = await res.json();
    store.set("token", { token: issued.token, expires: issued.expires });
    return issued.token;
  }

  async function failure(res) {
    let detail = "";
    try { const body = await res.json(); detail = body.detail || body.message || ""; } catch { /* not JSON */ }
    if (typeof detail !== "string") detail = JSON.stringify(detail);
    if (res.status === 429 && !detail) detail = "You're asking faster than I can answer. Please wait a moment.";
    return new ApiError(res.status, detail || "The assistant is unavailable (HTTP " + res.status + ").");
  }

  async function api(path, options = {}, retried = false) {
    const headers = { "Content-Type": "application/json", Authorization: "Bearer " + await token() };
    const res = await fetch(server + path, { ...options, headers: { ...headers, ...(options.headers || {}) } });
    if (res.status === 401 && !retried) {  // expired or unknown token: a fresh identity, a fresh start
      await token("new");
      store.set("thread", null);
      throw new ApiError(401, "Your session expired; please ask again.");
    }
    if (!res.ok) throw await failure(res);
    return res;
  }

  async function ensureThread() {
    const known = store.get("thread");
    if (known) return known;
    const res = await api("/threads", { method: "POST", body: JSON.stringify({ metadata: { source: "widget" } }) });
    const thread = (await res.json()).thread_id;
    store.set("thread", thread);
    return thread;
  }

  async function* events(res) {
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      buffer += decoder.decode(value || new Uint8Array(), { stream: !done });
      let cut;
      while ((cut = buffer.search(/\r?\n\r?\n/)) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, "");
        let event = "message";
        const lines = [];
        for (const line of block.split(/\r?\n/)) {
          if (line.startsWith("event:")) event = line.slice(6).trim();
          else if (line.startsWith("data:")) lines.push(line.slice(5).replace(/^ /, ""));
        }
        if (lines.length) {
          let parsed = null;
          try { parsed = JSON.parse(lines.join("\n")); } catch { parsed = lines.join("\n"); }
          yield { event, data: parsed };
        }
      }
      if (done) return;
    }
  }

  // ---- rendering ------------------------------------------------------------------------------

  const h = (tag, attrs = {}, ...children) => {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (v === false || v === null || v === undefined) continue;
      if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else if (k === "text") el.textContent = v;
      else el.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children.flat()) if (c !== null && c !== undefined) el.append(c);
    return el;
  };

  function link(url) {  // relative links (a docs index built with --base-url /demo) resolve on the agent server
    if (!url || /^selection(#|$)/.test(url)) return null;  // quoted from the reader's selection: no page to open
    try {
      const u = new URL(url, server + "/");
      return u.protocol === "http:" || u.protocol === "https:" ? u.href : null;
    } catch { return null; }
  }

  // Answer text: [n] markers become links to the cited section; _notes_ are set in italics.
  function renderText(text, citations) {
    const out = h("div", { class: "text" });
    for (const para of text.split(/\n{2,}/)) {
      const p = h("p");
      const parts = para.split(/(\[\d{1,2}\]|_\([^)]*\)_|https?:\/\/[^\s)]+)/);
      for (const part of parts) {
        if (!part) continue;
        const cite = part.match(/^\[(\d{1,2})\]$/);
        const c = cite && citations.find((x) => x.index === Number(cite[1]));
        if (c) {
          p.append(h(link(c.url) ? "a" : "span", { class: "cite", href: link(c.url), title: c.title + "\n\n" + c.text, target: "_top",
                            "aria-label": "source " + c.index + ": " + c.title }, "[" + c.index + "]"));
        } else if (/^_\(.*\)_$/.test(part)) p.append(h("em", { text: part.slice(1, -1) }));
        else if (/^https?:/.test(part)) p.append(h("a", { href: link(part), target: "_top" }, part));
        else p.append(document.createTextNode(part));
      }
      out.append(p);
    }
    return out;
  }

  // Citations from the state (url from source_url) or from the message's standard annotations.
  function citationsOf(values, message) {
    if (values && Array.isArray(values.citations)) {
      return values.citations.map((c) => ({
        index: c.index, url: c.source_url, text: c.text,
        title: [c.title, ...(c.heading_hierarchy || []).slice(-1).filter((x) => x !== c.title)].join(" › "),
      }));
    }
    const blocks = message && Array.isArray(message.content) ? message.content : [];
    const notes = blocks.flatMap((b) => b.annotations || []).filter((a) => a.type === "citation");
    return notes.map((a, i) => ({ index: i + 1, url: a.url, title: a.title || a.url, text: a.cited_text || "" }));
  }

  const textOf = (m) => typeof m.content === "string" ? m.content
    : (m.content || []).filter((b) => b.type === "text").map((b) => b.text).join("");

  // ---- the widget -----------------------------------------------------------------------------

  const host = h("div", { id: "rag-agent-widget" });
  const root = host.attachShadow({ mode: "open" });
  root.append(h("link", { rel: "stylesheet", href: server + "/widget/rag-agent.css" }));
  const uid = Math.random().toString(36).slice(2, 8);

  const launcher = h("button", { class: "launcher", type: "button", "aria-haspopup": "dialog",
                                 "aria-expanded": "false", "aria-controls": "rag-panel-" + uid }, cfg.title);
  const log = h("div", { class: "log", role: "log", "aria-live": "off", "aria-label": "Conversation", tabindex: "0" });
  const status = h("div", { class: "sr-only", role: "status", "aria-live": "polite" });
  const input = h("textarea", { id: "rag-q-" + uid, rows: "2", maxlength: String(cfg.maxQuestion),
                                placeholder: "Ask a question… (/reset starts over)", "aria-describedby": "rag-hint-" + uid });
  const chip = h("div", { class: "chip", hidden: true });
  const send = h("button", { type: "submit", class: "send" }, "Send");
  const form = h("form", { class: "ask" },
    h("label", { for: "rag-q-" + uid, class: "sr-only" }, "Your question"),
    chip, h("div", { class: "row" }, input, send),
    h("p", { id: "rag-hint-" + uid, class: "hint" }, "Enter sends, Shift+Enter adds a line. Answers come only from this site's docs."));
  const panel = h("section", { class: "panel", id: "rag-panel-" + uid, role: "dialog", "aria-modal": "false",
                               "aria-labelledby": "rag-title-" + uid, hidden: true },
    h("header", {},
      h("h2", { id: "rag-title-" + uid }, cfg.title),
      h("button", { type: "button", class: "ghost", onclick: () => newChat(true) }, "New chat"),
      h("button", { type: "button", class: "ghost close", "aria-label": "Close chat", onclick: () => toggle(false) }, "×")),
    log, status, form);
  const askThis = h("button", { type: "button", class: "ask-this", hidden: true }, "Ask about this");
  root.append(launcher, panel, askThis);

  let selection = "";
  let busy = false;
  let loaded = false;

  function toggle(open) {
    panel.hidden = !open;
    launcher.setAttribute("aria-expanded", String(open));
    launcher.hidden = open && matchMedia("(max-width: 480px)").matches;
    if (open) {
      if (!loaded) { loaded = true; restore(); }
      input.focus();
    } else launcher.focus();
  }
  launcher.addEventListener("click", () => toggle(panel.hidden));
  root.addEventListener("keydown", (e) => { if (e.key === "Escape" && !panel.hidden) toggle(false); });

  function say(text) { status.textContent = ""; setTimeout(() => { status.textContent = text; }, 50); }

  function starters() {
    if (!cfg.starters.length || log.querySelector(".msg")) return;
    log.append(h("div", { class: "starters" }, h("p", {}, "Try asking:"),
      cfg.starters.map((q) => h("button", { type: "button", class: "starter", onclick: () => ask(q) }, q))));
  }

  function bubble(role, text) {
    const el = h("div", { class: "msg " + role }, h("span", { class: "sr-only" }, role === "user" ? "You: " : "Assistant: "));
    if (role === "user") el.append(h("div", { class: "text", text }));
    log.append(el);
    log.querySelector(".starters")?.remove();
    el.scrollIntoView({ block: "end" });
    return el;
  }

  function notice(text, kind = "error") {
    const el = h("div", { class: "notice " + kind, role: "alert" }, text);
    log.append(el);
    el.scrollIntoView({ block: "end" });
  }

  function confidence(values) {
    const grounding = values.grounding || {};
    const flagged = grounding.is_fully_grounded === false;
    const c = typeof values.confidence === "number" ? values.confidence : null;
    if (c === null && !flagged) return null;
    const level = c === null ? "" : c >= 0.75 ? "High" : c >= 0.5 ? "Medium" : "Low";
    const text = (level ? level + " confidence (" + Math.round(c * 100) + "%)" : "")
      + (flagged ? (level ? " · " : "") + "some statements are not backed by the sources" : "")
      + (level === "Low" || flagged ? " — check the linked sections" : "");
    return h("p", { class: "confidence " + (flagged || level === "Low" ? "warn" : level.toLowerCase()) }, text);
  }

  function sources(citations) {
    if (!citations.length) return null;
    return h("div", { class: "sources" }, h("p", { class: "label" }, "Sources"),
      h("ol", {}, citations.map((c) => h("li", {},
        h("details", {}, h("summary", {}, link(c.url) ? h("a", { href: link(c.url), target: "_top" }, c.title) : c.title,
                                           h("span", { class: "sr-only" }, " (show the quoted passage)")),
          h("blockquote", { text: c.text }))))));
  }

  function nearest(found) {
    const items = (found && found.nearest) || [];
    return h("div", { class: "nearest" },
      items.length ? [h("p", { class: "label" }, "Nearest sections"),
        h("ul", {}, items.map((s) => h("li", {}, h("a", { href: link(s.source_url), target: "_top" }, s.title))))] : null,
      cfg.handoffUrl ? h("p", {}, h("a", { class: "handoff", href: cfg.handoffUrl, target: "_blank", rel: "noopener" },
                                     cfg.handoffLabel)) : null);
  }

  const THUMB = '<svg viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" focusable="false">'
    + '<path fill="currentColor" d="M2 21h4V9H2v12zm20-11a2 2 0 0 0-2-2h-6.3l1-4.6v-.3a1.5 1.5 0 0 0-.4-1L13.2 1 '
    + '7.6 6.6A2 2 0 0 0 7 8v11a2 2 0 0 0 2 2h9a2 2 0 0 0 1.8-1.2l3-7.1c.1-.2.2-.5.2-.7v-2z"/></svg>';

  function feedback(el, turnId) {
    if (!turnId) return;
    const box = h("div", { class: "feedback" });
    const thanks = h("p", { class: "thanks", role: "status" });
    const rate = async (rating, btn, comment) => {
      try {
        await api("/widget/feedback", { method: "POST", body: JSON.stringify({ turn_id: turnId, rating, comment }) });
        for (const b of box.querySelectorAll(".thumb")) b.setAttribute("aria-pressed", String(b === btn));
        thanks.textContent = comment ? "Thanks — your comment was saved." : "Thanks for the feedback.";
      } catch (err) { thanks.textContent = err.message; }
    };
    const commentBox = (rating, btn) => {
      box.querySelector("form")?.remove();
      const text = h("textarea", { rows: "2", maxlength: "1000", "aria-label": "Optional comment about this answer",
                                   placeholder: "What was missing or wrong? (optional)" });
      const f = h("form", { class: "comment", onsubmit: (e) => { e.preventDefault(); rate(rating, btn, text.value.trim()); f.remove(); } },
        text, h("button", { type: "submit" }, "Send comment"));
      box.append(f);
    };
    const thumb = (rating, label) => {
      const b = h("button", { type: "button", class: "thumb " + rating, "aria-pressed": "false", "aria-label": label, title: label });
      b.innerHTML = THUMB;  // a fixed inline icon: emoji fonts are missing on many systems
      b.addEventListener("click", () => { rate(rating, b); commentBox(rating, b); });
      return b;
    };
    box.append(h("span", { class: "label" }, "Was this helpful?"), thumb("up", "Helpful"),
               thumb("down", "Not helpful"), thanks);
    el.append(box);
  }

  // An answer's extras: links, confidence, nearest sections and hand-off, rating buttons.
  function finish(el, text, values, message) {
    const found = values && values.not_found;
    const shown = found ? text.split("\n").filter((l) => !/^- .+ — \S+$/.test(l)).join("\n").trim() : text;
    el.querySelector(".text")?.remove();
    el.append(renderText(shown, citationsOf(values, message)));
    if (found) el.append(nearest(found));
    else el.append(sources(citationsOf(values, message)));
    if (values && values.status === "grounded") { const c = confidence(values); if (c) el.append(c); }
    if (values && values.status !== "reset") feedback(el, values.turn_id);
    log.scrollTop = log.scrollHeight;
  }

  const turnsKey = () => "turns:" + store.get("thread");
  function remember(message, values) {
    if (!message || !message.id) return;
    const turns = store.get(turnsKey()) || {};
    turns[message.id] = { turn_id: values.turn_id, status: values.status, confidence: values.confidence,
                          not_found: values.not_found, grounding: values.grounding };
    const ids = Object.keys(turns);
    for (const old of ids.slice(0, Math.max(0, ids.length - 50))) delete turns[old];
    store.set(turnsKey(), turns);
  }

  async function restore() {
    const thread = store.get("thread");
    if (!thread) return starters();
    try {
      const state = await (await api("/threads/" + thread + "/state")).json();
      const values = state.values || {};
      const turns = store.get(turnsKey()) || {};
      for (const m of values.messages || []) {
        if (m.type === "human") bubble("user", textOf(m));
        else if (m.type === "ai") finish(bubble("assistant"), textOf(m), turns[m.id] || null, m);
      }
      if ((values.messages || []).length) say("Previous conversation restored.");
    } catch (err) {
      if (err.status === 404 || err.status === 403) store.set("thread", null);
      else notice(err.message);
    }
    starters();
  }

  function newChat(announce) {
    store.set(turnsKey(), null);
    store.set("thread", null);
    log.replaceChildren();
    setSelection("");
    starters();
    if (announce) { say("New chat started."); input.focus(); }
  }

  async function ask(question) {
    question = question.trim();
    if (!question || busy) return;
    if (question.length > cfg.maxQuestion) {
      notice("Please keep questions under " + cfg.maxQuestion + " characters.");
      return;
    }
    busy = true;
    send.disabled = true;
    input.value = "";
    const reset = /^\/(reset|new)$/i.test(question);
    if (reset) log.replaceChildren();
    const asked = bubble("user", question);
    const el = bubble("assistant");
    const live = h("div", { class: "text streaming" });
    el.append(live);
    say("Looking in the docs…");
    const context = selection;
    setSelection("");
    let text = "";
    let values = null;
    try {
      const body = JSON.stringify({
        assistant_id: cfg.assistant, stream_mode: ["custom", "values"],
        input: { messages: [{ role: "user", content: question }], context, page_url: location.href },
      });
      const run = async () => api("/threads/" + await ensureThread() + "/runs/stream", { method: "POST", body });
      let res;
      try { res = await run(); } catch (err) {
        if (err.status !== 404) throw err;
        store.set("thread", null);  // the kept thread is gone (expired, or another visitor's): start a new one
        res = await run();
      }
      for await (const { event, data: d } of events(res)) {
        if (event === "custom" && d && typeof d.answer_delta === "string") text += d.answer_delta;
        else if (event === "custom" && d && typeof d.answer_replace === "string") text = d.answer_replace;
        if (event === "custom") host.dispatchEvent(new CustomEvent("rag-agent:delta", { detail: d }));
        else if (event === "values") values = d;
        else if (event === "error") throw new ApiError(500, (d && d.message) || "The assistant failed to answer.");
        live.textContent = text;
        el.scrollIntoView({ block: "end" });
      }
      if (!values) throw new ApiError(500, "The answer was cut off; please ask again.");
      const messages = values.messages || [];
      const last = messages[messages.length - 1];
      finish(el, values.answer || (last ? textOf(last) : text), values, last);
      remember(last, values);
      if (reset) { log.replaceChildren(el); store.set(turnsKey(), null); }
      say("Answer: " + (values.answer || text));
      host.dispatchEvent(new CustomEvent("rag-agent:answer", { detail: values }));
    } catch (err) {
      el.remove();
      if (!(err instanceof ApiError)) {  // fetch itself failed: network down, or this site is not an allowed origin
        err = new ApiError(0, "Can't reach the assistant right now. If this keeps happening, this site may not be "
                              + "allowed to use it (the server's RAG_AGENT_ALLOWED_ORIGINS).");
      }
      asked.remove();
      notice(err.message, err.status === 429 ? "slow" : "error");
      say(err.message);
      input.value = question;  // nothing the user typed is lost: it is back in the box to send again
    } finally {
      busy = false;
      send.disabled = false;
      input.focus();
    }
  }

  form.addEventListener("submit", (e) => { e.preventDefault(); ask(input.value); });
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); ask(input.value); }
  });

  // ---- "Ask about this": a selection on the page becomes the context of the next question ----------

  function setSelection(text) {
    selection = text;
    chip.hidden = !text;
    chip.replaceChildren();
    if (text) {
      chip.append(h("span", {}, "Asking about: “" + (text.length > 120 ? text.slice(0, 117) + "…" : text) + "”"),
        h("button", { type: "button", class: "ghost", "aria-label": "Stop asking about the selection",
                      onclick: () => { setSelection(""); input.focus(); } }, "×"));
    }
  }

  let pending = "";
  document.addEventListener("selectionchange", () => {
    clearTimeout(document.__ragAgentTimer);
    document.__ragAgentTimer = setTimeout(() => {
      const sel = document.getSelection();
      const text = sel ? sel.toString().trim() : "";
      if (!text || text.length < 3 || host.contains(sel.anchorNode)) { askThis.hidden = true; return; }
      pending = text.slice(0, cfg.maxSelection);
      const box = sel.getRangeAt(0).getBoundingClientRect();
      askThis.style.top = Math.min(window.innerHeight - 48, Math.max(8, box.bottom + 8)) + "px";
      askThis.style.left = Math.min(window.innerWidth - 160, Math.max(8, box.left)) + "px";
      askThis.hidden = false;
    }, 200);
  });
  askThis.addEventListener("mousedown", (e) => e.preventDefault());  // keep the page's selection
  askThis.addEventListener("click", () => {
    askThis.hidden = true;
    setSelection(pending);
    toggle(true);
    if (!input.value) input.value = "What does this mean?";
    input.select();
    say("The selected text will be sent with your next question.");
  });

  document.body.append(host);
})();
