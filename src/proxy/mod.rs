//! `ppcert proxy`: a forward proxy for the API in front of the partner's own integration. Every
//! request is forwarded unchanged (bar the hop-by-hop headers and `Host`) and every answer
//! returned unchanged; a request the endpoints in force recognise is checked against the spec's
//! and the session's rules, recorded like a run's exchange, and counted in the ledger.

mod claims;
pub(crate) mod command;
pub(crate) mod exchange;
pub(crate) mod faults;
mod json;
pub(crate) mod recovery;
pub(crate) mod routes;
pub(crate) mod rules;
mod sequencing;
pub(crate) mod webhooks;
mod wire;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use tokio::sync::Notify;

use crate::engine::RunEvent;
use crate::evidence::collect::Recording;
use crate::models::Operation;
use crate::record::{StepEvent, StepStatus};
use crate::sandbox::validate::ApiFailure;
use crate::secret::Secret;
use crate::timestamp::Timestamp;
use exchange::{Forwarded, bearer, recorded_headers, response_record};
use routes::Routes;
use rules::Rules;

/// Hop-by-hop headers (RFC 9110 §7.6.1) and those the HTTP stack sets itself.
const NOT_FORWARDED: [&str; 9] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
];

pub(crate) struct Proxy {
    /// The API root requests are forwarded under, without a trailing slash.
    pub upstream: String,
    /// The upstream's own path prefix: a partner that keeps it in its paths is understood.
    prefix: String,
    pub routes: Routes,
    pub rules: Rules,
    /// Answer a violating request locally with the sandbox's 400 instead of forwarding it.
    pub strict: bool,
    pub client: reqwest::Client,
    pub recording: Recording,
    /// Successes per operation, and what "met" means.
    ledger: Mutex<BTreeMap<Operation, u32>>,
    required: BTreeMap<Operation, u32>,
    pub met: Notify,
    steps: Mutex<HashMap<String, usize>>,
    /// Each bearer token seen, with its compiled scrubber: compiling one per request would
    /// cost about a millisecond each.
    tokens: Mutex<HashMap<String, Secret>>,
    /// The session's claims, confirmed before they count.
    claims: claims::ClaimWatch,
    /// The claims as the evidence's ledger counts them (accepted, then their status read and
    /// not flagged), so `--until-met` stops on what the verdict will say.
    confirmations: Mutex<crate::evidence::confirmed::ClaimConfirmations>,
    /// Writes whose answer was lost, held until the partner's recovery settles them.
    recoveries: recovery::Recoveries,
    /// `--faults`: the plan, and the calls counted so far.
    faults: Option<faults::inject::Faults>,
    /// `--webhook-forward`: the partner's receiver the staging's deliveries are passed on to.
    pub webhook_forward: Option<String>,
}

impl Proxy {
    /// A proxy forwarding to `upstream` with `client` (the config's:
    /// `Staging::forwarding_http`).
    pub(crate) fn new(
        upstream: &str,
        routes: Routes,
        rules: Rules,
        strict: bool,
        client: reqwest::Client,
        recording: Recording,
        required: BTreeMap<Operation, u32>,
    ) -> Proxy {
        let upstream = upstream.trim_end_matches('/').to_string();
        let prefix = url::Url::parse(&upstream)
            .map(|u| u.path().trim_end_matches('/').to_string())
            .unwrap_or_default();
        Proxy {
            upstream,
            prefix,
            routes,
            rules,
            strict,
            client,
            recording,
            ledger: Mutex::new(BTreeMap::new()),
            required,
            met: Notify::new(),
            steps: Mutex::new(HashMap::new()),
            tokens: Mutex::new(HashMap::new()),
            claims: claims::ClaimWatch::default(),
            confirmations: Mutex::default(),
            recoveries: recovery::Recoveries::default(),
            faults: None,
            webhook_forward: None,
        }
    }

