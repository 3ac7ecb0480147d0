from django.db import migrations, models

from blog.reading import reading_minutes


def count_existing(apps, schema_editor):
    """Articles saved before the field: counted once here, as a save would."""
    Article = apps.get_model("blog", "Article")
    for article in Article.objects.only("id", "body").iterator():
        minutes = reading_minutes(article.body)
        Article.objects.filter(pk=article.pk).update(reading_minutes=minutes)


class Migration(migrations.Migration):
    dependencies = [
        ("blog", "0008_article_former_slugs"),
    ]

    operations = [
        migrations.AddField(
            model_name="article",
            name="reading_minutes",
            field=models.PositiveSmallIntegerField(
                default=1, editable=False, verbose_name="reading time (minutes)"
            ),
        ),
        migrations.RunPython(count_existing, migrations.RunPython.noop),
    ]
