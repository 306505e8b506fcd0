"""Exercise checker of lesson 12b: the solution passes, the stub waits, each realistic wrong answer gets ❌."""
from __future__ import annotations

from checker_cases import boom, checker_tests, stub

from course import lesson12b


def what_refund_does(order_id, orders, *, echo=False, paid=False, raises=False, as_dict=False, no_card=False,
                     no_name=False, first_for_unknown=False, empty_for_unknown=False, full_says_paid=False,
                     early=None):
    """The solution, and (through the options) the ways it goes wrong."""
    if echo:
        return f"refund(order_id={order_id!r})"
    if early is not None:  # looked up once, when the screen was first drawn
        orders = early.setdefault("orders", {k: dict(v) for k, v in orders.items()})
    order = orders[order_id] if raises else orders.get(order_id)
    if order is None and first_for_unknown:
        order = next(iter(orders.values()))
    if order is None:
        return "" if empty_for_unknown else f"没有订单 {order_id}：这次退款不会退任何钱，请拒绝。"
    amount = order["paid"] if paid else order["paid"] - order["refunded"]
    if as_dict:
        return {"amount": amount, "to": order["customer"]}
    if amount == 0 and not full_says_paid:
        return f"订单 {order_id} 已全额退款：这次不会退任何钱。"
    if full_says_paid and amount == 0:
        amount = order["paid"]
    who = "" if no_name else f"{order['customer']} <{order['email']}> "
    card = "" if no_card else f"，退回 {order['card']}"
    return f"退给 {who}{amount:.2f} 元{card}（订单 {order_id}）"


def wrong(**options):
    def wrapped(order_id, orders):
        return what_refund_does(order_id, orders, **options)
    return wrapped


CASES = {
    "what_refund_does": (lesson12b.what_refund_does, [what_refund_does], [stub], [
        [wrong(echo=True)],  # the arguments again: the id says nothing a person can check
        [wrong(paid=True)],  # what was paid, not what is left after earlier refunds
        [wrong(raises=True)],  # orders[order_id]: a made-up id raises KeyError
        [wrong(as_dict=True)],  # a dict, not the line the person reads
        [wrong(no_card=True)],  # to whom, but not where the money goes
        [wrong(no_name=True)],  # where, but not to whom
        [wrong(first_for_unknown=True)],  # an unknown id shows another order's refund
        [wrong(empty_for_unknown=True)],  # an unknown id shows an empty line
        [wrong(full_says_paid=True)],  # an order refunded in full shows the whole amount again
        [wrong(early={})],  # the orders copied once: a refund made while the approval waited is missed
        [boom],
    ]),
}

test_checker_passes_the_solution, test_checker_says_not_solved_to_the_stub, \
    test_checker_catches_a_wrong_answer_without_raising = checker_tests(CASES)


def test_the_messages_say_what_is_wrong_in_the_learners_terms():
    said = lesson12b.what_refund_does(wrong(paid=True)).message
    assert "29.00 of it was refunded already" in said and "100.00" in said
    said = lesson12b.what_refund_does(wrong(raises=True)).message
    assert "raised KeyError" in said and "202405239999" in said
    said = lesson12b.what_refund_does(wrong(early={})).message
    assert "each time you are asked" in said
