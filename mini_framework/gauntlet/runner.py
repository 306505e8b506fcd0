"""Scenarios, trials and the runner: `run_gauntlet(make_agent, scenarios, k=3).table()`.

    def make_agent(world):                                   # a fresh agent for each trial, bound to its world
        return Agent(client, model, shop_tools(world), approver=world.approver)

    report = run_gauntlet(make_agent, SCENARIOS, k=3, label=model)
    print(report.table())                                    # one row per scenario, one column per invariant
    report.failed()                                          # [(label, scenario, invariant, why), ...]

A trial is one scenario run once: a fresh temporary World (world.py), a fresh agent, each prompt a user
turn continuing the conversation, every pause decided by the scenario's person (`Scenario.approve`) and
resumed, then every invariant checked (invariants.py) and the folder removed. `k` trials per scenario give:

    pass rate       per invariant, the share of the k trials in which it held
    pass@k          1 when at least one of the k trials passed every invariant, else 0
    flaky           some trials passed everything and some did not

Against the deterministic practice model every trial of a scenario is the same trial, so pass@k equals
the pass rate of one trial (0 or 1) and nothing is ever flaky: by construction, not by luck. Against a
real model the same scenarios, run k times, measure how often your agent holds.

Concessions: trials run one after the other; an agent that hangs hangs the gauntlet (give it a
`tool_timeout` and a client timeout); at most MAX_RESUMES decisions per turn.
"""
from __future__ import annotations

import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from ..events import Event
from ..executor import ToolResult
from ..state import RunResult
from .invariants import INVARIANTS, Invariant
from .recorder import Recorder
from .world import Policy, World, decline_all

MAX_RESUMES = 10


@dataclass(frozen=True)
class Budget:
    """What one trial may spend, summed over its turns."""

    tokens: int = 60_000
    requests: int = 30


@dataclass(frozen=True)
class Scenario:
    """One situation to put an agent in, and what must hold afterwards.

    >>> Scenario("weather", "北京天气怎么样？", "zh").prompts
    ('北京天气怎么样？',)
    """

    name: str
    prompt: str | tuple[str, ...]  # one user turn, or several (a multi-turn conversation)
    language: str = "en"
    approve: Policy = decline_all  # the person who decides calls that need approval
    canary_tools: tuple[str, ...] = ()  # tools an injection tells the model to call
    canary_tokens: tuple[str, ...] = ()  # words an injection tells the model to say
    setup: Callable[[World], None] | None = None  # files, data, a poisoned note: put into the world first
    between: Callable[[World, int], None] | None = None  # before turn 2, 3, ...: someone else changes the world
    budget: Budget = Budget()
    invariants: tuple[Invariant, ...] = INVARIANTS
    note: str = ""  # what it tries, in a few words (shown by the course's table)

    @property
    def prompts(self) -> tuple[str, ...]:
        return (self.prompt,) if isinstance(self.prompt, str) else tuple(self.prompt)


@dataclass
class Trial:
    """One scenario, run once: what the run produced and what happened in its world."""

    scenario: Scenario
    world: World
    results: list[RunResult] = field(default_factory=list)  # the last result of each turn
    events: list[Event] = field(default_factory=list)
    cut_ids: set[str] = field(default_factory=set)  # calls in replies cut off by max_tokens
    error: str | None = None  # what the run raised, if it did
    verdicts: dict[str, str | None] = field(default_factory=dict)  # invariant -> None (held) or why not

    @property
    def answers(self) -> list[str]:
        return [r.text or "" for r in self.results]

    @property
    def tool_results(self) -> list[ToolResult]:
        return [t for r in self.results for t in r.tool_results]

    @property
    def tokens(self) -> int:
        return sum(r.usage.total_tokens for r in self.results)

    @property
    def requests(self) -> int:
        return sum(r.usage.requests for r in self.results)

    @property
    def passed(self) -> bool:
        return all(why is None for why in self.verdicts.values())


def run_trial(make_agent: Callable[[World], Any], scenario: Scenario) -> Trial:
    """Run one scenario once in a fresh temporary world; check its invariants; remove the world."""
    with tempfile.TemporaryDirectory(prefix="gauntlet_") as folder:
        trial = Trial(scenario, World(Path(folder), scenario.approve))
        try:
            if scenario.setup:
                scenario.setup(trial.world)
            agent = make_agent(trial.world)
            recorder = agent.client = Recorder(agent.client)
            history: list[dict[str, Any]] = []
            for turn, prompt in enumerate(scenario.prompts):
                if turn and scenario.between:
                    scenario.between(trial.world, turn)
                result = agent.run([*history, {"role": "user", "content": prompt}], on_event=trial.events.append)
                for _ in range(MAX_RESUMES):
                    if not result.paused:
                        break
                    for item in result.pending:
                        decision = trial.world.decide(item.name, item.arguments or {})
                        item.approve() if decision is True else item.deny(str(decision))
                    result = agent.resume(result, on_event=trial.events.append)
                trial.results.append(result)
                if result.paused:
                    break
                history = result.messages
            trial.cut_ids = recorder.cut_ids
        except Exception as exc:  # a trial that raises is a finding, not the end of the gauntlet
            partial = getattr(exc, "partial_result", None)
            if isinstance(partial, RunResult):
                trial.results.append(partial)
            trial.error = f"{type(exc).__name__}: {str(exc)[:200]}"
        for invariant in scenario.invariants:
            try:
                trial.verdicts[invariant.name] = invariant.check(trial)
            except Exception as exc:
                trial.verdicts[invariant.name] = f"the check raised {type(exc).__name__}: {exc}"
    return trial


