"""The task queue's admin (procrastinate's own), kept within the site's CSP, in our words.

procrastinate writes `style="..."` attributes into its job list; `style-src 'self'` refuses
every one (380 console errors on one page of jobs) and the summary column lost its layout.
The same page, with classes styled by docent-admin.css instead.

procrastinate marks nothing for translation: the Chinese admin read "Procrastinate jobs",
"Succeeded" and "Retry Job". Its app, models, fields, statuses and actions are named here,
in the project's own catalogue (locale/), never by editing site-packages.
"""

import datetime as dt
import json

from django.apps import apps
from django.contrib import admin, messages
from django.urls import reverse
from django.utils.formats import date_format
from django.utils.html import format_html
from django.utils.timezone import localtime
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy, pgettext_lazy
from procrastinate.contrib.django import models
from procrastinate.contrib.django.admin import ProcrastinateJobAdmin

from docent import selectors
from docent.admin_dates import FromNowFilter
from docent.admin_lookups import BoundedLookups

ARGS_MAX_CHARS = 2000
# The queue of the periodic checks (agent.tasks, docent.tasks); indexing has its own, "index".
ROUTINE_QUEUE = "maintenance"
# The list's arguments, one "name: value" line each; longer values are cut (the job page has all).
ARGS_LIST_VALUE_CHARS = 60

# Capitalised as the site's other statuses are ("Done", "Hit the step limit"): the list read
# procrastinate's raw values, "succeeded" and "todo". A context keeps "Running" and "Cancelled"
# apart from a turn's, which Chinese words differently.
STATUSES = {
    "todo": pgettext_lazy("job status", "Waiting"),
    "doing": pgettext_lazy("job status", "Running"),
    "succeeded": pgettext_lazy("job status", "Succeeded"),
    "failed": pgettext_lazy("job status", "Failed"),
    "cancelled": pgettext_lazy("job status", "Cancelled"),
    "aborted": pgettext_lazy("job status", "Aborted"),
}
EVENTS = {
    "deferred": pgettext_lazy("job event", "Queued"),
    "started": pgettext_lazy("job event", "Started"),
    "deferred_for_retry": pgettext_lazy("job event", "Queued for a retry"),
    "failed": pgettext_lazy("job event", "Failed"),
    "succeeded": pgettext_lazy("job event", "Succeeded"),
    "cancelled": pgettext_lazy("job event", "Cancelled"),
    "abort_requested": pgettext_lazy("job event", "Abort requested"),
    "aborted": pgettext_lazy("job event", "Aborted"),
    "scheduled": pgettext_lazy("job event", "Scheduled"),
}
FIELDS = {
    models.ProcrastinateJob: {
        "queue_name": _("queue"),
        "task_name": _("task"),
        "priority": _("priority"),
        "lock": _("lock"),
        "args": _("arguments"),
        "status": _("status"),
        "scheduled_at": _("scheduled for"),
        "attempts": _("attempts"),
        "queueing_lock": _("queueing lock"),
        "abort_requested": _("abort requested"),
        "worker": _("worker"),
    },
    models.ProcrastinateEvent: {"job": _("job"), "type": _("event"), "at": _("at")},
}
# A job's page is titled, and its breadcrumb ends, with its str(): procrastinate's
# "agent.turns_recover[20](timestamp=1796514060)", code where a reader looks for what the job is
# for. Each task by its purpose (the list's "task" column and filter keep the name, to search by).
TASK_PURPOSES = {
    "agent.turns_recover": _("Recover interrupted turns"),
    "agent.spool_drain": _("Save the turns held during an outage"),
    "blog.article_index": _("Index an article"),
    "blog.reindex_scan": _("Bring the search index up to date"),
    "blog.reindex_reconcile": _("Check the search index for missed changes"),
    "docent.jobs_stalled_retry": _("Retry the jobs of a stopped worker"),
    "docent.jobs_prune": _("Delete old finished jobs"),
    "docent.sessions_clear_expired": _("Delete expired sessions"),
}
# What each job action did, of how many chosen (JobAdmin._act); the form follows "chosen".
RETRIED = ngettext_lazy(
    "%(done)d of %(chosen)d selected job retried: only failed or running jobs can be.",
    "%(done)d of %(chosen)d selected jobs retried: only failed or running jobs can be.",
    "chosen",
)
CANCELLED = ngettext_lazy(
    "%(done)d of %(chosen)d selected job cancelled: only waiting jobs can be.",
    "%(done)d of %(chosen)d selected jobs cancelled: only waiting jobs can be.",
    "chosen",
)
ABORTED = ngettext_lazy(
    "%(done)d of %(chosen)d selected job aborted: only waiting or running jobs can be.",
    "%(done)d of %(chosen)d selected jobs aborted: only waiting or running jobs can be.",
    "chosen",
)
NAMES = {
    models.ProcrastinateJob: (_("job"), _("jobs")),
    models.ProcrastinateEvent: (_("job event"), _("job events")),
}


