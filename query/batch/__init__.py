"""Batch question answering: question files in, one answers Parquet out; the steps the QA DAG calls."""
