/* Inline Markdown (code, bold, links, italics) found in one left-to-right pass over a line. */

// These rules were one regular expression. An opener with no closer searched the rest of the
// line from every position, so "__a " 10,000 times (40 kB) took 2.8 s a render, and the panel
// renders the whole answer on every frame while it streams. Each rule now finds its closer in
// lists built once per line: a line costs time in proportion to its length (times a log).
// What matches is unchanged: the first rule that matches at the leftmost position wins, in the
// order code, "**", "__", link, "*", and its closer is the nearest one the old pattern took.

const SPACE = /\s/;
const WORD = /\w/;

/** One inline element: `text` is what it holds, `href` a link's target. */
export class Span {
  constructor(kind, start, end, text, href = "") {
    Object.assign(this, { kind, start, end, text, href });
  }
}

/** The spans of `text`, left to right, none overlapping. */
export function inlineSpans(text) {
  const scan = new Scanner(String(text));
  const spans = [];
  let at = 0;
  while (at < scan.n) {
    const span = scan.spanAt(at);
    if (span) spans.push(span);
    at = span ? span.end : at + 1;
  }
  return spans;
}

const char = (text, i) => text[i] ?? "";
const isSpace = (c) => SPACE.test(c);
const isSolid = (c) => c !== "" && !SPACE.test(c);

/** The first value in the sorted `list` that is at least `min`, or -1. */
function firstFrom(list, min) {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid] < min) lo = mid + 1;
    else hi = mid;
  }
  return lo < list.length ? list[lo] : -1;
}

/** For each index, the first index at or after it whose character passes `test` (else n). */
function nextWhere(text, test) {
  const next = new Int32Array(text.length + 1);
  next[text.length] = text.length;
  for (let i = text.length - 1; i >= 0; i--) next[i] = test(text[i]) ? i : next[i + 1];
  return next;
}

class Scanner {
  constructor(text) {
    const n = text.length;
    Object.assign(this, { text, n });
    this.notTick = nextWhere(text, (c) => c !== "`");
    this.notSpace = nextWhere(text, (c) => !isSpace(c));
    this.labelStop = nextWhere(text, (c) => c === "]" || c === "\n");
    this.urlStop = nextWhere(text, (c) => isSpace(c) || c === ")" || c === ">");
    this.quote = nextWhere(text, (c) => c === '"');
    this.starStop = nextWhere(text, (c) => c === "*" || c === "\n");
    this.ticks = new Map(); // run length -> starts of backtick runs exactly that long
    this.stars = []; // "**" that can close bold: after a non-space
    this.unders = []; // "__" that can close bold: after a non-space, not before a word
    for (let i = 0; i < n; i++) {
      const c = text[i];
      if (c === "`" && char(text, i - 1) !== "`") {
        const length = this.notTick[i] - i;
        if (!this.ticks.has(length)) this.ticks.set(length, []);
        this.ticks.get(length).push(i);
      }
      if (c === "*" && text[i + 1] === "*" && isSolid(char(text, i - 1))) this.stars.push(i);
      if (c === "_" && text[i + 1] === "_" && isSolid(char(text, i - 1))) {
        if (!WORD.test(char(text, i + 2))) this.unders.push(i);
      }
    }
  }

  spanAt(at) {
    switch (this.text[at]) {
      case "`":
        return this.code(at);
      case "*":
        return this.pair(at, "*", this.stars) ?? this.em(at);
      case "_":
        return WORD.test(char(this.text, at - 1)) ? null : this.pair(at, "_", this.unders);
      case "[":
        return this.link(at);
      default:
        return null;
    }
  }

  /** A run of backticks up to the next run exactly as long; what it holds is never parsed. */
  code(at) {
    const open = this.notTick[at];
    const close = firstFrom(this.ticks.get(open - at) ?? [], open + 1);
    if (close < 0) return null;
    return new Span("code", at, close + open - at, this.text.slice(open, close));
  }

  /** "**bold**" or "__bold__": no space just inside either marker. */
  pair(at, mark, closers) {
    if (this.text[at + 1] !== mark || !isSolid(char(this.text, at + 2))) return null;
    const close = firstFrom(closers, at + 3);
    if (close < 0) return null;
    return new Span("strong", at, close + 2, this.text.slice(at + 2, close));
  }

  /** "*italic*" within a line, not inside a word nor beside another "*". */
  em(at) {
    const { text } = this;
    const first = char(text, at + 1);
    if (!isSolid(first) || first === "*" || /[\w*]/.test(char(text, at - 1))) return null;
    const close = this.starStop[at + 1];
    if (text[close] !== "*" || isSpace(text[close - 1])) return null;
    if (/[\w*]/.test(char(text, close + 1))) return null;
    return new Span("em", at, close + 1, text.slice(at + 1, close));
  }

  /** [label](url), [label](<url>) or [label](url "title"). */
  link(at) {
    const { text } = this;
    const label = this.labelStop[at + 1];
    if (label === at + 1 || text[label] !== "]" || text[label + 1] !== "(") return null;
    const open = this.notSpace[label + 2];
    // "<" is the url's own first character when nothing follows it but its end.
    const url = text[open] === "<" && this.urlStop[open + 1] > open + 1 ? open + 1 : open;
    const urlEnd = this.urlStop[url];
    if (urlEnd === url) return null;
    const after = text[urlEnd] === ">" ? urlEnd + 1 : urlEnd;
    const end = this.titled(after) ?? this.closed(after);
    if (end == null) return null;
    return new Span("link", at, end, text.slice(at + 1, label), text.slice(url, urlEnd));
  }

  /** After a url: ` "title" )`; the end of the link, or null. */
  titled(at) {
    const open = this.notSpace[at];
    if (open === at || this.text[open] !== '"') return null;
    const close = this.quote[open + 1];
    return close < this.n ? this.closed(close + 1) : null;
  }

  /** Spaces, then ")": the end of the link, or null. */
  closed(at) {
    const paren = this.notSpace[at];
    return this.text[paren] === ")" ? paren + 1 : null;
  }
}
