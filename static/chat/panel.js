/* Docent chat panel: speaks the chat protocol of DESIGN.md over a WebSocket.
 *
 * Plain DOM, ES modules, no build step. Model output only reaches the page through
 * createElement/textContent (markdown.js); nothing here assigns HTML strings.
 */
import { Composer } from "./composer.js";
import { Connection } from "./connection.js";
import { DayLines } from "./days.js";
import { Feedback } from "./feedback.js";
import { IndexingNotice } from "./indexing.js";
import { Sheet } from "./sheet.js";
import { countdown, errorMessage } from "./steps.js";
import { CONFIG, S } from "./strings.js";
import { Turn } from "./turn.js";
import { setExternalLabel } from "./markdown.js";
import { el, fmt, shorten, storageGet, storageSet } from "./util.js";

const KEY_CONVERSATION = "docent.chat.conversation";
const KEY_OPEN = "docent.chat.open";
// A wait the server set, or a model it cannot reach for its settings, kept for this tab: a
// reload lost the note, and the reader asked again only to be refused again.
const KEY_ENDING = "docent.chat.ending";
const RETRYABLE = new Set([...CONFIG.retryable, "connection", "unreachable"]);
// Silence from the server this long, mid-turn, is worth a word: dots alone for a minute read as
// a hang (a slow model, a slow network). A model may take this long to start, rarely longer.
const SLOW_MS = 15000;

const $ = (id) => document.getElementById(id);

class Panel {
  constructor(root) {
    this.root = root;
    this.launcher = $("chat-launcher");
    this.panel = $("chat-panel");
    this.log = $("chat-log");
    this.empty = $("chat-empty");
    this.newButton = $("chat-new");
    this.input = $("chat-input");
    this.sendButton = $("chat-send");
    this.stopButton = $("chat-stop");
    this.statusLine = $("chat-status");
    this.badge = $("chat-offline-badge");
    this.announcer = $("chat-announce");
    this.sheet = new Sheet(root, this.panel, this.launcher);
    this.composer = new Composer(this.input, $("chat-counter"), this.sendButton);
    this.indexing = new IndexingNotice(
      $("chat-indexing"),
      () => !this.panel.hidden && document.visibilityState === "visible",
    );
    const article = document.querySelector("[data-article-slug]");
    // A draft preview is not a published article: the assistant cannot read it, so say nothing.
    this.article = article && !article.querySelector(".draft-banner") ? article : null;
    this.pageSlug = this.article?.getAttribute("data-article-slug") || "";
    this.turn = null; // the turn being answered
    this.reconnectNoted = false; // the log's last note says "Reconnecting…" already
    this.connectionKind = undefined; // "" open, "reconnecting", "offline"; undefined before
    this.restoreNote = null; // "The earlier messages couldn't be loaded", while on screen
    this.restored = null; // Promise of the transcript restore
    this.conversationId = storageGet("localStorage", KEY_CONVERSATION);
    this.feedback = new Map(); // turn number -> Feedback
    this.pastTurns = new Map(); // turn number -> Turn, as restored
    this.days = new DayLines(this.log); // "Yesterday" between a conversation's days
    this.stick = true; // keep the log scrolled to the newest line
    this.connection = new Connection(root.getAttribute("data-ws-path"), {
      onEvent: (event) => this.handleEvent(event),
      onDropped: () => {
        // A turn in flight is over: the server cancels it when the socket goes.
        if (this.turn) this.endTurn({ code: "connection" });
      },
      // The question never left: no server took it, so nothing was "dropped".
      onGiveUp: () => this.endTurn({ code: "unreachable" }),
      onStatus: (kind) => this.connectionChanged(kind),
    });
  }

  /* ---------- the log ---------- */

  nearBottom() {
    return this.log.scrollHeight - this.log.scrollTop - this.log.clientHeight < 80;
  }

  scrollDown(force) {
    if (force || this.stick) this.log.scrollTop = this.log.scrollHeight;
  }

