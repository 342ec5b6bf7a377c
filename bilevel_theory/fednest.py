"""Placeholder: filled in by the algorithms issue."""

REGISTERED: tuple = ()
