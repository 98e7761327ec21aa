"""Layer 0, imports nothing of tpindex: the error model, tag specs, scope, upstream links."""
