/* One question and its reply in the log: steps, streamed answer, sources, copy, notes. */
import { renderMarkdown } from "./markdown.js";
import { errorMessage, Step } from "./steps.js";
import { CONFIG, S } from "./strings.js";
import { copyText, el, localPath, shorten, withoutOverrides, withSiteLinks } from "./util.js";

// What a sources line holds besides its links: a label, then joiners only ("Sources: A, B",
// "Sources: A and B.", "来源：A 和 B。"); with "and" or the full stop, it stayed in the answer.
const SOURCE_LINE = /^\s*[^\s:：]{1,16}\s*[:：](?:[\s,，、;；.。]|and|&|和|与|及)*$/u;

let previewIds = 0;

/** Show `text` on the button and give it as its name (the name alone hid "Copied"). */
function label(button, text, name = text) {
  button.textContent = text;
  button.setAttribute("aria-label", name);
}

/**
 * A small button that copies `text()` and says so for a moment. Its name says what it copies
 * (`name`, "Copy the answer"), so that a screen reader's list of buttons is not "Copy" thrice.
 */
export function copyButton(className, text, name) {
  const button = el("button", `chat-copy ${className}`);
  label(button, S.copy, name);
  button.type = "button";
  button.addEventListener("click", async () => {
    try {
      await copyText(text());
      label(button, S.copied);
    } catch {
      label(button, S.copy_failed);
    }
    setTimeout(() => label(button, S.copy, name), 1500);
  });
  return button;
}

function decorateCode(wrapper, text) {
  wrapper.appendChild(copyButton("chat-copy--code", () => text, S.copy_code));
}

// Blocks whose end is a pause: their text ran into the next ("reliable:Count model calls").
const BLOCKS = "p, li, pre, blockquote, h1, h2, h3, h4, h5, h6, tr, th, td";

/** An answer's text as a screen reader should hear it once: a space between its blocks, and
 * without its buttons' labels (a code block's "Copy" was read inside the answer). */
function spokenText(node) {
  const copy = node.cloneNode(true);
  for (const button of copy.querySelectorAll("button")) button.remove();
  for (const block of copy.querySelectorAll(BLOCKS)) block.append(" ");
  return copy.textContent.replace(/\s+/g, " ").trim();
}

export class Turn {
  constructor(question) {
    this.question = question;
    this.text = "";
    this.number = null; // the server's turn index, from `start` or the transcript
    this.steps = new Map();
    this.sources = new Set();
    this.gone = new Set(); // paths of cited articles no longer published (from the transcript)
    this.finished = false;
    this.renderPending = false;
    this.node = el("article", "chat-turn");
    const q = el("div", "chat-question");
    const text = el("p", "chat-question__text", question);
    text.dir = "auto"; // an Arabic or Hebrew question reads right to left, as typed
    q.append(el("span", "chat-sr-only", `${S.you_asked} `), text);
    this.reply = el("div", "chat-reply");
    this.stepList = el("ul", "chat-steps");
    this.stepList.setAttribute("aria-label", S.steps);
    this.stepList.hidden = true;
    this.answer = el("div", "chat-answer");
    this.typing = el("div", "chat-typing");
    this.typing.append(el("span", "chat-typing__dots"), el("span", "chat-sr-only", S.thinking));
    this.typing.hidden = true;
    this.slowNote = el("p", "chat-slow", S.still_waiting);
    this.slowNote.hidden = true;
    this.sourceBox = el("nav", "chat-sources");
    this.sourceBox.setAttribute("aria-label", S.sources);
    this.sourceBox.appendChild(el("p", "chat-sources__title", S.sources));
    this.sourceList = el("ol", "chat-sources__list");
    this.sourceBox.appendChild(this.sourceList);
    this.sourceBox.hidden = true;
    this.actions = el("div", "chat-actions");
    this.actions.hidden = true;
    this.reply.append(this.stepList, this.typing, this.answer, this.slowNote, this.sourceBox, this.actions);
    this.node.append(q, this.reply);
  }

