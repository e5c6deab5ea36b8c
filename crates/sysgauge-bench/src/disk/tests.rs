//! Tests of the disk family on real file systems.
