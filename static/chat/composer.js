/* The question box: draft kept per tab, grows with the text, counts near the length limit. */
import { CONFIG, S, pluralFmt } from "./strings.js";
import { charCount, fmt, storageGet, storageSet } from "./util.js";

const KEY_DRAFT = "docent.chat.draft";
const COUNTER_FROM = 0.9; // show the counter from this share of the limit
// CSS grows the box where `field-sizing` exists; elsewhere the CSSOM does (CSP allows it).
const CSS_SIZING = window.CSS?.supports?.("field-sizing", "content");

export class Composer {
  constructor(input, counter, sendButton) {
    this.input = input;
    this.counter = counter;
    this.sendButton = sendButton;
    this.markBlank();
  }

  /** A blank box sends nothing: the Send button says so instead of looking ready. It stays
   * focusable (aria-disabled, not disabled): focus on it must not drop to the page. */
  markBlank() {
    this.sendButton?.setAttribute("aria-disabled", String(!this.input.value.trim()));
  }

  get value() {
    return this.input.value;
  }

  set value(text) {
    this.input.value = text;
    this.changed();
  }

  restoreDraft() {
    this.input.value = storageGet("sessionStorage", KEY_DRAFT);
    if (this.input.value) this.changed();
  }

  /** After every edit: save the draft, grow the box, and count near the limit. */
  changed() {
    storageSet("sessionStorage", KEY_DRAFT, this.input.value);
    this.autosize();
    this.markBlank();
    const count = charCount(this.input.value);
    const max = CONFIG.maxChars;
    const over = count > max;
    this.counter.hidden = count < max * COUNTER_FROM;
    this.counter.classList.toggle("is-over", over);
    this.counter.classList.remove("is-refused");
    this.counter.textContent = over
      ? pluralFmt("too_long", count - max, {
          over: (count - max).toLocaleString(),
          max: max.toLocaleString(),
        })
      : fmt(S.chars_left, { count: count.toLocaleString(), max: max.toLocaleString() });
    this.input.setAttribute("aria-invalid", String(over));
  }

  /** True when the text may be sent; otherwise says how much to shorten and keeps every word. */
  sendable() {
    if (charCount(this.input.value) <= CONFIG.maxChars) return true;
    this.changed();
    this.counter.classList.add("is-refused");
    this.input.focus();
    return false;
  }

  autosize() {
    if (CSS_SIZING) return;
    this.input.style.height = "auto";
    this.input.style.height = `${Math.min(this.input.scrollHeight, 160)}px`;
  }
}
