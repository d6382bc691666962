/* rag-agent chat widget: one <script> tag, no third-party requests at run time.
 *
 * This is the source; `make widget` (widget/build.mjs) bundles it with markdown-it and DOMPurify into
 * rag_agent/web/static/rag-agent.js, the file the server sends. Answers are Markdown: markdown-it renders
 * it with raw HTML disabled, DOMPurify then keeps only the tags and attributes in ALLOWED below.
 *
 * <script src="https://AGENT/widget/rag-agent.js" defer
 *         data-title="Ask the docs" data-starters="First question|Second question"
 *         data-handoff-url="https://forum.example.com" data-handoff-label="Ask in the forum"
 *         data-shortcut="k"></script>
 *
 * Talks to the LangGraph server's own API (threads, runs/stream) with plain fetch and server-sent
 * events, as an anonymous visitor holding a signed token from /widget/token. See docs/widget.md.
 */
import MarkdownIt from "markdown-it";
import DOMPurify from "dompurify";

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
    // Ctrl/⌘ + this key opens the panel; data-shortcut="" turns the shortcut off.
    shortcut: (data.shortcut === undefined ? "k" : data.shortcut).trim().toLowerCase().slice(0, 1),
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

  // Answers are Markdown. Raw HTML in them is shown as text (html: false), images are never loaded (no
  // third-party requests), bare URLs become links outside code only, and DOMPurify keeps only ALLOWED.
  const markdown = new MarkdownIt({ html: false, linkify: true, typographer: false }).disable(["image"]);
  const ALLOWED = {
    ALLOWED_TAGS: ["p", "br", "em", "strong", "del", "s", "code", "pre", "blockquote", "ul", "ol", "li", "a", "hr",
                   "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td"],
    ALLOWED_ATTR: ["href", "title", "start", "class", "style"],
    RETURN_DOM_FRAGMENT: true,
  };
  const SKIP = "pre, code, a";

  // Markdown → a sanitized fragment; [n] markers become links to the cited section.
  function renderText(text, citations) {
    const out = h("div", { class: "text" });
    out.append(DOMPurify.sanitize(markdown.render(text), ALLOWED));
    for (const el of out.querySelectorAll("[style]")) {  // only table cell alignment survives
      const align = /text-align:\s*(left|right|center)/.exec(el.getAttribute("style") || "");
      el.removeAttribute("style");
      if (align && /^T[DH]$/.test(el.tagName)) el.style.textAlign = align[1];
    }
    for (const a of out.querySelectorAll("a")) {
      const href = link(a.getAttribute("href"));
      if (href) { a.href = href; target(a); } else a.replaceWith(...a.childNodes);
    }
    for (const table of out.querySelectorAll("table")) table.replaceWith(h("div", { class: "table" }, table.cloneNode(true)));
    for (const pre of out.querySelectorAll("pre")) {
      const box = h("div", { class: "code" });
      pre.replaceWith(box);
      box.append(copyButton("Copy code", () => pre.textContent.replace(/\n$/, "")), pre);
    }
    if (citations.length) markers(out, citations);
    return out;
  }

  function markers(root, citations) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const nodes = [];
    while (walker.nextNode()) {
      const node = walker.currentNode;
      if (/\[\d{1,2}\]/.test(node.nodeValue) && !node.parentElement.closest(SKIP)) nodes.push(node);
    }
    for (const node of nodes) {
      const parts = node.nodeValue.split(/(\[\d{1,2}\])/).map((part) => {
        const cite = part.match(/^\[(\d{1,2})\]$/);
        const c = cite && citations.find((x) => x.index === Number(cite[1]));
        if (!c) return document.createTextNode(part);
        const a = h(link(c.url) ? "a" : "span", { class: "cite", href: link(c.url), title: c.title + "\n\n" + c.text,
                                                  "aria-label": "source " + c.index + ": " + c.title }, "[" + c.index + "]");
        return link(c.url) ? target(a) : a;
      });
      node.replaceWith(...parts);
    }
  }

  // Same-origin links open in this tab and the panel reopens on the new page (the conversation is kept
  // on the server); links to another site open in a new tab, since the widget there is another one.
  function target(a) {
    if (new URL(a.href).origin === location.origin) a.target = "_top";
    else { a.target = "_blank"; a.rel = "noopener noreferrer"; }
    return a;
  }

  function copyButton(label, text) {
    const b = h("button", { type: "button", class: "copy ghost" }, label);
    b.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(text());
        b.textContent = "Copied";
      } catch {
        b.textContent = "Copy failed: select and press Ctrl+C";
      }
      setTimeout(() => { b.textContent = label; }, 2000);
    });
    return b;
  }

  // Citations from the state (url from source_url) or from the message's standard annotations.
  function citationsOf(values, message) {
    if (values && Array.isArray(values.citations)) {
      return values.citations.map((c) => ({
        index: c.index, url: c.source_url, text: c.text,
        title: [c.title, ...(c.heading_hierarchy || []).slice(-1).filter((x) => x !== c.title)].join(" › "),
      }));
    }
    // Every [n] marker carries an annotation: the marker's own text says which source it is, once per source.
    const blocks = message && Array.isArray(message.content) ? message.content : [];
    const found = new Map();
    for (const b of blocks) {
      for (const a of (b.annotations || []).filter((x) => x.type === "citation")) {
        const cite = /^\[(\d{1,2})\]$/.exec((b.text || "").slice(a.start_index, a.end_index));
        const index = cite ? Number(cite[1]) : found.size + 1;
        if (!found.has(index)) found.set(index, { index, url: a.url, title: a.title || a.url, text: a.cited_text || "" });
      }
    }
    return [...found.values()];
  }

  // A stored message ends with its sources as Markdown links (for other chat UIs); the widget lists them itself.
  const withoutSources = (text) => text.replace(/\n\nSources:\n(- .*(\n|$))+$/, "");

  const textOf = (m) => typeof m.content === "string" ? m.content
    : (m.content || []).filter((b) => b.type === "text").map((b) => b.text).join("");

  // ---- the widget -----------------------------------------------------------------------------

  const host = h("div", { id: "rag-agent-widget" });
  const root = host.attachShadow({ mode: "open" });
  root.append(h("link", { rel: "stylesheet", href: server + "/widget/rag-agent.css" }));
  const uid = Math.random().toString(36).slice(2, 8);

  const launcher = h("button", { class: "launcher", type: "button", "aria-haspopup": "dialog",
                                 "aria-expanded": "false", "aria-controls": "rag-panel-" + uid,
                                 "aria-keyshortcuts": cfg.shortcut ? "Control+" + cfg.shortcut.toUpperCase() + " Meta+"
                                   + cfg.shortcut.toUpperCase() : null,
                                 title: cfg.shortcut ? cfg.title + " (Ctrl+" + cfg.shortcut.toUpperCase() + ")" : null },
                         cfg.title);
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
  document.addEventListener("keydown", (e) => {
    if (!cfg.shortcut || !(e.ctrlKey || e.metaKey) || e.altKey || e.shiftKey || e.key.toLowerCase() !== cfg.shortcut) return;
    e.preventDefault();  // the browser's own Ctrl+K (search bar) would take focus away
    if (panel.hidden) toggle(true); else input.focus();
  });
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
        h("details", {}, h("summary", {}, link(c.url) ? target(h("a", { href: link(c.url) }, c.title)) : c.title,
                                           h("span", { class: "sr-only" }, " (show the quoted passage)")),
          h("blockquote", { text: c.text }))))));
  }

  function nearest(found) {
    const items = (found && found.nearest) || [];
    return h("div", { class: "nearest" },
      items.length ? [h("p", { class: "label" }, "Nearest sections"),
        h("ul", {}, items.map((s) => h("li", {}, target(h("a", { href: link(s.source_url) }, s.title)))))] : null,
      cfg.handoffUrl ? h("p", {}, h("a", { class: "handoff", href: cfg.handoffUrl, target: "_blank", rel: "noopener" },
                                     cfg.handoffLabel)) : null);
  }

  const THUMB = '<svg viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" focusable="false">'
    + '<path fill="currentColor" d="M2 21h4V9H2v12zm20-11a2 2 0 0 0-2-2h-6.3l1-4.6v-.3a1.5 1.5 0 0 0-.4-1L13.2 1 '
    + '7.6 6.6A2 2 0 0 0 7 8v11a2 2 0 0 0 2 2h9a2 2 0 0 0 1.8-1.2l3-7.1c.1-.2.2-.5.2-.7v-2z"/></svg>';

  // Ratings this browser gave, by turn: the pressed thumb is shown again after a reload.
  const ratingsKey = () => "ratings:" + store.get("thread");

  function feedback(el, turnId) {
    if (!turnId) return;
    const box = h("div", { class: "feedback" });
    const thanks = h("p", { class: "thanks", role: "status" });
    const press = (rating) => {
      for (const b of box.querySelectorAll(".thumb")) b.setAttribute("aria-pressed", String(b.dataset.rating === rating));
    };
    const rate = async (rating, comment) => {
      try {
        await api("/widget/feedback", { method: "POST", body: JSON.stringify({ turn_id: turnId, rating, comment }) });
        press(rating);
        store.set(ratingsKey(), { ...(store.get(ratingsKey()) || {}), [turnId]: rating });
        thanks.textContent = comment ? "Thanks — your comment was saved." : "Thanks for the feedback.";
        return true;
      } catch (err) { thanks.textContent = err.message; return false; }
    };
    // Thumbs-up is recorded at once and asks nothing; an optional "what helped?" is offered. Thumbs-down
    // asks what was missing or wrong (optional too); its rating is stored when the comment is sent or skipped.
    const commentBox = (rating) => {
      box.querySelector("form")?.remove();
      const ask = rating === "up" ? "What helped? (optional)" : "What was missing or wrong? (optional)";
      const text = h("textarea", { rows: "2", maxlength: "1000", "aria-label": "Optional comment about this answer",
                                   placeholder: ask });
      const f = h("form", { class: "comment", onsubmit: async (e) => {
        e.preventDefault();
        if (await rate(rating, text.value.trim())) f.remove();
      } }, text, h("button", { type: "submit" }, "Send comment"));
      box.append(f);
      if (rating === "down") text.focus();
    };
    const thumb = (rating, label) => {
      const b = h("button", { type: "button", class: "thumb " + rating, "aria-pressed": "false", "aria-label": label,
                              title: label, "data-rating": rating });
      b.innerHTML = THUMB;  // a fixed inline icon, no text from anywhere: emoji fonts are missing on many systems
      b.addEventListener("click", async () => { if (await rate(rating)) commentBox(rating); });
      return b;
    };
    box.append(h("span", { class: "label" }, "Was this helpful?"), thumb("up", "Helpful"),
               thumb("down", "Not helpful"), thanks);
    const given = (store.get(ratingsKey()) || {})[turnId];
    if (given) press(given);
    el.append(box);
  }

  // An answer's extras: links, confidence, nearest sections and hand-off, rating buttons.
  function finish(el, text, values, message) {
    const found = values && values.not_found;
    // The nearest sections are listed below: as "title — url" (the answer) or a Markdown link (a stored message).
    const listed = (l) => /^- .+ — \S+$/.test(l) || /^- \[.+\]\(\S+\)$/.test(l);
    const shown = found ? text.split("\n").filter((l) => !listed(l)).join("\n").trim() : text;
    el.querySelector(".text")?.remove();
    el.append(renderText(shown, citationsOf(values, message)));
    if (found) el.append(nearest(found));
    else el.append(sources(citationsOf(values, message)));
    if (values && values.status === "grounded") { const c = confidence(values); if (c) el.append(c); }
    if (shown && (!values || !["reset", "chitchat"].includes(values.status))) {
      el.append(h("div", { class: "actions" }, copyButton("Copy answer", () => shown)));
    }
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

  // fetch itself failed: the network is down, or this site is not one the server lets use it (CORS).
  // Visitors can do nothing about the latter, so they are not shown the server's settings.
  const unreachable = () => new ApiError(0, "Sorry, the assistant can't be reached from this page right now. "
    + "Please try again later" + (cfg.handoffUrl ? ", or use the link below." : "."));

  async function restore() {
    const thread = store.get("thread");
    if (!thread) {
      try { await token(); } catch (err) {  // a site the server does not serve: say so before any question
        if (err instanceof ApiError) return starters();
        notice(unreachable().message);
        if (cfg.handoffUrl) log.append(nearest(null));
        return;
      }
      return starters();
    }
    try {
      const state = await (await api("/threads/" + thread + "/state")).json();
      const values = state.values || {};
      const turns = store.get(turnsKey()) || {};
      for (const m of values.messages || []) {
        if (m.type === "human") bubble("user", textOf(m));
        else if (m.type === "ai") finish(bubble("assistant"), withoutSources(textOf(m)), turns[m.id] || null, m);
      }
      if ((values.messages || []).length) say("Previous conversation restored.");
    } catch (err) {
      if (err.status === 404 || err.status === 403) store.set("thread", null);
      else notice(err instanceof ApiError ? err.message : unreachable().message);
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

  // What the graph is doing, told from the state it streams after each step.
  function step(values, now) {
    const found = Array.isArray(values.retrieved) ? values.retrieved.length : 0;
    if (values.status && values.status !== "pending") return now;
    if (found) return "Found " + found + " passage" + (found > 1 ? "s" : "") + "; writing the answer…";
    return now;
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
    // Visible progress while the graph works, from the state after each step (offline answers included).
    const progress = h("p", { class: "progress", "aria-hidden": "true" }, "Searching the docs…");
    el.append(progress, live);
    say("Searching the docs…");
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
        else if (event === "values") { values = d; progress.textContent = step(d, progress.textContent); }
        else if (event === "error") throw new ApiError(500, (d && d.message) || "The assistant failed to answer.");
        if (text) { progress.remove(); live.replaceChildren(...renderText(text, []).childNodes); }
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
      if (!(err instanceof ApiError)) err = unreachable();
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
  let used = "";  // the selection last asked about: the button does not come back for it
  // Only a selection of the page's own text counts: not one inside the widget (its shadow DOM retargets
  // the selection to the host element, or to nothing), nor inside any text field, nor one with no box.
  function pageSelection() {
    const sel = document.getSelection();
    if (!sel || !sel.rangeCount || sel.isCollapsed) return null;
    const focused = document.activeElement;
    if (focused === host || (focused && focused.matches("input, textarea, [contenteditable]"))) return null;
    const range = sel.getRangeAt(0);
    for (const node of [sel.anchorNode, sel.focusNode, range.commonAncestorContainer]) {
      if (!node || node === host || host.contains(node) || node.getRootNode() !== document) return null;
    }
    const box = range.getBoundingClientRect();
    if (!box.width && !box.height) return null;
    const text = sel.toString().trim();
    return text.length >= 3 ? { text, box } : null;
  }

  document.addEventListener("selectionchange", () => {
    clearTimeout(document.__ragAgentTimer);
    document.__ragAgentTimer = setTimeout(() => {
      const found = pageSelection();
      if (!found || found.text.slice(0, cfg.maxSelection) === used) { askThis.hidden = true; if (!found) used = ""; return; }
      const { text, box } = found;
      pending = text.slice(0, cfg.maxSelection);
      askThis.style.top = Math.min(window.innerHeight - 48, Math.max(8, box.bottom + 8)) + "px";
      askThis.style.left = Math.min(window.innerWidth - 160, Math.max(8, box.left)) + "px";
      askThis.hidden = false;
    }, 200);
  });
  askThis.addEventListener("mousedown", (e) => e.preventDefault());  // keep the page's selection
  askThis.addEventListener("click", () => {
    askThis.hidden = true;
    used = pending;
    setSelection(pending);
    toggle(true);
    if (!input.value) input.value = "What does this mean?";
    input.select();
    say("The selected text will be sent with your next question.");
  });

  // A citation followed to another page of this site: reopen the panel there, with the conversation.
  const REOPEN = KEY + ":reopen";
  root.addEventListener("click", (e) => {
    const a = e.target.closest && e.target.closest("a[href]");
    if (!a || a.target !== "_top") return;
    const to = new URL(a.href);
    if (to.origin !== location.origin) return;
    if (to.pathname === location.pathname && to.search === location.search) {
      if (matchMedia("(max-width: 480px)").matches) toggle(false);  // full-screen panel: show the section
      return;
    }
    try { sessionStorage.setItem(REOPEN, String(Date.now())); } catch { /* private mode: reopen by hand */ }
  });

  document.body.append(host);
  try {
    const asked = Number(sessionStorage.getItem(REOPEN) || 0);
    sessionStorage.removeItem(REOPEN);
    if (Date.now() - asked < 60000) toggle(true);
  } catch { /* no sessionStorage */ }
})();