  showStatus(text) {
    this.statusLine.textContent = text;
    this.statusLine.hidden = !text;
  }

  /** The status line follows the connection, except where the log already says the same. */
  connectionChanged(kind) {
    const reopened = !kind && this.connectionKind;
    this.connectionKind = kind;
    if (!kind) this.reconnectNoted = false;
    if (reopened) this.restoreAgain();
    this.sayConnection();
  }

  sayConnection() {
    let kind = this.connectionKind || "";
    // After `unavailable` the turn's note says "Reconnecting…" itself, and so does a failed
    // restore's: during a database outage every failed attempt also put "Connection lost.
    // Reconnecting…" above it, two messages for one outage.
    const noted = this.reconnectNoted || this.restoreNote?.isConnected;
    if (kind === "reconnecting" && noted) kind = "";
    this.showStatus(connectionStatus(kind));
    if (this.restoreNote) {
      const waiting = this.connectionKind === "reconnecting";
      this.restoreNote.textContent = waiting ? S.restore_failed_reconnecting : S.restore_failed;
    }
  }

  /* ---------- protocol ---------- */

  handleEvent(event) {
    if (!event || typeof event.type !== "string") return;
    if (event.type === "feedback_saved") {
      this.feedback.get(event.turn)?.saved();
      return;
    }
    // A refused vote is marked as such: it must not end an answer streaming meanwhile.
    if (event.type === "error" && event.feedback === true) {
      this.feedbackFailed(event);
      return;
    }
    // So is any other frame refused while an answer streams (a second question): the answer goes on.
    if (event.type === "error" && event.refused === true) return;
    const turn = this.turn;
    if (!turn || turn.finished) {
      // An error with no answer in flight answers a feedback frame (a server that does not mark it).
      if (event.type === "error") this.feedbackFailed(event);
      return;
    }
    this.watchSlow(turn);
    switch (event.type) {
      case "start":
        if (event.conversation_id) this.setConversation(event.conversation_id);
        if (typeof event.turn === "number") turn.number = event.turn;
        if (typeof event.offline === "boolean") this.badge.hidden = !event.offline;
        break;
      case "text":
        turn.addText(String(event.content || ""), () => this.afterRender());
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
        // On a first run a decline may be the index's gap, not the blog's: say so, offer a retry.
        if (event.answered === false && this.indexing.running) {
          this.askButton(turn.note("muted", S.declined_while_indexing), S.ask_again, turn);
        }
        this.endTurn(null);
        break;
      case "error":
        this.endTurn(event);
        break;
    }
    this.scrollDown(false);
  }

  /** (Re)start the wait after which a silent turn says it is still waiting; news hides it. */
  watchSlow(turn) {
    clearTimeout(this.slowTimer);
    turn.slow(false);
    this.slowTimer = setTimeout(() => {
      // Offline, the status line says why nothing comes; "slow" would blame the assistant.
      if (this.turn !== turn || navigator.onLine === false) return;
      turn.slow(true);
      this.announce(S.still_waiting);
    }, SLOW_MS);
  }

  afterRender() {
    if (this.stick) this.scrollDown(true);
  }

  feedbackFailed(event) {
    const pending = [...this.feedback.values()].find(
      (f) => f.pending && (event.turn == null || event.turn === f.turn),
    );
    pending?.failed(S.feedback_failed);
  }

  /** End the current turn: `error` is an error event (or a local one), null for `done`. */
  endTurn(error) {
    const turn = this.turn;
    if (!turn) return;
    clearTimeout(this.slowTimer);
    turn.finish(!error);
    if (!error) this.addFeedback(turn, {});
    if (error) this.explain(turn, error);
    if (error) this.rememberEnding(turn, error);
    // A question no server received, or one refused before any answer (a rate limit that
    // will lift), is in the box again: sent again, it replaces this one and its warning.
    this.unsent = error && refusedBeforeAnswer(error, turn) ? turn : null;
    this.turn = null;
    this.log.setAttribute("aria-busy", "false");
    this.setBusy(false);
    this.scrollDown(false);
    this.announce(turn.spoken());
  }

