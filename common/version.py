"""This release of Ashlar (the installed package's version)."""

from importlib import metadata


def release() -> str:
    """``setup.cfg``'s version as installed, or ``unknown`` (run from a
    source tree that was never installed)."""
    try:
        return metadata.version("ashlar")
    except metadata.PackageNotFoundError:
        return "unknown"
