"""Control environments: gymnasium's classic control tasks."""

from plangym.control.classic_control import ClassicControl

__all__ = ["ClassicControl"]
