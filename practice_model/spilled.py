"""Long tool results: the spill's reminder, reading the file it names, answering from the part seen.

The framework's `too_long_to_file` (spill.py) gives the model the head and the tail of a long text
result, a line saying how much was left out, and then a `<system-reminder>` naming the file that
holds the full text. The practice model does with it what a careful real model does:

    cut_of(result)          -> Cut | None     a spilled result: the part shown, the file (None: not saved)
    reader(tool)            -> 'search' | 'read' | None     whether an offered tool reads files, and how
    reading_calls(s)        -> list | None    the call that reads the file; [] when it was read (or
                                              cannot be): time to answer; None: nothing was spilled
    long_answer(s)          -> str | None     the answer from what was read, or from the part shown

- **A tool that reads files is offered** (decided by its name, description and parameters: a
  path-like parameter, reading words, no writing words; `reader`): it is called once on the file,
  to look for what the user asked: a search tool for the quoted value or code the request names
  and no call used yet, or, for a question about an error or a failure, for the error (`ERROR`,
  or the first of FAILED/错误/失败 the part shown contains; a regular expression of all of them
  when the tool says it takes one); a reading tool with its tail-like parameter set to TAIL_LINES
  when it has one. Then it answers from the lines that came back.
- **None is offered**: the answer says the output was cut and where the whole of it is (the
  reminder asks for that), then what the part shown says (its error lines, or its last line).
- **A long text result without a reminder** (cut by `text[:N]`, say) is answered from what is
  there, without cleverness: asked about an error, it quotes the error lines it sees, and when it
  sees none (they were in the part cut away) it says it found no error and quotes the last line.
  That confident, wrong answer is the point of lesson 10's head-truncation pitfall.

Concessions: the reminder is recognised by the words spill.py writes (copied below: the package may
not import the core; a test checks they still match); one reading call per spilled file, and never
of a file that a reading call itself spilled (which would go on for ever); error lines are found
by words, so 'errors: 0' counts as one; a reading tool without a tail-like parameter is called with
its path alone, and what it returns is all the answer sees.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .language import split_identifier
from .schemas import Param, json_type
from .situation import Call, OfferedTool, Situation, error_of

REMINDER_START = "<system-reminder>"
REMINDER_END = "</system-reminder>"
_TOO_LONG = "output was too long to show in full"      # spill.py's reminders all say this
_SAVED = re.compile(r"(?:The complete output is|bytes of the output were saved \(the rest is lost\),) in the file "
                    r"(.+?)(?:\. Read only the parts|, but you have no tool)")
_LOST = re.compile(r"The full text could not be saved \((.*?)\)\.")

TAIL_LINES = 50         # lines asked of a reading tool's tail-like parameter
QUOTED_LINES = 3        # lines quoted in an answer
LINE = 200              # characters quoted of one line
LONG_TEXT = 2000        # characters from which a text result without a reminder is read as a long output
LONG_LINES = 20         # ... or lines

ERROR_LINE = re.compile(r"(?i)\b(?:error|errors|fatal|failed|failure|fail|exception|traceback|panic|critical|"
                        r"timed out|exit (?:code|status) [1-9]\d*)\b|错误|失败|异常|报错")
ERROR_QUESTION = re.compile(r"(?i)\b(?:why|error|errors|fail|fails|failed|failing|failure|crash|crashed|exception|"
                            r"wrong|broke|broken|cause)\b|为什么|为何|错误|失败|报错|出错|异常|崩溃|原因|怎么回事")
ERROR_WORDS = ("ERROR", "FAILED", "Error", "error", "FAIL", "Exception", "错误", "失败")
ERROR_PATTERN = "ERROR|FAILED|Traceback|错误|失败"

_PATH = re.compile(r"(?i)^(?:path|file|filename|file_?name|file_?path|filepath|fname|log_?file|log_?path|"
                   r"[a-z_]*_path|[a-z_]*_file|path_?pattern|glob)$")
_PATTERN = re.compile(r"(?i)^(?:pattern|regex|regexp|query|keyword|keywords|text|search|term|needle|grep|match|"
                      r"contains|q|expr|expression|string|search_?(?:term|text|string|pattern))$")
_TAIL = re.compile(r"(?i)^(?:tail|last|last_?n|last_?lines|n_?last|lines_?from_?end|from_?end|tail_?lines)$")
_COUNT = re.compile(r"(?i)^(?:n|lines|num_?lines|max_?lines|limit|count|max_?results|max_?matches|context)$")
_READING = re.compile(r"(?i)\b(?:read|reads|reading|search|searches|grep|find|finds|view|open|cat|tail|head|show|"
                      r"look|scan|inspect|load|lines)\b|读取|查看|搜索|查找|打开|读")
_WRITING = {"write", "writes", "delete", "remove", "rm", "send", "upload", "save", "append", "create", "edit",
            "move", "rename", "overwrite", "put", "post", "update"}
_WRITING_ZH = re.compile("写入|删除|发送|上传|保存|修改")
_REGEX = re.compile(r"(?i)regex|regular expression|正则")
_CHANGING = re.compile(r"(?i)^\W*(?:write|writes|replace|replaces|overwrite|overwrites|edit|edits|update|updates|save|"
                       r"saves|create|creates|append|appends|delete|deletes|remove|removes|rename|insert|change|"
                       r"changes|modify|modifies)\b|^\W*(?:写|替换|覆盖|修改|编辑|保存|创建|删除|追加)")


@dataclass(frozen=True)
class Cut:
    """A spilled result: what the model was shown, and where the rest is."""

    shown: str
    """The head, the gap line and the tail (the text before the reminder)."""
    path: str | None
    """The file with the full text (None: it could not be saved)."""
    reason: str = ""
    """Why it could not be saved ('' when it was)."""

    @property
    def visible(self) -> str:
        """The part shown, without spill.py's gap line."""
        return "\n".join(line for line in self.shown.splitlines() if not _is_gap(line))


