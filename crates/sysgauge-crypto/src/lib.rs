//! sysgauge-crypto: the hash and crypto families, the choice among their
//! implementations (`implementation`), aws-lc's C API glue (`awslc`), the
//! reader of `openssl speed`'s output (`openssl_speed`) and what
//! `sysgauge crypto` runs (`speed`, both families together, as `openssl
//! speed` does).
//!
//! The families follow the contract of sysgauge-family; the list of
//! families is sysgauge-registry, above this crate.

// aws-lc's C API for the public-key operations aws-lc-rs lacks: the
// crate's one FFI wrapper (the crypto family itself forbids unsafe code).
pub mod awslc;
pub mod crypto;
pub mod hash;
pub mod implementation;
pub mod known_ratios;
pub mod openssl_speed;
pub mod speed;
#[cfg(test)]
mod test_support;
