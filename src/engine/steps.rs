//! The positive steps: what each sends, what it checks, and what it hands the next step.

use super::step::{StepError, missing};
use rust_decimal::Decimal;

use serde_json::{Value, json};

use super::caller::Pending;
use super::step::StepContext;
use super::step::{CONTRACTS_EVERY, CONTRACTS_WAIT, Poll};
use crate::answer::bundles;
use crate::answer::reading::{Need, as_text};
use crate::answer::tolerant;
use crate::datagen::{Mutation, Sign};
use crate::models::{Envelope, Operation, ProductType};
use crate::record::Check;
use crate::record::QuoteRef;
use crate::timestamp::Timestamp;

/// POST /quotes; checks id and reference, the sign of `priceDelta` when one is expected, and
/// its currency when it names one. `total` is the delta of the booking's earlier plans: the
/// quote's is added to it (a sum past the decimal range is a failed check, not a crash).
pub(super) async fn quote_call(
    cx: &mut StepContext<'_>,
    step: &str,
    body: Value,
    expected: Option<Sign>,
    total: Option<Decimal>,
) -> Result<(QuoteRef, Option<Decimal>), StepError> {
    let context = cx.context(None, None, None);
    let currency = (body.pointer("/data/currency").and_then(Value::as_str)).map(str::to_string);
    let expect = cx.success(Operation::Quote);
    let spec = cx.spec(Operation::Quote, step, &context, Some(body), expect)?;
    let mut pending = cx.send(spec).await;
    pending.payload();
    let chosen = match choose_bundle(cx, &mut pending) {
        Ok(chosen) => chosen,
        Err(error) => {
            cx.conclude(pending)?;
            return Err(missing(&error));
        }
    };
    let id = cx.read_builtin(&mut pending, "id", &context, Need::Required);
    let reference = cx.read_builtin(&mut pending, "reference", &context, Need::Required);
    let need_delta = if expected.is_some() {
        Need::Required
    } else {
        Need::Optional
    };
    let delta_read = cx.read_builtin(&mut pending, "price_delta", &context, need_delta);
    let total = delta_checks(
        &mut pending,
        delta_read,
        expected,
        currency.as_deref(),
        total,
    );
    let found = match (
        id.as_ref().and_then(as_text),
        reference.as_ref().and_then(as_text),
    ) {
        (Some(id), Some(reference)) => Some((
            QuoteRef {
                id,
                reference,
                bundle: chosen.as_ref().and_then(|c| c.name.clone()),
                documents: chosen.map(|c| c.documents).unwrap_or_default(),
            },
            total,
        )),
        _ => None,
    };
    cx.conclude(pending)?;
    if let Some((quote, _)) = &found {
        cx.state.made_quotes.push(quote.clone());
    }
    found.ok_or_else(|| missing("the quote answer had no id or reference"))
}

/// Reads a multi-bundle answer through the entry of the partner's bundle: the values that
/// follow are read from it; the choice is recorded as a value read. A plain answer is read
/// whole.
fn choose_bundle(
    cx: &StepContext<'_>,
    pending: &mut Pending,
) -> Result<Option<bundles::Chosen>, String> {
    let Some(body) = pending.success_body() else {
        return Ok(None);
    };
    match bundles::choose(&body, cx.shared.endpoints.bundle()) {
        Ok(Some(chosen)) => {
            pending.reads.push(crate::record::ValueRead {
                name: "bundle".into(),
                value: chosen.name.clone(),
                from: chosen.at.clone(),
            });
            pending.view = Some(chosen.view.clone());
            Ok(Some(chosen))
        }
        Ok(None) => Ok(None),
        Err(error) => {
            let error = error.to_string();
            pending
                .checks
                .push(Check::fail("read_bundle", error.clone()));
            Err(error)
        }
    }
}

pub(super) async fn quote(cx: &mut StepContext<'_>) -> Result<(), StepError> {
    let booking = cx.booking().clone();
    for plan in 0..booking.plans.len() {
        let (quote, _) = quote_call(
            cx,
            &cx.step_name.clone(),
            json!(Envelope {
                data: booking.quote_request(plan, false)
            }),
            None,
            None,
        )
        .await?;
        cx.state.open_quotes.push(quote);
    }
    Ok(())
}

pub(super) async fn subscribe(cx: &mut StepContext<'_>) -> Result<(), StepError> {
    let references: Vec<String> = cx
        .state
        .open_quotes
        .iter()
        .map(|q| q.reference.clone())
        .collect();
    let body = json!(Envelope {
        data: cx.booking().subscription_request(&references)
    });
    let context = cx.context(cx.state.open_quotes.first(), None, None);
    let contract = write_contract(cx, Operation::Subscription, &context, body).await?;
    if let (Some(id), Some(product_type)) = (
        contract.as_ref().and_then(as_text),
        cx.booking().product_types.first().cloned(),
    ) {
        cx.state.contracts.insert(product_type, id);
    }
    cx.state.quotes = std::mem::take(&mut cx.state.open_quotes);
    cx.state.subscribed_at = Some(Timestamp::now());
    Ok(())
}

