"""English date formats that differ from Django's: a timestamp as the admin's lists write it.

A turn's or a job's own page wrote "Dec. 4, 2026, 10:46 p.m." under lists and a transcript
reading "Dec 4 2026, 22:46" (docent.admin_dates); Chinese already matches ("2026年12月4日 22:46").
"""

DATETIME_FORMAT = "M j Y, H:i"
