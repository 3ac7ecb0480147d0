// The add form's slug, while the author has not typed one: Django's slug script keeps ASCII
// only, so "Django 入门" became "django" and "入门 2" became "2". A title with Chinese in it
// leaves the slug empty instead, and the server spells it in pinyin on save
// (blog.services.article_slug_from_title).
const $ = window.django?.jQuery;
const title = document.getElementById("id_title");
const slug = document.getElementById("id_slug");
const HAN = /[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]/;

if ($ && title && slug && !slug.value) {
  // Bound after Django's own handlers (prepopulate_init.js ran before this module), so this
  // runs after it has filled the field in.
  $(title).on("input keyup change focus", () => {
    if (!$(slug).data("_changed") && HAN.test(title.value)) {
      slug.value = "";
    }
  });
}