  /** A turn from the saved transcript, finished, with how it ended. */
  static fromPast(past) {
    const turn = new Turn(past.user_message);
    turn.number = past.turn;
    const titles = new Map((past.citations || []).map((c) => [c.article_id, c.title]));
    for (const call of past.tools || []) {
      const args = call.arguments || {};
      turn.pastStep(call, call.name === "get_article_detail" ? titles.get(args.article_id) : null);
    }
    turn.text = past.answer || "";
    for (const citation of past.citations || []) turn.addSource(citation);
    turn.finish(past.status === "done");
    if (past.status === "cancelled") turn.note("muted", S.error_cancelled);
    else if (past.status === "interrupted") turn.note("muted", S.error_interrupted);
    else if (past.status === "max_steps" && past.error_code === "max_steps") {
      // As live (panel.explain): the articles gathered before the limit, or "narrower".
      const articles = past.articles || [];
      turn.note("warn", articles.length ? S.error_max_steps : S.error_max_steps_none, articles);
    } else if (past.status === "error" && past.reason === "setup") {
      turn.unavailable();
    } else if (past.status === "error") {
      turn.note("warn", errorMessage(past.error_code || "internal", 0));
    }
    return turn;
  }

  streaming() {
    this.node.classList.add("is-streaming");
    this.typing.hidden = false;
  }

  /** Show or hide "Still waiting…" (the panel decides when the silence has lasted). */
  slow(waiting) {
    this.slowNote.hidden = !waiting;
  }

  addText(delta, onRendered) {
    this.text += delta;
    this.typing.hidden = true;
    if (this.renderPending) return;
    this.renderPending = true;
    requestAnimationFrame(() => {
      if (!this.renderPending) return; // finish() rendered already; do not undo its tidying
      this.render();
      onRendered?.();
    });
  }

  render() {
    this.renderPending = false;
    renderMarkdown(this.answer, this.text, decorateCode);
  }

  toolStart(event) {
    const step = new Step(event.name, event.arguments, true);
    step.node.setAttribute("data-call-id", event.call_id || "");
    this.steps.set(event.call_id, step);
    this.stepList.hidden = false;
    this.stepList.appendChild(step.node);
    this.typing.hidden = false;
  }

  toolEnd(event) {
    if (!this.steps.has(event.call_id)) this.toolStart(event);
    this.steps.get(event.call_id).end({
      ok: event.ok,
      summary: event.summary,
      durationMs: event.duration_ms,
      executed: event.executed !== false,
    });
  }

  /** A finished step from the transcript, with its summary ("5 results") as it was shown live. */
  pastStep(call, title) {
    const step = new Step(call.name, call.arguments, false);
    step.end({
      ok: call.ok,
      summary: call.summary,
      durationMs: call.duration_ms,
      title,
      executed: call.executed,
    });
    this.stepList.appendChild(step.node);
    this.stepList.hidden = false;
  }

