"""What ``regbench screen`` shows: the design, the effects table with aliases, the half-normal plot.

The half-normal plot (seed 002 eq. 4, Fig. 5-7) is drawn with matplotlib (the ``diagnose``
extra) as PNG and SVG; the important effects (Lenth's margin) are labelled, and the margin is
drawn as a horizontal line so the decision can be seen rather than guessed.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..failures import build_failure_cause
from ..screening.base import DesignMatrix
from ..screening.campaign import ScreenPoint, ScreenResult, SuiteCheck
from ..screening.effects import EffectsResult, Type3Result
from ..screening.levels import LevelAnova
from ..screening.suite import SuiteValidation
from .console import echo, emit_json, emit_table, finite, fmt_num


def design_lines(design: DesignMatrix) -> list[str]:
    """The design in a few lines: its label, generators, defining relation, word-length pattern."""
    out = [f"design: {design.label()} ({design.note})" if design.note else f"design: {design.label()}"]
    if design.generators is not None and design.generators.generated:
        out.append("generators: " + ", ".join(design.generator_texts()))
        relation = design.defining_relation()
        if design.generators.p <= 6:
            out.append("defining relation: " + relation)
    if design.word_length_pattern is not None:
        wlp = design.word_length_pattern
        last = max((i for i, a in enumerate(wlp) if a), default=-1)
        out.append("word-length pattern: (" + ", ".join(str(a) for a in wlp[:last + 1][2:]) + ") for lengths 3.."
                   + str(last + 1) if last >= 2 else "word-length pattern: no word of length 3 or more")
    return out


def points_lines(points: tuple[ScreenPoint, ...]) -> list[str]:
    out = []
    for p in points:
        mark = "" if p.valid else "   (not run: breaks " + "; ".join(p.violated) + ")"
        out.append(f"{p.row + 1:4d}  {p.name}{mark}")
    return out


def effects_rows(effects: EffectsResult) -> list[list[str]]:
    replicated = effects.df_error > 0
    rows = []
    for e in effects.effects:
        ci = f"[{fmt_num(e.ci_low)}, {fmt_num(e.ci_high)}]" if replicated else "-"
        p = f"{e.p_value:.3g}" if replicated and math.isfinite(e.p_value) else "-"
        rows.append([e.term.name, fmt_num(e.estimate), ci, p, "[bold]yes[/]" if e.important else "no",
                     ", ".join(e.term.aliases) or "-"])
    return rows


def emit_screen(result: ScreenResult, *, unit: str) -> None:
    for line in design_lines(result.design):
        echo(line)
    excluded = [p for p in result.points if not p.valid]
    if excluded:
        echo(f"{len(excluded)} configurations break a constraint and were not run (effects fitted to the rest)")
    counts = ", ".join(f"{n} {s}" for s, n in result.counts.items() if n)
    echo(f"campaign {result.campaign_id} (seed {result.seed}) on {result.machine}: "
         f"{counts or 'no run'} stored; {result.trials_skipped} already stored"
         # As `regbench run` says it: stored failures are not run again unless asked.
         + (f" ({result.failed_earlier} of them failed: add --retry-failed to run them again)"
            if result.failed_earlier else "")
         + (f"; {result.retried} ran again for earlier runs that had failed" if result.retried else ""))
    for f in result.build_failures:
        echo(f"not built (not run): {f.label}"
             + (" (recorded earlier; --rebuild builds it again)" if f.cached else "")
             + f": build {build_failure_cause(f.status, None, f.log_tail)}")
    valid = sum(p.valid for p in result.points)
    for ve in result.effects:
        if ve.missing:
            echo(missing_line(ve.version, ve.missing, valid))
        if ve.levels is not None:
            emit_levels(ve.levels, title=f"{result.benchmark} at {ve.version} ({unit})")
            continue
        if ve.effects is None:
            echo(f"{ve.version}: no effects ({ve.reason})")
            continue
        emit_effects(ve.effects, title=f"effects on {result.benchmark} at {ve.version} ({unit}; z(+) - z(-))")
        if ve.reason:
            echo(ve.reason)
        if result.design.design in NOT_ORTHOGONAL and ve.anova is not None:
            emit_anova(ve.anova, title=f"Type III sums of squares at {ve.version}")
    emit_recalibration(result)


def missing_line(version: str, missing: tuple[tuple[str, str], ...], valid: int, *, most: int = 8) -> str:
    """``at 80faee2d33, 4 of the 8 configurations were not run (80faee2d33 (b=2) did not build):
    x=1,y=1,b=2; ...; the effects are fitted to the configurations run``."""
    builds = ", ".join(dict.fromkeys(label for _, label in missing))
    names = "; ".join(name for name, _ in missing[:most]) + (f"; and {len(missing) - most} more"
                                                             if len(missing) > most else "")
    return (f"at {version}, {len(missing)} of the {valid} configurations were not run ({builds} did not build): "
            f"{names}; the effects are fitted to the configurations run")


#: Designs whose effects are not orthogonal: their Type III analysis is printed with the effects
#: (a follow-up, ``d-optimal``, and a D-optimal design from scratch, ``doptimal``).
NOT_ORTHOGONAL = ("d-optimal", "doptimal")


def emit_levels(levels: LevelAnova, *, title: str) -> None:
    """The analysis of variance of a design with multi-level options, then each level's mean."""
    rows = [[t.name, str(t.df), fmt_num(t.sum_sq), fmt_num(t.f), f"{t.p_value:.3g}", f"{t.q_value:.3g}",
             "[bold]yes[/]" if t.important else "no", fmt_num(t.spread) if len(t.factors) == 1 else "-"]
            for t in levels.terms]
    rows.append(["residual", str(levels.residual_df), fmt_num(levels.residual_sum_sq), "", "", "", "", ""])
    emit_table(f"what matters on {title}: Type III analysis of variance, options as factors",
               ["term", "df", "sum of squares", "F", "p", "q", "important", "spread"], rows,
               right={"df", "sum of squares", "F", "p", "q", "spread"})
    level = f"{levels.confidence_level:.0%}"
    mrows = [[name, m.level, fmt_num(m.mean), f"[{fmt_num(m.ci_low)}, {fmt_num(m.ci_high)}]", str(m.runs)]
             for name, means in levels.means for m in means]
    emit_table(f"level means on {title} (least squares, the other options averaged)",
               ["option", "level", "mean", f"{level} interval", "runs"], mrows, right={"mean", "runs"})
    echo(f"important: q <= {levels.alpha:g} (Benjamini-Hochberg across the {len(levels.terms)} F-tests); "
         f"spread: the largest level mean minus the smallest; {levels.runs} runs of {levels.points} configurations"
         + (f"; interactions not estimable from the configurations run: {', '.join(levels.not_estimable)}"
            if levels.not_estimable else ""))


