"""Tables built for one question: typed columns from cell text, and from the graph's statements."""