  /** Say `text` once to a screen reader (the log itself is not live: see _panel.html). */
  announce(text) {
    this.announcer.textContent = text;
  }

  explain(turn, error) {
    const code = error.code || "internal";
    const kind = code === "cancelled" ? "muted" : "warn";
    if (error.reason === "setup") {
      turn.unavailable(); // the question stays in its turn, and in the search link
      return;
    }
    let message = errorMessage(code, error.retry_after, error.reason);
    if (code === "max_steps" && !error.articles?.length) message = S.error_max_steps_none;
    const box = turn.note(kind, message, code === "max_steps" ? error.articles : null);
    if (code === "rate_limited" && error.retry_after > 0 && error.retry_after <= 90) {
      countdown(box.firstChild, error.retry_after);
    }
    if (code === "bad_request" && turn.conversationId) this.checkConversation(turn.conversationId);
    if (code === "unavailable") {
      // This worker is shutting down: a fresh socket reaches one that is not.
      this.reconnectNoted = true;
      this.connection.restart();
      this.askButton(box, S.ask_again, turn);
    }
    // The visitor's words are never lost: back into the box. (Not after a refusal of the
    // site's settings, above: "press Enter to send it again" met the same refusal every time.)
    const retryable = RETRYABLE.has(code);
    if (retryable && !this.composer.value.trim()) this.composer.value = turn.question;
    if (code === "rate_limited" && !(error.retry_after > 0)) {
      // This conversation is spent (its token budget or its length): no wait helps, and
      // sending again here is refused again. A new chat takes the question.
      this.askButton(box, S.ask_in_new_chat, turn, () => this.newChat());
    } else if (code === "rate_limited" && error.retry_after > 90) {
      // A day's budget, or a long wait: Enter now would be refused again.
      box.appendChild(el("p", "chat-note__hint", S.question_kept_later));
    } else if (retryable) {
      box.appendChild(el("p", "chat-note__hint", S.question_kept));
    }
  }

  /** Keep a turn's ending that a reload must not lose: a wait the server set (a rate limit, a
   * day's budget) while it lasts, or a model refusing the site's settings. */
  rememberEnding(turn, error) {
    const wait = error.code === "rate_limited" && error.retry_after > 0;
    if (!wait && error.reason !== "setup") return;
    const ending = {
      conversation: this.conversationId || "",
      turn: turn.number ?? null,
      code: error.code,
      reason: error.reason || "",
      until: wait ? Date.now() + error.retry_after * 1000 : 0,
      question: turn.question,
    };
    storageSet("sessionStorage", KEY_ENDING, JSON.stringify(ending));
  }

  /** After a reload, the kept ending says again what it said live: under its turn if the
   * transcript has it, else (refused at the door, never recorded) under its question. */
  recallEnding() {
    if (this.recalled) return;
    this.recalled = true;
    let ending = null;
    try {
      ending = JSON.parse(storageGet("sessionStorage", KEY_ENDING) || "null");
    } catch {
      ending = null;
    }
    const left = ending?.until ? (ending.until - Date.now()) / 1000 : 0;
    const stale = ending?.conversation !== (this.conversationId || "") || (ending?.until && left <= 0);
    if (!ending || stale) {
      storageSet("sessionStorage", KEY_ENDING, "");
      return;
    }
    const error = { code: ending.code, reason: ending.reason || undefined };
    if (ending.until) error.retry_after = left;
    let turn = this.pastTurns.get(ending.turn);
    if (turn) {
      for (const note of turn.node.querySelectorAll(".chat-note")) note.remove();
    } else {
      turn = new Turn(String(ending.question || ""));
      turn.finish(false);
      this.showEmpty(false);
      this.log.appendChild(turn.node);
      this.unsent = turn; // asked again, it replaces this copy, as live
    }
    this.explain(turn, error);
  }

