"""Keep the knowledge base current: an article save queues a reindex job.

The job is written in the save's own transaction and run by the task worker (blog.tasks), so
saving in the admin, or from `manage.py shell`, never waits on embeddings and is never missed.
Every save of a published article queues one (a job still waiting covers later saves: its
queueing lock). A draft's job removes its chunks, so a draft with nothing indexed queues none
(blog.indexing.article_index_needed); a deleted article's chunks go with it by cascade, so
deletes need no job.
"""

from django.db.models.signals import post_save
from django.dispatch import receiver

from blog.indexing import article_index_enqueue, article_index_needed, article_saves_queued
from blog.models import Article


@receiver(post_save, sender=Article, dispatch_uid="blog.article_reindex_on_save")
def article_saved(sender, instance: Article, raw: bool = False, **kwargs) -> None:
    """Queue the saved article for reindexing when it needs it (not while loading fixtures,
    nor where the caller queues the jobs itself: indexing.article_saves_unqueued)."""
    if not raw and article_saves_queued() and article_index_needed(article=instance):
        article_index_enqueue(article_id=instance.pk)
