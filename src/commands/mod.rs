//! Command implementations: the only place that wires modules together.

pub mod serve;