def levels_json(levels: LevelAnova) -> dict:
    return {"analysis": "type III anova, options as factors (sum-to-zero contrasts)",
            "alpha": levels.alpha, "confidence_level": levels.confidence_level,
            "terms": [{"term": t.name, "df": t.df, "sum_sq": finite(t.sum_sq), "f": finite(t.f), "p": finite(t.p_value),
                       "q": finite(t.q_value), "important": t.important,
                       "spread": finite(t.spread) if len(t.factors) == 1 else None} for t in levels.terms],
            "residual": {"sum_sq": finite(levels.residual_sum_sq), "df": levels.residual_df},
            "level_means": {name: [{"level": m.level, "mean": finite(m.mean), "ci_low": finite(m.ci_low),
                                    "ci_high": finite(m.ci_high), "runs": m.runs} for m in means]
                            for name, means in levels.means},
            "not_estimable": list(levels.not_estimable), "points": levels.points, "runs": levels.runs}


def effects_json(effects: EffectsResult) -> dict:
    lr = effects.lenth
    return {"effects": [{"effect": e.term.name, "estimate": finite(e.estimate), "std_error": finite(e.std_error),
                         "ci_low": finite(e.ci_low), "ci_high": finite(e.ci_high), "p": finite(e.p_value),
                         "important": e.important, "aliases": list(e.term.aliases)} for e in effects.effects],
            "lenth": {"pse": finite(lr.pse), "margin": finite(lr.margin), "simultaneous_margin": finite(lr.simultaneous_margin),
                      "df": lr.df},
            "sigma": finite(effects.sigma), "df_error": effects.df_error,
            "confidence_level": effects.confidence_level, "points": effects.points, "runs": effects.runs}


