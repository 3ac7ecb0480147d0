/* The admin in its viewer's time zone. The server knows only UTC: a reviewer in Shanghai read
   "04:45" for a question asked at 12:45 their time. The browser knows the zone; it goes to the
   server in a cookie (config.middleware.AdminTimeZoneMiddleware), and every time on the admin's
   pages, its date filters and the dashboard's days follow it. A page written in another zone
   (the first after signing in with a new browser, or after a trip) is read again, once. */
const meta = document.querySelector('meta[name="docent-time-zone"]');
const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;

if (meta && zone && /^[\w+/-]+$/.test(zone) && zone !== meta.content) {
  const secure = location.protocol === "https:" ? "; secure" : "";
  document.cookie = `${meta.dataset.cookie}=${zone}; path=${meta.dataset.path}; max-age=31536000; samesite=lax${secure}`;
  if (meta.dataset.reload === "true" && firstTry(zone)) location.reload();
}

/** Once per zone and tab: a zone the server does not know must not reload the page forever. */
function firstTry(zone) {
  try {
    const key = "docent.admin.time-zone";
    if (sessionStorage.getItem(key) === zone) return false;
    sessionStorage.setItem(key, zone);
    return true;
  } catch {
    return false; // no storage: better UTC, labelled, than a page that reloads forever
  }
}