def _is_gap(line: str) -> bool:
    """spill.py's '[… 150,000 characters not shown …]' line."""
    return line.startswith("[… ") and line.endswith(" not shown …]")


def cut_of(result: Any) -> Cut | None:
    """A spilled result read: the part shown and the file named by its reminder; None for any other result.

    >>> cut = cut_of("a\\n[… 9 characters not shown …]\\nz\\n\\n<system-reminder>\\nThis tool's output was too long to "
    ...              "show in full (…). The complete output is in the file /tmp/x.txt. Read only the parts …\\n"
    ...              "</system-reminder>")
    >>> cut.path, cut.visible
    ('/tmp/x.txt', 'a\\nz')
    """
    if not isinstance(result, str) or not result.rstrip().endswith(REMINDER_END):
        return None
    start = result.rfind(REMINDER_START)
    if start < 0:
        return None
    reminder = result[start:]
    if _TOO_LONG not in reminder:
        return None
    saved, lost = _SAVED.search(reminder), _LOST.search(reminder)
    if saved is None and lost is None:
        return None
    shown = result[:start].rstrip()
    return Cut(shown, saved.group(1).strip() if saved else None, lost.group(1) if lost and not saved else "")


# ---------------------------------------------------------------------------------------------
# Which offered tools read files.


def _path_param(tool: OfferedTool) -> Param | None:
    """The parameter that takes a file's path (a string named path, file, file_path, ...)."""
    return next((p for p in tool.params if _PATH.match(p.name) and json_type(p.schema) == "string"), None)


def _pattern_param(tool: OfferedTool) -> Param | None:
    """The parameter that takes what to look for (pattern, query, keyword, ...)."""
    return next((p for p in tool.params if _PATTERN.match(p.name) and json_type(p.schema) == "string"), None)


