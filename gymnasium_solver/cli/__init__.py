"""The gsolve command line: `app` parses and dispatches, one module per group of commands."""
