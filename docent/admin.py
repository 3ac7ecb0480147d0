"""The task queue's admin (procrastinate's own), kept within the site's CSP.

procrastinate writes `style="..."` attributes into its job list; `style-src 'self'` refuses
every one (380 console errors on one page of jobs) and the summary column lost its layout.
The same page, with classes styled by docent-admin.css instead.
"""

import json

from django.contrib import admin
from django.utils.html import format_html
from procrastinate.contrib.django import models
from procrastinate.contrib.django.admin import ProcrastinateJobAdmin

from docent.admin_lookups import BoundedLookups

ARGS_MAX_CHARS = 2000

admin.site.unregister(models.ProcrastinateJob)


@admin.register(models.ProcrastinateJob)
class JobAdmin(BoundedLookups, ProcrastinateJobAdmin):
    """procrastinate's job admin; its summary template is overridden in templates/procrastinate."""

    class Media:
        css = {"all": ["admin/docent-admin.css"]}

    @admin.display(description="Args")
    def pretty_args(self, instance: models.ProcrastinateJob) -> str:
        args = instance.args
        indent = 2 if len(args) > 1 or len(str(args)) > 30 else None
        text = json.dumps(args, indent=indent)
        if len(text) > ARGS_MAX_CHARS:
            text = text[:ARGS_MAX_CHARS] + "…"
        return format_html('<pre class="dc-job-args">{}</pre>', text)