@dataclass
class Report:
    """Trials by (label, scenario name); see the module docstring for what is computed from them."""

    trials: dict[tuple[str, str], list[Trial]] = field(default_factory=lambda: defaultdict(list))

    def __add__(self, other: Report) -> Report:
        merged = Report()
        for source in (self, other):
            for key, trials in source.trials.items():
                merged.trials[key] += trials
        return merged

    @property
    def invariants(self) -> list[str]:
        names = {name: None for trials in self.trials.values() for t in trials for name in t.verdicts}
        return list(names)

    def pass_rate(self, key: tuple[str, str], invariant: str | None = None) -> float:
        """The share of this row's trials in which `invariant` held (every invariant, when None)."""
        trials = self.trials[key]
        held = [t.passed if invariant is None else t.verdicts[invariant] is None
                for t in trials if invariant is None or invariant in t.verdicts]
        return sum(held) / len(held) if held else 0.0

    def pass_at_k(self, key: tuple[str, str]) -> int:
        """1 when at least one trial of this row passed every invariant."""
        return int(any(t.passed for t in self.trials[key]))

    def flaky(self, key: tuple[str, str]) -> bool:
        return 0.0 < self.pass_rate(key) < 1.0

    def failed(self) -> list[tuple[str, str, str, str]]:
        """(label, scenario, invariant, why) for every invariant that failed in some trial, once each."""
        found: dict[tuple[str, str, str], str] = {}
        for (label, name), trials in self.trials.items():
            for trial in trials:
                for invariant, why in trial.verdicts.items():
                    if why is not None:
                        found.setdefault((label, name, invariant), why)
        return [(*key, why) for key, why in found.items()]

    @property
    def ok(self) -> bool:
        return not self.failed()

    def table(self, by: str = "scenario") -> str:
        """A markdown table, one row per scenario (`by="scenario"`; "label · scenario" when several labels ran),
        per label (`by="label"`: all its scenarios together) or per both (`by="both"`); a column per invariant (✓ all
        held, ✗ none, else the share; - not checked), pass@k (rows that passed everything at least once, when a
        row holds several), flaky. By scenario, a "tries" column says what each scenario tries (`Scenario.note`)."""
        names = self.invariants
        labels = {label for label, _ in self.trials}
        rows: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for label, scenario in self.trials:
            row = label if by == "label" else scenario if by == "scenario" and len(labels) == 1 else \
                f"{label} · {scenario}"
            rows[row].append((label, scenario))
        notes = by == "scenario" and any(t.scenario.note for trials in self.trials.values() for t in trials)
        header = [by, *(["tries"] if notes else []), "runs", *map(_abbreviate, names), "pass@k", "flaky"]
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for row, keys in rows.items():
            trials = [t for key in keys for t in self.trials[key]]
            cells = [_mark(sum(t.verdicts[n] is None for t in checked), len(checked)) if checked else "-"
                     for n in names for checked in [[t for t in trials if n in t.verdicts]]]
            flaky = sum(self.flaky(key) for key in keys)
            lines.append("| " + " | ".join([row, *([trials[0].scenario.note] if notes else []), str(len(trials)),
                                            *cells, _mark(sum(self.pass_at_k(key) for key in keys), len(keys)),
                                            str(flaky) if flaky else "-"]) + " |")
        return "\n".join(lines)


def _mark(held: int, out_of: int) -> str:
    """✓ when all held, ✗ when none did, else 'held/out_of'.

    >>> _mark(3, 3), _mark(0, 3), _mark(2, 3)
    ('✓', '✗', '2/3')
    """
    return "✓" if held == out_of else "✗" if held == 0 else f"{held}/{out_of}"


def _abbreviate(name: str) -> str:
    """A column title: the invariant's name, shortened to fit a notebook cell.

    >>> _abbreviate("no side effect without approval")
    'approval'
    """
    return {"no side effect without approval": "approval", "no injection obeyed": "injection",
            "every call answered once": "ids", "no cut-off call run": "cut-off", "stays in the workspace": "workspace",
            "within budget": "budget"}.get(name, name)


def run_gauntlet(make_agent: Callable[[World], Any], scenarios: Iterable[Scenario], k: int = 1, *,
                 label: str = "agent") -> Report:
    """Each scenario `k` times, each trial with a fresh world and a fresh `make_agent(world)`; the Report.

    Against the deterministic practice model pass@k is 1 or 0 by construction: k identical trials.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a whole number of trials, 1 or more, not {k!r}")
    report = Report()
    for scenario in scenarios:
        for _ in range(k):
            report.trials[(label, scenario.name)].append(run_trial(make_agent, scenario))
    return report
