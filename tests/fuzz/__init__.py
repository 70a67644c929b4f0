"""Seeded mutation fuzzing of every parser boundary: each input is parsed or rejected with its position, never
an unhandled exception, and the good records around it come out unchanged (issue 17).

    python -m tests.fuzz [--inputs 10000] [--seed 1] [--boundary NAME ...] [--out benchmarks/results/fuzz]
    python -m tests.fuzz --replay NAME INDEX [--seed 1]     # print one generated input

The suite (``test_fuzz_boundaries.py``) runs a few hundred inputs of each boundary; the job above runs
10,000 and writes the report the README quotes (``benchmarks/results/fuzz/``). Modules: ``mutators``
(byte and value mutations), ``harness`` (inputs, findings, the per-boundary report and loop),
``boundaries/`` (one module per input format, and the registry), ``report`` (Markdown and JSON), ``cli``.

Boundaries and what each input is:
- ``wikidata``: one entity line of a dump, through ``ingest_wikidata``;
- ``wikitext``: one article's wikitext, through ``parse_article``;
- ``xml``: one ``<page>`` of an export, through ``ingest_wikipedia``;
- ``ottqa``: one table (``tables.json.gz``) or one passage (``passages.json.gz``), through ``ingest_ottqa``;
- ``questions``: one line of a batch question file, through ``read_questions``;
- ``config``: one engine config file (TOML or YAML), through ``EngineConfig.load``.

Seeds are the real samples in ``data/samples`` (the config seeds are the engine configs in ``seeds/`` and the
defaults); an input is a seed with one to three stacked mutations: truncation, byte flips, invalid UTF-8,
deleted, duplicated and swapped spans, control characters, other scripts, huge strings, deep nesting, the
boundary's own tokens (``{{``, ``{|``, ``[[``, ``<ref>``, ``<!--``; tags, entities, CDATA, namespaces), a
mutation that knows the structure (hostile rowspan/colspan on a table cell, one closer of a template,
table, link, ref or comment cut out; an XML tag cut, dropped or moved to another namespace) and, for JSON
and YAML records, a type swap of one value (``{"id": 12}``). Input ``i`` of a boundary is drawn from
``random.Random(f"{seed}:{boundary}:{i}")`` alone, so any input is replayed from its index. Only the standard
library generates inputs: no fuzzing package is needed.

The whole-file boundaries (wikidata, xml, ottqa, questions) put a batch of mutated records among good ones
into one file per call and then account for every record: each mutated one must come out parsed, skipped
for a documented reason or quarantined at its own position, and each good one exactly as a clean run of
the good records alone gives it. wikitext and config take one input per call, and a good page or config
is read again after each batch. An exception out of a boundary is a crash (a whole-file batch is then
replayed record by record to name the input that caused it); anything else that breaks the property (a
good record lost or changed, a mutated record gone without trace, an error without its position or file)
is a violation. A call still running after ``INPUT_SECONDS`` is stopped and its input reported as slow.
"""
