"""Checks for lesson 12 (approval before side effects).

Exercise 1 runs the learner's gate check over a bank assistant's tools. `bound_approval` (exercise 2
before the lesson was split into 12, 12b and 12c) and `send_once` (now lesson 12c's, re-exported here)
stay for notebooks made before the split. Nothing is sent anywhere.
"""
from __future__ import annotations

import copy
from types import SimpleNamespace
from typing import Any, Callable

from mini_framework import ToolCall, tool

from .checking import CheckResult, Hints, run_check, solved, where_in_your_code
from .elsewhere import in_another_process
from .lesson12c import send_once  # noqa: F401  (lesson 12c's exercise, for notebooks made before the split)

# ----------------------------------------------------------------------------- exercise 1

OWN_ACCOUNTS = {"6222020012345678", "6222020087654321"}  # the user's own accounts
ORDER_TOTALS = {"202405220012": 187.0, "202405230031": 299.0}


@tool(requires_approval=lambda args: args.amount > 1000 or args.to_account not in OWN_ACCOUNTS)
def transfer_money(to_account: str, amount: float) -> str:
    """把钱转到一个银行账户

    Args:
        to_account: 收款账号，16 位数字
        amount: 金额（元）
    """
    return f"已向 {to_account} 转账 {amount} 元"


@tool(requires_approval=lambda args: args.amount > ORDER_TOTALS[args.order_id] / 2)
def refund(order_id: str, amount: float) -> str:
    """给一个订单退款

    Args:
        order_id: 订单号
        amount: 退款金额（元）
    """
    return f"已退款 {amount} 元"


@tool(requires_approval=lambda args: args.total / args.people > 500)
def split_bill(total: float, people: int) -> str:
    """把一笔账平分给几个人，每人转账

    Args:
        total: 总金额（元）
        people: 人数
    """
    return f"每人 {total / people:.2f} 元"


@tool(requires_approval=True)
def send_email(to: str, subject: str, body: str) -> str:
    """Send an e-mail (really sends)."""
    return f"sent to {to}"


@tool
def get_balance(account: str) -> str:
    """查询一个账户的余额

    Args:
        account: 账号
    """
    return "余额 5,230.00 元"


BANK_TOOLS = {t.name: t for t in (transfer_money, refund, split_bill, send_email, get_balance)}

