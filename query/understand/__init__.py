"""First room of the engine: what a question asks (intent), about whom (entity linking), along which
Wikidata property (property labels). Nothing here retrieves evidence."""
