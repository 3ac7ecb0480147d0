/* Minimal Markdown for answers, built with DOM APIs only: model output never becomes HTML. */
import { inlineSpans } from "./inline.js";
import { el, safeUrl, withoutOverrides } from "./util.js";

const FENCE = /^\s{0,3}(`{3,}|~{3,})\s*([\w+#.-]*)\s*$/;
const ITEM = /^\s{0,3}([-*+]|\d{1,9}[.)])\s+(.*)$/;
// A heading's opening "#"s only: its text and closing "#"s are cut by `headingText`. As one
// expression, /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/, the lazy text and the spaces either side
// of "#*" were tried at every split of every position: "# a", 5,000 spaces and "b" (5 kB on
// one line) took 70 s to test, and the panel renders the whole answer on every frame.
const HEADING = /^\s{0,3}(#{1,6})\s/;
const QUOTE = /^\s{0,3}>\s?(.*)$/;
const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
// A cell of a table's delimiter row (`tableRule`).
const RULE_CELL = /^:?-+:?$/;
// An answer sits below the panel's own title: its "#" is a section, not the page's title.
const HEADING_TAGS = ["h3", "h3", "h4", "h5", "h5", "h5"];
// Quotes are parsed by recursion, one level per ">": 5,000 of them in an answer overflowed
// the stack (RangeError), so the answer never rendered and its conversation never restored;
// 1,000 took a second per frame while it streamed. Deeper ">" are shown as text.
const MAX_QUOTE_DEPTH = 8;
// A table row short of the header's cells gets empty ones, so 600 header cells over 600 rows
// of "|" (3.6 kB of answer) made 360,000 cells, half a second per frame while it streamed. A
// table ends once it would fill in more; the rest is text (markdown-it, which renders the
// admin's transcript, stops the same way at 65,536).
const MAX_FILLED_CELLS = 4096;

/**
 * Close what a cut-off answer left open (after Stop, or mid-stream): a dangling `**`, `__` or
 * backtick in the last paragraph, so "**429 Too" shows as bold text rather than raw markers.
 */
export function closeDangling(source) {
  const lines = String(source).split("\n");
  let inFence = false;
  let start = 0;
  lines.forEach((line, index) => {
    if (FENCE.test(line)) inFence = !inFence;
    if (!line.trim() || FENCE.test(line)) start = index + 1;
  });
  if (inFence) return source; // the renderer closes an open fence at the end by itself
  let tail = lines.slice(start).join("\n");
  let closers = "";
  if ((tail.match(/`/g) || []).length % 2) closers += "`";
  tail = tail.replace(/`[^`]*`?/g, "");
  if ((tail.match(/\*\*/g) || []).length % 2) closers += "**";
  // Only a "__" at a word's edge can open or close bold; "my__var" has none to close.
  if ((tail.match(/(?<!\w)__|__(?!\w)/g) || []).length % 2) closers += "__";
  return closers ? source.replace(/\s+$/, "") + closers : source;
}

/** Render `source` into `target`; `onCode(pre, text)` may decorate each code block. */
export function renderMarkdown(target, source, onCode) {
  target.replaceChildren(renderBlocks(closeDangling(withoutOverrides(source)), onCode, 0));
}

// Each block takes its direction from its own first letters: an answer in Arabic or Hebrew
// read left to right, its question mark at the wrong end, inside the panel's LTR page. Set it
// once the block is filled: Chromium works the direction out again on each child added to a
// dir="auto" element, and 6,000 code spans in one paragraph took 180 ms a render that way.
function auto(node) {
  node.dir = "auto";
  return node;
}

function renderBlocks(source, onCode, depth) {
  const lines = String(source).replace(/\r\n?/g, "\n").split("\n");
  const blocks = document.createDocumentFragment();
  let para = [];
  let i = 0;
  const flush = () => {
    if (!para.length) return;
    const p = el("p");
    para.forEach((line, k) => {
      if (k) p.appendChild(el("br"));
      appendInline(p, line, 0);
    });
    blocks.appendChild(auto(p));
    para = [];
  };
  while (i < lines.length) {
    const line = lines[i];
    let m = line.match(FENCE);
    if (m) {
      flush();
      const code = [];
      const fence = m[1];
      i++;
      while (i < lines.length && lines[i].trim().indexOf(fence) !== 0) code.push(lines[i++]);
      i++;
      blocks.appendChild(codeBlock(code.join("\n"), m[2], onCode));
      continue;
    }
    if (!line.trim()) {
      flush();
      i++;
      continue;
    }
    if (RULE.test(line) && !para.length) {
      blocks.appendChild(el("hr"));
      i++;
      continue;
    }
    if ((m = line.match(HEADING))) {
      flush();
      const heading = el(HEADING_TAGS[m[1].length - 1], "chat-md-heading");
      appendInline(heading, headingText(line.slice(m[0].length)), 0);
      blocks.appendChild(auto(heading));
      i++;
      continue;
    }
    if (ITEM.test(line)) {
      flush();
      i = renderList(blocks, lines, i);
      continue;
    }
    if (line.includes("|") && tableRule(lines[i + 1] ?? "") && lines[i + 1].includes("|")) {
      const head = cells(line);
      if (head.length === cells(lines[i + 1]).length) {
        flush();
        i = renderTable(blocks, lines, i, head);
        continue;
      }
    }
    if (depth < MAX_QUOTE_DEPTH && QUOTE.test(line)) {
      flush();
      const quoted = [];
      while (i < lines.length && (m = lines[i].match(QUOTE))) {
        quoted.push(m[1]);
        i++;
      }
      const quote = el("blockquote");
      quote.appendChild(renderBlocks(quoted.join("\n"), onCode, depth + 1));
      blocks.appendChild(auto(quote));
      continue;
    }
    para.push(line.trim());
    i++;
  }
  flush();
  return blocks;
}

function codeBlock(text, lang, onCode) {
  const pre = el("pre");
  const code = el("code", null, text);
  if (lang) code.setAttribute("data-lang", lang);
  pre.appendChild(code);
  if (!onCode) return pre;
  const wrapper = el("div", "chat-code");
  wrapper.appendChild(pre);
  onCode(wrapper, text);
  return wrapper;
}

const indent = (line) => line.length - line.trimStart().length;

function renderList(parent, lines, start) {
  const first = lines[start].match(ITEM);
  const ordered = /\d/.test(first[1]);
  const list = el(ordered ? "ol" : "ul");
  if (ordered && parseInt(first[1], 10) !== 1) list.start = parseInt(first[1], 10);
  // Items sit at the first one's indent: measured from column 0, a list indented two or three
  // spaces ("  - a", or a sub-list after a blank line) took none of its lines, and the caller
  // asked again for ever: the tab froze on the answer and on every reload of its conversation.
  const edge = indent(lines[start]) + 1;
  let item = null;
  let i = start;
  while (i < lines.length) {
    const line = lines[i];
    const m = line.match(ITEM);
    if (m && /\d/.test(m[1]) === ordered && indent(line) <= edge) {
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
  parent.appendChild(auto(list));
  return i;
}

/** A heading's text: without its closing "#"s, which count only after a space ("# C#"). */
function headingText(rest) {
  const text = rest.trim();
  let end = text.length;
  while (end > 0 && text[end - 1] === "#") end--;
  return end === 0 || /\s/.test(text[end - 1]) ? text.slice(0, end).trimEnd() : text;
}

/**
 * A table's delimiter row, under its header row: "|---|:--:|" or "--- | ---". Read cell by
 * cell: as one expression, "-" and 20,000 spaces took 1.3 s to test (quadratic).
 */
function tableRule(line) {
  let row = line.trim();
  if (row.startsWith("|")) {
    if (line.indexOf("|") > 3) return false; // its leading "|" is indented as code
    row = row.slice(1);
  }
  if (row.endsWith("|")) row = row.slice(0, -1);
  return row.split("|").every((cell) => RULE_CELL.test(cell.trim()));
}

/** A row's cells: "| a | b |" and "a | b" alike; a "\|" is a pipe inside a cell. */
function cells(line) {
  let row = line.trim();
  if (row.startsWith("|")) row = row.slice(1);
  if (row.endsWith("|") && !row.endsWith("\\|")) row = row.slice(0, -1);
  return row.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, "|"));
}

// Models compare things in tables ("HNSW vs IVFFlat"): shown as pipes and dashes, they were
// unreadable in the panel though the admin's transcript rendered them.
function renderTable(parent, lines, start, head) {
  const align = cells(lines[start + 1]).map((rule) => {
    if (rule.endsWith(":")) return rule.startsWith(":") ? "center" : "right";
    return "";
  });
  const row = (values, tag) => {
    const tr = el("tr");
    head.forEach((_, k) => {
      const cell = el(tag, align[k] ? `chat-align-${align[k]}` : null);
      appendInline(cell, values[k] ?? "", 0);
      tr.appendChild(cell);
    });
    return tr;
  };
  const table = el("table");
  const thead = el("thead");
  thead.appendChild(row(head, "th"));
  const tbody = el("tbody");
  let i = start + 2;
  let filled = 0;
  while (i < lines.length && lines[i].trim() && lines[i].includes("|") && !FENCE.test(lines[i])) {
    const values = cells(lines[i]);
    filled += Math.max(0, head.length - values.length);
    if (filled > MAX_FILLED_CELLS) break;
    tbody.appendChild(row(values, "td"));
    i++;
  }
  table.append(thead, tbody);
  // A wide table scrolls inside the answer, not the whole panel.
  const wrapper = el("div", "chat-table");
  wrapper.appendChild(table);
  parent.appendChild(wrapper);
  return i;
}

function appendInline(parent, text, depth) {
  let last = 0;
  for (const span of inlineSpans(text)) {
    if (span.start > last) parent.appendChild(document.createTextNode(text.slice(last, span.start)));
    last = span.end;
    parent.appendChild(inlineNode(span, depth));
  }
  if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
}

function inlineNode(span, depth) {
  if (span.kind === "code") return el("code", null, span.text);
  if (span.kind === "link") return link(span.text, span.href, depth);
  const node = el(span.kind); // "strong" or "em"
  inlineOrText(node, span.text, depth);
  return node;
}

function inlineOrText(parent, text, depth) {
  if (depth < 3) appendInline(parent, text, depth + 1);
  else parent.appendChild(document.createTextNode(text));
}

/** A link; `externalTitle(host)` labels links that leave the site. */
let externalLabel = "opens another site";
export function setExternalLabel(label) {
  externalLabel = label;
}

function link(label, href, depth) {
  const url = safeUrl(href);
  if (!url) {
    // javascript:, data:, mailto: and anything unparsable stay text.
    const span = el("span", "chat-md-unlinked");
    inlineOrText(span, label, depth);
    return span;
  }
  const a = el("a");
  inlineOrText(a, label, depth);
  if (url.origin === location.origin) {
    a.href = url.pathname + url.search + url.hash;
  } else {
    a.href = url.href;
    a.target = "_blank";
    a.rel = "nofollow noopener noreferrer"; // as the admin transcript marks it (blog/rendering.py)
    a.className = "chat-external";
    a.title = `${url.host} (${externalLabel})`;
  }
  return a;
}
