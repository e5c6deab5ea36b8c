//! sysgauge-twoping (being built).
