"""``python -m plangym``: the ``plangym`` command."""

import sys

from plangym.cli import main

if __name__ == "__main__":
    sys.exit(main())
