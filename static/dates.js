/* Publication dates in the reader's own time zone. The server writes them in UTC, the only zone
   it knows, so a reader far from it saw an article published at 09:00 UTC dated the next or the
   previous day (11 p.m. in Honolulu is still the day before). Same words as the server's
   (blog_tags.article_date): "1 July 2026" / "2026年7月1日", following the time's `lang`. */
const LOCALES = { en: "en-GB", "zh-Hans": "zh-Hans-CN", "zh-Hant": "zh-Hant-TW" };
const DATE = { year: "numeric", month: "long", day: "numeric" };

for (const node of document.querySelectorAll("time[data-local-date]")) {
  const when = new Date(node.dateTime);
  if (Number.isNaN(when.getTime())) continue;
  const locale = LOCALES[node.lang] ?? LOCALES.en;
  node.textContent = new Intl.DateTimeFormat(locale, DATE).format(when);
}