def anova_json(anova: Type3Result) -> dict:
    return {"terms": [{"term": r.term.name, "sum_sq": finite(r.sum_sq), "df": r.df, "f": finite(r.f), "p": finite(r.p_value)}
                      for r in anova.rows],
            "residual": {"sum_sq": finite(anova.residual_sum_sq), "df": anova.residual_df}}


def screen_json(result: ScreenResult, checks: tuple[SuiteCheck, ...] = ()) -> dict:
    """``regbench screen --format json``: the design, the runs, and per version the effects (a
    two-level design), their Type III analysis, or the analysis of variance of multi-level options."""
    d = result.design
    return {
        "format_version": 1,
        "design": {"name": d.design, "label": d.label(), "note": d.note, "runs": d.runs,
                   "generators": list(d.generator_texts()), "resolution": d.resolution},
        "configurations": [{"row": p.row, "configuration": p.name, "valid": p.valid, "violated": list(p.violated)}
                           for p in result.points],
        "benchmark": result.benchmark, "campaign": result.campaign_id, "seed": result.seed,
        "machine": result.machine, "counts": dict(result.counts), "already_stored": result.trials_skipped,
        "builds_failed": list(result.builds_failed),
        "build_failures": [{"version": f.version, "variant": dict(f.variant), "status": f.status, "cached": f.cached}
                           for f in result.build_failures],
        "failed_earlier": result.failed_earlier, "retried": result.retried,
        "versions": [{"version": ve.version, "reason": ve.reason or None,
                      "missing": [{"configuration": name, "build": label} for name, label in ve.missing],
                      "effects": effects_json(ve.effects) if ve.effects is not None else None,
                      "type3": anova_json(ve.anova) if ve.anova is not None and d.design in NOT_ORTHOGONAL else None,
                      "levels": levels_json(ve.levels) if ve.levels is not None else None}
                     for ve in result.effects],
        "recalibration": [{"before": r.before, "after": r.after,
                           "changed": [{"effect": c.name, "before": finite(c.before), "after": finite(c.after), "change": finite(c.change),
                                        "q": finite(c.q_value), "important_before": c.important_before,
                                        "important_after": c.important_after} for c in r.changes if c.significant]}
                          for r in result.recalibration],
        "suite_checks": [suite_check_json(c) for c in checks],
    }


def suite_check_json(check: SuiteCheck) -> dict:
    v = check.validation
    return {"version": check.version, "full_configurations": check.full_configurations, "reason": check.reason or None,
            "validation": None if v is None else {
                "mann_whitney_p": finite(v.mann_whitney_p), "ks_distance": finite(v.ks_distance), "samples": v.samples,
                "random_rejected": v.random_rejected, "alpha": v.alpha,
                "median_random_ks": finite(float(np.median(v.random_ks))), "suite_rank": v.suite_rank}}


def emit_screen_json(result: ScreenResult, checks: tuple[SuiteCheck, ...] = ()) -> None:
    emit_json(screen_json(result, checks), allow_nan=False)


def emit_recalibration(result: ScreenResult) -> None:
    for r in result.recalibration:
        moved = [c for c in r.changes if c.significant]
        if not moved:
            echo(f"recalibration {r.before} -> {r.after}: no effect changed significantly (Benjamini-Hochberg at 0.05)")
            continue
        rows = [[c.name, fmt_num(c.before), fmt_num(c.after), fmt_num(c.change), f"{c.q_value:.3g}",
                 ("yes" if c.important_before else "no") + " -> " + ("yes" if c.important_after else "no")]
                for c in moved]
        emit_table(f"recalibration {r.before} -> {r.after}: effects that changed",
                   ["effect", "before", "after", "change", "q", "important"], rows,
                   right={"before", "after", "change", "q"})


