/* The admin in its viewer's time zone. The server knows only UTC: a reviewer in Shanghai read
   "04:45" for a question asked at 12:45 their time. The browser knows the zone; it goes to the
   server in a cookie (config.middleware.AdminTimeZoneMiddleware), and every time on the admin's
   pages, its date filters and the dashboard's days follow it. A page written in another zone
   (the first after a trip, or once the cookie is gone) is read again, once.

   A classic script in <head>, not a module: it runs before the body is parsed, so a page in the
   wrong zone is stopped before it is ever painted and read again in the right one. As a module
   (deferred) it ran after the page showed, and the reviewer saw it flash and come back. */
(() => {
  const meta = document.querySelector('meta[name="docent-time-zone"]');
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (!meta || !zone || !/^[\w+/-]+$/.test(zone) || zone === meta.content) return;
  const secure = location.protocol === "https:" ? "; secure" : "";
  document.cookie = `${meta.dataset.cookie}=${zone}; path=${meta.dataset.path}; max-age=31536000; samesite=lax${secure}`;
  if (meta.dataset.reload === "true" && firstTry(zone)) {
    window.stop(); // no more of this page: nothing of it is parsed, fetched or painted
    location.reload();
  }

  /** Once per zone and tab: a zone the server does not know must not reload the page forever. */
  function firstTry(name) {
    try {
      const key = "docent.admin.time-zone";
      if (sessionStorage.getItem(key) === name) return false;
      sessionStorage.setItem(key, name);
      return true;
    } catch {
      return false; // no storage: better UTC, labelled, than a page that reloads forever
    }
  }
})();
