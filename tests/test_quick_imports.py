"""pyproject's addopts load course.quick_nbformat before nbval, so no pytest process pays for two slow imports."""
from __future__ import annotations

import subprocess
import sys

from course.quick_nbformat import SLOW_OPTIONAL


def test_the_suite_skips_jsonschemas_slow_optional_format_checkers():
    import jsonschema  # noqa: F401  (nbval imported it already, through nbformat)

    assert all(sys.modules.get(name, "imported") is None for name in SLOW_OPTIONAL), (
        "a slow optional module was imported: is -p course.quick_nbformat first in pyproject's addopts?")


def test_a_course_command_skips_them_too_and_still_reads_notebooks():
    code = ("import sys, course.measure, nbformat; "
            "print([sys.modules.get(n, 'imported') for n in course.quick_nbformat.SLOW_OPTIONAL], "
            "nbformat.validate(nbformat.v4.new_notebook()))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[None, None] None", done.stderr