def reader(tool: OfferedTool) -> str | None:
    """'search' for a tool that searches a file, 'read' for one that reads it, None for any other tool.

    >>> from practice_model.situation import offered_tool
    >>> grep = offered_tool({"name": "search_file", "description": "Search a text file for a pattern.",
    ...     "parameters": {"properties": {"path": {"type": "string"}, "pattern": {"type": "string"}}}})
    >>> save = offered_tool({"name": "write_file", "description": "Write text to a file.",
    ...     "parameters": {"properties": {"path": {"type": "string"}, "text": {"type": "string"}}}})
    >>> reader(grep), reader(save)
    ('search', None)
    """
    if _path_param(tool) is None or writes_files(tool):
        return None
    text = " ".join(split_identifier(tool.name)) + " " + tool.description
    if not _READING.search(text):
        return None
    return "search" if _pattern_param(tool) is not None else "read"


def writes_files(tool: OfferedTool) -> bool:
    """Whether a tool changes the file it is given: a path parameter, and writing words in its name or at the start
    of its description ('sed' described "Replace a regular expression in lines ..." does).

    >>> from practice_model.situation import offered_tool
    >>> sed = offered_tool({"name": "sed", "description": "Replace a regular expression in a file.",
    ...     "parameters": {"properties": {"path": {"type": "string"}, "pattern": {"type": "string"}}}})
    >>> writes_files(sed), reader(sed)
    (True, None)
    """
    if _path_param(tool) is None:
        return False
    words = set(split_identifier(tool.name))
    return bool(words & _WRITING or _WRITING_ZH.search(tool.name) or _CHANGING.search(tool.description))


def _readers(s: Situation) -> list[tuple[str, OfferedTool]]:
    """The offered tools that read files, searching ones first."""
    found = [(kind, t) for t in s.tools if (kind := reader(t)) is not None]
    return sorted(found, key=lambda pair: pair[0] != "search")


# ---------------------------------------------------------------------------------------------
# Reading the file.


def is_error_question(text: str) -> bool:
    """Whether a request asks about an error or a failure ('Why did the deploy fail?', '为什么报错').

    >>> is_error_question("Why did the deploy fail?"), is_error_question("部署为什么失败了"), is_error_question("Hi")
    (True, True, False)
    """
    return bool(ERROR_QUESTION.search(text))


def _term(s: Situation, tool: OfferedTool, cut: Cut) -> str | None:
    """What to search the file for: a quoted value or code the request names and no call used, else the error
    (for an error question), else None."""
    used = {str(v) for c in s.calls for v in c.arguments.values() if not isinstance(v, (dict, list))}
    for entity in s.request.of_kind("quoted", "code"):
        if str(entity.value) not in used:
            return str(entity.value)
    if not is_error_question(s.request.text):
        return None
    pattern = _pattern_param(tool)
    if _REGEX.search(tool.description) or (pattern is not None and (
            pattern.name.lower().startswith("regex") or _REGEX.search(pattern.description))):
        return ERROR_PATTERN
    return next((w for w in ERROR_WORDS if w in cut.visible), "ERROR")


def _reading_call(s: Situation, cut: Cut) -> tuple[str, dict] | None:
    """The call that looks in the spilled file for what the user asked, or None when no offered tool can."""
    readers = _readers(s)
    if not readers or cut.path is None:
        return None
    searching = [(k, t) for k, t in readers if k == "search"]
    kind, tool = next(((k, t) for k, t in searching if _term(s, t, cut) is not None), None) or (
        next(((k, t) for k, t in readers if k == "read"), None) or searching[0])
    path = _path_param(tool)
    arguments: dict[str, Any] = {path.name: cut.path} if path else {}
    if kind == "search":
        pattern = _pattern_param(tool)
        if pattern is not None:
            arguments[pattern.name] = _term(s, tool, cut) or next((w for w in ERROR_WORDS if w in cut.visible),
                                                                    "ERROR")
    for p in tool.params:
        if p.name in arguments or json_type(p.schema) != "integer":
            continue
        if _TAIL.match(p.name) or (p.required and _COUNT.match(p.name)):
            arguments[p.name] = TAIL_LINES
    return tool.name, arguments


def _reads(s: Situation, path: str) -> list[Call]:
    """The calls made this turn that read `path` with a file-reading tool."""
    kinds = {t.name for _, t in _readers(s)}
    return [c for c in s.calls if c.name in kinds and path in {str(v) for v in c.arguments.values()}]