# (what the call is, the call, whether it must wait, why)
GATE_CASES: list[tuple[str, ToolCall, bool, str]] = [
    ("an e-mail", ToolCall("call_1", "send_email",
                           '{"to": "li.si@example.com", "subject": "订单", "body": "明天发货"}'), True,
     "send_email has requires_approval=True: every call of it waits for a person"),
    ("a balance query", ToolCall("call_2", "get_balance", '{"account": "6222020012345678"}'), False,
     "get_balance has no requires_approval: it runs at once"),
    ("50 yuan to the user's own account", ToolCall("call_3", "transfer_money",
                                                   '{"to_account": "6222020087654321", "amount": 50}'), False,
     "transfer_money's requires_approval is a predicate, and for this call it says no: ask it, with the validated "
     "arguments (a function is always truthy, so `if tool.requires_approval:` waits for every call)"),
    ("5,000 yuan to the user's own account", ToolCall("call_4", "transfer_money",
                                                      '{"to_account": "6222020012345678", "amount": 5000}'), True,
     "the predicate says yes (over 1,000): it waits"),
    ("80 yuan to someone else's account", ToolCall("call_5", "transfer_money",
                                                   '{"to_account": "9558801234567890", "amount": 80}'), True,
     "the predicate says yes (not the user's own account): it waits"),
    ("\"50\" as a string, to the user's own account", ToolCall("call_6", "transfer_money",
                                                              '{"to_account": "6222020012345678", "amount": "50"}'),
     False, "what runs is the validated call, amount 50.0: judge that, not the raw JSON (the predicate reads "
            "args.amount of the validated arguments: prepare(tool, call.arguments))"),
    ("\"一千二百\" (1,200) to the user's own account",
     ToolCall("call_7", "transfer_money", '{"to_account": "6222020012345678", "amount": "一千二百"}'), True,
     "the executor reads \"一千二百\" as 1200.0 (lesson 04's coercion) and runs that: over 1,000, it waits. Read "
     "the arguments as the executor does: prepare(tool, call.arguments)"),
    ("5,000 yuan in JSON with a trailing comma", ToolCall("call_8", "transfer_money",
                                                         '{"to_account": "9558801234567890", "amount": 5000,}'), True,
     "json.loads refuses this text, but the executor repairs it and the transfer runs: a gate that reads the "
     "arguments more strictly than the executor lets it through unapproved. Read them the way the executor does: "
     "prepare(tool, call.arguments)"),
    ("5,000 yuan in a code fence", ToolCall("call_9", "transfer_money",
                                           '```json\n{"to_account": "9558801234567890", "amount": 5000}\n```'), True,
     "the executor takes the JSON out of the fence and runs it; the gate must judge what runs: prepare(tool, ...)"),
    ("a refund for an order the predicate does not know", ToolCall("call_10", "refund",
                                                                   '{"order_id": "209901010000", "amount": 10}'), True,
     "refund's predicate raises KeyError for this order: a predicate that fails must mean wait (fail closed), "
     "never run"),
    ("a bill split between 0 people", ToolCall("call_15", "split_bill", '{"total": 300, "people": 0}'), True,
     "split_bill's predicate divides by the number of people and raises ZeroDivisionError: any failure of a "
     "predicate, not only a KeyError, must mean wait (fail closed)"),
    ("a small refund", ToolCall("call_11", "refund", '{"order_id": "202405220012", "amount": 20}'), False,
     "the refund predicate says no (20 is under half of 187)"),
    ("an unknown tool", ToolCall("call_12", "transfer_monye", '{"to_account": "9558801234567890", "amount": 5000}'),
     False, "there is no tool transfer_monye: it cannot run (the executor answers it with the tools there are), so "
            "there is nothing for a person to approve"),
    ("a transfer of \"lots\"", ToolCall("call_13", "transfer_money",
                                        '{"to_account": "9558801234567890", "amount": "lots"}'), False,
     "these arguments do not validate, so the call cannot run: the executor tells the model what to fix, and the "
     "fixed call is judged again. An approval is bound to the validated arguments, and these have none"),
    ("an e-mail without a body", ToolCall("call_14", "send_email", '{"to": "li.si@example.com", "subject": "订单"}'),
     False, "a required argument is missing, so the call cannot run; the corrected call will wait"),
]


SHORTCUT = ("you called tool.needs_approval: that is the framework's own version of this exercise. Decide from "
            "tool.requires_approval yourself (True, False, or a function of the validated arguments)")


MISCALLED = object()  # what `asked` notes when a predicate was called with other than one argument


def _bank_tools(used: list[str], asked: list[Any] | None = None) -> dict[str, Any]:
    """The tools, each a copy whose needs_approval notes that it was used, and refuses; a predicate notes in
    `asked` what it was given."""
    def no_shortcut(*args: Any, **kwargs: Any) -> bool:
        used.append("needs_approval")
        raise AssertionError(SHORTCUT)

    def noting(rule: Callable[[Any], Any]) -> Callable[..., Any]:
        def predicate(*args: Any, **kwargs: Any) -> Any:
            if len(args) != 1 or kwargs:  # rule(**fields), rule(a, b): not how the executor calls it
                if asked is not None:
                    asked.append(MISCALLED)
                raise TypeError("requires_approval takes one argument, the validated arguments")
            if asked is not None:
                asked.append(args[0])
            return rule(args[0])
        return predicate

    tools = {}
    for name, original in BANK_TOOLS.items():
        twin = copy.copy(original)
        twin.needs_approval = no_shortcut  # type: ignore[method-assign]
        rule = original.options.get("requires_approval")
        if callable(rule):
            twin.options = {**original.options, "requires_approval": noting(rule)}
        tools[name] = twin
    return tools