  /** A button under `box` that asks the turn's question again, after `before()`. */
  askButton(box, label, turn, before = () => {}) {
    const button = el("button", "chat-note__action", label);
    button.type = "button";
    button.addEventListener("click", () => {
      // Removed under the keyboard's focus, the button left it on <body>: Tab started over
      // from the page's top, outside the panel. The box is where the question goes again.
      if (document.activeElement === button) this.input.focus();
      button.remove();
      before();
      this.composer.value = turn.question;
      this.submit();
    });
    box.appendChild(button);
  }

  addFeedback(turn, { vote, comment }) {
    if (turn.number == null || !turn.text.trim()) return;
    const conversationId = this.conversationId;
    const feedback = new Feedback({
      turn: turn.number,
      vote,
      comment,
      send: (frame) => this.connection.sendNow({ ...frame, conversation_id: conversationId }),
    });
    this.feedback.set(turn.number, feedback);
    turn.actions.appendChild(feedback.node);
    turn.actions.hidden = false;
  }

  send(content) {
    const text = String(content || "").trim();
    if (!text || this.turn) return;
    const frame = { type: "message", content: text };
    if (this.conversationId) frame.conversation_id = this.conversationId;
    if (this.pageSlug) frame.page = this.pageSlug;
    this.showEmpty(false);
    this.dropUndo(); // the new conversation has begun
    this.reconnectNoted = false; // a new question's own wait is the status line's to tell
    // The earlier messages will not be loaded above a question asked now (restoreAgain).
    if (this.restoreNote) this.restoreNote.textContent = S.restore_failed;
    this.restoreNote = null;
    // A question refused at the door (or that never arrived) was not recorded: asked again, or
    // given way to another question, it leaves the log, which stacked one "You're asking
    // faster…" warning per question a hurried reader sent.
    if (this.unsent) this.unsent.node.remove();
    this.unsent = null;
    storageSet("sessionStorage", KEY_ENDING, ""); // this question's own ending replaces it
    // What was put back in the box has gone out, or given way to this question: "Your
    // question is back in the box" stayed under the old warning, pointing at an empty box.
    for (const hint of this.log.querySelectorAll(".chat-note__hint")) hint.remove();
    const turn = new Turn(text);
    turn.conversationId = frame.conversation_id || "";
    this.turn = turn;
    this.log.appendChild(turn.node);
    this.days.before(turn.node);
    turn.streaming();
    this.announce(S.thinking);
    this.watchSlow(turn);
    this.log.setAttribute("aria-busy", "true");
    this.composer.value = "";
    this.setBusy(true);
    this.scrollDown(true);
    this.connection.send(frame);
  }

  stop() {
    const turn = this.turn;
    if (!turn) return;
    if (this.connection.queued || !this.connection.open) {
      // Never reached the server: end it here.
      this.connection.queued = null;
      this.endTurn({ code: "cancelled" });
      return;
    }
    if (document.activeElement === this.stopButton) this.input.focus(); // a disabled button drops focus
    this.stopButton.disabled = true;
    this.connection.sendNow({ type: "stop" });
    // The server answers with `cancelled`; if it cannot, do not leave the visitor waiting.
    setTimeout(() => {
      if (this.turn === turn) this.endTurn({ code: "cancelled" });
    }, 4000);
  }

  setBusy(busy) {
    // The button under the visitor's focus is about to vanish: keep focus in the composer.
    const hadFocus = [this.sendButton, this.stopButton].includes(document.activeElement);
    this.sendButton.hidden = busy;
    this.stopButton.hidden = !busy;
    this.stopButton.disabled = false;
    for (const feedback of this.feedback.values()) feedback.setEnabled(!busy);
    if (hadFocus) this.input.focus();
  }

  /* ---------- the conversation: remember, restore, start over ---------- */

  setConversation(id) {
    this.conversationId = id || "";
    storageSet("localStorage", KEY_CONVERSATION, this.conversationId);
  }

  conversationUrl(id) {
    return this.root.getAttribute("data-conversation-url").replace(/0{8}-0{4}-0{4}-0{4}-0{12}/, id);
  }

