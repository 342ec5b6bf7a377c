"""A worked example of a bilevel-theory plug-in: one algorithm and two claims about it."""
