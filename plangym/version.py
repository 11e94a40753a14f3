"""Version of the plangym package."""

__version__ = "0.2.0"
