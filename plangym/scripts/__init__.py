"""Command-line scripts plangym 0.1 shipped, kept so that its documented commands still run."""