/// A subscription or a PATCH: nothing has to be read from its answer (contracts are read
/// later), but a configured capture is; the contract id if one was read.
async fn write_contract(
    cx: &mut StepContext<'_>,
    operation: Operation,
    context: &Value,
    body: Value,
) -> Result<Option<Value>, StepError> {
    let (step, expect) = (cx.step_name.clone(), cx.success(operation));
    let spec = cx.spec(operation, &step, context, Some(body), expect)?;
    let mut pending = cx.send(spec).await;
    pending.payload();
    let contract = cx.read_builtin(&mut pending, "contract_id", context, Need::Optional);
    cx.read_builtin(&mut pending, "price_delta", context, Need::Optional);
    cx.conclude(pending)?;
    Ok(contract)
}

/// A complete new booking: update quote(s) with the booking number, then PATCH.
pub(super) async fn update(
    cx: &mut StepContext<'_>,
    mutation: Option<Mutation>,
) -> Result<(), StepError> {
    let mutation =
        mutation.unwrap_or(Mutation::ALL[cx.instance.ordinal as usize % Mutation::ALL.len()]);
    let update = cx
        .shared
        .generator
        .update(cx.booking(), mutation, cx.instance.index);
    // With several flight plans each quote's delta is against the whole contract: only a
    // single-plan update has a sign to check.
    let single = update.booking.plans.len() == 1;
    let plans = update.booking.plans.len();
    // Resumed inside this step, the update quotes and the PATCH the interrupted run already
    // got answered are replayed from its journal, not sent again (see `StepContext::send`): a
    // new quote would price against an update the server may already hold.
    let mut quotes = Vec::new();
    let mut total_delta = None;
    for plan in 0..plans {
        let body = json!(Envelope {
            data: update.booking.quote_request(plan, true)
        });
        let step = cx.step_name.clone();
        let expected = single.then_some(update.expected_delta);
        let (quote, total) = quote_call(cx, &step, body, expected, total_delta).await?;
        total_delta = total;
        quotes.push(quote);
    }
    let ids: Vec<String> = quotes.iter().map(|q| q.id.clone()).collect();
    let body = json!(Envelope {
        data: update.booking.update_request(&ids)
    });
    let context = cx.context(quotes.first(), None, None);
    write_contract(cx, Operation::Update, &context, body).await?;
    cx.state.booking = Some(update.booking);
    cx.state.quotes = quotes;
    cx.state.price_delta = total_delta.map(crate::answer::money::to_f64);
    cx.state.mutation = Some(update.mutation);
    Ok(())
}

pub(super) async fn read_contracts_call(
    cx: &mut StepContext<'_>,
    step: &str,
) -> Result<Pending, StepError> {
    let context = cx.read_context();
    let expect = cx.success(Operation::ReadContracts);
    let spec = cx.spec(Operation::ReadContracts, step, &context, None, expect)?;
    Ok(cx.send(spec).await)
}

pub(super) async fn read_contracts(
    cx: &mut StepContext<'_>,
    when_unknown: bool,
) -> Result<(), StepError> {
    let known = (cx.booking().product_types.iter()).all(|t| cx.state.contracts.contains_key(t));
    if when_unknown && known {
        // The scenario asked to read only what is not known yet: nothing is.
        return Ok(());
    }
    let mut pending = read_until_listed(cx).await?;
    pending.payload();
    for product_type in cx.booking().product_types.clone() {
        let mut context = cx.context(None, None, None);
        context["product_type"] = json!(product_type);
        // An id the subscription's answer already gave (a body or a `Location` capture) need
        // not be read again; one the contracts answer gives replaces it.
        let need = if cx.state.contracts.contains_key(&product_type) {
            Need::Optional
        } else {
            Need::Required
        };
        let id = cx
            .read_builtin(&mut pending, "contract_id", &context, need)
            .as_ref()
            .and_then(as_text);
        let status = cx
            .read_builtin(&mut pending, "claim_status", &context, Need::Optional)
            .as_ref()
            .and_then(as_text);
        if let Some(id) = id {
            if status.is_some() {
                cx.state.claim_status = status.map(Into::into);
            }
            cx.state.contracts.insert(product_type, id);
        }
    }
    cx.conclude(pending)
}