    /// The proxy injecting `plan`'s faults, the plan written to the journal first.
    pub(crate) fn with_faults(mut self, plan: Vec<crate::record::fault::FaultRule>) -> Proxy {
        (self.recording).write_line(&crate::journal::Line::FaultPlan {
            rules: plan.clone(),
        });
        self.faults = Some(faults::inject::Faults::new(plan));
        self
    }

    /// The path relative to the API root: the upstream's prefix is optional in requests.
    fn relative<'a>(&self, path: &'a str) -> &'a str {
        match path.strip_prefix(self.prefix.as_str()) {
            Some(rest) if !self.prefix.is_empty() && (rest.is_empty() || rest.starts_with('/')) => {
                rest
            }
            _ => path,
        }
    }

    /// The request's bearer token as a secret (an empty one when it sent none).
    fn token(&self, headers: &HeaderMap) -> Secret {
        let Some(raw) = bearer(headers) else {
            return Secret::new("");
        };
        let mut tokens = self.tokens.lock().unwrap_or_else(|e| e.into_inner());
        // A client cycling through tokens must not grow this without bound.
        if tokens.len() > 64 {
            tokens.clear();
        }
        tokens
            .entry(raw.clone())
            .or_insert_with(|| Secret::new(raw))
            .clone()
    }

    /// Whether every requirement has its successes so far, claims counted once accepted
    /// (their status may be unread yet): when to confirm them and look at the ledger.
    fn all_sent(&self) -> bool {
        let ledger = self.ledger.lock().unwrap_or_else(|e| e.into_inner());
        self.required
            .iter()
            .all(|(op, n)| ledger.get(op).copied().unwrap_or(0) >= *n)
    }

    /// Whether every requirement is met as the evidence's ledger counts it: claims only once
    /// their status was read and not flagged.
    pub(crate) fn all_met(&self) -> bool {
        let confirmed = (self.confirmations.lock().unwrap_or_else(|e| e.into_inner()))
            .tally()
            .confirmed;
        let ledger = self.ledger.lock().unwrap_or_else(|e| e.into_inner());
        self.required.iter().all(|(op, n)| {
            let succeeded = match op {
                Operation::Claim => confirmed,
                _ => ledger.get(op).copied().unwrap_or(0),
            };
            succeeded >= *n
        })
    }

    fn record(&self, forwarded: Forwarded, token: &Secret) {
        self.record_exchange(forwarded.into_exchange(token));
    }

    fn record_exchange(&self, exchange: crate::record::Exchange) {
        let counted = exchange.counts_as_success();
        // A read of the contracts may confirm a claim: the ledger may be met by it.
        let reads = exchange.operation == Operation::ReadContracts;
        let step_index = {
            let mut steps = self.steps.lock().unwrap_or_else(|e| e.into_inner());
            let next = steps.entry(exchange.flow.clone()).or_default();
            *next += 1;
            *next - 1
        };
        let failed: Vec<String> = exchange
            .checks
            .iter()
            .filter(|c| !c.passed && !c.warning)
            .map(failed_line)
            .collect();
        crate::console::tell!("{}", exchange_line(&exchange, &failed));
        let step = StepEvent {
            flow: exchange.flow.clone(),
            step_index,
            step: exchange.step.clone(),
            // A retried attempt is not the step's result: its retry is.
            status: if exchange.outcome == crate::record::Outcome::Passed || exchange.retried {
                StepStatus::Passed
            } else {
                StepStatus::Failed
            },
            reason: (!failed.is_empty())
                .then(|| failed.join("; "))
                .or_else(|| exchange.error.clone()),
            started_at: exchange.started_at,
            duration_ms: exchange.duration_ms,
            state: None,
        };
        (self.confirmations.lock().unwrap_or_else(|e| e.into_inner())).add(&exchange, counted);
        if counted {
            *self
                .ledger
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .entry(exchange.operation)
                .or_default() += 1;
        }
        self.recording
            .events
            .emit(RunEvent::ExchangeFinished(Box::new(exchange)));
        self.recording.events.emit(RunEvent::StepFinished(step));
        if (counted || reads) && self.all_sent() {
            self.met.notify_one();
        }
    }
}

