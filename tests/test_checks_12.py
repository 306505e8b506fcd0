"""Exercise checkers of lesson 12: each solution passes, each stub waits, each realistic wrong answer gets ❌."""
from __future__ import annotations

import hashlib
import json

from checker_cases import boom, checker_tests, stub

from course import lesson12
from mini_framework import ArgumentsError, prepare

# -- exercise 1: must_wait -----------------------------------------------------------------------


def must_wait(call, tools, *, unknown=False, strict_json=False, invalid=False, truthy=False, only_true=False,
              raw=False, fail_open=False, shortcut=False, by_name=False, caught=Exception, as_dict=False,
              keywords=False):
    """The solution, and (through the options) the ways it goes wrong."""
    if by_name:
        return call.name in ("send_email", "transfer_money", "refund")
    tool = tools.get(call.name)
    if tool is None:
        if unknown == "raise":
            raise KeyError(call.name)
        return bool(unknown)
    if as_dict:
        args = json.loads(call.arguments)
    elif raw:
        from types import SimpleNamespace
        args = SimpleNamespace(**json.loads(call.arguments))
    else:
        try:
            args = tool.validate(json.loads(call.arguments)) if strict_json else prepare(tool, call.arguments)
        except (ArgumentsError, ValueError):
            return invalid
    if shortcut:
        return tool.needs_approval(args)
    rule = tool.requires_approval
    if truthy:
        return bool(rule)
    if rule is True or rule is False:
        return rule
    if only_true:
        return False
    try:
        return bool(rule(**args.model_dump()) if keywords else rule(args))
    except caught:
        return not fail_open


def wrong(function, **options):
    def wrapped(*args):
        return function(*args, **options)
    return wrapped


def predicate_unguarded(call, tools):
    """No try around the predicate: its KeyError escapes."""
    tool = tools.get(call.name)
    if tool is None:
        return False
    try:
        args = prepare(tool, call.arguments)
    except ArgumentsError:
        return False
    rule = tool.requires_approval
    return rule if isinstance(rule, bool) else bool(rule(args))


# -- exercise 2: approval_key and may_run ---------------------------------------------------------


def approval_key(name, arguments, call_id, *, how="json", with_id=True, with_name=True):
    parts = [name if with_name else "", arguments, call_id if with_id else ""]
    if how == "str":
        text = str(parts)
    elif how == "unsorted":
        text = json.dumps(parts, ensure_ascii=False)
    elif how == "top_sorted":
        text = str([parts[0], sorted(arguments.items()), parts[2]])
    else:
        text = json.dumps(parts, sort_keys=True, ensure_ascii=False)
    if how == "hash":  # Python's hash(): salted anew in every process
        return str(hash(text))
    return hashlib.sha256(text.encode()).hexdigest()


def make_may_run(key=approval_key, *, mark=True, recipient_only=False, ignore_id=False, burn_first=False,
                 add_first=False, store_id=False):
    def may_run(call, approval, used):
        wanted = key(approval["name"], approval["arguments"], approval["call_id"])
        if add_first:  # the call's key goes into `used` before it is compared
            got = key(call.name, call.arguments, call.id)
            if got in used:
                return False
            used.add(got)
            return got == wanted
        if store_id:  # `used` holds call ids, not keys
            got = key(call.name, call.arguments, call.id)
            if got != wanted or call.id in used:
                return False
            used.add(call.id)
            return True
        if burn_first:
            if wanted in used:
                return False
            used.add(wanted)
            return wanted == key(call.name, call.arguments, call.id)
        if recipient_only:
            same = call.name == approval["name"] and call.arguments["to"] == approval["arguments"]["to"] \
                and call.id == approval["call_id"]
            got = wanted if same else None
        elif ignore_id:
            got = key(call.name, call.arguments, approval["call_id"])
        else:
            got = key(call.name, call.arguments, call.id)
        if got != wanted or got in used:
            return False
        if mark:
            used.add(got)
        return True
    return may_run


def keyed(**options):
    def approval_key_(name, arguments, call_id):
        return approval_key(name, arguments, call_id, **options)
    return approval_key_


