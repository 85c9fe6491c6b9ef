"""The command shell: one module per command, each parsing its options, calling one plain function
and handing the result object to :mod:`regbench.report`; commands do not import each other."""
