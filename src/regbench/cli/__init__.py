"""The command shell: one module per command, each a thin wrapper over a plain function."""
