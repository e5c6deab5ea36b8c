//! sysgauge-report (being built).