def queue_names_translate() -> None:
    """Give procrastinate's app, models, fields and choices translatable names."""
    apps.get_app_config("procrastinate").verbose_name = _("Background jobs")
    for model, (one, many) in NAMES.items():
        model._meta.verbose_name, model._meta.verbose_name_plural = one, many
    for model, fields in FIELDS.items():
        for name, label in fields.items():
            model._meta.get_field(name).verbose_name = label
    # Choices drive the list filter and get_FOO_display (the summary's last event).
    models.ProcrastinateJob._meta.get_field("status").choices = list(STATUSES.items())
    models.ProcrastinateEvent._meta.get_field("type").choices = list(EVENTS.items())
    models.ProcrastinateJob._meta.get_field("id").verbose_name = "ID"  # the job page read "Pk"
    # The job page heads each event with its str(): "Event 1 - Job 1: deferred at 2026-…".
    models.ProcrastinateEvent.__str__ = _event_str
    models.ProcrastinateJob.__str__ = _job_str


def _job_str(job: models.ProcrastinateJob) -> str:
    """ "Recover interrupted turns · #20"; a task without a purpose here by its name."""
    return f"{TASK_PURPOSES.get(job.task_name, job.task_name)} · #{job.id}"


def _event_str(event: models.ProcrastinateEvent) -> str:
    when = date_format(localtime(event.at), "DATETIME_FORMAT") if event.at else ""
    return f"{event.get_type_display()} · {when}".removesuffix(" · ")


queue_names_translate()

admin.site.unregister(models.ProcrastinateJob)


class LockFilter(admin.AllValuesFieldListFilter):
    """The lock filter, whose choice for jobs without a lock read a bare "-"."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.empty_value_display = _("No lock")


class ScheduledForFilter(FromNowFilter):
    """When a job may run: a job gets a time only when it must wait (a retry's back-off, a job
    deferred for later), so what a reader asks is which jobs wait, and for how long still."""

    title = _("scheduled for")
    parameter_name = "scheduled"
    options = [
        ("none", _("Not scheduled: runs when a worker is free")),
        ("hour", _("Within the next hour")),
        ("later", _("Later than an hour from now")),
        ("due", _("Already due")),
    ]

    def ranges(self, now: dt.datetime) -> dict[str, dict]:
        hour = now + dt.timedelta(hours=1)
        return {
            "none": {"scheduled_at__isnull": True},
            "hour": {"scheduled_at__gt": now, "scheduled_at__lte": hour},
            "later": {"scheduled_at__gt": hour},
            "due": {"scheduled_at__lte": now, "status": "todo"},  # not those done since
        }


class RoutineFilter(admin.SimpleListFilter):
    """The periodic checks that succeeded, hidden unless asked for.

    Turn recovery every 15 s and the spool and stalled checks every minute leave about 8,600
    succeeded jobs a day, kept TASK_JOBS_KEEP_HOURS (72): the list opened on pages of
    "agent.turns_recover" and an admin looking for an article's indexing, or a failure, had to
    know to filter them out. A routine job that failed or still waits is always listed.
    """

    title = _("routine checks")
    parameter_name = "routine"

    def lookups(self, request, model_admin) -> list[tuple[str, str]]:
        return [("show", _("All"))]

    def choices(self, changelist):
        yield {
            "selected": self.value() is None,
            "query_string": changelist.get_query_string(remove=[self.parameter_name]),
            "display": _("Hide those that succeeded"),
        }
        yield {
            "selected": self.value() == "show",
            "query_string": changelist.get_query_string({self.parameter_name: "show"}),
            "display": _("All"),
        }

    def queryset(self, request, queryset):
        if self.value() == "show":
            return queryset
        return queryset.exclude(queue_name=ROUTINE_QUEUE, status="succeeded")


class JobEventInline(admin.TabularInline):
    """A job's events, what happened and when, as one table of our own template."""

    model = models.ProcrastinateEvent
    template = "admin/procrastinate/job_events.html"
    ordering = ["at", "id"]