impl Proxy {
    /// `--until-met` on the evidence's ledger: resolves once every requirement is met as the
    /// verdict will count it. When every count is reached, the claims whose status the
    /// traffic never showed are read first; a claim flagged or unread keeps the session going
    /// rather than having it say "every requirement is met" over claims at 0/5.
    pub(crate) async fn met_on_the_ledger(&self) {
        loop {
            self.met.notified().await;
            if !self.all_met() {
                self.confirm_claims().await;
            }
            if self.all_met() {
                return;
            }
            crate::console::tell!(
                "every operation has its successes, but not every claim is confirmed (its status unread or flagged for manual verification): going on"
            );
        }
    }

    /// A contracts read: first the lost writes it shows taken, recorded before it.
    fn settle_by_read(&self, recognised: &routes::Recognised, forwarded: &Forwarded) {
        if recognised.operation == Operation::ReadContracts {
            for exchange in self.recoveries.read(forwarded, &self.claims) {
                self.record_exchange(exchange);
            }
        }
    }

    /// A partner's exchange: recorded, or held while a lost answer's recovery is unsettled.
    fn record_or_hold(
        &self,
        recognised: &routes::Recognised,
        forwarded: Forwarded,
        token: &Secret,
    ) {
        let exchange = forwarded.into_exchange(token);
        let line = exchange_line(&exchange, &[]);
        match self.recoveries.write(recognised, exchange, token) {
            recovery::Settled::Record(exchanges) => {
                exchanges.into_iter().for_each(|x| self.record_exchange(x));
            }
            recovery::Settled::Held => crate::console::tell!(
                "{line} (a write whose answer was lost: the staging may have taken it; counted when the partner's retry or read shows what happened)"
            ),
        }
    }

    /// At the session's end: the lost writes the partner's traffic never settled, settled by
    /// one read of their booking's contracts (a GET, with the partner's token); what it does
    /// not show is recorded as it stands, unconfirmed.
    pub(crate) async fn settle_lost(&self) {
        let success = self.routes.success(Operation::ReadContracts);
        let environment = self.rules.environment();
        let mut read = std::collections::BTreeSet::new();
        for (booking, _, token) in self.recoveries.unsettled() {
            if !read.insert(booking.clone()) {
                continue;
            }
            let Some(url) = (self.claims).contracts_url(&booking, &self.upstream, &self.routes)
            else {
                continue;
            };
            let mut confirming = (self.claims)
                .confirming_read(
                    &self.client,
                    &booking,
                    url,
                    &token,
                    success.clone(),
                    environment,
                )
                .await;
            for check in confirming.checks.iter_mut() {
                if check.name == "confirming read" {
                    check.detail = "ppcert's own read at the end of the session: the partner's \
                        traffic never showed what became of a write whose answer was lost"
                        .into();
                }
            }
            let recognised = routes::Recognised {
                operation: Operation::ReadContracts,
                values: Default::default(),
            };
            self.settle_by_read(&recognised, &confirming);
            self.record(confirming, &token);
        }
        self.recoveries
            .drain()
            .into_iter()
            .for_each(|x| self.record_exchange(x));
    }

    /// At the session's end: one read of the contracts of each booking whose claim's status
    /// the partner's traffic never showed, recorded like the partner's own exchanges.
    pub(crate) async fn confirm_claims(&self) {
        let success = self.routes.success(Operation::ReadContracts);
        let environment = self.rules.environment();
        for (booking, token) in self.claims.unread() {
            let Some(url) = (self.claims).contracts_url(&booking, &self.upstream, &self.routes)
            else {
                crate::console::tell!(
                    "cannot confirm the claim of booking {}: the contracts path needs values the proxy does not know",
                    crate::console::printable(&booking)
                );
                continue;
            };
            let read = (self.claims).confirming_read(
                &self.client,
                &booking,
                url,
                &token,
                success.clone(),
                environment,
            );
            self.record(read.await, &token);
        }
    }
}

