/* Docent chat panel: speaks the chat protocol of DESIGN.md over a WebSocket.
 *
 * Plain DOM, no framework, no build step. Model output only ever reaches the page through
 * createElement/textContent (see renderMarkdown); nothing here assigns HTML strings.
 */
(function () {
  "use strict";

  var root = document.getElementById("chat");
  var stringsNode = document.getElementById("chat-strings");
  if (!root || !stringsNode || !("WebSocket" in window)) return;

  var S = JSON.parse(stringsNode.textContent);
  var KEY_CONVERSATION = "docent.chat.conversation";
  var KEY_OPEN = "docent.chat.open";
  var KEY_DRAFT = "docent.chat.draft";
  var BACKOFF_MIN = 500;
  var BACKOFF_MAX = 15000;
  var QUEUE_ATTEMPTS = 3; // failed connects before a waiting question is handed back
  var KEEP_QUESTION = { model_error: 1, bad_request: 1, rate_limited: 1, busy: 1, internal: 1, connection: 1 };

  var $ = function (id) { return document.getElementById(id); };
  var launcher = $("chat-launcher");
  var panel = $("chat-panel");
  var log = $("chat-log");
  var empty = $("chat-empty");
  var form = $("chat-form");
  var input = $("chat-input");
  var sendButton = $("chat-send");
  var stopButton = $("chat-stop");
  var statusLine = $("chat-status");
  var badge = $("chat-offline-badge");

  var article = document.querySelector("[data-article-slug]");
  // A draft preview is not a published article: the assistant cannot read it, so say nothing.
  var pageSlug = article && !article.querySelector(".draft-banner") ? article.getAttribute("data-article-slug") : "";

  var state = {
    socket: null,
    wanted: false, // the panel was opened at least once: keep a connection
    attempts: 0,
    retryTimer: 0,
    queued: null, // a frame waiting for the socket to open
    turn: null, // the turn being answered
    restored: null, // Promise of the transcript restore
    conversationId: storageGet("localStorage", KEY_CONVERSATION),
    leaving: false,
    stick: true, // keep the log scrolled to the newest line
  };

  /* ---------- small helpers ---------- */

  // Storage is named, not referenced: merely touching `localStorage` throws when it is blocked.
  function storageGet(store, key) {
    try { return window[store].getItem(key) || ""; } catch (e) { return ""; }
  }
  function storageSet(store, key, value) {
    try {
      if (value) window[store].setItem(key, value); else window[store].removeItem(key);
    } catch (e) { /* blocked or private mode: the page still works, it just forgets */ }
  }
  function fmt(template, values) {
    return String(template).replace(/%\((\w+)\)s/g, function (_, name) {
      return values && values[name] != null ? String(values[name]) : "";
    });
  }
  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text != null) node.textContent = text;
    return node;
  }
  function plural(key, count) {
    return fmt(S[key + (count === 1 ? "_one" : "_other")], { count: count });
  }
  function shorten(text, max) {
    text = String(text == null ? "" : text).replace(/\s+/g, " ").trim();
    return text.length > max ? text.slice(0, max - 1) + "…" : text;
  }
  function duration(ms) {
    if (typeof ms !== "number" || !isFinite(ms)) return "";
    if (ms >= 1000) return fmt(S.seconds_short, { seconds: (ms / 1000).toFixed(1) });
    return fmt(S.ms, { ms: Math.max(0, Math.round(ms)) });
  }
  /** A same-origin path for links we make ourselves (citations), or null. */
  function localPath(url) {
    var parsed = safeUrl(url);
    return parsed && parsed.origin === location.origin ? parsed.pathname + parsed.search + parsed.hash : null;
  }
  function safeUrl(href) {
    var parsed;
    try { parsed = new URL(String(href), location.href); } catch (e) { return null; }
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed : null;
  }
  function nearBottom() {
    return log.scrollHeight - log.scrollTop - log.clientHeight < 80;
  }
  function scrollDown(force) {
    if (force || state.stick) log.scrollTop = log.scrollHeight;
  }

  /* ---------- minimal Markdown, with DOM APIs only ---------- */

  var FENCE = /^\s{0,3}(`{3,}|~{3,})\s*([\w+#.-]*)\s*$/;
  var ITEM = /^\s{0,3}([-*+]|\d{1,9}[.)])\s+(.*)$/;
  var HEADING = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/;
  var QUOTE = /^\s{0,3}>\s?(.*)$/;
  var RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
  var INLINE = new RegExp(
    [
      "(`+)([^`]|[^`][\\s\\S]*?[^`])\\1(?!`)", // 1,2 code
      "\\*\\*(?=\\S)([\\s\\S]*?\\S)\\*\\*", // 3 bold
      "__(?=\\S)([\\s\\S]*?\\S)__", // 4 bold
      "\\[([^\\]\\n]+)\\]\\(\\s*<?([^\\s)>]+)>?(?:\\s+\"[^\"]*\")?\\s*\\)", // 5,6 link
      "(?:^|(?<=[^\\w*]))\\*(?=[^\\s*])([^*\\n]*?[^\\s*])\\*(?![\\w*])", // 7 italic
    ].join("|"),
    "g"
  );

  function renderMarkdown(target, source) {
    var lines = String(source).replace(/\r\n?/g, "\n").split("\n");
    var blocks = document.createDocumentFragment();
    var para = [];
    var i = 0;
    function flush() {
      if (!para.length) return;
      var p = el("p");
      para.forEach(function (line, k) {
        if (k) p.appendChild(el("br"));
        appendInline(p, line, 0);
      });
      blocks.appendChild(p);
      para = [];
    }
    while (i < lines.length) {
      var line = lines[i];
      var m;
      if ((m = line.match(FENCE))) {
        flush();
        var code = [];
        var fence = m[1];
        i++;
        while (i < lines.length && lines[i].trim().indexOf(fence) !== 0) code.push(lines[i++]);
        i++;
        var pre = el("pre");
        var codeNode = el("code", null, code.join("\n"));
        if (m[2]) codeNode.setAttribute("data-lang", m[2]);
        pre.appendChild(codeNode);
        blocks.appendChild(pre);
        continue;
      }
      if (!line.trim()) { flush(); i++; continue; }
      if (RULE.test(line) && !para.length) { blocks.appendChild(el("hr")); i++; continue; }
      if ((m = line.match(HEADING))) {
        flush();
        var heading = el("p", "chat-md-heading");
        var strong = el("strong");
        appendInline(strong, m[1], 0);
        heading.appendChild(strong);
        blocks.appendChild(heading);
        i++;
        continue;
      }
      if ((m = line.match(ITEM))) {
        flush();
        i = renderList(blocks, lines, i);
        continue;
      }
      if ((m = line.match(QUOTE))) {
        flush();
        var quote = el("blockquote");
        var quoted = [];
        while (i < lines.length && (m = lines[i].match(QUOTE))) { quoted.push(m[1]); i++; }
        renderMarkdown(quote, quoted.join("\n"));
        blocks.appendChild(quote);
        continue;
      }
      para.push(line.trim());
      i++;
    }
    flush();
    target.replaceChildren(blocks);
  }

  function renderList(parent, lines, i) {
    var first = lines[i].match(ITEM);
    var ordered = /\d/.test(first[1]);
    var list = el(ordered ? "ol" : "ul");
    if (ordered && parseInt(first[1], 10) !== 1) list.start = parseInt(first[1], 10);
    var item = null;
    while (i < lines.length) {
      var line = lines[i];
      var m = line.match(ITEM);
      if (m && /\d/.test(m[1]) === ordered && !/^\s{2,}/.test(line)) {
        item = el("li");
        appendInline(item, m[2], 0);
        list.appendChild(item);
      } else if (item && line.trim() && /^\s+/.test(line) && !FENCE.test(line)) {
        // An indented line continues the item (nested lists are flattened into it).
        item.appendChild(el("br"));
        appendInline(item, line.trim().replace(ITEM, "$2"), 0);
      } else {
        break;
      }
      i++;
    }
    parent.appendChild(list);
    return i;
  }

  function appendInline(parent, text, depth) {
    var last = 0;
    var m;
    INLINE.lastIndex = 0;
    var matches = [];
    while ((m = INLINE.exec(text))) {
      matches.push({ index: m.index, end: INLINE.lastIndex, groups: m.slice() });
      if (m[0] === "") INLINE.lastIndex++;
    }
    matches.forEach(function (match) {
      var g = match.groups;
      if (match.index > last) parent.appendChild(document.createTextNode(text.slice(last, match.index)));
      last = match.end;
      if (g[1]) {
        parent.appendChild(el("code", null, g[2]));
      } else if (g[3] != null || g[4] != null) {
        var strong = el("strong");
        inlineOrText(strong, g[3] != null ? g[3] : g[4], depth);
        parent.appendChild(strong);
      } else if (g[5] != null) {
        parent.appendChild(link(g[5], g[6], depth));
      } else if (g[7] != null) {
        var em = el("em");
        inlineOrText(em, g[7], depth);
        parent.appendChild(em);
      }
    });
    if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
  }

  function inlineOrText(parent, text, depth) {
    if (depth < 3) appendInline(parent, text, depth + 1);
    else parent.appendChild(document.createTextNode(text));
  }

  function link(label, href, depth) {
    var url = safeUrl(href);
    if (!url) {
      // javascript:, data:, mailto: and anything unparsable stay text.
      var span = el("span", "chat-md-unlinked");
      inlineOrText(span, label, depth);
      return span;
    }
    var a = el("a");
    inlineOrText(a, label, depth);
    if (url.origin === location.origin) {
      a.href = url.pathname + url.search + url.hash;
    } else {
      a.href = url.href;
      a.target = "_blank";
      a.rel = "noopener noreferrer";
      a.className = "chat-external";
      a.title = url.host + " (" + S.external_link + ")";
    }
    return a;
  }

  /* ---------- the log: turns, tool steps, answers, sources ---------- */

  function Turn(question) {
    this.question = question;
    this.text = "";
    this.steps = {};
    this.sources = [];
    this.finished = false;
    this.node = el("article", "chat-turn");
    var q = el("div", "chat-question");
    q.appendChild(el("span", "chat-sr-only", S.you_asked + ": "));
    q.appendChild(el("p", "chat-question__text", question));
    this.node.appendChild(q);
    this.reply = el("div", "chat-reply");
    this.stepList = el("ul", "chat-steps");
    this.stepList.setAttribute("aria-label", S.steps);
    this.stepList.hidden = true;
    this.answer = el("div", "chat-answer");
    this.typing = el("div", "chat-typing");
    this.typing.appendChild(el("span", "chat-typing__dots"));
    this.typing.appendChild(el("span", "chat-sr-only", S.thinking));
    this.typing.hidden = true;
    this.sourceBox = el("nav", "chat-sources");
    this.sourceBox.setAttribute("aria-label", S.sources);
    this.sourceBox.appendChild(el("p", "chat-sources__title", S.sources));
    this.sourceList = el("ol", "chat-sources__list");
    this.sourceBox.appendChild(this.sourceList);
    this.sourceBox.hidden = true;
    this.reply.appendChild(this.stepList);
    this.reply.appendChild(this.typing);
    this.reply.appendChild(this.answer);
    this.reply.appendChild(this.sourceBox);
    this.node.appendChild(this.reply);
  }

  Turn.prototype.streaming = function () {
    this.node.classList.add("is-streaming");
    this.typing.hidden = false;
  };

  Turn.prototype.addText = function (delta) {
    this.text += delta;
    this.typing.hidden = true;
    this.scheduleRender();
  };

  Turn.prototype.scheduleRender = function () {
    var self = this;
    if (self.renderPending) return;
    self.renderPending = true;
    requestAnimationFrame(function () { self.flush(); });
  };

  Turn.prototype.flush = function () {
    this.renderPending = false;
    var stick = nearBottom();
    renderMarkdown(this.answer, this.text);
    if (stick) scrollDown(true);
  };

  Turn.prototype.toolStart = function (event) {
    var step = toolStep(event.name, event.arguments, null, true);
    step.node.setAttribute("data-call-id", event.call_id || "");
    this.steps[event.call_id] = step;
    this.stepList.hidden = false;
    this.stepList.appendChild(step.node);
    this.typing.hidden = false;
    scrollDown(false);
  };

  Turn.prototype.toolEnd = function (event) {
    var step = this.steps[event.call_id];
    if (!step) {
      this.toolStart(event);
      step = this.steps[event.call_id];
    }
    var title = event.name === "get_article_detail" && event.ok ? event.summary : null;
    var done = toolStep(event.name, step.args, title, false);
    step.label.textContent = done.label.textContent;
    step.node.classList.remove("is-running");
    step.node.classList.add(event.ok ? "is-done" : "is-failed");
    var meta = [];
    if (event.name !== "get_article_detail" || !event.ok) meta.push(summaryText(event.summary));
    meta.push(duration(event.duration_ms));
    step.meta.textContent = meta.filter(Boolean).join(" · ");
  };

  Turn.prototype.addSource = function (source) {
    var path = localPath(source.url);
    var key = String(source.article_id != null ? source.article_id : source.url);
    if (!path || this.sources.indexOf(key) >= 0) return;
    this.sources.push(key);
    var item = el("li");
    var a = el("a", null, source.title || path);
    a.href = path;
    item.appendChild(a);
    this.sourceList.appendChild(item);
    this.sourceBox.hidden = false;
  };

  /** Stop streaming; `answered` says the turn ended with `done` (so silence is worth a word). */
  Turn.prototype.finish = function (answered) {
    if (this.renderPending || this.text) this.flush();
    this.finished = true;
    this.typing.hidden = true;
    this.node.classList.remove("is-streaming");
    if (answered && !this.text.trim()) this.answer.appendChild(el("p", "chat-muted", S.no_answer));
  };

  Turn.prototype.note = function (kind, message, articles) {
    var box = el("div", "chat-note chat-note--" + kind);
    box.appendChild(el("p", "chat-note__text", message));
    if (articles && articles.length) {
      var list = el("ul", "chat-note__articles");
      articles.forEach(function (item) {
        var path = localPath(item.url);
        if (!path) return;
        var li = el("li");
        var a = el("a", null, item.title || path);
        a.href = path;
        li.appendChild(a);
        list.appendChild(li);
      });
      box.appendChild(list);
    }
    this.reply.appendChild(box);
    return box;
  };

  /** A tool step chip; `running` decides between "Searching…" and "Searched". */
  function toolStep(name, args, title, running) {
    args = args && typeof args === "object" ? args : {};
    var label;
    if (name === "search_knowledge_base") {
      label = fmt(running ? S.search_running : S.search_done, { query: shorten(args.query, 60) });
    } else if (name === "get_article_detail") {
      label = running ? S.detail_running : title ? fmt(S.detail_done, { title: shorten(title, 70) }) : S.detail_done_unknown;
    } else if (name === "list_articles") {
      label = args.tag
        ? fmt(running ? S.list_tag_running : S.list_tag_done, { tag: shorten(args.tag, 40) })
        : running ? S.list_running : S.list_done;
    } else {
      label = fmt(running ? S.tool_running : S.tool_done, { name: shorten(name, 40) });
    }
    var node = el("li", "chat-step" + (running ? " is-running" : ""));
    node.appendChild(el("span", "chat-step__icon"));
    var labelNode = el("span", "chat-step__label", label);
    var meta = el("span", "chat-step__meta");
    node.appendChild(labelNode);
    node.appendChild(meta);
    return { node: node, label: labelNode, meta: meta, args: args };
  }

  /** The server's English tool summary ("3 results", "no results", "timed out"…), translated. */
  function summaryText(summary) {
    summary = String(summary || "");
    var m = summary.match(/^(\d+) (results?|articles?)$/);
    if (m) return plural(m[2].charAt(0) === "r" ? "results" : "articles", parseInt(m[1], 10));
    var known = {
      "no results": S.no_results,
      "timed out": S.timed_out,
      "not found": S.not_found,
      "invalid arguments": S.invalid_arguments,
      failed: S.failed,
      "unknown tool": S.unknown_tool,
    };
    return known[summary] || shorten(summary, 60);
  }

  function errorMessage(code, retryAfter) {
    if (code === "rate_limited") {
      if (!retryAfter) return S.error_budget;
      if (retryAfter > 90) {
        var at = new Date(Date.now() + retryAfter * 1000);
        return fmt(S.error_rate_limited_at, {
          time: at.toLocaleTimeString(document.documentElement.lang || undefined, { hour: "2-digit", minute: "2-digit" }),
        });
      }
      return fmt(S.error_rate_limited, { seconds: Math.ceil(retryAfter) });
    }
    return S["error_" + code] || S.error_internal;
  }

  /* ---------- protocol ---------- */

  function handleEvent(event) {
    var turn = state.turn;
    if (!event || typeof event.type !== "string" || !turn || turn.finished) return;
    switch (event.type) {
      case "start":
        if (event.conversation_id) setConversation(event.conversation_id);
        if (typeof event.offline === "boolean") badge.hidden = !event.offline;
        break;
      case "text":
        turn.addText(String(event.content || ""));
        break;
      case "tool_start":
        turn.toolStart(event);
        break;
      case "tool_end":
        turn.toolEnd(event);
        break;
      case "citation":
        turn.addSource(event);
        break;
      case "done":
        endTurn(null);
        break;
      case "error":
        endTurn(event);
        break;
    }
    scrollDown(false);
  }

  /** End the current turn: `error` is an error event (or a local one), null for `done`. */
  function endTurn(error) {
    var turn = state.turn;
    if (!turn) return;
    turn.finish(!error);
    if (error) {
      var code = error.code || "internal";
      var kind = code === "cancelled" ? "muted" : "warn";
      var message = errorMessage(code, error.retry_after);
      if (code === "max_steps" && !(error.articles && error.articles.length)) message = S.error_max_steps_none;
      var box = turn.note(kind, message, code === "max_steps" ? error.articles : null);
      if (code === "rate_limited" && error.retry_after > 0 && error.retry_after <= 90) {
        countdown(box.firstChild, error.retry_after);
      }
      if (code === "bad_request" && turn.conversationId) checkConversation(turn.conversationId);
      if (KEEP_QUESTION[code]) {
        // The visitor's words are never lost: back into the box, ready to send again.
        if (!input.value.trim()) {
          input.value = turn.question;
          saveDraft();
          autosize();
        }
        box.appendChild(el("p", "chat-note__hint", S.question_kept));
      }
    }
    state.turn = null;
    log.setAttribute("aria-busy", "false");
    setBusy(false);
    scrollDown(false);
  }

  function countdown(node, seconds) {
    var until = Date.now() + seconds * 1000;
    var timer = setInterval(function () {
      var left = Math.ceil((until - Date.now()) / 1000);
      if (!node.isConnected) return clearInterval(timer);
      if (left <= 0) {
        clearInterval(timer);
        node.textContent = S.error_rate_limited_now;
      } else {
        node.textContent = fmt(S.error_rate_limited, { seconds: left });
      }
    }, 1000);
  }

  function send(content) {
    content = String(content || "").trim();
    if (!content || state.turn) return;
    var frame = { type: "message", content: content };
    if (state.conversationId) frame.conversation_id = state.conversationId;
    if (pageSlug) frame.page = pageSlug;
    hideEmpty();
    var turn = new Turn(content);
    turn.conversationId = frame.conversation_id || "";
    state.turn = turn;
    log.appendChild(turn.node);
    turn.streaming();
    log.setAttribute("aria-busy", "true");
    input.value = "";
    saveDraft();
    autosize();
    setBusy(true);
    scrollDown(true);
    transmit(frame);
  }

  function transmit(frame) {
    var socket = state.socket;
    if (socket && socket.readyState === WebSocket.OPEN) {
      socket.send(JSON.stringify(frame));
    } else {
      state.queued = frame;
      connect();
    }
  }

  function stop() {
    var turn = state.turn;
    if (!turn) return;
    if (state.queued || !state.socket || state.socket.readyState !== WebSocket.OPEN) {
      // Never reached the server: end it here.
      state.queued = null;
      endTurn({ code: "cancelled" });
      return;
    }
    if (document.activeElement === stopButton) input.focus(); // a disabled button drops focus
    stopButton.disabled = true;
    state.socket.send(JSON.stringify({ type: "stop" }));
    // The server answers with `cancelled`; if it cannot, do not leave the visitor waiting.
    setTimeout(function () {
      if (state.turn === turn) endTurn({ code: "cancelled" });
    }, 4000);
  }

  function setBusy(busy) {
    // The button under the visitor's focus is about to vanish: keep focus in the composer.
    var hadFocus = document.activeElement === sendButton || document.activeElement === stopButton;
    sendButton.hidden = busy;
    stopButton.hidden = !busy;
    stopButton.disabled = false;
    if (hadFocus) input.focus();
  }

  /* ---------- the connection ---------- */

  function socketUrl() {
    var scheme = location.protocol === "https:" ? "wss://" : "ws://";
    return scheme + location.host + root.getAttribute("data-ws-path");
  }

  function connect() {
    state.wanted = true;
    clearTimeout(state.retryTimer);
    state.retryTimer = 0;
    if (state.socket && state.socket.readyState <= WebSocket.OPEN) return;
    var socket;
    try {
      socket = new WebSocket(socketUrl());
    } catch (e) {
      return scheduleReconnect();
    }
    state.socket = socket;
    socket.onopen = function () {
      if (state.socket !== socket) return;
      state.attempts = 0;
      showStatus("");
      if (state.queued) {
        var frame = state.queued;
        state.queued = null;
        socket.send(JSON.stringify(frame));
      }
    };
    socket.onmessage = function (message) {
      if (state.socket !== socket) return;
      var event;
      try { event = JSON.parse(message.data); } catch (e) { return; }
      handleEvent(event);
    };
    socket.onclose = function () {
      if (state.socket !== socket) return;
      state.socket = null;
      if (state.leaving) return;
      // A turn in flight is over: the server cancels it when the socket goes.
      if (state.turn && !state.queued) endTurn({ code: "connection" });
      scheduleReconnect();
    };
  }

  function scheduleReconnect() {
    if (!state.wanted || state.retryTimer || state.leaving) return;
    if (state.queued && state.attempts >= QUEUE_ATTEMPTS) {
      // The question has waited long enough: give it back, keep trying in the background.
      state.queued = null;
      endTurn({ code: "connection" });
    }
    var delay = Math.min(BACKOFF_MAX, BACKOFF_MIN * Math.pow(2, state.attempts));
    delay = delay / 2 + Math.random() * delay / 2; // jitter, so a restart is not a stampede
    state.attempts += 1;
    showStatus(navigator.onLine === false ? S.browser_offline : S.reconnecting);
    state.retryTimer = setTimeout(function () {
      state.retryTimer = 0;
      connect();
    }, delay);
  }

  function reconnectNow() {
    if (!state.wanted || state.leaving) return;
    if (state.socket && state.socket.readyState <= WebSocket.OPEN) return;
    state.attempts = 0;
    connect();
  }

  function showStatus(text) {
    statusLine.textContent = text;
    statusLine.hidden = !text;
  }

  /* ---------- the conversation: remember, restore, start over ---------- */

  function setConversation(id) {
    state.conversationId = id || "";
    storageSet("localStorage", KEY_CONVERSATION, state.conversationId);
  }

  function conversationUrl(id) {
    return root.getAttribute("data-conversation-url").replace(/0{8}-0{4}-0{4}-0{4}-0{12}/, id);
  }

  /** After a refused message: if the conversation is gone (404), the next one starts afresh. */
  function checkConversation(id) {
    fetch(conversationUrl(id), { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (response.status === 404 && state.conversationId === id) setConversation("");
      })
      .catch(function () { /* offline: the next attempt will tell */ });
  }

  function restore() {
    if (state.restored) return state.restored;
    var id = state.conversationId;
    if (!id || !/^[0-9a-f-]{36}$/i.test(id)) {
      state.restored = Promise.resolve();
      return state.restored;
    }
    var url = conversationUrl(id);
    var loading = el("div", "chat-typing chat-typing--restore");
    loading.appendChild(el("span", "chat-typing__dots"));
    log.appendChild(loading);
    state.restored = fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (response.status === 404) {
          setConversation(""); // another session's, or gone: start afresh
          return null;
        }
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.json();
      })
      .then(function (data) {
        loading.remove();
        if (!data || state.conversationId !== id) return;
        (data.turns || []).forEach(renderPastTurn);
        scrollDown(true);
      })
      .catch(function () {
        loading.remove();
        var note = el("p", "chat-status chat-status--inline", S.restore_failed);
        log.appendChild(note);
      });
    return state.restored;
  }

  function renderPastTurn(past) {
    if (!past || typeof past.user_message !== "string") return;
    hideEmpty();
    var turn = new Turn(past.user_message);
    var titles = {};
    (past.citations || []).forEach(function (c) { titles[c.article_id] = c.title; });
    (past.tools || []).forEach(function (call) {
      var args = call.arguments || {};
      var title = call.name === "get_article_detail" && call.ok ? titles[args.article_id] : null;
      var step = toolStep(call.name, args, title, false);
      step.node.classList.add(!call.executed ? "is-skipped" : call.ok ? "is-done" : "is-failed");
      step.meta.textContent = !call.executed ? S.tool_skipped : call.ok ? duration(call.duration_ms) : S.failed;
      turn.stepList.appendChild(step.node);
      turn.stepList.hidden = false;
    });
    turn.text = past.answer || "";
    (past.citations || []).forEach(function (c) { turn.addSource(c); });
    log.appendChild(turn.node);
    turn.finish(past.status === "done");
    if (past.status === "cancelled") turn.note("muted", S.error_cancelled);
    else if (past.status === "interrupted") turn.note("muted", S.error_interrupted);
    else if (past.status === "max_steps" && past.error_code === "max_steps") turn.note("warn", S.error_max_steps_none);
    else if (past.status === "error") turn.note("warn", errorMessage(past.error_code || "internal", 0));
  }

  function newChat() {
    if (state.turn) {
      // Closing the socket cancels the turn on the server and leaves no stray events behind.
      var socket = state.socket;
      state.socket = null;
      state.queued = null;
      if (socket) socket.close();
      state.turn = null;
      setBusy(false);
      connect();
    }
    setConversation("");
    state.restored = Promise.resolve();
    Array.prototype.slice.call(log.children).forEach(function (child) {
      if (child !== empty) child.remove();
    });
    empty.hidden = false;
    log.setAttribute("aria-busy", "false");
    input.focus();
  }

  function hideEmpty() {
    empty.hidden = true;
  }

  /* ---------- opening, closing, typing ---------- */

  function open(focus) {
    panel.hidden = false;
    launcher.setAttribute("aria-expanded", "true");
    document.documentElement.classList.add("chat-is-open");
    storageSet("sessionStorage", KEY_OPEN, "1");
    connect();
    restore();
    state.stick = true;
    scrollDown(true);
    if (focus) input.focus();
  }

  function close() {
    panel.hidden = true;
    launcher.setAttribute("aria-expanded", "false");
    document.documentElement.classList.remove("chat-is-open");
    storageSet("sessionStorage", KEY_OPEN, "");
    launcher.focus();
  }

  // CSS grows the box where `field-sizing` exists; elsewhere the CSSOM does (CSP allows it).
  var cssSizing = window.CSS && CSS.supports && CSS.supports("field-sizing", "content");
  function autosize() {
    if (cssSizing) return;
    input.style.height = "auto";
    input.style.height = Math.min(input.scrollHeight, 160) + "px";
  }

  function saveDraft() {
    storageSet("sessionStorage", KEY_DRAFT, input.value);
  }

  function submit() {
    var content = input.value;
    if (!content.trim() || state.turn) return;
    var restoring = state.restored || Promise.resolve();
    // Past turns first, so the new question lands below them and continues the conversation.
    restoring.then(function () { send(content); });
  }

  function buildSuggestions() {
    var box = $("chat-suggestions");
    var items = pageSlug ? [S.suggest_article, S.suggest_topics] : [S.suggest_new, S.suggest_topics];
    items.forEach(function (text) {
      var button = el("button", "chat-suggestion", text);
      button.type = "button";
      button.addEventListener("click", function () {
        input.value = text;
        submit();
      });
      box.appendChild(button);
    });
  }

  launcher.addEventListener("click", function () {
    if (panel.hidden) open(true); else close();
  });
  $("chat-close").addEventListener("click", close);
  $("chat-new").addEventListener("click", newChat);
  stopButton.addEventListener("click", stop);
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    submit();
  });
  input.addEventListener("keydown", function (event) {
    // Enter sends; Shift+Enter is a new line; an IME composing Chinese keeps its Enter.
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing && event.keyCode !== 229) {
      event.preventDefault();
      submit();
    }
  });
  input.addEventListener("input", function () {
    autosize();
    saveDraft();
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && !panel.hidden && !event.isComposing) {
      event.preventDefault();
      close();
    }
  });
  log.addEventListener("scroll", function () {
    state.stick = nearBottom();
  }, { passive: true });
  window.addEventListener("online", reconnectNow);
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") reconnectNow();
  });
  window.addEventListener("pagehide", function () {
    state.leaving = true;
  });
  window.addEventListener("pageshow", function (event) {
    if (event.persisted) {
      state.leaving = false;
      reconnectNow();
    }
  });

  input.placeholder = pageSlug ? S.placeholder_article : S.placeholder;
  input.value = storageGet("sessionStorage", KEY_DRAFT);
  buildSuggestions();
  launcher.hidden = false;
  if (root.getAttribute("data-offline") === "true") badge.hidden = false;
  if (storageGet("sessionStorage", KEY_OPEN)) open(false);
  if (input.value) autosize();
})();
