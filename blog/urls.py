from django.urls import path

from blog import views

app_name = "blog"

urlpatterns = [
    path("", views.article_list, name="home"),
    path("articles/<slug:slug>/", views.article_detail, name="article"),
    path("tags/<slug:slug>/", views.tag_detail, name="tag"),
]