/// Reads the contracts; when an id is still unknown (the subscription's answer did not carry
/// it), a staging that lists a new booking's contracts only later is asked again, every
/// [`CONTRACTS_EVERY`] for at most [`CONTRACTS_WAIT`]: an empty list is not final. An
/// `[endpoints.read_contracts.wait]` of the user's replaces this wait.
pub(super) async fn read_until_listed(cx: &mut StepContext<'_>) -> Result<Pending, StepError> {
    let unknown: Vec<String> = (cx.booking().product_types.iter())
        .filter(|t| !cx.state.contracts.contains_key(*t))
        .map(|t| t.as_str().to_string())
        .collect();
    if unknown.is_empty() || cx.shared.endpoints.wait(Operation::ReadContracts).is_some() {
        return read_contracts_call(cx, &cx.step_name.clone()).await;
    }
    let context = cx.read_context();
    let expect = cx.success(Operation::ReadContracts);
    let step = cx.step_name.clone();
    let spec = cx.spec(Operation::ReadContracts, &step, &context, None, expect)?;
    let poll = Poll {
        condition: format!("the booking's {} contract listed", unknown.join(" and ")),
        every: CONTRACTS_EVERY,
        timeout: CONTRACTS_WAIT,
        fail_on_timeout: false,
    };
    let pending = cx
        .send_polling(spec, poll, |cx, pending| {
            Ok::<_, std::convert::Infallible>(cx.lists_contracts(pending, &unknown))
        })
        .await;
    Ok(pending)
}

pub(super) async fn delete_quote(cx: &mut StepContext<'_>) -> Result<(), StepError> {
    let quote = cx
        .state
        .open_quotes
        .last()
        .cloned()
        .ok_or_else(|| missing("no open quote to delete"))?;
    let context = cx.context(Some(&quote), None, None);
    let (step, expect) = (cx.step_name.clone(), cx.success(Operation::QuoteDeletion));
    let spec = cx.spec(Operation::QuoteDeletion, &step, &context, None, expect)?;
    let pending = cx.send(spec).await;
    cx.conclude(pending)?;
    cx.state.open_quotes.pop();
    Ok(())
}

pub(super) async fn report_flight_cancellation(cx: &mut StepContext<'_>) -> Result<(), StepError> {
    let context = cx.context(
        cx.state.quotes.first(),
        (cx.state.contracts)
            .get(&ProductType::Withdrawal)
            .map(String::as_str),
        None,
    );
    let (step, expect) = (
        cx.step_name.clone(),
        cx.success(Operation::FlightCancellation),
    );
    let spec = cx.spec(Operation::FlightCancellation, &step, &context, None, expect)?;
    cx.send_and_conclude(spec).await
}

fn delta_check(
    delta: &Result<(Decimal, &'static str), crate::answer::money::UnreadableDelta>,
    expected: Sign,
) -> Check {
    match delta {
        Ok((value, shape)) => Check::new(
            "price_delta_sign",
            Sign::of(crate::answer::money::signum(*value)) == expected,
            format!("priceDelta {value} ({shape}), expected {expected}"),
        ),
        Err(e) => Check::fail("price_delta_sign", e.to_string()),
    }
}

/// Checks a quote's `priceDelta` (its sign when one is `expected`, its currency against the
/// quote's) and adds it to `total`, the delta of the booking's earlier plans.
fn delta_checks(
    pending: &mut Pending,
    delta_read: Option<Value>,
    expected: Option<Sign>,
    currency: Option<&str>,
    total: Option<Decimal>,
) -> Option<Decimal> {
    let delta = delta_read.as_ref().map(tolerant::delta_amount);
    if let (Some(expected), Some(delta)) = (expected, &delta) {
        pending.checks.push(delta_check(delta, expected));
    }
    let checks = delta_read
        .as_ref()
        .and_then(|v| currency_check(v, currency));
    pending.checks.extend(checks);
    let amount = delta
        .as_ref()
        .and_then(|d| d.as_ref().ok())
        .map(|(v, _)| *v);
    match (amount, total) {
        (Some(amount), Some(total)) => {
            let sum = total.checked_add(amount);
            if sum.is_none() {
                pending.checks.push(Check::fail(
                    "price_delta_total",
                    format!(
                        "priceDelta {amount} added to the booking's other plans' {total} is \
                         past the range of exact decimal amounts (28 digits)"
                    ),
                ));
            }
            sum
        }
        (amount, total) => amount.or(total),
    }
}

/// A `priceDelta` that names a currency other than the quote's (as requested) prices
/// something else: a failed check.
fn currency_check(delta: &Value, quote: Option<&str>) -> Option<Check> {
    let (money, _) = crate::answer::money::read(delta).ok()?;
    let (named, quote) = (money.currency?, quote?);
    (!named.eq_ignore_ascii_case(quote)).then(|| {
        Check::fail(
            "price_delta_currency",
            format!(
                "priceDelta is in {}, the quote in {quote}",
                crate::console::printable(&named)
            ),
        )
    })
}

/// A short quote of a body for check details.
pub(super) fn excerpt(value: &Value) -> String {
    let text = value.to_string();
    if text.len() <= 300 {
        text
    } else {
        format!("{}…", &text[..text.floor_char_boundary(300)])
    }
}
