"""The language models the engine reasons with: bundled instruct models, any GGUF, or a server, all
behind ``Llm.chat(messages, schema=None, max_tokens=…)``. A base room: readers, modes and the critic use it.
"""
