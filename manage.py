#!/usr/bin/env python
"""Django's command-line utility, with configuration errors shown as one clear line."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from config.errors import run_or_explain

    run_or_explain(sys.argv)


if __name__ == "__main__":
    main()
