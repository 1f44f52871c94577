"""The command line: the click app, the one error boundary, the options commands share, one module per
command."""
