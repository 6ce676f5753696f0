"""Code shared by the benchmarks: tables, the writer, the environment record, data sets, timing and peers."""
