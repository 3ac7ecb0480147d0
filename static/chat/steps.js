/* Tool steps as chips ("Searched for …", "5 results · 12 ms") and error texts. */
import { S, plural, pluralFmt } from "./strings.js";
import { el, fmt, shorten } from "./util.js";

export function duration(ms) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return "";
  if (ms >= 1000) return fmt(S.seconds_short, { seconds: (ms / 1000).toFixed(1) });
  return fmt(S.ms, { ms: Math.max(0, Math.round(ms)) });
}

// `state` picks the verb: "running" (Searching…), "done" (Searched), "failed" (Couldn’t search).
function label(name, args, title, state) {
  const verb = (tool) => S[`${tool}_${state}`];
  if (name === "search_knowledge_base") {
    return fmt(verb("search"), { query: shorten(args.query, 60) });
  }
  if (name === "get_article_detail") {
    if (state !== "done") return verb("detail");
    return title ? fmt(S.detail_done, { title: shorten(title, 70) }) : S.detail_done_unknown;
  }
  if (name === "list_articles") {
    if (!args.tag) return verb("list");
    return fmt(verb("list_tag"), { tag: shorten(args.tag, 40) });
  }
  return fmt(verb("tool"), { name: shorten(name, 40) });
}

/** A tool step chip; `running` decides between "Searching…" and "Searched". */
export class Step {
  constructor(name, args, running) {
    this.name = name;
    this.args = args && typeof args === "object" ? args : {};
    this.node = el("li", `chat-step${running ? " is-running" : ""}`);
    this.node.appendChild(el("span", "chat-step__icon"));
    const state = running ? "running" : "done";
    this.label = el("span", "chat-step__label", label(name, this.args, null, state));
    this.meta = el("span", "chat-step__meta");
    this.node.append(this.label, this.meta);
  }

  get running() {
    return this.node.classList.contains("is-running");
  }

  /** The step ended: `summary` is the server's English summary, translated here. */
  end({ ok, summary, durationMs, title, executed = true }) {
    const detail = this.name === "get_article_detail" && ok;
    // Cut off by Stop (or the turn's end) as it ran: not the tool's fault, so no warning.
    const stopped = !ok && summary === "cancelled";
    // Not run (the step limit) is not done either: "Read an article · not run" said it was.
    const state = !ok && !stopped ? "failed" : "done";
    this.label.textContent = label(this.name, this.args, detail ? title || summary : null, state);
    this.node.classList.remove("is-running");
    this.node.classList.add(!executed || stopped ? "is-skipped" : ok ? "is-done" : "is-failed");
    if (!executed || stopped) {
      this.meta.textContent = executed ? S.tool_stopped : S.tool_skipped;
      return;
    }
    const meta = [];
    if (!detail) meta.push(summary ? summaryText(summary) : ok ? "" : S.failed);
    // Refused for its arguments or its name, a call never ran: "invalid arguments · 0 ms" timed nothing.
    if (!REFUSED.has(summary)) meta.push(duration(durationMs));
    this.meta.textContent = meta.filter(Boolean).join(" · ");
  }
}

const REFUSED = new Set(["invalid arguments", "unknown tool"]);

/** The server's English tool summary ("3 results", "no results", "timed out"…), translated. */
export function summaryText(summary) {
  const text = String(summary || "");
  const m = text.match(/^(\d+) (results?|articles?)$/);
  if (m) return plural(m[2].startsWith("r") ? "results" : "articles", parseInt(m[1], 10));
  const known = {
    "no results": S.no_results,
    "timed out": S.timed_out,
    "not found": S.not_found,
    "invalid arguments": S.invalid_arguments,
    failed: S.failed,
    "unknown tool": S.unknown_tool,
    "too many searches": S.too_many_searches,
  };
  return known[text] || shorten(text, 60);
}

export function errorMessage(code, retryAfter, reason) {
  if (code === "model_error" && reason === "setup") return S.error_model_error_setup;
  if (code === "busy" && (reason === "session" || reason === "network")) {
    return S[`error_busy_${reason}`];
  }
  if (code === "rate_limited") {
    if (!retryAfter) return S.error_budget;
    // A day's budget (the site's, the address's, its network's: the event's `reason`) is
    // spent until the day's end: said so, not "asking faster than I can answer".
    const day = reason && S[`error_${reason}`];
    if (day) return fmt(day, { time: clockIn(retryAfter) });
    if (retryAfter > 90) return fmt(S.error_rate_limited_at, { time: clockIn(retryAfter) });
    const seconds = Math.ceil(retryAfter);
    return pluralFmt("error_rate_limited", seconds, { seconds });
  }
  return S[`error_${code}`] || S.error_internal;
}

/** The reader's clock time `seconds` from now ("00:00"). */
function clockIn(seconds) {
  const at = new Date(Date.now() + seconds * 1000);
  return at.toLocaleTimeString(document.documentElement.lang || undefined, {
    hour: "2-digit",
    minute: "2-digit",
  });
}

/** Count a rate limit's wait down in `node`, then say the visitor may ask again. */
export function countdown(node, seconds) {
  const until = Date.now() + seconds * 1000;
  const timer = setInterval(() => {
    const left = Math.ceil((until - Date.now()) / 1000);
    if (!node.isConnected) {
      clearInterval(timer);
    } else if (left <= 0) {
      clearInterval(timer);
      node.textContent = S.error_rate_limited_now;
    } else {
      node.textContent = pluralFmt("error_rate_limited", left, { seconds: left });
    }
  }, 1000);
}