/// A failed check on the console: its name quoted before "failed", since a name that states
/// a fact ("the server accepted it") must not read as the fact.
fn failed_line(check: &crate::record::Check) -> String {
    format!("check \"{}\" failed: {}", check.name, check.detail)
}

/// The live line of one exchange on stderr, with the checks it failed.
/// One exchange on the console. The URL, the booking number and the checks' details hold the
/// partner's and the upstream's text: escaped, so none of it can forge a console line.
fn exchange_line(exchange: &crate::record::Exchange, failed: &[String]) -> String {
    use crate::console::printable;
    let failed: Vec<String> = failed.iter().map(|f| printable(f)).collect();
    format!(
        "{} {} {} → {} ({} ms){}{}",
        exchange.operation,
        exchange.method,
        printable(&exchange.url),
        exchange.response.as_ref().map_or_else(
            || printable(exchange.error.as_deref().unwrap_or_default()),
            |r| r.status.to_string()
        ),
        exchange.duration_ms,
        exchange
            .booking_number
            .as_deref()
            .map(|b| format!(" booking {}", printable(b)))
            .unwrap_or_default(),
        if failed.is_empty() {
            String::new()
        } else {
            format!("\n  {}", failed.join("\n  "))
        }
    )
}

fn forwardable(name: &HeaderName) -> bool {
    !NOT_FORWARDED.contains(&name.as_str())
}

/// The local refusal under `--strict`: the sandbox's 400, naming the first broken rule.
fn refusal(checks: &[crate::record::Check]) -> Response {
    let broken = checks.iter().find(|c| !c.passed && !c.warning);
    let detail = broken.map_or_else(String::new, |c| format!("{}: {}", c.name, c.detail));
    let field = detail
        .split_once("$.")
        .and_then(|(_, rest)| rest.split(':').next())
        .map(str::to_string);
    let mut failure = ApiFailure::new(
        StatusCode::BAD_REQUEST,
        "REFUSED_BY_PPCERT_PROXY",
        format!("not forwarded (ppcert proxy --strict): {detail}"),
    );
    failure.field = field;
    failure.into_response()
}

/// The staging's URL for a request's path below the proxy's prefix, its query kept.
fn upstream_url(upstream: &str, relative: &str, query: Option<&str>) -> String {
    match query {
        Some(query) => format!("{upstream}{relative}?{query}"),
        None => format!("{upstream}{relative}"),
    }
}

