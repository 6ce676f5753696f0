"""Performance benchmarks: speed and cost of skgibbs against floors and peers."""
