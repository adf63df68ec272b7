#!/usr/bin/env python
"""Django's command-line utility for Discern."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    except BrokenPipeError:
        # Whoever read the output went away (`manage.py load_demo | head`): stop quietly, with
        # exit status 1 as Python's docs advise; stdout points at /dev/null, as Python
        # flushes it again at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)


if __name__ == "__main__":
    main()
