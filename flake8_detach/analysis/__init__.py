"""Evidence about values: imports, abstract values and the interpreter that computes them."""
