"""Checks for lesson 13 (the building blocks: files, LLM functions, a chat).

Exercise 1 asks the learner's path check about paths a model might send a file tool; exercise 2 edits a
file behind the learner's stale-write check; exercise 3 hands the learner's "may the user speak?" check
conversations with calls still open. Everything happens in a temporary folder that is removed afterwards.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

from .checking import CheckResult, Hints, run_check, solved, where_in_your_code

# ----------------------------------------------------------------------------- exercise 1


def _workspace() -> tuple[Path, Path]:
    """A scratch folder holding `shop/` (the workspace, with a policy, a doc, a hidden file, links out) and,
    beside it, `secret.txt` and `shop-private/` (a folder whose name starts with the workspace's)."""
    top = Path(tempfile.mkdtemp(prefix="lesson13-")).resolve()
    shop = top / "shop"
    (shop / "docs" / ".git").mkdir(parents=True)
    (shop / "policy.md").write_text("退货政策\n", encoding="utf-8")
    (shop / "docs" / "faq.md").write_text("常见问题\n", encoding="utf-8")
    (shop / ".env").write_text("LLM_API_KEY=sk-not-a-real-key\n", encoding="utf-8")
    (shop / "docs" / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    (top / "secret.txt").write_text("salaries\n", encoding="utf-8")
    (top / "shop-private").mkdir()
    (top / "shop-private" / "keys.txt").write_text("keys\n", encoding="utf-8")
    try:
        (shop / "notes.txt").symlink_to(top / "secret.txt")
        (shop / "archive").symlink_to(top / "shop-private", target_is_directory=True)
    except OSError:  # no symlinks here (Windows without the privilege): those cases are left out
        pass
    return top, shop


# (what the path is, the path, allowed?, why)
PATH_CASES: list[tuple[str, str, bool, str]] = [
    ("the policy file", "policy.md", True, "a plain file inside the workspace"),
    ("a file in a folder", "docs/faq.md", True, "a plain file inside the workspace"),
    ("a file not written yet", "drafts/reply.md", True,
     "echo_into creates files, so a path that does not exist yet is fine when it would be inside the workspace "
     "(resolve() without strict=True, and no exists() test)"),
    ("a climb out", "../secret.txt", False, "'..' leaves the workspace"),
    ("a climb out from a folder", "docs/../../secret.txt", False, "'..' leaves the workspace, even after a folder"),
    ("an absolute path", "/etc/passwd", False,
     "an absolute path is outside (and workspace / '/etc/passwd' is '/etc/passwd': pathlib drops the workspace)"),
    ("a hidden file", ".env", False, "hidden files (a name starting with '.') are refused: .env holds keys"),
    ("a file in a hidden folder", "docs/.git/config", False,
     "every part of the path counts, not only the file name: .git is a hidden folder"),
    ("a symlink to a file outside", "notes.txt", False,
     "notes.txt is a symlink to ../secret.txt: resolve the path (Path.resolve()) and check where it really is"),
    ("a symlink to a sibling folder", "archive/keys.txt", False,
     "archive links to shop-private, beside the workspace: its resolved path starts with the workspace's text "
     "('/…/shop' is a prefix of '/…/shop-private'), so compare paths, not strings: resolved.is_relative_to(root)"),
]


def inside(inside: Callable[[Path, str], Any]) -> CheckResult:
    """Exercise 1: the path a file tool may use, or None."""
    def test() -> str:
        top, shop = _workspace()
        try:
            cases = [c for c in PATH_CASES if c[1].split("/")[0] not in ("notes.txt", "archive")
                     or (shop / c[1].split("/")[0]).is_symlink()]
            for number, (what, relative, allowed, why) in enumerate(cases):
                try:
                    answer = inside(shop, relative)
                except FileNotFoundError:
                    raise AssertionError(f"for {what} ({relative!r}) your function raised FileNotFoundError: "
                                         f"{why}") from None
                except Exception as error:
                    raise AssertionError(f"for {what} ({relative!r}) your function raised {type(error).__name__}: "
                                         f"{error}{where_in_your_code(error)}. Return "
                                         f"{'the path' if allowed else 'None'}: {why}") from None
                if number == 0:
                    solved(answer)
                if allowed:
                    if answer is None:
                        raise AssertionError(f"you refused {what} ({relative!r}): {why}")
                    if not isinstance(answer, Path):
                        raise AssertionError(f"for {what} you returned {type(answer).__name__} {answer!r:.60}: "
                                             "return the resolved Path (or None)")
                    if answer != (shop / relative).resolve():
                        raise AssertionError(f"for {what} you returned {answer}, not where {relative!r} really is, "
                                             f"{(shop / relative).resolve()}: return the resolved path, the one "
                                             "you checked")
                elif answer is not None:
                    raise AssertionError(f"you allowed {what} ({relative!r}): {why}")
            return f"{len(cases)} paths judged: climbs, absolute paths, hidden parts and symlinks out refused"
        finally:
            shutil.rmtree(top, ignore_errors=True)
    return run_check(1, test, "Refuse what you can see in the text first (absolute, hidden parts), then look where "
                              "the path really leads.", recipe=hint.recipes[1])


# ----------------------------------------------------------------------------- exercise 2

def may_edit(fingerprint: Callable[[Path], Any], may_edit: Callable[[Path, dict[str, Any]], Any]) -> CheckResult:
    """Exercise 2: an edit only of a file read before, and unchanged since."""
    def test() -> str:
        top = Path(tempfile.mkdtemp(prefix="lesson13-")).resolve()
        try:
            policy = top / "policy.md"
            policy.write_text("退货：签收后七天内。\n运费：满 99 元包邮。\n", encoding="utf-8")
            first = solved(fingerprint(policy))
            if not isinstance(first, str) or not first:
                raise AssertionError(f"fingerprint returned {type(first).__name__} {first!r:.60}: return a "
                                     "non-empty string that stands for the file's bytes")
            if fingerprint(policy) != first:
                raise AssertionError("fingerprint gave two different answers for the same, unchanged file")
            seen = {str(policy): first}
            answer = solved(may_edit(policy, dict(seen)))
            if answer is not True:
                raise AssertionError(f"may_edit said {answer!r} for a file read a moment ago and unchanged: True")
            never = top / "faq.md"
            never.write_text("常见问题\n", encoding="utf-8")
            if may_edit(never, dict(seen)) is not False:
                raise AssertionError("may_edit allowed an edit of faq.md, which nobody read: an edit needs a prior "
                                     "read (its path is not in `seen`), or the model writes over what it never saw")
            policy.write_text("退货：签收后十五天内。\n运费：满 99 元包邮。\n", encoding="utf-8")
            if may_edit(policy, dict(seen)) is not False:
                raise AssertionError("someone changed policy.md after it was read (七天 became 十五天, the "
                                     "file got longer), and may_edit still allowed the edit")
            policy.write_text("退货：签收后七天内。\n运费：满 99 元包邮。\n", encoding="utf-8")
            seen = {str(policy): fingerprint(policy)}
            stat = policy.stat()
            policy.write_text("退货：签收后八天内。\n运费：满 99 元包邮。\n", encoding="utf-8")  # the same size
            os.utime(policy, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # and the old modification time
            if may_edit(policy, dict(seen)) is not False:
                raise AssertionError("policy.md changed (七天 became 八天) with the same size and the same "
                                     "modification time, and may_edit allowed the edit: sizes and times say "
                                     "nothing about the bytes (two writes in one second keep the time, and "
                                     "os.utime sets any time). Fingerprint the content: hashlib.sha256 of the bytes")
            long = "退货规则\n" + "某条规则。\n" * 400 + "七天。\n"
            policy.write_text(long, encoding="utf-8")
            seen = {str(policy): fingerprint(policy)}
            policy.write_text(long.replace("七天", "八天"), encoding="utf-8")
            if may_edit(policy, dict(seen)) is not False:
                raise AssertionError("a change at the end of a 6 KB file went unnoticed: fingerprint every byte, "
                                     "not the first part")
            policy.unlink()
            try:
                gone = may_edit(policy, dict(seen))
            except OSError as error:
                raise AssertionError(f"policy.md was deleted after it was read, and may_edit raised "
                                     f"{type(error).__name__}{where_in_your_code(error)}: say False (the file is "
                                     "not what was read)") from None
            if gone is not False:
                raise AssertionError(f"may_edit said {gone!r} for a file deleted since it was read: False")
            return "edits only of files read before and unchanged since, byte for byte"
        finally:
            shutil.rmtree(top, ignore_errors=True)
    return run_check(2, test, "What proves the file is still what the model read? Not its size, not its time.",
                     recipe=hint.recipes[2])


# ----------------------------------------------------------------------------- exercise 3

def _assistant(*ids: str) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": [
        {"id": i, "type": "function", "function": {"name": "send_email", "arguments": "{}"}} for i in ids]}


def _answer(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "sent"}


USER = {"role": "user", "content": "给张三发邮件"}
# (what the conversation is, its messages, the ids still open, why)
OPEN_CASES: list[tuple[str, list[dict[str, Any]], list[str], str]] = [
    ("a conversation with no calls", [USER, {"role": "assistant", "content": "好的"}], [], "nothing is open"),
    ("one call, answered", [USER, _assistant("call_1"), _answer("call_1"), {"role": "assistant", "content": "已发"}],
     [], "call_1 has its tool message"),
    ("one call, waiting", [USER, _assistant("call_1")], ["call_1"], "call_1 has no tool message yet"),
    ("two calls, one answered", [USER, _assistant("call_1", "call_2"), _answer("call_2")], ["call_1"],
     "the answer is to call_2; call_1 is still open: match answers by tool_call_id, not by count or position"),
    ("an earlier turn's call answered, this turn's open",
     [USER, _assistant("call_1"), _answer("call_1"), {"role": "assistant", "content": "已发"}, USER,
      _assistant("call_2")], ["call_2"], "call_2, of the latest turn, has no answer"),
    ("an earlier turn's call left open", [USER, _assistant("call_1"), USER, {"role": "assistant", "content": "好"}],
     ["call_1"], "call_1 was never answered, even if later messages came: look at every assistant message, "
                 "not only the last one"),
    ("a call answered twice, another open", [USER, _assistant("call_1", "call_2"), _answer("call_1"),
                                             _answer("call_1")], ["call_2"],
     "two answers to call_1 do not answer call_2: count ids, not tool messages"),
]


def open_calls(open_calls: Callable[[list[dict[str, Any]]], Any]) -> CheckResult:
    """Exercise 3: the call ids a conversation has not answered yet."""
    def test() -> str:
        for number, (what, messages, expected, why) in enumerate(OPEN_CASES):
            given = [dict(m) for m in messages]
            try:
                answer = open_calls(given)
            except Exception as error:
                raise AssertionError(f"for {what} your function raised {type(error).__name__}: {error}"
                                     f"{where_in_your_code(error)}. Expected {expected}: {why}") from None
            if number == 0:
                solved(answer)
            if given != messages:
                raise AssertionError(f"for {what} your function changed the conversation: only read it")
            if not isinstance(answer, list):
                raise AssertionError(f"for {what} you returned {type(answer).__name__} {answer!r:.60}: return a list "
                                     "of call ids (strings), in the order the calls were made")
            if answer != expected:
                raise AssertionError(f"for {what} you returned {answer!r:.80}, not {expected!r}: {why}")
        return f"{len(OPEN_CASES)} conversations read: every call id matched to its answer, in every turn"
    return run_check(3, test, "Collect the ids the assistant messages asked for, then take away the ids that tool "
                              "messages answered.", recipe=hint.recipes[3])


# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: ("Refuse an absolute path (Path(relative).is_absolute()) and any part of it that starts with '.' (that "
        "covers '..' and hidden files and folders). Then resolve workspace / relative (it follows symlinks), "
        "and return it only if it is_relative_to(workspace.resolve()); else None.\n"
        "中文：先拒绝绝对路径和任何以“.”开头的部分（包括 ..、隐藏文件和文件夹）；再对 workspace / relative 调用 "
        "resolve()（会跟随符号链接），用 is_relative_to 判断它还在工作区里，是就返回它，否则返回 None。"),
    2: ("fingerprint: hashlib.sha256(path.read_bytes()).hexdigest(). may_edit: the path (as str) must be in `seen`; "
        "if the file is gone (not path.exists()), False; else compare fingerprint(path) with seen[str(path)].\n"
        "中文：fingerprint 用 hashlib.sha256 计算文件全部字节；may_edit 先看路径是否读过（在 seen 里），"
        "文件不存在就返回 False，否则比较现在的指纹和读取时记下的指纹。"),
    3: ("Walk the messages once: for each assistant message add the ids of its tool_calls to a list; for each "
        "tool message put its tool_call_id in a set of answered ids. Return the asked ids not in that set, in "
        "order.\n"
        "中文：遍历一次消息：assistant 消息里每个 tool_calls 的 id 记进列表，tool 消息的 tool_call_id 记进“已回答”"
        "集合；按顺序返回没被回答的 id。"),
})
