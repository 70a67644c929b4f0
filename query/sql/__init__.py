"""SQL over tables built for one question: checked before it runs, run on DuckDB over Arrow."""