  /**
   * One source: a link to the section the passage came from, with its excerpt on hover/focus.
   * A restored source whose article is no longer published is its title as text, marked so.
   */
  addSource(source) {
    const path = localPath(source.section_url || source.url);
    const key = String(source.article_id ?? source.url);
    if (!path || this.sources.has(key)) return;
    this.sources.add(key);
    if (source.available === false) {
      this.gone.add(new URL(path, location.origin).pathname);
      const item = el("li", "chat-source chat-source--gone");
      item.append(el("span", null, withoutOverrides(source.title || path)), " ", el("span", "chat-source__gone", S.source_gone));
      this.sourceList.appendChild(item);
      this.sourceBox.hidden = false;
      return;
    }
    const item = el("li", "chat-source");
    const a = el("a", "chat-source__link", withoutOverrides(source.title || path));
    a.href = path;
    item.appendChild(a);
    if (source.excerpt) {
      // The passage as text: its Markdown marks (`code`, **bold**, # headings) left out.
      const passage = source.excerpt.replace(/`+|\*\*|^#+\s*/gm, "");
      const preview = el("span", "chat-source__preview", shorten(passage, 280));
      previewIds += 1;
      preview.id = `chat-source-preview-${previewIds}`;
      preview.setAttribute("role", "tooltip");
      a.setAttribute("aria-describedby", preview.id);
      item.appendChild(preview);
    }
    this.sourceList.appendChild(item);
    this.sourceBox.hidden = false;
  }

  /** Stop streaming; `answered` says the turn ended with `done` (so silence is worth a word). */
  finish(answered) {
    // A tool still running when the turn ends (Stop, an error) never reports back.
    for (const step of this.steps.values()) {
      if (step.running) step.end({ ok: false, summary: "cancelled" });
    }
    if (this.renderPending || this.text) this.render();
    this.dropSourceLine();
    this.unlinkGone();
    this.finished = true;
    this.typing.hidden = true;
    this.slowNote.hidden = true;
    this.node.classList.remove("is-streaming");
    if (answered && !this.text.trim()) this.answer.appendChild(el("p", "chat-muted", S.no_answer));
    if (this.text.trim()) {
      // As shown (see withoutOverrides), its links to the site whole (see withSiteLinks).
      const copied = () => withSiteLinks(withoutOverrides(this.text).trim());
      this.actions.appendChild(copyButton("chat-copy--answer", copied, S.copy_answer));
      this.actions.hidden = false;
    }
  }

  /**
   * Sources are shown once, in the box: a closing "Source: [title](url)" paragraph that only
   * repeats links the box already lists is left out of the answer (it stays in the copy).
   */
  dropSourceLine() {
    const last = this.answer.lastElementChild;
    if (!this.sources.size || last?.tagName !== "P") return;
    const links = [...last.querySelectorAll("a")];
    const listed = new Set([...this.sourceList.querySelectorAll("a")].map((a) => a.pathname));
    for (const path of this.gone) listed.add(path);
    if (!links.length || !links.every((a) => listed.has(a.pathname))) return;
    const rest = [...last.childNodes].filter((n) => n.nodeName !== "A").map((n) => n.textContent);
    if (SOURCE_LINE.test(rest.join(""))) last.remove();
  }

  /** The answer's own links to an article that is gone become text: no trip to a 404. */
  unlinkGone() {
    for (const a of this.answer.querySelectorAll("a")) {
      if (a.origin !== location.origin || !this.gone.has(a.pathname)) continue;
      const text = el("span", "chat-link-gone", a.textContent);
      text.title = S.source_gone;
      a.replaceWith(text);
    }
  }

  /** The turn's end as one text for a screen reader: the answer, its sources, its notes. */
  spoken() {
    const parts = [spokenText(this.answer)];
    const titles = [...this.sourceList.querySelectorAll(".chat-source__link, .chat-source--gone > span:first-child")];
    if (titles.length) parts.push(`${S.sources}: ${titles.map((t) => t.textContent).join("; ")}.`);
    for (const line of this.reply.querySelectorAll(".chat-note__text, .chat-note__hint")) {
      parts.push(line.textContent.trim());
    }
    return parts.filter(Boolean).join(" ");
  }

  /** The model endpoint refused the site's settings: the assistant is out, the blog is not.
   * The reader gets the search page with their question (no cause: that is the operator's). */
  unavailable() {
    const box = this.note("warn", S.error_model_error_setup);
    const hint = el("p", "chat-note__hint");
    const link = el("a", "chat-note__search", S.search_instead);
    link.href = `${CONFIG.searchUrl}?${new URLSearchParams({ q: this.question })}`;
    hint.appendChild(link);
    box.appendChild(hint);
    return box;
  }

  note(kind, message, articles) {
    const box = el("div", `chat-note chat-note--${kind}`);
    box.appendChild(el("p", "chat-note__text", message));
    if (articles?.length) {
      const list = el("ul", "chat-note__articles");
      for (const item of articles) {
        const path = localPath(item.url);
        if (!path) continue;
        const li = el("li");
        const a = el("a", null, withoutOverrides(item.title || path));
        a.href = path;
        li.appendChild(a);
        list.appendChild(li);
      }
      box.appendChild(list);
    }
    this.reply.appendChild(box);
    return box;
  }
}
