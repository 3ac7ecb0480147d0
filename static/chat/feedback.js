/* Thumbs up/down with an optional comment under a finished answer; one vote per turn. */
import { S } from "./strings.js";
import { el } from "./util.js";

const THUMB = { up: "M7 10v10H4V10zm2 10h7.6a2 2 0 0 0 2-1.6l1.3-6A2 2 0 0 0 17.9 10H14l.7-3.6A1.8 1.8 0 0 0 11.4 5L9 10z" };
THUMB.down = "M7 14V4H4v10zm2-10h7.6a2 2 0 0 1 2 1.6l1.3 6a2 2 0 0 1-2 2.4H14l.7 3.6a1.8 1.8 0 0 1-3.3 1.4L9 14z";

function icon(path) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("class", "chat-icon");
  const shape = document.createElementNS(ns, "path");
  shape.setAttribute("d", path);
  svg.appendChild(shape);
  return svg;
}

export class Feedback {
  /** `send(frame)` returns false when the frame could not be sent now. */
  constructor({ turn, vote = "none", comment = "", send }) {
    this.turn = turn;
    this.vote = vote || "none";
    this.comment = comment || "";
    this.send = send;
    this.pending = null; // the frame waiting for `feedback_saved`
    this.node = el("div", "chat-feedback");
    this.node.setAttribute("role", "group");
    this.node.setAttribute("aria-label", S.feedback_label);
    this.buttons = {};
    for (const vote of ["up", "down"]) {
      const button = el("button", `chat-feedback__vote chat-feedback__vote--${vote}`);
      button.type = "button";
      button.setAttribute("aria-label", S[`feedback_${vote}`]);
      button.title = S[`feedback_${vote}`];
      button.appendChild(icon(THUMB[vote]));
      button.addEventListener("click", () => this.choose(this.vote === vote ? "none" : vote));
      this.buttons[vote] = button;
      this.node.appendChild(button);
    }
    this.form = el("form", "chat-feedback__form");
    this.form.hidden = true;
    this.box = el("input", "chat-feedback__comment");
    this.box.type = "text";
    this.box.dir = "auto"; // typed right to left in Arabic or Hebrew
    this.box.maxLength = 1000;
    this.box.placeholder = S.feedback_comment;
    this.box.setAttribute("aria-label", S.feedback_comment);
    const submit = el("button", "chat-feedback__send", S.feedback_send);
    submit.type = "submit";
    this.form.append(this.box, submit);
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.comment = this.box.value.trim();
      this.submit();
    });
    this.status = el("span", "chat-feedback__status");
    this.status.setAttribute("role", "status");
    // The comment once saved: it stays in view (and comes back with the transcript), with a
    // way to change it. It used to vanish with the box, as if it had never been sent.
    this.note = el("p", "chat-feedback__note");
    this.noteText = el("span", "chat-feedback__note-text");
    this.edit = el("button", "chat-feedback__edit", S.feedback_edit);
    this.edit.type = "button";
    this.edit.addEventListener("click", () => this.editComment());
    this.note.append(this.noteText, " ", this.edit);
    this.node.append(this.form, this.status, this.note);
    this.show();
  }

  choose(vote) {
    this.vote = vote;
    if (vote === "none") this.comment = "";
    // After a vote the comment box opens; it closes once a comment is saved or the vote is taken back.
    this.form.hidden = vote === "none";
    this.box.value = this.comment;
    this.show();
    this.submit(false);
    // The box (and the thanks under it) may open below the log's fold, under the composer.
    if (!this.form.hidden) this.reveal(this.form);
  }

  editComment() {
    this.form.hidden = false;
    this.box.value = this.comment;
    this.show();
    this.box.focus();
    this.reveal(this.form);
  }

  reveal(part) {
    part.scrollIntoView({ block: "nearest" });
  }

  submit(withComment = true) {
    const frame = { type: "feedback", turn: this.turn, vote: this.vote, comment: this.comment };
    this.pending = { frame, withComment };
    this.status.textContent = this.send(frame) ? S.feedback_sending : S.feedback_failed;
  }

  saved() {
    if (this.pending?.withComment) this.form.hidden = true;
    this.pending = null;
    this.show();
    this.status.textContent = this.vote === "none" ? "" : S.feedback_thanks;
    if (this.status.textContent) this.reveal(this.status);
  }

  /** No votes while an answer streams: one exchange at a time on the socket, as the visitor sees it. */
  setEnabled(enabled) {
    for (const button of [...Object.values(this.buttons), ...this.form.querySelectorAll("button"), this.edit]) {
      button.disabled = !enabled;
    }
  }

  failed(message) {
    this.pending = null;
    this.status.textContent = message || S.feedback_failed;
  }

  /** "Your comment: “…”" with the comment isolated, so an Arabic one keeps its own direction. */
  commentParts() {
    const [before, after = ""] = String(S.feedback_your_comment).split("%(comment)s");
    const comment = el("bdi", null, this.comment);
    return [before, comment, after];
  }

  /** The vote pressed, and the saved comment unless its box is open. */
  show() {
    for (const [vote, button] of Object.entries(this.buttons)) {
      button.setAttribute("aria-pressed", String(this.vote === vote));
    }
    this.noteText.replaceChildren(...(this.comment ? this.commentParts() : []));
    this.note.hidden = !this.comment || this.vote === "none" || !this.form.hidden;
  }
}
