"""`compilemessages` for the project's own catalogues, not those of installed packages."""

from pathlib import Path

from django.conf import settings
from django.core.management.commands import compilemessages


class Command(compilemessages.Command):
    """Django's command, skipping virtualenvs and the data directory in the working tree.

    Django looks for `locale` folders under the working directory. `make run` puts `.venv`
    there, with over a thousand catalogues of installed packages (Django's own) that ship
    compiled: rewriting their .mo files changes files pip owns, and walking them takes most
    of the command's time. `.data` holds the database's files and no catalogue.
    """

    def handle(self, *args: str, **options: object) -> None:
        patterns = list(options["ignore_patterns"])  # type: ignore[call-overload]
        super().handle(*args, **{**options, "ignore_patterns": patterns + not_ours(Path.cwd())})


def not_ours(root: Path) -> list[str]:
    """Folders directly under `root` that hold no catalogue of this project."""
    data = Path(settings.DATA_DIR).resolve()
    return [
        path.name
        for path in root.iterdir()
        if path.is_dir() and ((path / "pyvenv.cfg").exists() or path.resolve() == data)
    ]
