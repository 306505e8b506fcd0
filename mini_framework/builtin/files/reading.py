"""Text out of bytes, and a window of numbered lines a model can read (read_file's answer).

    text_of(data)                  UTF-8 text, or FileRefused for a binary file (NUL bytes, invalid UTF-8)
    lines_of(text)                 the lines, each with its line ending: "".join(lines_of(t)) == t
    window(name, text, start, end) "notes.txt: lines 1-3 of 3 (the whole file)" and the numbered lines

A line is what ends at "\\n" ("\\r\\n" files keep their "\\r", shown without it). The answer is bounded: at
most READ_LINES lines when no end_line is given, LINE_CHARS characters of one line, OUTPUT_CHARS in all;
it always says how many lines the file has and which start_line reads on.
"""
from __future__ import annotations

from .paths import FileRefused

__all__ = ["LINE_CHARS", "OUTPUT_CHARS", "READ_LINES", "lines_of", "text_of", "window"]

READ_LINES = 200  # lines shown when no end_line is given
LINE_CHARS = 2_000  # characters shown of one line
OUTPUT_CHARS = 40_000  # characters of one answer, about 10k tokens


def text_of(data: bytes) -> str:
    """The file's text; a binary file is refused.

    >>> text_of("你好\\n".encode())
    '你好\\n'
    >>> text_of(b"PK\\x03\\x04\\x00")
    Traceback (most recent call last):
    ...
    mini_framework.builtin.files.paths.FileRefused: this is a binary file (it has NUL bytes): only text files are read
    """
    if b"\0" in data:
        raise FileRefused("this is a binary file (it has NUL bytes): only text files are read")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise FileRefused(f"this file is not UTF-8 text (byte {error.start:,} cannot be read): only text "
                          "files are read") from None


def lines_of(text: str) -> list[str]:
    """The lines of a text, each with its ending; the last one may have none.

    >>> lines_of("a\\r\\nb\\nc")
    ['a\\r\\n', 'b\\n', 'c']
    """
    pieces = text.split("\n")
    return [piece + "\n" for piece in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])


def body(line: str) -> str:
    """A line without its ending."""
    return line.removesuffix("\n").removesuffix("\r")


def window(name: str, text: str, start: int = 1, end: int | None = None) -> str:
    """Lines start..end (1-based, inclusive) of a file's text, numbered, with a header saying what is shown.

    >>> print(window("notes.txt", "one\\ntwo\\nthree\\n", 2))
    notes.txt: lines 2-3 of 3 (to the end of the file)
         2	two
         3	three
    """
    lines = lines_of(text)
    if not lines:
        return f"{name}: the file is empty (0 lines)"
    if start > len(lines):
        raise FileRefused(f"start_line {start} is past the end: the file has {len(lines):,} lines")
    last = min(end if end is not None else start + READ_LINES - 1, len(lines))
    rows: list[str] = []
    size = 0
    for number in range(start, last + 1):
        shown = body(lines[number - 1])
        if len(shown) > LINE_CHARS:
            shown = f"{shown[:LINE_CHARS]} … [{len(shown) - LINE_CHARS:,} more characters on this line]"
        row = f"{number:>6}\t{shown}"
        if rows and size + len(row) > OUTPUT_CHARS:
            last = number - 1
            break
        rows.append(row)
        size += len(row) + 1
    more = (f"call read_file with start_line={last + 1} to read on" if last < len(lines) else
            "the whole file" if start == 1 else "to the end of the file")
    return "\n".join([f"{name}: lines {start}-{last} of {len(lines):,} ({more})", *rows])