  async fetchConversation(id) {
    const response = await fetch(this.conversationUrl(id), {
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    });
    if (response.status === 404) {
      if (this.conversationId === id) this.setConversation(""); // another session's, or gone
      return null;
    }
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    return response.json();
  }

  /** After a refused message: if the conversation is gone (404), the next one starts afresh. */
  checkConversation(id) {
    this.fetchConversation(id).catch(() => {});
  }

  restore() {
    if (this.restored) return this.restored;
    const id = this.conversationId;
    if (!id || !/^[0-9a-f-]{36}$/i.test(id)) {
      this.restored = Promise.resolve().then(() => this.recallEnding());
      return this.restored;
    }
    const loading = el("div", "chat-typing chat-typing--restore");
    loading.appendChild(el("span", "chat-typing__dots"));
    this.log.appendChild(loading);
    this.restored = this.fetchConversation(id)
      .then((data) => {
        loading.remove();
        if (!data || this.conversationId !== id) return;
        for (const past of data.turns || []) this.renderPastTurn(past);
        this.recallEnding();
        this.scrollDown(true);
      })
      .catch(() => {
        loading.remove();
        this.restoreNote = el("p", "chat-status chat-status--inline", S.restore_failed);
        this.log.appendChild(this.restoreNote);
        this.sayConnection();
      });
    return this.restored;
  }

  /** The connection is back after a failed restore (a database outage): load the earlier
   * messages now, unless a question was asked meanwhile (they would land below it). Until
   * then the panel showed the welcome for good, and a new question went on, unseen, with
   * the conversation the visitor could not see. */
  restoreAgain() {
    const note = this.restoreNote;
    this.restoreNote = null;
    if (!note?.isConnected || this.log.querySelector(".chat-turn")) return;
    note.remove();
    this.restored = null;
    this.restore();
  }

  renderPastTurn(past) {
    if (!past || typeof past.user_message !== "string") return;
    this.showEmpty(false);
    const turn = Turn.fromPast(past);
    this.pastTurns.set(turn.number, turn);
    this.log.appendChild(turn.node);
    this.days.before(turn.node, past.started_at);
    if (past.status === "done") this.addFeedback(turn, { vote: past.vote, comment: past.comment });
  }

  /** The welcome and its suggestions, or the conversation; "New chat" only when there is one. */
  showEmpty(empty) {
    this.empty.hidden = !empty;
    // On an empty panel "New chat" did nothing a first-time visitor could see.
    this.newButton.hidden = empty;
  }

  newChat() {
    const previous = this.log.querySelector(".chat-turn") ? this.conversationId : "";
    if (this.turn) {
      // Closing the socket cancels the turn on the server and leaves no stray events behind.
      this.turn = null;
      this.setBusy(false);
      this.connection.restart();
    }
    this.setConversation("");
    storageSet("sessionStorage", KEY_ENDING, "");
    this.feedback.clear();
    this.pastTurns.clear();
    this.days.clear();
    this.restored = Promise.resolve();
    for (const child of [...this.log.children]) if (child !== this.empty) child.remove();
    this.showEmpty(true);
    this.log.setAttribute("aria-busy", "false");
    this.input.focus();
    // One click took a conversation off the panel for good, with nothing to bring it back: it
    // is kept on the server, so the panel offers it back until a question starts the new one.
    if (previous) this.offerUndo(previous);
  }

  offerUndo(previous) {
    const note = el("p", "chat-status chat-status--inline chat-undo", S.new_chat_started + " ");
    const button = el("button", "chat-undo__button", S.new_chat_undo);
    button.type = "button";
    button.addEventListener("click", () => this.undoNewChat(previous));
    // A reader on a shared computer had no way to delete what they asked: the conversation
    // stayed one click from the next person at the keyboard.
    const remove = el("button", "chat-undo__button", S.new_chat_delete);
    remove.type = "button";
    remove.addEventListener("click", () => this.deleteConversation(previous, note));
    note.append(button, " · ", remove);
    this.undoNote = note;
    this.log.insertBefore(note, this.log.firstChild);
  }

