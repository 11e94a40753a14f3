"""plangym 0.1's ROM import command, kept working: ``python -m plangym.scripts.import_retro_roms``.

It imports the ROMs found in the given directories (default: the current one) into
stable-retro's data, as ``python -m stable_retro.import`` does, which it runs. plangym 0.1.32
already called this script deprecated in favour of that command, and it warns the same.
"""

from __future__ import annotations

import sys
import warnings

warnings.warn(
    "This script is deprecated. Use 'python -m stable_retro.import' instead.",
    DeprecationWarning,
    stacklevel=2,
)


def main(paths: list[str] | None = None) -> None:
    """Import the ROMs under ``paths`` (default: the command line's, else the current dir)."""
    try:
        from stable_retro.scripts import import_path
    except ImportError as error:
        raise ImportError(
            "import_retro_roms needs stable-retro: pip install 'plangym[retro]'"
        ) from error
    if paths is not None:
        sys.argv[1:] = [str(path) for path in paths]
    import_path.main()


if __name__ == "__main__":
    main()
