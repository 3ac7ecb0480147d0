from django.urls import path
from django.views.generic import RedirectView

from blog import views

app_name = "blog"

urlpatterns = [
    path("", views.article_list, name="home"),
    # A reader who trims an article's address to /articles/ (or a tag's to /tags/) gets the
    # list of articles, not a 404: the home page is that list.
    path("articles/", RedirectView.as_view(pattern_name="blog:home")),
    path("articles/<slug:slug>/", views.article_detail, name="article"),
    path("tags/", RedirectView.as_view(pattern_name="blog:home")),
    path("tags/<slug:slug>/", views.tag_detail, name="tag"),
    path("feed/", views.article_feed, name="feed"),
    path("search/", views.search, name="search"),
]
