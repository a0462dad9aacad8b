//! The probe's calls in order, each value proven by the call that uses it: the quote id by
//! deleting that quote, the reference by subscribing with it, the contract id by claiming on
//! it, the update quote's `priceDelta` by its sign.

use serde_json::{Value, json};

use super::{Answer, CallReport, Prober, Stop, report, with_product_type};
use crate::datagen::{Booking, Generator, Mutation, Sign};
use crate::endpoints::context::booking_context;
use crate::engine::reading::as_text;
use crate::engine::tolerant;
use crate::models::{ClaimRequest, Envelope, Operation, WITHDRAWAL};

/// A value as read, or the candidates to try, each with the capture that would read it.
type Tries = Vec<(Option<String>, Value)>;

fn tries(read: Result<Value, Vec<(String, Value)>>) -> Tries {
    match read {
        Ok(value) => vec![(None, value)],
        Err(candidates) => candidates
            .into_iter()
            .take(5)
            .map(|(path, value)| (Some(path), value))
            .collect(),
    }
}

fn text(value: &Value) -> String {
    as_text(value).unwrap_or_else(|| value.to_string())
}

impl Prober {
    pub async fn run(&mut self, generator: &Generator) -> Result<(), Stop> {
        let deletable = generator.booking(0);
        let (ids, _) = self.quote(&deletable, "quote (to delete)", true).await?;
        self.delete_quote(&deletable, ids).await?;
        let booking = generator.booking(1);
        let (_, references) = self.quote(&booking, "quote", false).await?;
        if !self.subscribe(&booking, references).await? {
            self.left
                .push("the calls after the subscription need a subscription".into());
            return Ok(());
        }
        let contracts = self.read_contracts(&booking, "read contracts").await?;
        self.update(generator, &booking).await?;
        self.claim(&booking, contracts).await?;
        self.read_contracts(&booking, "read contracts (after the claim)")
            .await?;
        if self.flight_seller {
            self.report_flight(&booking).await?;
        }
        Ok(())
    }

    /// POST /quotes; the id and reference as read, or their candidates.
    async fn quote(
        &mut self,
        booking: &Booking,
        label: &str,
        first: bool,
    ) -> Result<(Tries, Tries), Stop> {
        let context = booking_context(booking);
        let body = json!(Envelope {
            data: booking.quote_request(0, false)
        });
        let mut call = report(label);
        let answer = self
            .send(&mut call, Operation::Quote, &context, Some(body))
            .await?;
        if first {
            gate(&call, &answer)?;
        }
        let ids = tries(self.read(&mut call, Operation::Quote, "id", &context, &answer));
        let references =
            tries(self.read(&mut call, Operation::Quote, "reference", &context, &answer));
        self.done(call, &answer);
        Ok((ids, references))
    }

    async fn delete_quote(&mut self, booking: &Booking, ids: Tries) -> Result<(), Stop> {
        let mut call = report("delete the quote");
        let outcome = self
            .first_accepted(&mut call, Operation::QuoteDeletion, ids, |id| {
                let mut context = booking_context(booking);
                context["quote"] = json!({ "id": id });
                (context, None)
            })
            .await?;
        self.settle(call, outcome, (Operation::Quote, "id"), "the quote's id")?;
        Ok(())
    }

    async fn subscribe(&mut self, booking: &Booking, references: Tries) -> Result<bool, Stop> {
        let mut call = report("subscribe");
        let outcome = self
            .first_accepted(
                &mut call,
                Operation::Subscription,
                references,
                |reference| {
                    let body = json!(Envelope {
                        data: booking.subscription_request(&[reference.to_string()])
                    });
                    (booking_context(booking), Some(body))
                },
            )
            .await?;
        self.settle(
            call,
            outcome,
            (Operation::Quote, "reference"),
            "the quote's reference",
        )
    }

    async fn read_contracts(&mut self, booking: &Booking, label: &str) -> Result<Tries, Stop> {
        let context = with_product_type(booking_context(booking), WITHDRAWAL);
        let mut call = report(label);
        let answer = self
            .send(&mut call, Operation::ReadContracts, &context, None)
            .await?;
        let ids = tries(self.read(
            &mut call,
            Operation::ReadContracts,
            "contract_id",
            &context,
            &answer,
        ));
        let status = self.read(
            &mut call,
            Operation::ReadContracts,
            "claim_status",
            &context,
            &answer,
        );
        if let Err(candidates) = status
            && let Some((path, value)) = candidates.first()
        {
            let proof = format!("{value} is one of the spec's claim statuses");
            self.learn(
                Operation::ReadContracts,
                "claim_status",
                path,
                proof.clone(),
            )?;
            call.lines
                .push(format!("proved claim_status = {path} ({proof})"));
        }
        self.done(call, &answer);
        Ok(ids)
    }

