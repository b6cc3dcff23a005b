"""The command families of `biomcp`: one module (or package) each, independent of each other,
assembled by `cli.main`."""
