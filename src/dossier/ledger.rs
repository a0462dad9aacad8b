//! The dossier's ledger, computed from its members alone: each operation counted once however
//! many members recorded it (the most any one member recorded of it), each requirement naming
//! the members and exchanges that proved it.

use std::collections::HashMap;

use super::model::{
    Dossier, DossierRequirement, DossierTarget, HELD_TO, Member, Proof, SANDBOX_NOTICE, SCHEMA,
    SCHEMA_VERSION,
};
use crate::evidence::{Evidence, RequirementResult, Tool, Verdict};
use crate::models::Operation;
use crate::record::Exchange;
use crate::scenario::Requirement;

/// One member as the ledger reads it: verified, its record computed again from its journal.
pub(crate) struct Read {
    /// Its file in the dossier.
    pub file: String,
    /// Its record computed again from its journal (ledger, verdict, run).
    pub derived: Evidence,
    /// The exchanges its ledger counts, in order (see [`Counted::read`]).
    pub counted: Vec<Counted>,
    pub journal_sha256: String,
    pub signed: bool,
}

/// One exchange a member's ledger counts, as much of it as the dossier's ledger needs: the
/// exchanges themselves are read one at a time and never held.
pub(crate) struct Counted {
    pub seq: u64,
    pub operation: Operation,
    /// What it wrote, as [`super::identity::key`] names it.
    pub key: String,
}

impl Counted {
    /// The exchanges of a member that count, from all of them in order: each success, a
    /// claim only once its status was read and not flagged (as in the member's own ledger).
    pub(crate) fn read(
        each_exchange: impl FnOnce(&mut dyn FnMut(Exchange) -> bool) -> Result<(), String>,
    ) -> Result<Vec<Counted>, String> {
        let mut claims = crate::evidence::confirmed::ClaimConfirmations::default();
        let mut successes = Vec::new();
        each_exchange(&mut |exchange| {
            let success = exchange.counts_as_success();
            claims.add(&exchange, success);
            if success {
                successes.push(Counted {
                    seq: exchange.seq,
                    operation: exchange.operation,
                    key: super::identity::key(&exchange),
                });
            }
            true
        })?;
        let confirmed: std::collections::HashSet<u64> = claims.confirmed().collect();
        successes.retain(|c| c.operation != Operation::Claim || confirmed.contains(&c.seq));
        Ok(successes)
    }
}

/// The requirements a dossier is held to: the built-in certification batch.
pub(crate) fn requirements(flight_seller: bool) -> Vec<Requirement> {
    let batch = crate::scenario::builtin_named(HELD_TO)
        .map(|loaded| loaded.scenario.requirements)
        .unwrap_or_default();
    batch
        .into_iter()
        .filter(|r| flight_seller || !r.flight_sellers_only)
        .collect()
}

/// Builds the dossier of `members`, in the order they were added. `members` is not empty.
pub(crate) fn compute(members: &[Read]) -> Dossier {
    let first = &members[0].derived.run;
    let requirements = requirements(first.partner.flight_seller);
    let mut seen: HashMap<String, u32> = HashMap::new();
    let mut proofs: HashMap<Operation, Vec<Proof>> = HashMap::new();
    let mut listed = Vec::new();
    for member in members {
        let (counted, duplicates) = count(member, &mut seen, &mut proofs);
        listed.push(describe(member, counted, duplicates));
    }
    let sandbox = members.iter().any(|m| m.derived.run.target.sandbox);
    let ledger: Vec<DossierRequirement> = requirements
        .iter()
        .map(|r| requirement(r, members, proofs.remove(&r.operation).unwrap_or_default()))
        .collect();
    let verdict = match ledger.iter().all(|r| r.counts.met) {
        true => Verdict::Passed,
        false => Verdict::Failed,
    };
    Dossier {
        schema: SCHEMA.to_string(),
        schema_version: SCHEMA_VERSION,
        tool: Tool::default(),
        partner: first.partner.clone(),
        target: DossierTarget {
            base_url: first.target.base_url.clone(),
            environment: first.target.environment,
            sandbox,
        },
        notice: sandbox.then(|| SANDBOX_NOTICE.to_string()),
        verdict,
        requirements: ledger,
        members: listed,
    }
}

/// Counts one member's successes not counted before; how many it added and how many an
/// earlier member had counted already.
fn count(
    member: &Read,
    seen: &mut HashMap<String, u32>,
    proofs: &mut HashMap<Operation, Vec<Proof>>,
) -> (u32, u32) {
    let mut mine: HashMap<&str, Vec<&Counted>> = HashMap::new();
    let mut order = Vec::new();
    for exchange in &member.counted {
        let list = mine.entry(&exchange.key).or_default();
        if list.is_empty() {
            order.push(exchange.key.as_str());
        }
        list.push(exchange);
    }
    let (mut counted, mut duplicates) = (0, 0);
    for key in order {
        let exchanges = &mine[key];
        let before = seen.get(key).copied().unwrap_or(0);
        let mine_count = exchanges.len() as u32;
        let new = mine_count.saturating_sub(before);
        duplicates += mine_count - new;
        counted += new;
        if new == 0 {
            continue;
        }
        seen.insert(key.to_string(), before.max(mine_count));
        let operation = exchanges[0].operation;
        let list = proofs.entry(operation).or_default();
        let proof = match list.iter_mut().find(|p| p.member == member.file) {
            Some(proof) => proof,
            None => {
                list.push(Proof {
                    member: member.file.clone(),
                    run_id: member.derived.run.id.clone(),
                    counted: 0,
                    exchanges: Vec::new(),
                });
                list.last_mut().expect("just pushed")
            }
        };
        proof.counted += new;
        let skip = exchanges.len() - new as usize;
        proof
            .exchanges
            .extend(exchanges.iter().skip(skip).map(|e| e.seq));
    }
    (counted, duplicates)
}

fn requirement(r: &Requirement, members: &[Read], proven_by: Vec<Proof>) -> DossierRequirement {
    let own = |m: &Read| {
        (m.derived.requirements.iter())
            .find(|own| own.operation == r.operation)
            .map_or((0, 0), |own| (own.failed, own.unconfirmed))
    };
    let (failed, unconfirmed) = members
        .iter()
        .map(own)
        .fold((0, 0), |(f, u), (a, b)| (f + a, u + b));
    let succeeded = proven_by.iter().map(|p| p.counted).sum();
    DossierRequirement {
        counts: RequirementResult {
            operation: r.operation.into(),
            required: r.required,
            succeeded,
            failed,
            unconfirmed,
            met: succeeded >= r.required,
        },
        proven_by,
    }
}

fn describe(member: &Read, counted: u32, duplicates: u32) -> Member {
    let run = &member.derived.run;
    let kind = match run.scenario_source == crate::evidence::PARTNER_TRAFFIC {
        true => "proxy session",
        false => "run",
    };
    Member {
        file: member.file.clone(),
        run_id: run.id.clone(),
        kind: kind.to_string(),
        scenario: run.scenario.clone(),
        started_at: run.started_at,
        finished_at: run.finished_at,
        complete: run.complete,
        verdict: member.derived.verdict,
        journal_sha256: member.journal_sha256.clone(),
        signed: member.signed,
        counted,
        duplicates,
    }
}