@admin.register(models.ProcrastinateJob)
class JobAdmin(BoundedLookups, ProcrastinateJobAdmin):
    """procrastinate's job admin; its summary template is overridden in templates/procrastinate."""

    actions = ["retry", "cancel", "abort"]
    inlines = [JobEventInline]
    # The assistant's pages say "—" for nothing; a job's page said Django's "-" (no article, lock
    # or schedule), which read as a stray hyphen.
    empty_value_display = "—"
    # "pk" has no name to translate: the list and the job page read "PK" and "Pk".
    fields = ["id", "short_task_name", "article", *ProcrastinateJobAdmin.fields[2:]]
    # The list's arguments as short "name: value" lines (job_arguments), not indented JSON: at
    # 375 px the JSON column was squeezed to a few characters a line, 41,000 px of list.
    list_display = ["id", "short_task_name", "arguments", "pretty_status", "summary"]
    # No "queueing lock" filter: every article adds its own ("article-index-12"), so it grew
    # with the blog. A search finds one article's jobs by that lock instead.
    list_filter = [
        RoutineFilter, "status", "queue_name", "task_name", ("lock", LockFilter),
        ScheduledForFilter, "priority",
    ]  # fmt: skip
    search_fields = ["queueing_lock", "task_name"]
    search_help_text = _(
        "Searches task names and queueing locks: article-index-12 finds article 12’s indexing."
    )

    def get_queryset(self, request):
        return selectors.job_list_annotate(queryset=super().get_queryset(request))

    @admin.display(description=_("status"), ordering="status")
    def pretty_status(self, instance: models.ProcrastinateJob) -> str:
        # No emoji (procrastinate's ✅, 🚂): without an emoji font they drew an empty box. A pill
        # coloured by outcome, as a turn's status is, so a failed job stands out in a long list.
        return format_html(
            '<span class="dc-pill dc-pill--job-{}">{}</span>',
            instance.status,
            instance.get_status_display(),
        )

    @admin.display(description=_("task"))
    def short_task_name(self, instance: models.ProcrastinateJob) -> str:
        # The whole name: procrastinate's "a.spool_drain" read as a name cut off at the left.
        return instance.task_name

    @admin.display(description=_("summary"))
    def summary(self, instance: models.ProcrastinateJob) -> str:
        return super().summary(instance)

    # procrastinate's actions say nothing: "Cancel" on a running job left the list as it was,
    # with no word that only waiting jobs can be cancelled. Each says what it did, of how many.
    @admin.action(description=_("Retry the selected failed or running jobs"), permissions=["act"])
    def retry(self, request, queryset):
        self._act(request, queryset, super().retry, ["failed", "doing"], RETRIED)

    @admin.action(description=_("Cancel the selected jobs still waiting"), permissions=["act"])
    def cancel(self, request, queryset):
        self._act(request, queryset, super().cancel, ["todo"], CANCELLED)

    @admin.action(description=_("Abort the selected jobs, waiting or running"), permissions=["act"])
    def abort(self, request, queryset):
        self._act(request, queryset, super().abort, ["todo", "doing"], ABORTED)

    def has_act_permission(self, request) -> bool:
        # procrastinate's admin refuses every change (its rows are the queue's), so its actions
        # checked nothing: a reviewer who may only view jobs could retry, cancel or abort them
        # (an article's indexing, the spool drain). They need the job's change permission now.
        return request.user.has_perm("procrastinate.change_procrastinatejob")

    def _act(self, request, queryset, action, statuses: list[str], text) -> None:
        """Run procrastinate's `action`, then say how many of the chosen jobs it applied to."""
        done, chosen = queryset.filter(status__in=statuses).count(), queryset.count()
        action(request, queryset)
        level = messages.SUCCESS if done == chosen else messages.WARNING
        self.message_user(request, text % {"done": done, "chosen": chosen}, level)

    # An indexing job's article by its title, not "article_id: 15": a reviewer could not tell
    # which article a failed job was about, nor that it had been deleted since.
    @admin.display(description=_("arguments"))
    def arguments(self, instance: models.ProcrastinateJob) -> str:
        args = dict(instance.args)
        article = self.article(instance) if "article_id" in args else ""
        args.pop("article_id", None)
        if not args:
            return article
        return format_html('{}<pre class="dc-job-args">{}</pre>', article, job_arguments(args))

    @admin.display(description=_("article"))
    def article(self, instance: models.ProcrastinateJob) -> str:
        article_id = instance.args.get("article_id")
        if article_id is None:
            return self.get_empty_value_display()
        if instance.article_title is None:
            return format_html(
                '<div class="dc-job-article dc-muted">{}</div>',
                _("Article %(id)s, deleted since") % {"id": article_id},
            )
        url = reverse("admin:blog_article_change", args=[article_id])
        return format_html(
            '<div class="dc-job-article"><a href="{}">{}</a></div>', url, instance.article_title
        )

    @admin.display(description=_("arguments"))
    def pretty_args(self, instance: models.ProcrastinateJob) -> str:
        args = instance.args
        indent = 2 if len(args) > 1 or len(str(args)) > 30 else None
        text = json.dumps(args, indent=indent)
        if len(text) > ARGS_MAX_CHARS:
            text = text[:ARGS_MAX_CHARS] + "…"
        return format_html('<pre class="dc-job-args">{}</pre>', text)


def job_arguments(args: dict) -> str:
    """A job's arguments as 'name: value' lines by name, each value as JSON, cut when long."""
    lines = []
    for name, value in sorted(args.items()):  # jsonb keeps keys shortest first
        text = json.dumps(value, ensure_ascii=False)
        if len(text) > ARGS_LIST_VALUE_CHARS:
            text = text[:ARGS_LIST_VALUE_CHARS] + "…"
        lines.append(f"{name}: {text}")
    return "\n".join(lines)