def may_run_none_when_refused(call, approval, used):
    """Falls off the end (None) instead of saying False."""
    if make_may_run()(call, approval, used):
        return True


CASES = {
    "must_wait": (lesson12.must_wait, [must_wait], [stub], [
        [wrong(must_wait, unknown=True)],  # an unknown tool waits for a person
        [wrong(must_wait, unknown="raise")],  # an unknown tool: KeyError
        [wrong(must_wait, strict_json=True)],  # json.loads: repaired JSON slips through as "can't run"
        [wrong(must_wait, invalid=True)],  # invalid arguments wait for a person
        [wrong(must_wait, truthy=True)],  # `if tool.requires_approval:` (a predicate is always truthy)
        [wrong(must_wait, caught=KeyError)],  # `except KeyError` only: a ZeroDivisionError in a predicate escapes
        [wrong(must_wait, as_dict=True)],  # the predicate gets a dict: told so, not "a function is always truthy"
        [wrong(must_wait, keywords=True)],  # rule(**args.model_dump()): a TypeError, caught, so every call waits
        [wrong(must_wait, only_true=True)],  # only requires_approval=True waits; predicates never asked
        [wrong(must_wait, raw=True)],  # the predicate gets the raw JSON values ("50" is not 50)
        [wrong(must_wait, fail_open=True)],  # a predicate that raises means run
        [predicate_unguarded],  # a predicate that raises crashes the gate
        [wrong(must_wait, shortcut=True)],  # tool.needs_approval: the framework's answer
        [wrong(must_wait, by_name=True)],  # a list of dangerous tool names
        [boom],
    ]),
    "bound_approval": (lesson12.bound_approval, [approval_key, make_may_run()], [stub, stub], [
        [keyed(how="str"), make_may_run(keyed(how="str"))],  # sha256(str(...)): key order matters
        [keyed(how="unsorted"), make_may_run(keyed(how="unsorted"))],  # json.dumps without sort_keys
        [keyed(how="top_sorted"), make_may_run(keyed(how="top_sorted"))],  # sorted top level only
        [keyed(how="hash"), make_may_run(keyed(how="hash"))],  # str(hash(json.dumps(...))): not the same next process
        [keyed(with_id=False), make_may_run(keyed(with_id=False))],  # no call id: replayed next turn
        [keyed(with_name=False), make_may_run(keyed(with_name=False))],  # no tool name
        [approval_key, make_may_run(mark=False)],  # the approval is never used up
        [approval_key, make_may_run(recipient_only=True)],  # only the recipient compared
        [approval_key, make_may_run(ignore_id=True)],  # the call's id not compared
        [approval_key, make_may_run(burn_first=True)],  # a mismatched call uses up the approval
        [approval_key, make_may_run(add_first=True)],  # the key added to `used` before comparing
        [approval_key, make_may_run(store_id=True)],  # call.id stored in `used` instead of the key
        [approval_key, may_run_none_when_refused],  # None instead of False
        [approval_key, boom],
    ]),
}

test_checker_passes_the_solution, test_checker_says_not_solved_to_the_stub, \
    test_checker_catches_a_wrong_answer_without_raising = checker_tests(CASES)


def test_the_gate_cases_agree_with_the_framework():
    """Every expected answer of exercise 1 is what the Agent's own gate decides."""
    for what, call, expected, _ in lesson12.GATE_CASES:
        tool = lesson12.BANK_TOOLS.get(call.name)
        try:
            decided = tool is not None and tool.needs_approval(prepare(tool, call.arguments))
        except ArgumentsError:
            decided = False
        assert decided == expected, what


def test_a_predicate_given_a_dict_is_told_so_not_that_a_function_is_truthy():
    said = lesson12.must_wait(wrong(must_wait, as_dict=True)).message
    assert "gave the predicate a dict" in said and "prepare(tool, call.arguments)" in said
    assert "always truthy" not in said
    said = lesson12.must_wait(wrong(must_wait, caught=KeyError)).message
    assert "ZeroDivisionError" in said and "not only a KeyError" in said
