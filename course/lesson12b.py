"""Checks for lesson 12b (approvals you can trust).

The exercise is the line an approval screen shows for `refund(order_id=...)`: what the call will do
(how much goes back, to whom, to which card), looked up when it is asked, for orders partly refunded,
refunded in full, and unknown. Nothing is refunded anywhere: the orders here are a dict.
"""
from __future__ import annotations

import copy
import re
from typing import Any, Callable

from .checking import CheckResult, Hints, run_check, solved

# ----------------------------------------------------------------------------- exercise 1

ORDERS: dict[str, dict[str, Any]] = {
    "202405230031": {"customer": "李四", "email": "li.si@example.com", "paid": 299.0, "refunded": 0.0,
                     "card": "招商银行 **** 4321"},
    "202405240044": {"customer": "王五", "email": "wang.wu@example.com", "paid": 129.0, "refunded": 29.0,
                     "card": "工商银行 **** 8812"},
    "202405250007": {"customer": "赵六", "email": "zhao.liu@example.com", "paid": 560.0, "refunded": 560.0,
                     "card": "建设银行 **** 0365"},
}
UNKNOWN = "202405239999"
NOTHING = re.compile(r"(?i)\bnothing\b|\bno refund\b|\bnone\b|\bnot refund|"
                     r"已全额|全部退|没有可退|无可退|无需|不会退|不退|没有退")


def _numbers(text: str) -> set[float]:
    """The numbers in a line (thousands separators allowed): '¥1,299.00 to 李四' -> {1299.0}."""
    return {float(n.replace(",", "")) for n in re.findall(r"\d[\d,]*(?:\.\d+)?", text)}


def _line(what_refund_does: Callable[[str, dict[str, Any]], Any], order_id: str, orders: dict[str, Any],
          what: str) -> str:
    value = solved(what_refund_does(order_id, orders))
    if not isinstance(value, str):
        raise AssertionError(f"for {what} it returned {type(value).__name__} {value!r:.60}: return the line the "
                             "person reads, a string")
    if not value.strip():
        raise AssertionError(f"for {what} it returned an empty line: the screen would show nothing")
    return value


def what_refund_does(what_refund_does: Callable[[str, dict[str, Any]], Any]) -> CheckResult:
    """Exercise 1: the effect of refund(order_id), looked up, for the orders a refund screen meets."""
    def test() -> str:
        orders = copy.deepcopy(ORDERS)
        line = _line(what_refund_does, "202405230031", orders, "order 202405230031")
        if "202405230031" in line and not {"299", "李四"} & set(re.findall(r"299|李四", line)):
            raise AssertionError(f"the line is {line!r:.80}: the id again says nothing a person can check. Look the "
                                 "order up and say what the refund does: how much, to whom, to which card")
        assert 299.0 in _numbers(line), (
            f"order 202405230031 (paid 299.00, nothing refunded yet) would get 299.00 back, and your line doesn't say "
            f"so: {line!r:.90}")
        assert "李四" in line, f"say to whom the money goes (the customer, 李四 here): {line!r:.90}"
        assert "4321" in line, (
            f"say where the money goes: the card it was paid with (招商银行 **** 4321 here): {line!r:.90}")
        line = _line(what_refund_does, "202405240044", orders, "order 202405240044")
        if 100.0 not in _numbers(line):
            said = " and ".join(f"{n:g}" for n in sorted(_numbers(line) & {129.0, 29.0})) or "neither"
            raise AssertionError(f"order 202405240044 was paid 129.00 and 29.00 of it was refunded already: this "
                                 f"refund gives back the rest, 100.00. Your line says {said}: {line!r:.90}")
        assert "王五" in line and "8812" in line, f"the customer and card of order 202405240044: {line!r:.90}"
        line = _line(what_refund_does, "202405250007", orders, "an order refunded in full already")
        if not (0.0 in _numbers(line) or NOTHING.search(line)):
            raise AssertionError(f"order 202405250007 was refunded in full already (560.00 of 560.00): the call would "
                                 f"give back nothing, and the person should read that (0, or 'nothing'): {line!r:.90}")
        orders["202405230031"]["refunded"] = 99.0  # a refund went out while the approval waited
        line = _line(what_refund_does, "202405230031", orders, "order 202405230031, after a partial refund")
        assert 200.0 in _numbers(line), (
            "after 99.00 of order 202405230031 was refunded, the line should say 200.00 goes back: look the order up "
            f"in `orders` each time you are asked, not earlier: {line!r:.90}")
        try:
            line = _line(what_refund_does, UNKNOWN, orders, f"an order that doesn't exist ({UNKNOWN})")
        except (KeyError, IndexError, TypeError) as error:
            raise AssertionError(f"for an order that doesn't exist it raised {type(error).__name__}: the model "
                                 f"writes the id, and a made-up one is likely. Say on the line that there is no "
                                 f"order {UNKNOWN}, so the person denies it") from None
        assert UNKNOWN in line, f"for an unknown order, name the id the model asked for ({UNKNOWN}): {line!r:.90}"
        others = [o["customer"] for o in orders.values() if o["customer"] in line]
        assert not others, (f"for an order that doesn't exist, the line names {others[0]}: it describes another "
                            f"order: {line!r:.90}")
        return ("each refund screen says what goes back, to whom and to which card, looked up when asked; a refunded "
                "order gets nothing, an unknown one is named as unknown")
    return run_check(1, test, "Look the order up, work out what is left to refund, and say it with who and where.",
                     recipe=hint.recipes[1])


# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: ("Look the id up in `orders` (with get, so an unknown id is not an exception); if there is none, return a line "
        "that names the id and says there is no such order. Otherwise what goes back is what was paid minus what "
        "was refunded already; write it with the customer and the card in one line, and say nothing goes back "
        "when that is 0.\n"
        "中文：用 get 在 orders 里查这个订单号（查不到不要抛异常）；查不到就返回一行，写出这个订单号并说明订单不存在。"
        "查到了就算出还能退的钱：已付金额减去已退金额；把金额、客户和银行卡写成一行；"
        "能退的是 0 时要写明不会退钱。"),
})
