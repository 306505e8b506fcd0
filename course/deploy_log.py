"""A long log for lesson 10: last night's deployment of a shop's API, about 200,000 characters.

    log = nightly_deploy_log()        # the same text on every run (a seeded random generator)
    len(log)                          # 200,000 or so
    CAUSE in log.splitlines()[-4]     # True: the line that explains the failure, near the end

What a deployment log is like: a few lines of checkout and build, then test results and data
migration progress by the thousand, all fine, and at the very end the one error that matters
and the rollback. The error is the answer to "why did it fail?", and it is in the last few
hundred characters: a tool that keeps only the start of this text loses exactly that.

Concessions: invented (shop-api, its tests and tables are not real); dates fixed so that every
run prints the same lines.
"""
from __future__ import annotations

import random

RELEASE = "v2.14.0"
CAUSE = '0042_add_refunds failed: column "refund_id" of relation "orders" already exists'
"""What went wrong: the text of the log's first ERROR line, near its end."""
MODULES = ["orders", "payments", "refunds", "users", "cart", "search", "shipping", "coupons"]
CHECKS = ["create", "update", "cancel", "list", "totals", "permissions", "currency", "timezone"]


def _clock(seconds: int) -> str:
    """'2024-05-21 23:00:00' plus `seconds`, as the log prints it (the run starts at 23:00 and passes midnight)."""
    day, rest = divmod(23 * 3600 + seconds, 24 * 3600)
    hours, rest = divmod(rest, 3600)
    return f"2024-05-{21 + day:02d} {hours:02d}:{rest // 60:02d}:{rest % 60:02d}"


def nightly_deploy_log(size: int = 200_000, seed: int = 10) -> str:
    """The log of release v2.14.0's deployment: `size` characters or a little more, failing at its end.

    >>> log = nightly_deploy_log()
    >>> 199_000 < len(log) < 201_000, log.count("ERROR"), CAUSE in log[-500:]
    (True, 2, True)
    >>> nightly_deploy_log() == log
    True
    """
    rng = random.Random(seed)
    t = 0
    lines = [f"{_clock(t)} INFO  deploy   release {RELEASE} of shop-api started by ci-bot (commit 7f3c2e1)",
             f"{_clock(1)} INFO  checkout fetched 1284 files",
             f"{_clock(9)} INFO  build    installed 142 packages",
             f"{_clock(41)} INFO  build    image shop-api:{RELEASE} built (412 MB)"]
    t = 41
    ending = 560  # characters kept free for the migration's last steps, the error and the rollback
    tests = []
    for module in MODULES:
        for check in CHECKS:
            for case in range(1, 400):
                tests.append(f"tests/test_{module}.py::test_{check}[case-{case:03d}]")
    budget = int(size * 0.7)  # about 70% of the log is test results, the rest migration progress
    used = sum(len(line) + 1 for line in lines)
    passed = 0
    for name in tests:
        t += rng.randint(0, 1)
        line = f"{_clock(t)} INFO  test     {name} PASSED ({rng.randint(2, 90)} ms)"
        if used + len(line) + 1 > budget:
            break
        lines.append(line)
        used += len(line) + 1
        passed += 1
    t += 2
    lines.append(f"{_clock(t)} INFO  test     {passed} tests passed")
    lines.append(f"{_clock(t + 1)} INFO  migrate  0041_orders_v2: copying table orders to orders_v2")
    used += sum(len(line) + 1 for line in lines[-2:])
    batch = 0
    while used < size - ending:
        batch += 1
        t += rng.randint(2, 5)
        line = f"{_clock(t)} INFO  migrate  0041_orders_v2: batch {batch:04d} copied 1024 rows"
        lines.append(line)
        used += len(line) + 1
    rows = batch * 1024
    t += 3
    lines += [
        f"{_clock(t)} INFO  migrate  0041_orders_v2 done: {rows} rows in {batch} batches",
        f"{_clock(t + 1)} INFO  migrate  applying 0042_add_refunds",
        f"{_clock(t + 1)} ERROR migrate  {CAUSE}",
        f"{_clock(t + 2)} INFO  deploy   rolling back release {RELEASE}",
        f"{_clock(t + 15)} INFO  deploy   shop-api v2.13.2 restored; traffic is on the old release",
        f"{_clock(t + 15)} ERROR deploy   release {RELEASE} FAILED at step migrate (exit code 1)",
    ]
    return "\n".join(lines) + "\n"
