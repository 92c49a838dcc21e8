"""Helpers every test package may import (fixtures live in the conftest.py files)."""
