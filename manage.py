#!/usr/bin/env python
"""Django's command-line utility, with configuration errors shown as one clear line."""

import os
import sys
import warnings


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    # platformdirs warns on every command when XDG_RUNTIME_DIR is unset (containers, CI, sudo);
    # the embedded PostgreSQL picks another socket directory, so it is not the user's business.
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
    from config.errors import run_or_explain

    run_or_explain(sys.argv)


if __name__ == "__main__":
    main()
