//! The probe's calls in order, each value proven by the call that uses it: the quote id by
//! deleting that quote, the reference by subscribing with it, the contract id by claiming on
//! it, the update quote's `priceDelta` by its sign.

use serde_json::{Value, json};

use super::proof::{Proves, Tries, text, tries};
use super::{Answer, CallReport, Prober, Stop, report, with_product_type};
use crate::answer::tolerant;
use crate::datagen::{Booking, Generator, Mutation, Sign};
use crate::endpoints::CaptureSpec;
use crate::endpoints::context::{Known, call_context};
use crate::engine::single_call::ClaimOutcome;
use crate::models::{ClaimRequest, Envelope, Operation, WITHDRAWAL};

/// The values a call's success proves a capture for.
const QUOTE_ID: Proves<'static> = Proves {
    op: Operation::Quote,
    name: "id",
};
const QUOTE_REFERENCE: Proves<'static> = Proves {
    op: Operation::Quote,
    name: "reference",
};
const CONTRACT_ID: Proves<'static> = Proves {
    op: Operation::ReadContracts,
    name: "contract_id",
};

impl Prober {
    pub(crate) async fn run(&mut self, generator: &Generator) -> Result<(), Stop> {
        let deletable = generator.booking(0);
        let (ids, references) = self.quote(&deletable, "quote (to delete)", true).await?;
        self.delete_quote(&deletable, ids, references).await?;
        let booking = generator.booking(1);
        let (ids, references) = self.quote(&booking, "quote", false).await?;
        let id = ids.first().map(|(_, v)| text(v)).unwrap_or_default();
        if !self.subscribe(&booking, &id, references).await? {
            self.left
                .push("the calls after the subscription need a subscription".into());
            return Ok(());
        }
        // A new booking's contracts may be listed late: waited for as the run waits.
        let (contracts, _) = self
            .read_contracts(&booking, "read contracts", true)
            .await?;
        let contract = contracts.first().map(|(_, v)| text(v));
        self.update(generator, &booking).await?;
        if let Some(outcome) = self.claim(&booking, contracts).await? {
            self.after_claim(&booking, outcome).await?;
        }
        if self.flight_seller {
            self.report_flight(&booking, contract).await?;
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
        self.single.for_booking(booking);
        let context = call_context(booking, &Known::default());
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
        let answer = self.through_bundle(&mut call, answer);
        let ids = tries(self.read(&mut call, Operation::Quote, "id", &context, &answer));
        let references =
            tries(self.read(&mut call, Operation::Quote, "reference", &context, &answer));
        self.done(call, &answer);
        Ok((ids, references))
    }

    /// Deletes the quote by the configured path; when every id is refused and the path names
    /// the quote's id, tries the same path by the quote's reference.
    async fn delete_quote(
        &mut self,
        booking: &Booking,
        ids: Tries,
        references: Tries,
    ) -> Result<(), Stop> {
        self.single.for_booking(booking);
        let mut call = report("delete the quote");
        let reference = references.first().map(|(_, v)| text(v)).unwrap_or_default();
        let context_for = |id: &str, reference: &str| {
            call_context(
                booking,
                &Known {
                    quote: Some((id, reference)),
                    ..Known::default()
                },
            )
        };
        let outcome = self
            .first_accepted(&mut call, Operation::QuoteDeletion, ids.clone(), |id| {
                (context_for(id, &reference), None)
            })
            .await?;
        let by_id = self.endpoints.path_template(Operation::QuoteDeletion);
        if outcome.is_ok() || !by_id.contains("quote.id") {
            self.settle(call, outcome, QUOTE_ID, "the quote's id")?;
            return Ok(());
        }
        let by_reference = by_id.replace("quote.id", "quote.reference");
        call.lines.push(format!(
            "refused by id; trying `{by_reference}` (by the quote's reference)"
        ));
        let learned = self.try_path(Operation::QuoteDeletion, &by_reference)?;
        let id = ids.first().map(|(_, v)| text(v)).unwrap_or_default();
        let outcome = self
            .first_accepted(
                &mut call,
                Operation::QuoteDeletion,
                references,
                |reference| (context_for(&id, reference), None),
            )
            .await?;
        if let Ok((_, answer)) = &outcome {
            let proof = format!(
                "{} accepted it (HTTP {})",
                call.request,
                answer.status.unwrap_or(0)
            );
            self.keep_path(Operation::QuoteDeletion, learned, proof);
        } else {
            self.restore_path(learned)?;
        }
        self.settle(call, outcome, QUOTE_REFERENCE, "the quote's reference")?;
        Ok(())
    }

    async fn subscribe(
        &mut self,
        booking: &Booking,
        id: &str,
        references: Tries,
    ) -> Result<bool, Stop> {
        self.single.for_booking(booking);
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
                    let known = Known {
                        quote: Some((id, reference)),
                        ..Known::default()
                    };
                    (call_context(booking, &known), Some(body))
                },
            )
            .await?;
        self.settle(call, outcome, QUOTE_REFERENCE, "the quote's reference")
    }

    /// GET the contracts (with `listed`, waiting as the run does for a new booking's to be
    /// listed): the contract ids to try, and the claim status read (or proven).
    pub(super) async fn read_contracts(
        &mut self,
        booking: &Booking,
        label: &str,
        listed: bool,
    ) -> Result<(Tries, Option<String>), Stop> {
        self.single.for_booking(booking);
        let context = with_product_type(call_context(booking, &Known::default()), WITHDRAWAL);
        let mut call = report(label);
        let op = Operation::ReadContracts;
        let answer = (self.send_waiting(&mut call, op, &context, None, listed)).await?;
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
        let mut read = status.as_ref().ok().map(text);
        if let Err(candidates) = status
            && let Some((path, value)) = candidates.first()
        {
            read = Some(text(value));
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
        Ok((ids, read))
    }

    async fn update(&mut self, generator: &Generator, booking: &Booking) -> Result<(), Stop> {
        let update = generator.update(booking, Mutation::PriceUp, 1);
        self.single.for_booking(&update.booking);
        let context = call_context(&update.booking, &Known::default());
        let body = json!(Envelope {
            data: update.booking.quote_request(0, true)
        });
        let mut call = report("update quote");
        let answer = self
            .send(&mut call, Operation::Quote, &context, Some(body))
            .await?;
        let answer = self.through_bundle(&mut call, answer);
        let ids = tries(self.read(&mut call, Operation::Quote, "id", &context, &answer));
        let reference = self
            .read(&mut call, Operation::Quote, "reference", &context, &answer)
            .map(|v| text(&v))
            .unwrap_or_default();
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
                let known = Known {
                    quote: Some((id, &reference)),
                    ..Known::default()
                };
                let context = call_context(&update.booking, &known);
                let body = json!(Envelope {
                    data: update.booking.update_request(&[id.to_string()])
                });
                (context, Some(body))
            })
            .await?;
        self.settle(call, outcome, QUOTE_ID, "the update quote's id")?;
        Ok(())
    }

    /// The first candidate whose amount has the sign the price change gives.
    fn prove_delta(
        &mut self,
        call: &mut CallReport,
        candidates: Vec<(CaptureSpec, Value)>,
        expected: Sign,
    ) -> Result<(), Stop> {
        for (path, value) in candidates {
            if let Ok((amount, _)) = tolerant::delta_amount(&value)
                && Sign::of(crate::answer::money::signum(amount)) == expected
            {
                let proof = format!("{amount} has the sign of the price change ({expected})");
                self.learn(Operation::Quote, "price_delta", &path, proof.clone())?;
                call.lines.push(format!(
                    "proved price_delta = {} ({proof})",
                    path.describe()
                ));
                return Ok(());
            }
        }
        call.ok = false;
        self.left
            .push("priceDelta of an update quote: no candidate in the answer".into());
        Ok(())
    }

    /// POST a claim: `None` when no claim was accepted, else how the run's confirmation of
    /// it ended (its status read from its answer, else from the contracts).
    async fn claim(
        &mut self,
        booking: &Booking,
        contracts: Tries,
    ) -> Result<Option<ClaimOutcome>, Stop> {
        self.single.for_booking(booking);
        let mut call = report("claim");
        let at = chrono::Utc::now() + chrono::Duration::hours(25);
        let date = at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let day = crate::engine::claim_day(at).format("%Y-%m-%d").to_string();
        let outcome = self
            .first_accepted(&mut call, Operation::Claim, contracts, |id| {
                let known = Known {
                    contract: Some(id),
                    claim_dates: Some((date.clone(), day.clone())),
                    product_type: Some(WITHDRAWAL),
                    ..Known::default()
                };
                let context = call_context(booking, &known);
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
        let claimed = outcome.as_ref().ok().and_then(|(_, a)| a.claim.clone());
        if let Some(ClaimOutcome::Status(status)) = &claimed {
            call.lines.push(format!(
                "claim status {status}, confirmed as `run` confirms it"
            ));
        }
        self.settle(call, outcome, CONTRACT_ID, "the contract id")?;
        Ok(claimed)
    }

    async fn report_flight(
        &mut self,
        booking: &Booking,
        contract: Option<String>,
    ) -> Result<(), Stop> {
        self.single.for_booking(booking);
        let known = Known {
            quote: Some(("qt_probe", "QR-PROBE")),
            contract: contract.as_deref(),
            ..Known::default()
        };
        let context = call_context(booking, &known);
        let mut call = report("flight-cancellation report");
        let answer = self
            .send(&mut call, Operation::FlightCancellation, &context, None)
            .await?;
        self.done(call, &answer);
        Ok(())
    }
}

/// The first call settles whether the target is there and takes the token.
fn gate(call: &CallReport, answer: &Answer) -> Result<(), Stop> {
    let challenge = crate::record::header(&answer.headers, "www-authenticate");
    match answer.status {
        // A gateway's 401 about its own key is a refusal like any other, not the token's.
        Some(401) if crate::record::rejects_token(401, challenge, &answer.words) => {
            Err(Stop::TokenRejected(format!(
                "{} answered 401: the token was rejected: {}",
                call.request, answer.words
            )))
        }
        None if answer.unreachable => Err(Stop::Unreachable(format!(
            "{} could not be reached: {}",
            call.request,
            answer.error.as_deref().unwrap_or("no answer")
        ))),
        _ => Ok(()),
    }
}
