/* On a phone the changelist's filters (five lists of choices, open) filled the first screen and
   more before the first conversation showed. There, a filter left at "All" starts folded to its
   heading; one in use stays open, and so does one the reviewer opened in this tab (Django's
   filters.js keeps each filter's state in sessionStorage, and restores it after this). */
const phone = window.matchMedia("(max-width: 767px)").matches;
const saved = (() => {
  try {
    return JSON.parse(sessionStorage.getItem("django.admin.filtersState")) || {};
  } catch {
    return {};
  }
})();

if (phone) {
  for (const filter of document.querySelectorAll("#changelist-filter details[data-dc-idle]")) {
    if (filter.dataset.filterTitle in saved) continue;
    // Folded by us, not by the reviewer: Django's listener must not save it as their choice
    // (a filter then put in use would come up folded on the next page).
    filter.addEventListener("toggle", (event) => event.stopImmediatePropagation(), { once: true });
    filter.removeAttribute("open");
  }
}