def _spills(s: Situation) -> list[tuple[Call, Cut]]:
    """The spilled results of this turn, except those of the reading calls themselves."""
    kinds = {t.name for _, t in _readers(s)}
    out = []
    for call in s.calls:
        cut = cut_of(call.result)
        if cut is not None and not (call.name in kinds and _names_a_spill(call)):
            out.append((call, cut))
    return out


def _names_a_spill(call: Call) -> bool:
    """Whether a call's arguments name a spill file ('tool_result_…', the name spill.py gives its files)."""
    return any(isinstance(v, str) and "tool_result_" in v for v in call.arguments.values())


def reading_calls(s: Situation) -> list[tuple[str, dict]] | None:
    """The calls that read the files this turn's spilled results name; [] when there is nothing left to read
    (answer now); None when nothing was spilled (plan as usual)."""
    spills = _spills(s)
    if not spills:
        return None
    out = []
    for _, cut in spills:
        if cut.path is None or _reads(s, cut.path):
            continue
        call = _reading_call(s, cut)
        if call is not None:
            out.append(call)
    return out


# ---------------------------------------------------------------------------------------------
# Answering.


def lines_of(result: Any) -> list[str]:
    """The non-empty lines of a result: a text's lines, a list's items, a dict's list of matches.

    >>> lines_of("a\\n\\nb"), lines_of([{"line": 3, "text": "ERROR x"}]), lines_of({"matches": ["m"]})
    (['a', 'b'], ['3: ERROR x'], ['m'])
    """
    if isinstance(result, str):
        return [line.strip() for line in result.splitlines() if line.strip()]
    if isinstance(result, list):
        return [line for item in result[:1000] for line in lines_of(item if isinstance(item, str) else _item(item))]
    if isinstance(result, dict):
        inner = next((v for v in result.values() if isinstance(v, list)), None)
        return lines_of(inner) if inner is not None else lines_of(_item(result))
    return [] if result is None else [str(result)]


def _item(item: Any) -> str:
    """One match as a line: '12: ERROR …' for {"line": 12, "text": "ERROR …"}, else its JSON."""
    if isinstance(item, dict):
        text = next((item[k] for k in ("text", "line_text", "content", "match", "message") if
                     isinstance(item.get(k), str)), None)
        number = next((item[k] for k in ("line", "line_number", "lineno", "number") if
                       isinstance(item.get(k), int) and not isinstance(item.get(k), bool)), None)
        if text is not None:
            return f"{number}: {text}" if number is not None else text
    return json.dumps(item, ensure_ascii=False)


def key_lines(lines: list[str], limit: int = QUOTED_LINES) -> list[str]:
    """The last `limit` lines that speak of an error or a failure ([] when none does).

    >>> key_lines(["INFO ok", "ERROR disk full", "INFO ok", "FAILED: 2 tests"])
    ['ERROR disk full', 'FAILED: 2 tests']
    """
    return [line for line in lines if ERROR_LINE.search(line)][-limit:]


def _quoted(lines: list[str]) -> str:
    """Lines as a list an answer can show."""
    return "\n".join(f"- {_line(line)}" for line in lines)


def _from_shown(lines: list[str], error_question: bool, zh: bool) -> str:
    """What the part shown says: its error lines for an error question, else (or when there are none) its end."""
    errors = key_lines(lines) if error_question else []
    if errors:
        return ("从我看到的部分来看：\n" if zh else "In the part I saw:\n") + _quoted(errors)
    if not lines:
        return "我看到的部分是空的。" if zh else "The part I saw is empty."
    last = _line(lines[-1])
    if error_question:
        return (f"我看到的部分里没有错误，最后一行是：{last}" if zh
                else f"I see no error in the part I saw; it ends with: {last}")
    return f"我看到的部分最后一行是：{last}" if zh else f"The part I saw ends with: {last}"


