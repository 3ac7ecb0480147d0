"""The Traditional Chinese catalogues are the Simplified ones converted (docent/traditional.py)."""

from django.conf import settings

from docent.traditional import CATALOGUES, SOURCE, TARGET, catalogue_traditional


def test_the_committed_traditional_catalogues_are_the_simplified_ones_converted():
    # A string translated in zh_Hans only would reach a reader in Taipei in English.
    locale = settings.LOCALE_PATHS[0]
    for name in CATALOGUES:
        source = (locale / SOURCE / "LC_MESSAGES" / name).read_text(encoding="utf-8")
        target = (locale / TARGET / "LC_MESSAGES" / name).read_text(encoding="utf-8")
        assert target == catalogue_traditional(source), (
            f"{name}: run `python manage.py catalogue_traditional` after editing zh_Hans"
        )


def test_only_translations_change_script_and_their_placeholders_stay():
    source = (
        'msgid ""\nmsgstr ""\n"Language: zh_Hans\\n"\n\n'
        "#: templates/x.html\n"
        'msgid "Searching the blog for “%(query)s”…"\n'
        'msgstr "正在博客中搜索“%(query)s”…"\n\n'
        'msgid "Copy"\nmsgstr ""\n"复制"\n'
    )

    converted = catalogue_traditional(source)

    assert '"Language: zh_Hant\\n"' in converted
    assert 'msgid "Searching the blog for “%(query)s”…"' in converted
    assert 'msgstr "正在部落格中搜尋「%(query)s」…"' in converted
    assert '"複製"' in converted


def test_quotation_marks_become_the_corner_brackets_read_in_taiwan():
    # OpenCC converts characters only: the Taipei reader's pages kept the mainland's “…”.
    source = (
        'msgid "Saved “{obj}”; “Index” says ‘up to date’."\n'
        'msgstr "已保存“{obj}”；“索引”一栏会显示‘最新’。"\n'
    )

    converted = catalogue_traditional(source)

    assert 'msgid "Saved “{obj}”; “Index” says ‘up to date’."' in converted
    assert 'msgstr "已儲存「{obj}」；「索引」一欄會顯示『最新』。"' in converted


def test_an_article_is_published_as_taiwan_says_it_not_released_like_a_program():
    # OpenCC's Taiwan table turned 发布 into 釋出: the admin's status read 已釋出.
    source = (
        'msgid "Published"\nmsgstr "已发布"\n\n'
        'msgid "Nothing published yet."\nmsgstr "还没有发布任何文章。"\n'
    )

    converted = catalogue_traditional(source)

    assert 'msgstr "已發布"' in converted
    assert 'msgstr "還沒有發布任何文章。"' in converted
