"""The examples in docstrings are part of the documentation: they must run and be right."""
from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import course
import mini_framework


def modules(package) -> list[str]:
    return sorted(m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
                  if not m.name.endswith("__main__"))


@pytest.mark.parametrize("name", modules(mini_framework) + modules(course))
def test_docstring_examples(name):
    module = importlib.import_module(name)
    failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert failures == 0