def _read_answer(s: Situation, cut: Cut, reads: list[Call], zh: bool) -> str:
    """The answer from the calls that read the spilled file."""
    error_question = is_error_question(s.request.text)
    call = reads[-1]
    looked = next((str(v) for k, v in call.arguments.items() if isinstance(v, str) and v != cut.path), None)
    if zh:
        how = f"所以我在完整输出（{cut.path}）里搜索了“{looked}”" if looked else f"所以我读取了完整输出（{cut.path}）"
        opening = f"工具的输出太长，只给我看了开头和结尾，{how}。"
    else:
        how = f'so I searched the full output ({cut.path}) for "{looked}"' if looked else \
            f"so I read the full output ({cut.path})"
        opening = f"The tool's output was too long to show in full, {how}. "
    failure = error_of(call) if call.result is not None else ("没有收到结果" if zh else "no result came back")
    shown = lines_of(cut.visible)
    if failure is not None:
        said = f"但没有读成：{failure[:LINE]}。" if zh else f"That did not work: {failure[:LINE]}. "
        return opening + said + _from_shown(shown, error_question, zh)
    again = cut_of(call.result)                     # the reading tool's own result was spilled: what it showed
    found = [line for line in lines_of(again.visible if again else call.result)
             if line.lower() not in ("no match", "no matches", "none", "[]")]
    if not found:
        nothing = "什么也没找到。" if zh else "It found nothing. "
        return opening + nothing + _from_shown(shown, error_question, zh)
    wanted = (key_lines(found) if error_question and not looked else []) or found[-QUOTED_LINES:]
    return opening + ("找到的内容：\n" if zh else "What it says:\n") + _quoted(wanted)


def _warn_answer(s: Situation, cut: Cut, zh: bool) -> str:
    """The answer when the file cannot be read: the output was cut, where the whole of it is, what the rest said."""
    shown = _from_shown(lines_of(cut.visible), is_error_question(s.request.text), zh)
    if cut.path is None:
        reason = f"（{cut.reason}）" if zh and cut.reason else f" ({cut.reason})" if cut.reason else ""
        return (f"工具的输出太长被截断了，我只看到了开头和结尾，完整内容也没能保存{reason}。{shown}" if zh else
                f"The tool's output was too long and was cut: I only saw its start and its end, and the full text "
                f"could not be saved{reason}. {shown}")
    return (f"工具的输出太长被截断了，我只看到了开头和结尾。完整内容保存在 {cut.path}，你可以直接打开查看，"
            f"或者给我一个能读取文件的工具。{shown}" if zh else
            f"The tool's output was too long and was cut: I only saw its start and its end. The full output is in "
            f"{cut.path}; open it there, or give me a tool that can read files. {shown}")


def _long_text(call: Call) -> list[str] | None:
    """The lines of a long text result without a reminder (a log cut by its head, say); None for other results."""
    if not isinstance(call.result, str) or cut_of(call.result) is not None:
        return None
    if len(call.result) < LONG_TEXT and call.result.count("\n") < LONG_LINES:
        return None
    return lines_of(call.result)


def long_answer(s: Situation) -> tuple[str, list[Call]] | None:
    """The answer when this turn's results include a spilled one (from what was read, or a warning), or a long
    text asked about an error (from what is there), with the calls it speaks for; None otherwise."""
    zh = s.zh
    spills = _spills(s)
    if spills:
        parts, used = [], []
        for call, cut in spills:
            reads = _reads(s, cut.path) if cut.path else []
            parts.append(_read_answer(s, cut, reads, zh) if reads else _warn_answer(s, cut, zh))
            used += [call, *reads]
        return "\n\n".join(parts), used
    if not is_error_question(s.request.text):
        return None
    texts = [(c, lines) for c in s.calls if (lines := _long_text(c)) is not None]
    if not texts:
        return None
    lines = [line for _, text in texts for line in text]
    errors = key_lines(lines)
    if errors:
        text = ("输出里的错误信息：\n" if zh else "The output shows:\n") + _quoted(errors)
    else:
        last = _line(lines[-1]) if lines else ""
        text = (f"输出里没有看到错误，最后一行是：{last}" if zh
                else f"I found no error in the output. It ends with: {last}")
    return text, [c for c, _ in texts]


def _line(line: str) -> str:
    """A line as quoted: at most LINE characters."""
    return line if len(line) <= LINE else line[:LINE] + "…"
