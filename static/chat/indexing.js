/* The "indexing is still running" notice: it counts down and goes away without a reload. */
import { S, plural } from "./strings.js";

// Often enough to follow a first run's indexing (seconds per article), rare enough to cost
// nothing: one COUNT per open panel, and only while the notice shows.
const EVERY_MS = 5000;

export class IndexingNotice {
  /** `node` is the server-rendered notice (or null); `watching()` says whether to keep asking. */
  constructor(node, watching) {
    this.node = node;
    this.url = node?.getAttribute("data-status-url") || "";
    this.watching = watching;
    this.timer = null;
  }

  /** Some published articles are not searchable yet (the notice shows). */
  get running() {
    return Boolean(this.node) && !this.node.hidden;
  }

  /** Ask again in a while, unless a look is already due or the notice is gone. */
  watch() {
    if (!this.url || this.timer || this.node.hidden) return;
    this.timer = setTimeout(() => this.check(), EVERY_MS);
  }

  async check() {
    this.timer = null;
    // A closed panel or a hidden tab stops the asking; opening the panel starts it again.
    if (!this.watching()) return;
    try {
      const response = await fetch(this.url, {
        credentials: "same-origin",
        cache: "no-store",
        headers: { Accept: "application/json" },
      });
      if (response.ok) {
        const status = await response.json();
        this.show(status.unindexed, status.searchable);
      }
    } catch {
      // The server is restarting or the network is down: the next look may work.
    }
    this.watch();
  }

  show(count, searchable) {
    if (!Number.isInteger(count)) return;
    if (count <= 0) this.node.hidden = true;
    // Nothing searchable yet (a first run): "answers come from what is indexed so far" would
    // promise answers from nothing.
    else if (searchable === 0) this.node.textContent = S.indexing_none;
    else this.node.textContent = plural("indexing", count);
  }
}
