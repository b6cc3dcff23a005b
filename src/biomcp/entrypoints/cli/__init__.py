"""The `biomcp` command line: one module per command family, helpers in `common`."""