async fn handle(State(proxy): State<Arc<Proxy>>, request: axum::extract::Request) -> Response {
    let (mut parts, body) = request.into_parts();
    // The partner's own `traceparent` is forwarded as it came; a request without gets one.
    crate::trace::fill(&mut parts.headers);
    // The shared listener has read the body within its limit already.
    let Ok(body) = axum::body::to_bytes(body, usize::MAX).await else {
        return (StatusCode::BAD_REQUEST, "ppcert proxy: body cut off").into_response();
    };
    let (started, started_at) = (Instant::now(), Timestamp::now());
    let relative = proxy.relative(parts.uri.path()).to_string();
    let url = upstream_url(&proxy.upstream, &relative, parts.uri.query());
    let recognised = proxy.routes.recognise(parts.method.as_str(), &relative);
    let token = proxy.token(&parts.headers);
    let Some(recognised) = recognised else {
        return forward_unrecognised(&proxy, &parts, &url, body, &token).await;
    };
    let armed = (proxy.faults.as_ref()).and_then(|f| f.arm(recognised.operation));
    let (judged, request_cut, sent) =
        judge_first_or_beside(&proxy, &parts, &url, &recognised, &body, armed.is_some()).await;
    let mut forwarded = Forwarded {
        operation: recognised.operation,
        booking: judged.booking.clone(),
        method: parts.method.to_string(),
        url: url.clone(),
        started_at,
        duration_ms: 0,
        request_headers: recorded_headers(&parts.headers, Some(&token)),
        request_body: body.clone(),
        request_cut,
        request_view: judged.view,
        response: None,
        error: None,
        checks: judged.checks,
        success: proxy.routes.success(recognised.operation),
        reads: Vec::new(),
    };
    let violated = forwarded.checks.iter().any(|c| !c.passed && !c.warning);
    let response = if let Some(sent) = sent {
        relay(&proxy, &recognised, &mut forwarded, sent, &token)
    } else if proxy.strict && violated {
        forwarded.error = Some("refused locally by --strict: not forwarded".into());
        refusal(&forwarded.checks)
    } else if let Some(armed) = armed {
        let call = Call {
            parts: &parts,
            url: &url,
            recognised: &recognised,
            token: &token,
            started,
        };
        return proxy.inject(armed, call, body, forwarded).await;
    } else {
        let sent = send(&proxy, &parts, &url, body).await;
        relay(&proxy, &recognised, &mut forwarded, sent, &token)
    };
    forwarded.duration_ms = started.elapsed().as_millis() as u64;
    let environment = proxy.rules.environment();
    proxy.settle_by_read(&recognised, &forwarded);
    (proxy.claims).observe(&recognised, &mut forwarded, &token, environment);
    proxy.record_or_hold(&recognised, forwarded, &token);
    response
}

/// The request's verdict; for a large body, also its cut's digest and the upstream's answer.
/// A large body is judged and digested on a thread of its own while it is forwarded: the
/// partner waits for the longer of the two, not for both, and small requests on this worker
/// are not held up behind a megabyte's parse. Under `--strict` the verdict decides whether
/// to forward, and a fault armed changes what is sent: judged first there, as any body.
async fn judge_first_or_beside(
    proxy: &Arc<Proxy>,
    parts: &axum::http::request::Parts,
    url: &str,
    recognised: &routes::Recognised,
    body: &Bytes,
    armed: bool,
) -> (
    rules::Judged,
    Option<Box<crate::record::CutBody>>,
    Option<Result<Sent, (StatusCode, String)>>,
) {
    let content_type =
        (parts.headers.get(axum::http::header::CONTENT_TYPE)).and_then(|v| v.to_str().ok());
    if body.len() <= exchange::PROXY_KEPT_BODY || proxy.strict || armed {
        let judged = (proxy.rules).judge_sent(recognised, content_type, body, Utc::now());
        return (judged, None, None);
    }
    let judging = judge_aside(proxy, recognised, content_type, body);
    let sent = send(proxy, parts, url, body.clone()).await;
    let (judged, cut) = match judging.await {
        Ok(done) => done,
        Err(failed) => std::panic::resume_unwind(failed.into_panic()),
    };
    (judged, cut, Some(sent))
}

/// A large body's verdict and its cut's digest, on a blocking thread: the same
/// [`Rules::judge_sent`] and [`exchange::cut_of`] as for any body, only elsewhere.
fn judge_aside(
    proxy: &Arc<Proxy>,
    recognised: &routes::Recognised,
    content_type: Option<&str>,
    body: &Bytes,
) -> tokio::task::JoinHandle<(rules::Judged, Option<Box<crate::record::CutBody>>)> {
    let (proxy, recognised) = (proxy.clone(), recognised.clone());
    let (content_type, body) = (content_type.map(str::to_string), body.clone());
    tokio::task::spawn_blocking(move || {
        let judged =
            (proxy.rules).judge_sent(&recognised, content_type.as_deref(), &body, Utc::now());
        (judged, exchange::cut_of(&body))
    })
}

