"""The examples in docstrings are part of the documentation: they must run and be right."""
from __future__ import annotations

import doctest
import importlib
import pkgutil
import re

import pytest

import course
import mini_framework
import practice_model


def modules(package) -> list[str]:
    return sorted(m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
                  if not m.name.endswith("__main__"))


@pytest.mark.parametrize("name", modules(mini_framework) + modules(practice_model) + modules(course))
def test_docstring_examples(name):
    module = importlib.import_module(name)
    failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert failures == 0


def test_every_public_name_is_in_the_package_docstring_table():
    table = mini_framework.__doc__ or ""
    missing = [name for name in mini_framework.__all__ if not re.search(rf"\b{name}\b", table)]
    assert not missing, f"add these to the table in mini_framework/__init__.py: {missing}"
