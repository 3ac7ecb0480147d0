/* On a phone the day-by-day charts scroll sideways and open on their newest days
   (docent-admin.css), wherever the card's edge happens to fall: the date there showed cut in
   half ("1" of "Oct 21", "2" of "Dec 2"). A label shows only while the whole of it is in view. */
for (const scroller of document.querySelectorAll(".dc-chart-scroll")) {
  const watch = new IntersectionObserver(
    (entries) => {
      for (const entry of entries) {
        // 0.98, not 1: a label that fits may measure a fraction of a pixel over the edge.
        entry.target.classList.toggle("is-cut", entry.intersectionRatio < 0.98);
      }
    },
    { root: scroller, threshold: [0, 0.98, 1] },
  );
  for (const label of scroller.querySelectorAll("text")) watch.observe(label);
}