def must_wait(must_wait: Callable[[ToolCall, dict[str, Any]], Any]) -> CheckResult:
    """Exercise 1: which calls of a reply wait for a person."""
    def test() -> str:
        shortcut: list[str] = []
        asked: list[Any] = []
        tools = _bank_tools(shortcut, asked)
        for number, (what, call, expected, why) in enumerate(GATE_CASES):
            asked.clear()
            try:
                answer = must_wait(call, tools)
            except Exception as error:
                if shortcut:
                    raise AssertionError(SHORTCUT) from None
                raise AssertionError(f"for {what} ({call.name}({call.arguments})) your function raised "
                                     f"{type(error).__name__}: {error}{where_in_your_code(error)}. It must answer "
                                     f"{expected}: {why}") from None
            if shortcut:
                raise AssertionError(SHORTCUT)
            if number == 0:
                solved(answer)
            if not isinstance(answer, bool):
                raise AssertionError(f"for {what} you returned {answer!r:.60}: return True (wait) or False (run)")
            if answer != expected:
                said = "wait" if answer else "run at once"
                if any(args is MISCALLED for args in asked):
                    why = ("your function called the predicate with keyword or several arguments (rule(**...)), so it "
                           "failed and the call waited. It takes one argument, the validated arguments, as the "
                           "executor calls it: rule(args)")
                elif any(isinstance(args, dict) for args in asked):
                    why = ("your function gave the predicate a dict, and it reads attributes (args.amount), so it "
                           "failed and the call waited. Give it the validated arguments, as the executor runs them: "
                           "prepare(tool, call.arguments)")
                raise AssertionError(f"for {what}, {call.name}({call.arguments}), you said {said}: {why}")
        return f"{len(GATE_CASES)} calls judged: gated, predicates asked with what would run, a failing predicate " \
               "waits, and calls that cannot run don't bother a person"
    return run_check(1, test, "Three questions in order: is there such a tool, do its arguments validate, and what "
                              "does its requires_approval say about them?", recipe=hint.recipes[1])


# ----------------------------------------------------------------------------- exercise 2

MAIL = {"to": "li.si@example.com", "subject": "订单已发货", "body": "您好，您的订单已发货。",
        "meta": {"lang": "zh", "priority": "normal"}}
MAIL_REORDERED = {"meta": {"priority": "normal", "lang": "zh"}, "body": "您好，您的订单已发货。",
                  "subject": "订单已发货", "to": "li.si@example.com"}


