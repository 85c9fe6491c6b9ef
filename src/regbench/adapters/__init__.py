"""Pure parsers of measurement files (STYLE.md habit 8): text or path in, runs out.

=====================  ===========================================================================
module                 reads
=====================  ===========================================================================
``base``               the :class:`~.base.Adapter` ABC, :class:`~.base.ToolRun`, the registry and
                       format sniffing
``canonical``          regbench's own canonical CSV and JSON lines (parser and writer)
``gotest``             ``go test -bench`` text and ``go test -json`` events
``jmh``                JMH's JSON result file
``googlebench``        Google Benchmark's JSON
``criterion``          Criterion.rs' ``target/criterion`` folder
``cargobench``         libtest's ``cargo bench`` output
``hyperfine``          hyperfine's JSON export
``pyperf``             pyperf's JSON result file
``pytest_benchmark``   pytest-benchmark's JSON
``asv``                asv's result files
``bmf``                Bencher Metric Format JSON
``jsonsafe``           decoding JSON from other tools' files with bounded nesting (every parser's
                       decoder)
=====================  ===========================================================================

No adapter knows the store: :mod:`regbench.ingest` stores what they parse.  A new format is one
file: subclass the ABC, set its ``name``, implement ``parse`` (and ``sniff``), and register it; a
tool that can run only some of its benchmarks also sets ``selection`` and implements
``selection_unit`` and ``render_selection`` (``REGBENCH_SELECT``, ``run --plan optimized``).
"""

from .canonical import COLUMNS, OPTIONAL, REQUIRED, ImportBatch, parse_file, write_csv

__all__ = ["COLUMNS", "OPTIONAL", "REQUIRED", "ImportBatch", "parse_file", "write_csv"]
