"""Presentation: what people see of results, as terminal text, tables, JSON and plots.

The commands of :mod:`regbench.cli` call one plain function each and hand its result object to
a module here; with :mod:`regbench.cli`, this is the only package that imports rich.

==============  ====================================================================================
module          contents
==============  ====================================================================================
``console``     the stdout and stderr consoles, number formats (:func:`fmt_pct`, ...), tables
                (:func:`emit_table`: rich in a terminal, aligned plain text in a pipe), JSON output,
                and a batch progress bar
``results``     what a store holds (``show``), experiment summaries (``summary``), and version B
                against version A (``compare``, ``compare --variance``)
``github``      version B against version A as a Markdown pull-request comment and job summary
                (``compare --format github``)
``changes``     the change table, FDR and alert notes, the detection JSON, and the account of a
                :func:`regbench.pipeline.detect_and_alert` outcome (``detect``)
``sequential``  comparisons run until settled and bisections: live status, tables, sentences and
                JSON (``compare --run``, ``bisect``, ``detect --bisect``)
``campaign``    the progress display of a campaign and its closing paragraph (``run``, ``demo``)
``alerts``      the alert table, one alert with its history and deliveries, triage lines, and
                what each sink did (``alerts``, ``detect --notify``)
``diagnosis``   one benchmark's diagnosis and its plots (``diagnose``), and the machine's noise
                sources (``system check``)
``evaluation``  progress and the score table of detectors on the labelled corpus (``evaluate``)
``demo``        the generated project and what its loop found (``demo``)
``clean``       what ``clean`` removed, or would remove
``plans``       optimized plans derived (``optimize``) and stored (``show --plans``)
``units``       a time unit per benchmark (ns, us, ms, s) and numbers rounded to their interval's
                precision (``summary``)
``plots``       static PNG plots with matplotlib: samples by run, lag plot, distributions
``web``         where a dashboard report was written, and API tokens (``report``, ``token``)
``screening``   a screening design, its effects table with aliases, the half-normal plot (``screen``)
==============  ====================================================================================
"""
