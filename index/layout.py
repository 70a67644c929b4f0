"""Names of what an index version folder holds; readers and the build agree through these."""

EVIDENCE = "evidence"  # evidence/<table>.<ingest file>.parquet
EVIDENCE_DUPLICATES = "evidence_duplicates.parquet"  # positions of rows whose id an earlier file has
WORK = ".work"  # a build's scratch: name tables, DuckDB spill, per-stage files; removed before publishing
ENTITIES = "entities"
ENTITY_TABLE = "entities/entities.parquet"
ALIAS_TABLE = "entities/aliases.parquet"
ALIAS_INDEX = "aliases_bm25"  # Tantivy index over aliases
BM25 = "bm25"  # Tantivy index over evidence
VECTORS = "vectors"  # LanceDB database, table "evidence"
GRAPH = "graph"  # Kùzu database folder
GRAPH_DB = "graph/graph.kuzu"
STATEMENTS = "statements"
STATEMENT_TABLE = "statements/statements.parquet"  # typed Wikidata statements, sorted by subject
TABLES = "tables"
TABLE_ROWS = "tables/table_rows.parquet"  # every Wikipedia table row with its cells, by table id
