"""One module per command: option parsing, calling the pure core, and handing the result to a renderer."""
