/* Small DOM and text helpers shared by the chat modules. Nothing here assigns HTML strings. */

/** Storage is named, not referenced: merely touching `localStorage` throws when it is blocked. */
export function storageGet(store, key) {
  try {
    return window[store].getItem(key) || "";
  } catch {
    return "";
  }
}

export function storageSet(store, key, value) {
  try {
    if (value) window[store].setItem(key, value);
    else window[store].removeItem(key);
  } catch {
    /* blocked or private mode: the page still works, it just forgets */
  }
}

/** Fill Django-style `%(name)s` placeholders. */
export function fmt(template, values) {
  return String(template).replace(/%\((\w+)\)s/g, (_, name) =>
    values && values[name] != null ? String(values[name]) : "",
  );
}

export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text != null) node.textContent = text;
  return node;
}

// The explicit bidi embeddings, overrides and isolates. A model's answer (steered by a page it
// read) can use U+202E to show text other than it holds: "\u202Efdp.exe" reads "exe.pdf", and
// code shown one way ran another once copied ("Trojan Source"). Each block already takes its
// direction from its own letters (dir="auto"), so right-to-left writing needs none of them.
const OVERRIDES = /[\u202a-\u202e\u2066-\u2069]/g;

/** `text` without bidi embeddings, overrides and isolates. */
export function withoutOverrides(text) {
  return String(text).replace(OVERRIDES, "");
}

/** `text` on one line, cut at `max` characters: a label the model or an author wrote (a search
 * query, a title), so without bidi overrides too. */
export function shorten(text, max) {
  const flat = withoutOverrides(text ?? "").replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Characters as the server counts them (code points, not UTF-16 units). */
export function charCount(text) {
  let count = 0;
  for (const _ of String(text)) count += 1;
  return count;
}

export function safeUrl(href) {
  let parsed;
  try {
    parsed = new URL(String(href), location.href);
  } catch {
    return null;
  }
  return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed : null;
}

/** A same-origin path for links we make ourselves (citations), or null. */
export function localPath(url) {
  const parsed = safeUrl(url);
  return parsed && parsed.origin === location.origin
    ? parsed.pathname + parsed.search + parsed.hash
    : null;
}

/**
 * An answer's Markdown with the site's own links made whole: pasted into a mail or a chat,
 * "[pgvector and HNSW](/articles/pgvector-and-hnsw/)" led nowhere. Code is left as written.
 */
export function withSiteLinks(markdown) {
  const parts = markdown.split(/(```[\s\S]*?(?:```|$)|`[^`\n]*`)/);
  const whole = (text) => text.replace(/\]\((\/(?!\/)[^)\s]*)\)/g, `](${location.origin}$1)`);
  return parts.map((part, i) => (i % 2 ? part : whole(part))).join("");
}

/** Copy text; the clipboard API needs a secure context (localhost counts). */
export async function copyText(text) {
  if (!navigator.clipboard) throw new Error("no clipboard");
  await navigator.clipboard.writeText(text);
}
