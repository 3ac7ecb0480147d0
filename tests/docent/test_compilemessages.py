"""`manage.py compilemessages` compiles the project's catalogues and leaves the virtualenv's."""

from pathlib import Path

from django.core.management import call_command

CATALOGUE = """msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\\n"

msgid "Hi"
msgstr "Yo"
"""


def catalogue(folder: Path) -> Path:
    """A one-message catalogue in `folder`/locale; returns where its .mo would be written."""
    messages = folder / "locale" / "xx" / "LC_MESSAGES"
    messages.mkdir(parents=True)
    (messages / "django.po").write_text(CATALOGUE)
    return messages / "django.mo"


def test_only_the_projects_own_catalogues_are_compiled(tmp_path, monkeypatch, settings):
    # Run from the project folder, Django's command also compiled every package's catalogue
    # inside .venv (over a thousand of Django's own) and looked through the database files.
    venv = tmp_path / "some-venv"
    venv.mkdir()
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    settings.DATA_DIR = tmp_path / ".data"
    ours = catalogue(tmp_path / "blogapp")
    packaged = catalogue(venv / "lib" / "python3.12" / "site-packages" / "somepackage")
    data = catalogue(tmp_path / ".data")
    monkeypatch.chdir(tmp_path)

    call_command("compilemessages", locale=["xx"], verbosity=0)

    assert ours.exists()
    assert not packaged.exists()
    assert not data.exists()
