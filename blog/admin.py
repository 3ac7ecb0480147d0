"""The authors' admin: write, tag, publish."""

from django.contrib import admin

from blog.models import Article, Tag


@admin.register(Tag)
class TagAdmin(admin.ModelAdmin):
    list_display = ["name", "slug"]
    search_fields = ["name"]
    prepopulated_fields = {"slug": ["name"]}


@admin.register(Article)
class ArticleAdmin(admin.ModelAdmin):
    list_display = ["title", "status", "published_at", "updated_at"]
    list_filter = ["status", "tags", "published_at"]
    search_fields = ["title", "summary", "body"]
    prepopulated_fields = {"slug": ["title"]}
    filter_horizontal = ["tags"]
    date_hierarchy = "published_at"
    fieldsets = [
        (None, {"fields": ["title", "slug", "summary", "body", "tags"]}),
        ("Publishing", {"fields": ["status", "published_at"]}),
    ]

    def get_queryset(self, request):
        # The changelist never needs bodies; keep the page light.
        return super().get_queryset(request).defer("body")