    async fn update(&mut self, generator: &Generator, booking: &Booking) -> Result<(), Stop> {
        let update = generator.update(booking, Mutation::PriceUp, 1);
        let context = booking_context(&update.booking);
        let body = json!(Envelope {
            data: update.booking.quote_request(0, true)
        });
        let mut call = report("update quote");
        let answer = self
            .send(&mut call, Operation::Quote, &context, Some(body))
            .await?;
        let ids = tries(self.read(&mut call, Operation::Quote, "id", &context, &answer));
        match self.read(
            &mut call,
            Operation::Quote,
            "price_delta",
            &context,
            &answer,
        ) {
            Ok(_) => {}
            Err(candidates) => self.prove_delta(&mut call, candidates, update.expected_delta)?,
        }
        self.done(call, &answer);
        let mut call = report("update (PATCH)");
        let outcome = self
            .first_accepted(&mut call, Operation::Update, ids, |id| {
                let mut context = booking_context(&update.booking);
                context["quote"] = json!({ "id": id });
                let body = json!(Envelope {
                    data: update.booking.update_request(&[id.to_string()])
                });
                (context, Some(body))
            })
            .await?;
        self.settle(
            call,
            outcome,
            (Operation::Quote, "id"),
            "the update quote's id",
        )?;
        Ok(())
    }

    /// The first candidate whose amount has the sign the price change gives.
    fn prove_delta(
        &mut self,
        call: &mut CallReport,
        candidates: Vec<(String, Value)>,
        expected: Sign,
    ) -> Result<(), Stop> {
        for (path, value) in candidates {
            if let Ok((amount, _)) = tolerant::delta_amount(&value)
                && Sign::of(amount) == expected
            {
                let proof = format!("{amount} has the sign of the price change ({expected})");
                self.learn(Operation::Quote, "price_delta", &path, proof.clone())?;
                call.lines
                    .push(format!("proved price_delta = {path} ({proof})"));
                return Ok(());
            }
        }
        call.ok = false;
        self.left
            .push("priceDelta of an update quote: no candidate in the answer".into());
        Ok(())
    }

    async fn claim(&mut self, booking: &Booking, contracts: Tries) -> Result<(), Stop> {
        let mut call = report("claim");
        let day = crate::engine::claim_day(chrono::Utc::now() + chrono::Duration::hours(25))
            .format("%Y-%m-%d")
            .to_string();
        let outcome = self
            .first_accepted(&mut call, Operation::Claim, contracts, |id| {
                let mut context = with_product_type(booking_context(booking), WITHDRAWAL);
                context["contract"] = json!({ "id": id });
                context["claim_day"] = json!(day);
                let body = json!(Envelope {
                    data: ClaimRequest {
                        claim_date: Some(day.clone()),
                        beneficiary: Some(booking.beneficiary.clone()),
                        ..ClaimRequest::default()
                    }
                });
                (context, Some(body))
            })
            .await?;
        if let Ok((_, answer)) = &outcome {
            let context = with_product_type(booking_context(booking), WITHDRAWAL);
            let _ = self.read(
                &mut call,
                Operation::Claim,
                "claim_status",
                &context,
                answer,
            );
        }
        let contract_id = (Operation::ReadContracts, "contract_id");
        self.settle(call, outcome, contract_id, "the contract id")?;
        Ok(())
    }

    async fn report_flight(&mut self, booking: &Booking) -> Result<(), Stop> {
        let context = booking_context(booking);
        let mut call = report("flight-cancellation report");
        let answer = self
            .send(&mut call, Operation::FlightCancellation, &context, None)
            .await?;
        self.done(call, &answer);
        Ok(())
    }

    /// Sends `op` with each value to try until one is accepted; the accepted try's capture
    /// (if it was a candidate) and its answer, else the last refusal.
    async fn first_accepted(
        &mut self,
        call: &mut CallReport,
        op: Operation,
        tries: Tries,
        build: impl Fn(&str) -> (Value, Option<Value>),
    ) -> Result<Result<(Option<String>, Answer), Option<Answer>>, Stop> {
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
    fn settle(
        &mut self,
        mut call: CallReport,
        outcome: Result<(Option<String>, Answer), Option<Answer>>,
        proves: (Operation, &str),
        what: &str,
    ) -> Result<bool, Stop> {
        match outcome {
            Ok((path, answer)) => {
                self.prove(&mut call, proves.0, proves.1, path, &answer)?;
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
    fn prove(
        &mut self,
        call: &mut CallReport,
        op: Operation,
        name: &str,
        path: Option<String>,
        answer: &Answer,
    ) -> Result<(), Stop> {
        if let Some(path) = path {
            let proof = format!(
                "{} accepted it (HTTP {})",
                call.request,
                answer.status.unwrap_or(0)
            );
            self.learn(op, name, &path, proof.clone())?;
            call.lines.push(format!("proved {name} = {path} ({proof})"));
        }
        Ok(())
    }

    /// A call none of whose values worked: recorded, and named as left for the user.
    fn finish_unproven(
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

/// The first call settles whether the target is there and takes the token.
fn gate(call: &CallReport, answer: &Answer) -> Result<(), Stop> {
    match answer.status {
        Some(401) => Err(Stop::TokenRejected(format!(
            "{} answered 401: the token was rejected",
            call.request
        ))),
        None if answer.unreachable => Err(Stop::Unreachable(format!(
            "{} could not be reached: {}",
            call.request,
            answer.error.as_deref().unwrap_or("no answer")
        ))),
        _ => Ok(()),
    }
}