def _changed(key: str, value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(MAIL)
    if key == "lang":
        changed["meta"]["lang"] = value
    else:
        changed[key] = value
    return changed


def _key(approval_key: Callable[..., Any], name: str, arguments: dict[str, Any], call_id: str) -> str:
    key = solved(approval_key(name, copy.deepcopy(arguments), call_id))
    if not isinstance(key, str) or not key:
        raise AssertionError(f"approval_key should return a non-empty string, not {type(key).__name__} {key!r:.60}")
    return key


def _call(name: str, arguments: dict[str, Any], call_id: str) -> SimpleNamespace:
    return SimpleNamespace(id=call_id, name=name, arguments=copy.deepcopy(arguments))


def _approval(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"name": name, "arguments": copy.deepcopy(arguments), "call_id": call_id}


def bound_approval(approval_key: Callable[..., Any], may_run: Callable[..., Any]) -> CheckResult:
    """Exercise 2: an approval covers one tool, one set of arguments, one call id, once."""
    def test() -> str:
        key = _key(approval_key, "send_email", MAIL, "call_1")
        assert key == _key(approval_key, "send_email", MAIL, "call_1"), (
            "approval_key gave two different keys for the same call: it must depend only on the name, the "
            "arguments and the call id")
        there = in_another_process(approval_key, "send_email", copy.deepcopy(MAIL), "call_1")
        assert there is None or there == repr(key), (
            "in another Python process the same call got another key. A paused run is saved and resumed after a "
            "restart, so the key must be the same in every process, and Python's hash() of a string is salted anew "
            "in each one (PYTHONHASHSEED): use hashlib (hashlib.sha256(text.encode()).hexdigest()) on the "
            "canonical text, never hash()")
        assert key == _key(approval_key, "send_email", MAIL_REORDERED, "call_1"), (
            "the same arguments in another key order got another key. A model (or a saved and reloaded run) may "
            "list them in any order, nested objects too: turn them into canonical text first, "
            "json.dumps(..., sort_keys=True)")
        for field, value in [("to", "audit@evil.example"), ("subject", "订单已取消"),
                             ("body", "您好，您的订单已发货。附赠八折券。"), ("lang", "en")]:
            assert key != _key(approval_key, "send_email", _changed(field, value), "call_1"), (
                f"changing {field} to {value!r} kept the same key: every argument, nested ones included, must be in it")
        assert key != _key(approval_key, "forward_order", MAIL, "call_1"), (
            "another tool with the same arguments got the same key: put the tool's name in it, or an approval to "
            "send an e-mail also lets forward_order run")
        assert key != _key(approval_key, "send_email", MAIL, "call_2"), (
            "another call id got the same key: put the call id in it, or a later call with the same arguments (the "
            "model asking again next turn) runs on an old approval")
        approved = _approval("send_email", MAIL, "call_1")
        first = solved(may_run(_call("send_email", MAIL, "call_1"), approved, set()))
        assert first is True, f"may_run said {first!r} for exactly the call the person approved: it may run (True)"
        used: set[str] = set()
        checks = [
            ("the same e-mail with another body", _call("send_email", _changed("body", "附赠八折券。"), "call_1"),
             "the body changed after the person approved it: compare the whole call, not only the recipient"),
            ("the same e-mail to another address", _call("send_email", _changed("to", "audit@evil.example"),
                                                         "call_1"), "the recipient changed"),
            ("the same arguments under another call id", _call("send_email", MAIL, "call_7"),
             "the call id changed: this is another call (a retry, or the next turn), and it needs its own approval"),
            ("the same arguments for another tool", _call("forward_order", MAIL, "call_1"), "the tool changed"),
        ]
        for what, call, why in checks:
            before = set(used)
            answer = may_run(call, approved, used)
            if answer is None:
                raise AssertionError(f"may_run returned None for {what}: return False when a call may not run "
                                     f"({why})")
            assert answer is False, f"may_run said {answer!r} for {what}: say False, {why}"
            assert used == before, (
                f"may_run said False for {what}, but changed `used` (it now holds {len(used)} key(s), before "
                f"{len(before)}): a call that does not run must leave `used` as it was. Compare first, and add the "
                "key only when you return True; otherwise a person who approves that very call later finds its key "
                "already used")
        answer = may_run(_call("send_email", MAIL_REORDERED, "call_1"), approved, used)
        assert answer is True, (
            f"may_run said {answer!r} for the approved call (its arguments in another order) after the refused calls "
            "above: a call that does not match must not use up the approval")
        assert used, "may_run let the call run but did not add its key to `used`: the approval could run it again"
        assert key in used, (
            f"may_run let the call run, but `used` holds {sorted(map(str, used))!r:.80}, not the call's key "
            "(approval_key(name, arguments, call_id)). Add the key itself: it stands for what the person approved, "
            "the tool, these arguments and this call id, together; a call id alone says nothing about the arguments")
        again = may_run(_call("send_email", MAIL, "call_1"), approved, used)
        assert again is False, (
            f"may_run said {again!r} for the same call a second time: an approval runs one call once. Add its key "
            "to `used` when you say True, and say False for a key already there")
        return ("keys independent of key order, changed by any argument, the tool or the call id; each approval "
                "used once")
    return run_check(2, test, "What exactly did the person see when they said yes? The key is made of all of it, "
                              "and a key works once.", recipe=hint.recipes[2])


# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: ("Find the tool by the call's name; no tool: nothing can run, so False. Get the arguments the executor "
        "would run with prepare() (it repairs and coerces); if they don't validate, False. If requires_approval is "
        "True or False, that is the answer. Otherwise it is a function: call it with those validated arguments, "
        "and if it raises anything at all, the safe answer is True.\n"
        "中文：按名字找工具，找不到就返回 False；用 prepare() 得到执行器真正会用的参数，校验不过就返回 False；"
        "requires_approval 是 True 或 False 就直接返回它；是函数就用校验后的参数调用，"
        "它抛出任何异常都返回 True（安全的答案）。"),
    2: ("(the exercise of lesson 12 before it was split) approval_key: the sha256 of the JSON text of [name, "
        "arguments, call_id] written with sorted keys, so the same call gives the same key in every process. "
        "may_run: compare the call's key with the approval's; say True only when they match and the key is not in "
        "`used` yet, and add it to `used` then."),
})
