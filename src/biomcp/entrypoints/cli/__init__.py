"""The `biomcp` command line: the root app in `main`, one module (or package) per command family
in `commands`, what the families share in `common`."""