def emit_effects(effects: EffectsResult, *, title: str) -> None:
    level = f"{effects.confidence_level:.0%}"
    emit_table(title, ["effect", "estimate", f"{level} interval", "p", "important", "aliased with"],
               effects_rows(effects), right={"estimate", "p"})
    lr = effects.lenth
    echo(f"Lenth's pseudo standard error {fmt_num(lr.pse)}: important above {fmt_num(lr.margin)} "
         f"(simultaneous {fmt_num(lr.simultaneous_margin)}); "
         + (f"run-to-run sd {fmt_num(effects.sigma)} on {effects.df_error} df"
            if effects.df_error else "no replication: no intervals"))


def emit_anova(anova: Type3Result, *, title: str) -> None:
    rows = [[r.term.name, fmt_num(r.sum_sq), str(r.df), fmt_num(r.f), f"{r.p_value:.3g}"]
            for r in sorted(anova.rows, key=lambda r: r.p_value)]
    rows.append(["residual", fmt_num(anova.residual_sum_sq), str(anova.residual_df), "", ""])
    emit_table(title, ["term", "sum of squares", "df", "F", "p"], rows, right={"sum of squares", "df", "F", "p"})


def emit_suite_check(check: SuiteCheck) -> None:
    v = check.validation
    if v is None:
        echo(f"suite at {check.version}: not validated ({check.reason})")
        return
    echo(f"suite at {check.version} against the {check.full_configurations} configurations of the full set: "
         f"Mann-Whitney p = {v.mann_whitney_p:.3g}, KS distance {v.ks_distance:.3f}; "
         f"{v.samples} random samples of the same size: {v.random_rejected:.0%} rejected at {v.alpha:g}, "
         f"median KS distance {float(np.median(v.random_ks)):.3f}, {v.suite_rank:.0%} as far or further "
         "from the full set than the suite")


def plot_qq(v: SuiteValidation, stem: Path, *, title: str) -> tuple[Path, Path]:
    """The Q-Q plot of a suite against the full set (seed 002 Fig. 10) as PNG and SVG."""
    plt = _pyplot("the Q-Q plot of regbench screen --validate")
    fig, ax = plt.subplots(figsize=(5.5, 5.5), dpi=110)
    ax.scatter(v.qq_full, v.qq_suite, s=18)
    lo, hi = float(min(v.qq_full.min(), v.qq_suite.min())), float(max(v.qq_full.max(), v.qq_suite.max()))
    ax.plot([lo, hi], [lo, hi], color="0.5", lw=0.8, ls="--", label="x = y")
    ax.set_xlabel("full set quantile")
    ax.set_ylabel("suite quantile")
    ax.set_title(title, fontsize=9)
    ax.legend(loc="upper left", fontsize=8)
    return _save(plt, fig, stem)


def _pyplot(what: str):
    from ..extras import require

    matplotlib = require("matplotlib", what=what)
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _save(plt, fig, stem: Path) -> tuple[Path, Path]:
    fig.tight_layout()
    stem.parent.mkdir(parents=True, exist_ok=True)
    png, svg = stem.with_suffix(".png"), stem.with_suffix(".svg")
    fig.savefig(png)
    fig.savefig(svg)
    plt.close(fig)
    return png, svg


def plot_half_normal(effects: EffectsResult, stem: Path, *, title: str) -> tuple[Path, Path]:
    """The half-normal plot (seed 002 eq. 4) as ``STEM.png`` and ``STEM.svg``."""
    plt = _pyplot("the half-normal plot of regbench screen")
    hn = effects.half_normal
    important = {e.term.name for e in effects.effects if e.important}
    fig, ax = plt.subplots(figsize=(7, 5), dpi=110)
    colors = ["C3" if n in important else "C0" for n in hn.names]
    ax.scatter(hn.x, hn.y, c=colors, s=18)
    for x, y, n in zip(hn.x, hn.y, hn.names, strict=True):
        if n in important:
            ax.annotate(n, (x, y), textcoords="offset points", xytext=(4, 3), fontsize=8)
    if math.isfinite(effects.lenth.margin):
        ax.axhline(effects.lenth.margin, color="0.5", lw=0.8, ls="--", label="Lenth's margin of error")
        ax.legend(loc="upper left", fontsize=8)
    ax.set_xlabel("half-normal quantile")
    ax.set_ylabel("|effect|")
    ax.set_title(title)
    return _save(plt, fig, stem)