/// A request no endpoint recognises: forwarded, neither checked nor counted, but said on the
/// console and put in the journal (nothing of it in memory: a flood must not grow it), so
/// the evidence counts what the staging counted.
async fn forward_unrecognised(
    proxy: &Proxy,
    parts: &axum::http::request::Parts,
    url: &str,
    body: Bytes,
    token: &Secret,
) -> Response {
    let at = Timestamp::now();
    let sent = send(proxy, parts, url, body).await;
    let status = sent.as_ref().ok().map(|s| s.response.status().as_u16());
    let (method, path) = (parts.method.to_string(), token.scrub(parts.uri.path()));
    crate::console::tell!(
        "not recognised: {} {} → {} (forwarded; no configured endpoint matches, so it is neither checked nor counted)",
        crate::console::printable(&method),
        crate::console::printable(&path),
        status.map_or_else(|| "no answer".to_string(), |s| s.to_string())
    );
    (proxy.recording).write_line(&crate::journal::Line::Unrecognised {
        at,
        method,
        path,
        status,
    });
    sent.map_or_else(
        |(status, why)| (status, why).into_response(),
        |sent| sent.response,
    )
}

/// The upstream's answer given back, recorded, and learnt from when it accepted the request.
fn relay(
    proxy: &Proxy,
    recognised: &routes::Recognised,
    forwarded: &mut Forwarded,
    sent: Result<Sent, (StatusCode, String)>,
    token: &Secret,
) -> Response {
    match sent {
        Ok(Sent {
            response,
            headers,
            bytes,
            certificate,
        }) => {
            let mut record = response_record(response.status().as_u16(), &headers, &bytes, token);
            record.tls_certificate_sha256 = certificate;
            if record.accepted() {
                proxy.rules.learn(
                    recognised,
                    forwarded.booking.as_deref(),
                    &forwarded.request_view,
                    &record.json(),
                    Utc::now(),
                );
            }
            forwarded.response = Some(record);
            response
        }
        Err((status, why)) => {
            forwarded.error = Some(why.clone());
            (status, why).into_response()
        }
    }
}

/// The upstream's answer: what to give back, its headers and body, and the SHA-256 of the
/// certificate it presented over TLS.
struct Sent {
    response: Response,
    headers: HeaderMap,
    bytes: Bytes,
    certificate: Option<Box<str>>,
}

/// Forwards the request as it came; returns the answer to give back, with its headers and body.
async fn send(
    proxy: &Proxy,
    parts: &axum::http::request::Parts,
    url: &str,
    body: Bytes,
) -> Result<Sent, (StatusCode, String)> {
    let mut request = proxy.client.request(parts.method.clone(), url).body(body);
    for (name, value) in parts.headers.iter().filter(|(name, _)| forwardable(name)) {
        request = request.header(name, value);
    }
    let answer = request.send().await.map_err(|e| {
        (
            StatusCode::BAD_GATEWAY,
            format!(
                "ppcert proxy: the API did not answer: {}{}",
                if e.is_connect() {
                    recovery::NOT_SENT
                } else if e.is_timeout() {
                    "timed out"
                } else {
                    "the request failed"
                },
                crate::engine::http::tls_hint(&format!("{e:?}"))
            ),
        )
    })?;
    let status = answer.status();
    let certificate = crate::engine::http::certificate_sha256(&answer);
    let headers = answer.headers().clone();
    let bytes = answer.bytes().await.map_err(|_| {
        (
            StatusCode::BAD_GATEWAY,
            "ppcert proxy: the API's answer was cut off".to_string(),
        )
    })?;
    let mut response = Response::builder().status(status);
    for (name, value) in headers.iter().filter(|(name, _)| forwardable(name)) {
        response = response.header(name, value);
    }
    let mut response = response
        .body(axum::body::Body::from(bytes.clone()))
        .unwrap_or_else(|_| StatusCode::BAD_GATEWAY.into_response());
    // The upstream's answer goes back as it came, plain-text errors too.
    response
        .extensions_mut()
        .insert(crate::sandbox::listener::Relayed);
    Ok(Sent {
        response,
        headers,
        bytes,
        certificate,
    })
}

