"""Django admin messages the Chinese admin words as Chinese is written.

Django's own Chinese catalogue puts spaces around the model's name ("成功添加了 文章“…”",
"修改 文章") and ends one sentence with a Western full stop ("您可以在下面再次编辑它."). The
project's catalogue (LOCALE_PATHS) is read before Django's, so these msgids, spelled exactly as
django.contrib.admin spells them, are translated again in locale/zh_Hans. They are marked here
so that makemessages keeps them in the catalogue; nothing imports this list.
"""

from django.utils.translation import gettext_noop

ADMIN_MESSAGES = [
    gettext_noop("The {name} “{obj}” was added successfully."),
    gettext_noop("You may edit it again below."),
    gettext_noop("The {name} “{obj}” was added successfully. You may add another {name} below."),
    gettext_noop("The {name} “{obj}” was changed successfully."),
    gettext_noop("The {name} “{obj}” was changed successfully. You may edit it again below."),
    gettext_noop("The {name} “{obj}” was changed successfully. You may add another {name} below."),
    gettext_noop("The %(name)s “%(obj)s” was deleted successfully."),
    gettext_noop("Deleted {name} “{object}”."),
    gettext_noop("Add %s"),
    gettext_noop("Add %(name)s"),
    gettext_noop("Change %s"),
    gettext_noop("Select %s to change"),
    gettext_noop("Delete selected %(verbose_name_plural)s"),
    gettext_noop("View %s"),
    # The delete confirmations ("请确认要删除选中的 文章 吗？").
    gettext_noop(
        "Are you sure you want to delete the selected %(objects_name)s? All of the "
        "following objects and their related items will be deleted:"
    ),
    gettext_noop(
        "Are you sure you want to delete the %(object_name)s “%(escaped_object)s”? "
        "All of the following related items will be deleted:"
    ),
    # A form label's suffix: Django's Chinese keeps the Western ":" ("标题:", "状态:").
    gettext_noop(":"),
]
