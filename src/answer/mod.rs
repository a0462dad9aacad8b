//! Reading answers, below the engine: the built-in tolerant reading of the layouts the spec
//! does not show (`tolerant.rs`), amounts of money in every shape (`money.rs`, refused with `money_error.rs`), values read by a
//! configured capture or else the built-in reading (`reading.rs`), a quote's bundles
//! (`bundles.rs`) and a flagged claim in words (`claim_flag.rs`). `run`'s engine, `probe`,
//! `proxy` and `attest` all read answers with it, so none needs the engine to read one.

pub(crate) mod bundles;
pub(crate) mod claim_flag;
pub(crate) mod money;
mod money_error;
pub(crate) mod reading;
pub(crate) mod tolerant;
