from django.core.management.base import BaseCommand, CommandError

from agent.services import spool_dir, spool_replay


class Command(BaseCommand):
    help = "Save the turns that were spooled to disk while the database was unavailable."

    def handle(self, *args, **options) -> None:
        saved, skipped, failed = spool_replay()
        if saved or skipped or failed:
            self.stdout.write(
                f"Spool {spool_dir()}: {saved} turns saved, {skipped} already saved, "
                f"{failed} still failing."
            )
        if failed:
            raise CommandError(
                f"{failed} spooled turns could not be saved; they stay in the spool."
            )
