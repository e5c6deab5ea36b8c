//! sysgauge-bench (being built).
