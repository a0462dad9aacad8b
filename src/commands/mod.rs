//! Command implementations: the only place that wires modules together.

pub mod generate;
pub mod serve;
