"""The gauntlet (a feature): a small evaluation harness for an agent -- scenarios, invariants, pass@k.

    from mini_framework.gauntlet import Scenario, run_gauntlet

    scenarios = [Scenario("refund", "Refund order 202405230031 and e-mail the customer", approve=under_500)]
    report = run_gauntlet(lambda world: make_my_agent(world), scenarios, k=5)
    print(report.table())

    world.py        World: the workspace, outbox, secret and side effects a trial observes; the person's decisions
    invariants.py   Invariant and the checks every scenario gets (INVARIANTS)
    recorder.py     Recorder: each reply's finish_reason, seen from the client's side
    runner.py       Scenario, Budget, Trial, run_trial, run_gauntlet, Report (table, pass rates, pass@k)

Against the deterministic practice model pass@k is 1 (or 0) by construction; against a real model,
k trials per scenario measure the pass rate of each invariant and which scenarios are flaky.

Needs: the core (mini_framework/*.py). Nothing else.
"""

from .invariants import INVARIANTS, Invariant
from .recorder import Recorder
from .runner import Budget, Report, Scenario, Trial, run_gauntlet, run_trial
from .world import Approval, Effect, World, decline_all

__all__ = ["INVARIANTS", "Approval", "Budget", "Effect", "Invariant", "Recorder", "Report", "Scenario", "Trial",
           "World", "decline_all", "run_gauntlet", "run_trial"]
