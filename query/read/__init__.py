"""Fifth room: the answer read from the final evidence, by the candidate reader (features, no model) or
the LLM reader (an instruct model through ``query.llm``), with every answer checked against the rows."""
