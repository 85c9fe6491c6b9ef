"""Optimized plans: what ``regbench optimize`` derived and ``regbench show --plans`` lists."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from .console import echo, emit_json, emit_table, finite, fmt_num, fmt_pct

if TYPE_CHECKING:
    from ..model import ExecutionPlan
    from ..optimize.plans import OptimizeResult


def plan_json(p: ExecutionPlan, refused: str | None = None, forks: int = 1) -> dict:
    """One plan as JSON (``format_version`` 1); ``refused``: why its shorter iterations do not
    apply to the benchmark as configured now (:func:`regbench.optimize.plans.shortening_refused`);
    ``forks``: the tool's processes in each run of the full campaign, which its iterations (and
    warm-up) run in each of (:func:`regbench.optimize.plans.plan_forks`); the plan's own where it
    sets them (``full_forks`` then says the full campaign's)."""
    return {"format_version": 1, "benchmark": p.benchmark, "config": p.config, "machine": p.machine,
            "revision": p.revision, "campaign": p.campaign_id, "version": p.version, "runs": p.runs,
            "forks": p.forks or forks, "full_forks": forks, "fork_overhead": p.fork_overhead,
            "iterations": p.iterations, "warmup": p.warmup, "full_runs": p.full_runs,
            "full_iterations": p.full_iterations, "metric": p.metric, "threshold": p.threshold,
            "stability": finite(p.stability), "full_stability": finite(p.full_stability), "stable": p.stable,
            "seconds": p.seconds, "full_seconds": p.full_seconds, "run_overhead": p.run_overhead,
            "slices": p.slices, "full_slices": p.full_slices, "slices_refused": refused,
            "created_at": p.created_at.isoformat()}


def _share(p: ExecutionPlan, forks: int = 1) -> float:
    """The plan's cost over the full configuration's (``forks`` the full campaign's; the plan's
    own where it sets them, each fork priced at its fixed cost too)."""
    o, of = p.run_overhead or 0.0, p.fork_overhead or 0.0
    return (p.runs * (o + (p.forks or forks) * (of + p.warmup + p.iterations * p.duration))
            / (p.full_runs * (o + forks * (of + p.warmup + p.full_iterations))))


def _levels(p: ExecutionPlan, refused: str | None = None, forks: int = 1) -> str:
    """``runs x iterations (+warm-up)`` (``runs x forks x iterations`` where each run is a tool's
    forks), and the iterations' length where the plan shortens them (or why they run at full
    length as the benchmark is configured now)."""
    text = f"{p.runs} x {_forked(p.iterations, p.forks or forks, p.forks is not None)}" \
        + (f" (+{p.warmup})" if p.warmup else "")
    if p.slices and p.full_slices and p.slices < p.full_slices:
        text += f", {p.slices}/{p.full_slices} long" if refused is None else \
            f", full length (plan: {p.slices}/{p.full_slices} long; {refused})"
    return text


def _forked(iterations: int, forks: int, planned: bool = False) -> str:
    """``5`` or ``2 forks x 5``; ``1 fork x 5`` where a plan cut the forks down to one."""
    if forks > 1:
        return f"{forks} forks x {iterations}"
    return f"1 fork x {iterations}" if planned else str(iterations)


def print_plans(plans: Sequence[ExecutionPlan], *, fmt: str = "table", title: str = "Optimized plans",
                refused: Mapping[int, str] | None = None, forks: Mapping[int, int] | None = None) -> None:
    """Each benchmark's plan: runs x iterations (+ warm-up) and, where the plan shortens them, how
    long its iterations last against the full campaign's (``2/5 long``: 2 of its 5 slices), or,
    when ``refused`` (by the index of the plan in ``plans``) says why that shortening does not
    apply to the benchmark as configured now, that they run at full length; its time, and the
    precision to expect.  ``forks`` (by index): a tool's processes in each run, which its
    iterations run in each of (``3 x 2 forks x 5``) and its time counts."""
    from rich.markup import escape

    refused = refused or {}
    forks = forks or {}
    if fmt == "json":
        emit_json([plan_json(p, refused.get(i), forks.get(i, 1)) for i, p in enumerate(plans)])
        return
    rows = []
    for i, p in enumerate(plans):
        f = forks.get(i, 1)
        rows.append([escape(p.benchmark), escape(p.config), escape(p.machine), str(p.revision),
                     escape(_levels(p, refused.get(i), f)),
                     f"{p.full_runs} x {_forked(p.full_iterations, f)}",
                     _fixed(p),
                     fmt_pct(_share(p, f), sign=False),
                     "—" if p.seconds is None else f"{p.seconds:.3g} s",
                     f"{p.metric} {fmt_pct(p.stability, sign=False)}" + ("" if p.stable else " [yellow](unstable)[/]"),
                     str(p.campaign_id)])
    emit_table(title, ["benchmark", "config", "machine", "rev", "runs x iterations", "full",
                       "run's fixed cost (iterations)", "time",
                       "seconds/version", "expected precision", "from campaign"], rows,
               right={"rev", "run's fixed cost (iterations)", "time", "seconds/version", "from campaign"})


def _fixed(p: ExecutionPlan) -> str:
    """A run's fixed cost, in iterations: ``12.3``, or ``1.2 + 5.6 a fork`` where the plan sets its
    forks; ``—`` where not priced."""
    if p.forks is not None and p.fork_overhead:
        return f"{p.run_overhead or 0:.3g} + {p.fork_overhead:.3g} a fork"
    return "—" if not p.run_overhead else f"{p.run_overhead:.3g}"


def _counts(counts: tuple[int, ...]) -> str:
    """``1-4`` for consecutive counts, else ``1, 3``."""
    if len(counts) > 2 and counts == tuple(range(counts[0], counts[-1] + 1)):
        return f"{counts[0]}-{counts[-1]}"
    return ", ".join(map(str, counts))


def print_optimize(result: OptimizeResult, *, fmt: str = "table") -> None:
    """The plans derived now, the suite's time under them, and those kept."""
    plans = [d.plan for d in result.derived]
    forks = {i: d.minimal.full.configuration.forks for i, d in enumerate(result.derived)}
    if fmt == "json":
        emit_json({"format_version": 1, "campaign": result.campaign_id,
                   "campaigns": list(result.parts or (result.campaign_id,)), "time_share": finite(result.time_share),
                   "suite": None if result.suite is None else result.suite.to_json(),
                   "derived": [{**plan_json(d.plan, forks=forks[i]), "shifted": list(d.minimal.shifted),
                                "unsettled": list(d.minimal.unsettled)}
                               for i, d in enumerate(result.derived)],
                   "kept": [plan_json(p, forks=result.kept_forks.get(i, 1)) for i, p in enumerate(result.kept)],
                   "stale": [{"benchmark": st.benchmark, "config": st.config, "machine": st.machine,
                              "changed": st.changed, "alert": st.alert_id, "measured": st.measured,
                              **({"edited": st.edited} if st.edited is not None else {})}
                             for st in result.stale],
                   "notes": list(result.notes)})
        return
    if plans:
        others = [str(c) for c in result.parts if c != result.campaign_id]
        print_plans(plans, forks=forks, title=f"Plans derived from campaign {result.campaign_id}"
                    + (f" (with the runs of campaign {', '.join(others)}: one campaign interrupted and resumed)"
                       if others else ""))
        unstable = sum(not p.stable for p in plans)
        priced = sum(bool(p.run_overhead or p.fork_overhead) for p in plans)
        shifted = [d for d in result.derived if d.minimal.shifted]
        if shifted:
            echo(f"shorter iterations refused for {len(shifted)} benchmarks: at those lengths the whole campaign's "
                 "result moved more than the threshold (" + ", ".join(
                     f"{d.plan.benchmark}: {', '.join(map(str, d.minimal.shifted))} of {d.plan.full_slices} slices"
                     for d in shifted[:5]) + (", ..." if len(shifted) > 5 else "") + ")")
        unsettled = [d for d in result.derived if d.minimal.unsettled]
        if unsettled:
            echo(f"fewer iterations refused for {len(unsettled)} benchmark{'' if len(unsettled) == 1 else 's'}: "
                 "their first iterations' result was more "
                 "than the threshold off the full configuration's, a warm-up not over (" + ", ".join(
                     f"{d.plan.benchmark}: {_counts(d.minimal.unsettled)} of {d.plan.full_iterations}"
                     for d in unsettled[:5]) + (", ..." if len(unsettled) > 5 else "") + ")")
        echo(f"suite time under the new plans: {_suite_share(result)} of the full configuration's ("
             + _suite_counted(result, priced) + f"); {len(plans)} plans stored"
             + (f"; {unstable} {'benchmark' if unstable == 1 else 'benchmarks'} not stable even at the full "
                f"configuration {'keeps' if unstable == 1 else 'keep'} it" if unstable else ""))
        for note in result.suite.notes if result.suite is not None else ():
            echo(note)
    for note in result.notes:
        echo(note)
    if result.kept:
        echo(f"{len(result.kept)} current plans kept (no change detected since; {_kept_refresh(result)})")
    if not plans and not result.kept:
        echo("no benchmark to optimize in campaign " + fmt_num(result.campaign_id))


def _kept_refresh(result: OptimizeResult) -> str:
    """What ``--refresh`` would change of the kept plans: the metric and threshold they were derived
    with where they are not those asked for now (which are then not applied to them)."""
    asked = (result.options.metric, float(result.options.threshold))
    other = [p for p in result.kept if (p.metric, float(p.threshold)) != asked]
    if not other:
        return "--refresh derives them again"
    used = sorted({(p.metric, float(p.threshold)) for p in other})
    return (("" if len(other) == len(result.kept) else f"{len(other)} of them ") + "derived with "
            + " and ".join(f"--metric {m} --threshold {t:g}" for m, t in used)
            + f", not this command's --metric {asked[0]} --threshold {asked[1]:g}: --refresh derives them with it")


def _suite_share(result: OptimizeResult) -> str:
    """The suite's time under the plans as a share: ``83%``, ``68%-97%`` (a tool's starts not told
    apart), ``at least 42%`` (some of it priced at iterations alone)."""
    suite = result.suite
    if suite is None or suite.low != suite.low:  # no estimate in seconds: the plans' iterations
        return fmt_pct(result.time_share, sign=False)
    share = fmt_pct(suite.low, sign=False)
    if suite.high - suite.low > 0.0005:
        share += "-" + fmt_pct(suite.high, sign=False)
    return ("at least " if suite.lower_bound else "") + share


def _suite_counted(result: OptimizeResult, priced: int) -> str:
    """What the suite's time counts: seconds a version, and the costs priced."""
    suite = result.suite
    if suite is None or suite.low != suite.low:  # the plans' iterations alone
        return ("iterations, warm-up included" + (f"; and each run's fixed cost, measured for {priced} benchmarks"
                                                  if priced else ""))
    seconds = f"{suite.seconds_low:.3g}"
    if suite.seconds_high - suite.seconds_low > 0.0005 * suite.full_seconds:
        seconds += f"-{suite.seconds_high:.3g}"
    return (f"{seconds} s of the full campaign's {suite.full_seconds:.3g} s a version: iterations, warm-up included"
            + (f", and each run's fixed cost, measured for {suite.priced} benchmarks" if suite.priced else "")
            + ("; the plans were chosen by their iterations alone (--no-run-cost)"
               if suite.priced and not priced else ""))


def print_split(store, benchmark: str | None = None) -> None:
    """How the last campaign run with optimized plans invoked each tool benchmark with plans
    (``plan["split"]``, :func:`regbench.optimize.plans.split_invocation`): one invocation per
    plan, with its ``REGBENCH_SELECT``, or one for all and why."""
    from rich.markup import escape

    last = max((c for c in store.campaigns() if (c.plan or {}).get("split")), key=lambda c: c.id, default=None)
    if last is None:
        return
    rows = []
    for name, split in sorted(last.plan["split"].items()):
        if benchmark is not None and benchmark != name:
            continue
        if not split.get("groups"):
            rows.append([escape(name), "one for all", "the most of its plans", "(unset)", "the most of its plans",
                         "not split: " + escape(str(split.get("reason")))])
        for g in split.get("groups") or []:
            rows.append([escape(name), escape(g["label"]), f"{g['runs']} x {g['iterations']}"
                         + ("" if g.get("planned", True) else " (configured)"),
                         escape(g["select"]), "(unset)" if g.get("forks") is None else str(g["forks"]),
                         escape(", ".join(g.get("benchmarks") or []))])
    if rows:
        emit_table(f"Tool invocations of campaign {last.id} (run --plan optimized)",
                   ["benchmark", "invocation", "runs x iterations", "REGBENCH_SELECT", "REGBENCH_FORKS",
                    "reported benchmarks"], rows)