pub(crate) fn router(proxy: Arc<Proxy>) -> axum::Router {
    let router = axum::Router::new();
    let router = if proxy.webhook_forward.is_some() {
        router.route(webhooks::PATH, axum::routing::post(deliver_webhook))
    } else {
        router
    };
    router.fallback(handle).with_state(proxy)
}

/// The partner's call a fault is injected into.
struct Call<'a> {
    parts: &'a axum::http::request::Parts,
    url: &'a str,
    recognised: &'a routes::Recognised,
    token: &'a Secret,
    started: Instant,
}

impl Proxy {
    /// `armed`'s fault instead of the plain relay: a 429 or 503 of the proxy's own (nothing
    /// forwarded, nothing recorded as an exchange: the staging saw nothing), or the call
    /// forwarded and recorded, then its answer dropped or held. The fault's journal line comes
    /// before its exchange, so the grading reads them in order.
    async fn inject(
        &self,
        armed: faults::inject::Armed,
        call: Call<'_>,
        body: Bytes,
        mut forwarded: Forwarded,
    ) -> Response {
        use crate::record::fault::{FaultKind, InjectedFault};
        let mut fault = InjectedFault {
            rule: armed.rule,
            call: armed.call,
            operation: call.recognised.operation,
            kind: armed.kind.clone(),
            at: forwarded.started_at,
            method: call.parts.method.to_string(),
            path: call.token.scrub(call.parts.uri.path()),
            booking_number: forwarded.booking.clone(),
            idempotency_key: faults::inject::idempotency_key(&call.parts.headers),
            upstream_status: None,
        };
        if let FaultKind::Status {
            status,
            retry_after_ms,
        } = armed.kind
        {
            crate::console::tell!(
                "{}",
                faults::inject::said(&fault, "answered by ppcert proxy, not forwarded")
            );
            (self.recording).write_line(&crate::journal::Line::Fault(fault));
            return faults::inject::status_answer(status, retry_after_ms);
        }
        let sent = send(self, call.parts, call.url, body).await;
        let response = relay(self, call.recognised, &mut forwarded, sent, call.token);
        forwarded.duration_ms = call.started.elapsed().as_millis() as u64;
        fault.upstream_status = forwarded.response.as_ref().map(|r| r.status);
        (self.recording).write_line(&crate::journal::Line::Fault(fault.clone()));
        let environment = self.rules.environment();
        if let FaultKind::Delay { for_ms } = armed.kind {
            (self.claims).observe(call.recognised, &mut forwarded, call.token, environment);
            self.record_or_hold(call.recognised, forwarded, call.token);
            crate::console::tell!(
                "{}",
                faults::inject::said(&fault, "forwarded; the answer is held")
            );
            tokio::time::sleep(std::time::Duration::from_millis(for_ms)).await;
            return response;
        }
        self.lose(&fault, &call, forwarded)
    }

    /// A lost answer: a write the recovery can settle is recorded as the partner saw it,
    /// without an answer; any other keeps the staging's answer, which counts as the staging
    /// counted it. The connection then drops.
    fn lose(
        &self,
        fault: &crate::record::fault::InjectedFault,
        call: &Call<'_>,
        mut forwarded: Forwarded,
    ) -> Response {
        let environment = self.rules.environment();
        let staging = fault
            .upstream_status
            .map_or("no answer".into(), |s| format!("HTTP {s}"));
        if recovery::holds(call.recognised.operation, forwarded.booking.as_deref()) {
            forwarded.response = None;
            forwarded.error = Some(format!(
                "the answer was dropped by ppcert proxy --faults (lost_answer) before the client read it; the staging answered {staging}"
            ));
        } else {
            (self.claims).observe(call.recognised, &mut forwarded, call.token, environment);
        }
        self.record_or_hold(call.recognised, forwarded, call.token);
        crate::console::tell!(
            "{}",
            faults::inject::said(
                fault,
                &format!(
                    "forwarded (the staging answered {staging}), then the connection dropped before the answer"
                )
            )
        );
        faults::inject::dropped()
    }
}

