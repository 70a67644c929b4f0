"""Turn every source record into evidence: a short text that stands on its own, with its context.

One module per source (KG statements, passages, table rows, infobox fields); ``index.evidence``
runs them over the ingest output. Context comes first ("Page / Section: …"), so a retriever that
sees only the evidence still knows what it is about.
"""
