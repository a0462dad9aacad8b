//! How the probe proves a value it could not read: each candidate is tried in the call that
//! uses it, and the first the staging accepts becomes a learned capture.

use serde_json::Value;

use super::{Answer, CallReport, Prober, Stop};
use crate::answer::reading::as_text;
use crate::endpoints::CaptureSpec;
use crate::models::Operation;

/// A value as read, or the candidates to try, each with the capture that would read it.
pub(super) type Tries = Vec<(Option<CaptureSpec>, Value)>;

pub(super) fn tries(read: Result<Value, Vec<(CaptureSpec, Value)>>) -> Tries {
    match read {
        Ok(value) => vec![(None, value)],
        Err(candidates) => candidates
            .into_iter()
            .take(5)
            .map(|(path, value)| (Some(path), value))
            .collect(),
    }
}

pub(super) fn text(value: &Value) -> String {
    as_text(value).unwrap_or_else(|| value.to_string())
}

/// The value a call's success proves a capture for: the operation whose answer gives it, and
/// its name there.
#[derive(Clone, Copy)]
pub(super) struct Proves<'a> {
    pub op: Operation,
    pub name: &'a str,
}
impl Prober {
    /// Sends `op` with each value to try until one is accepted; the accepted try's capture
    /// (if it was a candidate) and its answer, else the last refusal.
    pub(super) async fn first_accepted(
        &mut self,
        call: &mut CallReport,
        op: Operation,
        tries: Tries,
        build: impl Fn(&str) -> (Value, Option<Value>),
    ) -> Result<Result<(Option<CaptureSpec>, Answer), Option<Answer>>, Stop> {
        let mut last = None;
        for (path, value) in tries {
            let (context, body) = build(&text(&value));
            let answer = self.send(call, op, &context, body).await?;
            if answer.accepted() {
                return Ok(Ok((path, answer)));
            }
            last = Some(answer);
        }
        Ok(Err(last))
    }

    /// Ends a call whose value was tried: proves the capture that worked, or says what failed.
    pub(super) fn settle(
        &mut self,
        mut call: CallReport,
        outcome: Result<(Option<CaptureSpec>, Answer), Option<Answer>>,
        proves: Proves<'_>,
        what: &str,
    ) -> Result<bool, Stop> {
        match outcome {
            Ok((path, answer)) => {
                self.prove(&mut call, proves.op, proves.name, path, &answer)?;
                self.done(call, &answer);
                Ok(true)
            }
            Err(last) => {
                self.finish_unproven(call, last, what)?;
                Ok(false)
            }
        }
    }

    /// A candidate that worked becomes a learned capture; a value read needs nothing.
    pub(super) fn prove(
        &mut self,
        call: &mut CallReport,
        op: Operation,
        name: &str,
        path: Option<CaptureSpec>,
        answer: &Answer,
    ) -> Result<(), Stop> {
        if let Some(path) = path {
            let proof = format!(
                "{} accepted it (HTTP {})",
                call.request,
                answer.status.unwrap_or(0)
            );
            self.learn(op, name, &path, proof.clone())?;
            call.lines
                .push(format!("proved {name} = {} ({proof})", path.describe()));
        }
        Ok(())
    }

    /// A call none of whose values worked: recorded, and named as left for the user.
    pub(super) fn finish_unproven(
        &mut self,
        mut call: CallReport,
        last: Option<Answer>,
        what: &str,
    ) -> Result<(), Stop> {
        call.ok = false;
        match last {
            Some(answer) => self.done(call, &answer),
            None => {
                self.left.push(format!(
                    "{}: not sent: {what} could not be read and no candidate was found",
                    call.label
                ));
                self.calls.push(call);
            }
        }
        Ok(())
    }
}
