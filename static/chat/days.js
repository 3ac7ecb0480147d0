/* A line naming the day between a restored conversation's turns ("Yesterday", "Friday, 4
 * December"). Coming back the next day, yesterday's answers read as if just given, and a new
 * question sat under them with nothing to say a night had passed. */

import { el } from "./util.js";

const DAY_MS = 86400000;

// The blog writes its English dates day first ("18 November 2026"); Intl's plain "en" is
// American ("Monday, December 7"), so English days are written as the pages write them.
function lang() {
  const page = document.documentElement.lang || "en";
  return page === "en" ? "en-GB" : page;
}

function dayStart(date) {
  return new Date(date.getFullYear(), date.getMonth(), date.getDate());
}

function dayKey(date) {
  return dayStart(date).toDateString();
}

/** "Today", "Yesterday", a weekday and date within the week, else the date (its year when not
 * this one), in the page's language and the reader's own time zone. */
export function dayLabel(date, now = new Date()) {
  const days = Math.round((dayStart(now) - dayStart(date)) / DAY_MS);
  if (days === 0 || days === 1) {
    const text = new Intl.RelativeTimeFormat(lang(), { numeric: "auto" }).format(-days, "day");
    return text.charAt(0).toLocaleUpperCase(lang()) + text.slice(1);
  }
  const options = { month: "long", day: "numeric" };
  if (days > 1 && days < 7) options.weekday = "long";
  if (date.getFullYear() !== now.getFullYear()) options.year = "numeric";
  return new Intl.DateTimeFormat(lang(), options).format(date);
}

export class DayLines {
  constructor(log) {
    this.log = log;
    this.last = ""; // the day of the last turn in the log, "" for none
  }

  /** Before a turn's node (restored, with its start; or live, now): a line when its day is
   * not the one before it, or, first in the log, not today. */
  before(node, when = new Date()) {
    const time = when instanceof Date ? when : new Date(when);
    if (Number.isNaN(time.getTime())) return;
    const key = dayKey(time);
    const previous = this.last || dayKey(new Date());
    this.last = key;
    if (key === previous) return;
    this.log.insertBefore(el("p", "chat-day", dayLabel(time)), node);
  }

  clear() {
    this.last = "";
  }
}
