"""Fourth room: the answer read from the final evidence (the candidate reader; LLM readers live in
``query.llm``)."""
