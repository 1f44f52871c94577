"""The command line: the click app, the click-free launcher, the one error boundary, one module per
command."""