// `--webhook-forward`: the staging's deliveries relayed to the partner's receiver.
impl Proxy {
    /// Passes a delivery on and records it; its line in the journal, said on the console.
    async fn relay_webhook(
        &self,
        headers: &HeaderMap,
        body: &Bytes,
        duplicate: bool,
    ) -> Result<(u16, Bytes), String> {
        let to = self.webhook_forward.as_deref().unwrap_or_default();
        let at = Timestamp::now();
        let forwarded = headers.iter().filter(|(name, _)| forwardable(name));
        let answer = webhooks::pass_on(&self.client, to, forwarded, body).await;
        let (event, _, booking_number) = webhooks::event_of(body);
        let relayed = crate::record::fault::RelayedWebhook {
            at,
            event,
            booking_number,
            status: answer.as_ref().ok().map(|(s, _)| *s),
            error: answer.as_ref().err().cloned(),
            duplicate,
        };
        crate::console::tell!(
            "webhook {}{} → {}{}",
            crate::console::printable(relayed.event.as_deref().unwrap_or("(no event)")),
            relayed
                .booking_number
                .as_deref()
                .map(|b| format!(" booking {}", crate::console::printable(b)))
                .unwrap_or_default(),
            relayed.status.map_or_else(
                || relayed.error.clone().unwrap_or_default(),
                |s| s.to_string()
            ),
            if duplicate { " (the duplicate)" } else { "" }
        );
        (self.recording).write_line(&crate::journal::Line::Webhook(relayed));
        answer
    }
}

/// `POST /_ppcert/webhooks`: the staging's delivery passed on; the receiver's answer to the
/// first delivery is the staging's.
pub(crate) async fn deliver_webhook(
    State(proxy): State<Arc<Proxy>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let started_at = Timestamp::now();
    let first = proxy.relay_webhook(&headers, &body, false).await;
    let (event, operation, booking_number) = webhooks::event_of(&body);
    let armed = operation.and_then(|op| proxy.faults.as_ref()?.arm_delivery(op));
    if let (Some(armed), Some(operation)) = (armed, operation) {
        let fault = crate::record::fault::InjectedFault {
            rule: armed.rule,
            call: armed.call,
            operation,
            kind: crate::record::fault::FaultKind::DuplicateWebhook,
            at: started_at,
            method: "POST".into(),
            path: webhooks::PATH.into(),
            booking_number,
            idempotency_key: None,
            upstream_status: first.as_ref().ok().map(|(s, _)| *s),
        };
        crate::console::tell!(
            "{}",
            faults::inject::said(
                &fault,
                &format!(
                    "{} delivered again, same body and signature",
                    event.unwrap_or_default()
                )
            )
        );
        (proxy.recording).write_line(&crate::journal::Line::Fault(fault));
        let _ = proxy.relay_webhook(&headers, &body, true).await;
    }
    match first {
        Ok((status, bytes)) => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
            (status, bytes).into_response()
        }
        Err(why) => (StatusCode::BAD_GATEWAY, format!("ppcert proxy: {why}")).into_response(),
    }
}

#[cfg(test)]
mod console_tests {
    use crate::record::Check;

    /// A failed check whose name states a fact reads as that fact failing, not as the fact.
    #[test]
    fn a_failed_check_names_itself_before_saying_it_failed() {
        let check = Check::fail("the server accepted it", "HTTP 400, expected 201");
        assert_eq!(
            super::failed_line(&check),
            "check \"the server accepted it\" failed: HTTP 400, expected 201"
        );
    }
}
