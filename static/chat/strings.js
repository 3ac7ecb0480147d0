/* What the server renders into the page: translated strings and the protocol's shared facts. */
import { fmt } from "./util.js";

function pageJson(id, fallback) {
  const node = document.getElementById(id);
  return node ? JSON.parse(node.textContent) : fallback;
}

/** Every string the panel shows, in the visitor's language (agent/context_processors.py). */
export const S = pageJson("chat-strings", {});

/**
 * From agent/events.py, never a second list: `codes` are the `error` codes, `retryable` those
 * after which the question goes back in the box; `maxChars` is the server's message limit.
 */
export const CONFIG = pageJson("chat-config", { codes: [], retryable: [], maxChars: 4000 });

export function plural(key, count) {
  const template = S[`${key}${count === 1 ? "_one" : "_other"}`] || "";
  return template.replace(/%\(count\)s/g, String(count));
}

/** A template whose count needs its plural form ("1 second", "2 seconds"), filled in. */
export function pluralFmt(key, count, values) {
  return fmt(S[`${key}${count === 1 ? "_one" : "_other"}`] || "", values);
}
