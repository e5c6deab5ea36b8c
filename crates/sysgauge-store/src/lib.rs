//! sysgauge-store (being built).
