"""Layer 3: from stored facts to answers of resolution: the class graph, the logic rule, chains."""
