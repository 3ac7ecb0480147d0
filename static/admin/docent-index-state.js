// The article page's "Search index" line, kept current: indexing takes seconds after a save,
// and the page said "reload the page to see it done". It asks again while the state may still
// change (pending, outdated, failed: retried within ten minutes), and stops at a final one (up
// to date, draft), or after ten minutes, when the periodic reconciliation would be the next to
// change anything.
const DELAYS_MS = [1000, 2000, 3000, 5000];
const GIVE_UP_MS = 10 * 60 * 1000;

class IndexState {
  constructor(element) {
    this.element = element;
    this.indexed = document.querySelector(".field-indexed .readonly");
    this.started = Date.now();
    this.tries = 0;
  }

  schedule() {
    if (this.element.dataset.final === "true" || Date.now() - this.started > GIVE_UP_MS) {
      return;
    }
    const delay = DELAYS_MS[Math.min(this.tries, DELAYS_MS.length - 1)];
    this.tries += 1;
    setTimeout(() => this.refresh(), delay);
  }

  async refresh() {
    try {
      const response = await fetch(this.element.dataset.url, {
        headers: { Accept: "application/json" },
        credentials: "same-origin",
      });
      if (!response.ok) {
        return; // signed out, or the article deleted in another tab: nothing more to say
      }
      const state = await response.json();
      // Server-rendered with format_html, from the same function as the page's own line.
      this.element.innerHTML = state.html;
      this.element.dataset.state = state.state;
      this.element.dataset.final = String(state.final);
      if (this.indexed) {
        this.indexed.textContent = state.indexed;
      }
    } catch {
      // A network blip: try again later.
    }
    this.schedule();
  }
}

for (const element of document.querySelectorAll(".dc-index[data-url]")) {
  new IndexState(element).schedule();
}
