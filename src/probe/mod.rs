//! `ppcert probe`: one of each call against an unfamiliar staging, with the configured
//! endpoints. For each answer it shows the status, the shape and what was read from where;
//! where the built-in reading fails it searches the answer for candidates and proves one by
//! using it; where a request shape is refused it tries the other dialect's. What it proved can
//! be written as a `ppcert.toml`.

mod answer;
mod bundled;
mod candidates;
mod confirm;
mod paths;
mod prober;
mod proof;
mod refusal;
mod steps;
mod stop;
pub(crate) mod write;

pub(crate) use answer::Answer;
pub(crate) use prober::{CallReport, Prober, report, with_product_type};
pub(crate) use stop::{Broken, Stop};
