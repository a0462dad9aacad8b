//! `ppcert proxy --faults`: the plan, and the faults injected into the partner's traffic.

pub(crate) mod inject;
pub(crate) mod plan;
