//! sysgauge-host (being built).
