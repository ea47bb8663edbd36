"""The command line: argument parsing and output only; the work is done by imgcheck.api."""
