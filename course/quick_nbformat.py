"""Skip two slow optional imports that `import nbformat` pulls in: a pytest plugin and the course's commands.

nbformat validates notebooks with jsonschema, and jsonschema imports every optional format checker it
finds installed. Two of them (installed with Jupyter) cost about 1.8 s per process on 2 cores:
`rfc3987_syntax` builds 38 Lark grammars when imported (IRI formats), and `isoduration` imports
`arrow` (durations). nbformat never checks formats, and the course validates none, so this module marks
both as absent before jsonschema is first imported. A process that imported jsonschema already keeps
what it has. pyproject's addopts load it first (`-p course.quick_nbformat`); each course command imports
it before nbformat.

>>> import sys, course.quick_nbformat
>>> "jsonschema" in sys.modules or sys.modules["rfc3987_syntax"] is None
True
"""
from __future__ import annotations

import sys

SLOW_OPTIONAL = ("rfc3987_syntax", "isoduration")

if "jsonschema" not in sys.modules:
    for _name in SLOW_OPTIONAL:
        sys.modules.setdefault(_name, None)  # type: ignore[assignment]  # None: "import X" raises ImportError