  /** Delete the conversation from this reader's chats (the server hides it from the session). */
  async deleteConversation(id, note) {
    let response = null;
    try {
      response = await fetch(this.conversationUrl(id), {
        method: "DELETE",
        credentials: "same-origin",
        headers: { Accept: "application/json", "Content-Type": "application/json" },
        body: "{}",
      });
    } catch {
      response = null;
    }
    // 404: already gone for this session (deleted in another tab), which is what was asked.
    const deleted = response !== null && (response.ok || response.status === 404);
    if (!deleted) {
      this.announce(S.conversation_delete_failed);
      // Said once in the note, however often it fails: each click added the sentence again.
      let failed = note.querySelector(".chat-undo__failed");
      if (!failed) {
        failed = el("span", "chat-undo__failed", S.conversation_delete_failed);
        note.append(" ", failed);
      }
      return;
    }
    const done = el("p", "chat-status chat-status--inline chat-undo", S.conversation_deleted);
    note.replaceWith(done);
    // It goes when the next question starts the new conversation, as the offer would have.
    if (this.undoNote === note) this.undoNote = done;
    this.announce(S.conversation_deleted);
    this.input.focus();
  }

  undoNewChat(previous) {
    this.dropUndo();
    if (this.turn) return;
    for (const child of [...this.log.children]) if (child !== this.empty) child.remove();
    this.days.clear();
    this.setConversation(previous);
    this.restored = null;
    this.restore();
    this.input.focus();
  }

  dropUndo() {
    if (this.undoNote) this.undoNote.remove();
    this.undoNote = null;
  }

  /* ---------- opening, closing, typing ---------- */

  open(focus) {
    this.panel.hidden = false;
    this.launcher.setAttribute("aria-expanded", "true");
    document.documentElement.classList.add("chat-is-open");
    this.sheet.update();
    storageSet("sessionStorage", KEY_OPEN, "1");
    this.connection.connect();
    this.restore();
    this.indexing.watch();
    this.stick = true;
    // The welcome reads from its top: scrolled to its end, at 200% zoom (640 by 400 CSS px) it
    // opened on the suggestions with its title cut off above. A conversation opens on its end.
    if (this.log.querySelector(".chat-turn")) this.scrollDown(true);
    else this.log.scrollTop = 0;
    if (focus) this.input.focus();
  }

  close() {
    this.panel.hidden = true;
    this.launcher.setAttribute("aria-expanded", "false");
    document.documentElement.classList.remove("chat-is-open");
    this.sheet.update(); // before the focus: an inert launcher cannot take it
    storageSet("sessionStorage", KEY_OPEN, "");
    this.launcher.focus();
  }

  submit() {
    const content = this.composer.value;
    // Never cut what the visitor typed: an over-long message stays in the box, counted.
    if (!content.trim() || this.turn || !this.composer.sendable()) return;
    // Past turns first, so the new question lands below them and continues the conversation.
    (this.restored || Promise.resolve()).then(() => this.send(content));
  }

  buildSuggestions() {
    const box = $("chat-suggestions");
    const items = this.article ? articleQuestions(this.article) : [S.suggest_new, S.suggest_topics];
    for (const text of items) {
      const button = el("button", "chat-suggestion", text);
      button.type = "button";
      button.addEventListener("click", () => {
        this.composer.value = text;
        this.submit();
      });
      box.appendChild(button);
    }
  }

