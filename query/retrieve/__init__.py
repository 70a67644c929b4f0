"""Second room: the retrievers (KG walk, BM25, dense, hop) and the evidence store they read, fused
into one pool of evidence rows."""
