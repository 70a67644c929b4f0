"""The generator backends (local llama.cpp models, OpenAI-compatible servers) and what reads with them."""