  bind() {
    this.launcher.addEventListener("click", () => (this.panel.hidden ? this.open(true) : this.close()));
    $("chat-close").addEventListener("click", () => this.close());
    $("chat-new").addEventListener("click", () => this.newChat());
    this.stopButton.addEventListener("click", () => this.stop());
    $("chat-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
    this.input.addEventListener("keydown", (event) => {
      // Enter sends; Shift+Enter is a new line; an IME composing Chinese keeps its Enter.
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing && event.keyCode !== 229) {
        event.preventDefault();
        this.submit();
      }
    });
    this.input.addEventListener("input", () => this.composer.changed());
    document.addEventListener("keydown", (event) => this.shortcut(event));
    this.log.addEventListener("scroll", () => (this.stick = this.nearBottom()), { passive: true });
    this.log.addEventListener("click", (event) => this.followed(event));
    // An open socket does not notice the network going: no close comes until it is back, and a
    // question asked meanwhile only showed its dots. The browser knows, so the panel says so.
    window.addEventListener("offline", () => this.showStatus(S.browser_offline));
    window.addEventListener("online", () => {
      if (this.connection.open) this.showStatus("");
      this.connection.reconnectNow();
    });
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState !== "visible") return;
      this.connection.reconnectNow();
      if (!this.panel.hidden) this.indexing.watch();
    });
    window.addEventListener("pagehide", () => (this.connection.leaving = true));
    window.addEventListener("pageshow", (event) => {
      if (!event.persisted) return;
      this.connection.leaving = false;
      this.connection.reconnectNow();
    });
    for (const link of document.querySelectorAll("[data-chat-open]")) {
      link.addEventListener("click", (event) => {
        event.preventDefault();
        this.open(true);
        // The search page's "Ask the assistant": its query in the box, for the reader to send
        // (or edit); a question being typed already is not replaced.
        const ask = link.dataset.chatAsk;
        if (ask && !this.input.value.trim()) {
          this.input.value = ask;
          this.input.dispatchEvent(new Event("input", { bubbles: true }));
        }
      });
    }
  }

  /** A link of this site followed from the sheet that covers a phone's screen closes it: the
   * open state is kept per tab, so a cited article opened under the sheet again and the reader
   * saw the chat, not what they tapped (a section of the page on screen scrolled out of sight). */
  followed(event) {
    const link = event.target.closest("a[href]");
    if (!link || link.origin !== location.origin || link.target === "_blank") return;
    if (event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
    if (this.sheet.covering) this.close();
  }

  /** Escape closes; Ctrl/Cmd+K opens (or focuses) the chat from anywhere on the page. */
  shortcut(event) {
    if (event.isComposing) return;
    if (event.key === "Escape" && !this.panel.hidden) {
      event.preventDefault();
      this.close();
    } else if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === "k") {
      event.preventDefault();
      if (this.panel.hidden) this.open(true);
      else this.input.focus();
    }
  }

  start() {
    setExternalLabel(S.external_link);
    this.bind();
    this.input.placeholder = this.pageSlug ? S.placeholder_article : S.placeholder;
    this.composer.restoreDraft();
    this.buildSuggestions();
    this.launcher.hidden = false;
    if (this.root.getAttribute("data-offline") === "true") this.badge.hidden = false;
    if (storageGet("sessionStorage", KEY_OPEN)) this.open(false);
  }
}

/** Questions about the article on screen: its summary, then its first sections. */
function articleQuestions(article) {
  const headings = [...article.querySelectorAll(".prose h2")]
    .map((h) => shorten(h.textContent, 60))
    .filter(Boolean)
    .slice(0, 2);
  return [S.suggest_article, ...headings.map((heading) => fmt(S.suggest_section, { heading }))];
}

/** Nothing of the turn was recorded: the question never arrived, or waited at the door. */
function refusedBeforeAnswer(error, turn) {
  if (error.code === "unreachable") return true;
  return error.code === "rate_limited" && error.retry_after > 0 && !turn.text.trim();
}

/** The status line for the connection's `kind` ("" | "reconnecting" | "offline"). A socket that
 * finishes opening just after the network went said "" and hid "You're offline": while the
 * browser says it is offline, the line says so. */
function connectionStatus(kind) {
  if (kind === "offline" || (!kind && navigator.onLine === false)) return S.browser_offline;
  return kind ? S.reconnecting : "";
}

const root = document.getElementById("chat");
if (root && document.getElementById("chat-strings") && "WebSocket" in window) new Panel(root).start();
