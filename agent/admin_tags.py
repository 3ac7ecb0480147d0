"""The article tags as the reviewers see them: how many conversations each tag's articles drew.

blog never imports agent, so blog's tag admin is extended here, and the conversation list
gets a filter by the tag of the article a conversation started on.
"""

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from agent import selectors
from blog import admin as blog_admin
from blog.models import Tag


class ConversationTagFilter(admin.SimpleListFilter):
    """Conversations started on an article carrying the chosen tag."""

    title = _("article tag")
    parameter_name = "tag"

    def lookups(self, request, model_admin) -> list[tuple[str, str]]:
        return list(Tag.objects.values_list("slug", "name"))

    def queryset(self, request, queryset):
        if self.value() is None:
            return queryset
        return selectors.conversation_filter_tag(queryset=queryset, slug=self.value())


admin.site.unregister(Tag)


@admin.register(Tag)
class TagAdmin(blog_admin.TagAdmin):
    list_display = [*blog_admin.TagAdmin.list_display, "conversation_total"]

    def get_queryset(self, request):
        return selectors.tag_list_annotate_conversations(queryset=super().get_queryset(request))

    @admin.display(description=_("Conversations"), ordering="conversation_count")
    def conversation_total(self, tag: Tag) -> str:
        if not tag.conversation_count:
            return "0"
        # A link to them, titled with what is counted: started on a page, not merely cited.
        url = reverse("admin:agent_conversation_changelist") + f"?tag={tag.slug}"
        title = _("Conversations that started on an article with this tag")
        return format_html('<a href="{}" title="{}">{}</a>', url, title, tag.conversation_count)
