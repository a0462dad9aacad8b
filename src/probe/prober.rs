//! What a probe learns and how it sends: one call at a time with the endpoints in force, answers judged by the run's rules, captures proven by use.

use super::candidates;
use super::stop::Broken;
use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::answer::Answer;
use crate::answer::reading::{self, Reading};
use crate::config::Staging;
use crate::datagen::Generator;
use crate::dialect::{self, Definitions};
use crate::endpoints::{CaptureSpec, EndpointError, Endpoints};
use crate::engine::single_call::SingleCalls;
use crate::engine::{ApiClient, Cancel};
use crate::models::Operation;

/// One call as the probe saw it.
#[derive(Debug, Clone, Default)]
pub(crate) struct CallReport {
    pub label: String,
    pub request: String,
    pub status: Option<u16>,
    pub shape: String,
    pub lines: Vec<String>,
    pub ok: bool,
    /// The operation last sent for this call: what a refusal's proposals name.
    pub op: Option<Operation>,
    /// Its template context (with `request`, the spec's body): where a refused field's value
    /// comes from.
    pub context: Value,
}

/// A capture the probe proved, with what it was inferred from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Proven {
    pub path: CaptureSpec,
    pub inferred_from: String,
}

/// Everything a probe learns.
pub(crate) struct Prober {
    /// Sends each call as a run's step does, keeping `captured` from answer to answer.
    pub(super) single: SingleCalls,
    /// The dialect in force, and its definitions with the user's tables and learned captures.
    pub dialect: String,
    user: Definitions,
    /// `[target.headers]` and `--header`: kept in whichever dialect probe switches to.
    common_headers: Vec<(String, String)>,
    pub(super) definitions: Definitions,
    pub(super) endpoints: Endpoints,
    /// Why the dialect was switched, when it was.
    pub dialect_reason: Option<String>,
    pub proven: BTreeMap<(Operation, String), Proven>,
    pub calls: Vec<CallReport>,
    /// Values neither read nor proven, and calls that failed: what is left for the user.
    pub left: Vec<String>,
    pub flight_seller: bool,
    /// Where each unread value's candidates were found: the call and the answer's shape.
    found_in: BTreeMap<(Operation, String), String>,
    /// Paths learned by trying another spelling (deletion by reference).
    pub proven_paths: BTreeMap<Operation, Proven>,
    /// Why every path is sent with a trailing slash, once a redirect said so.
    pub slashed: Option<String>,
    /// The bundles a multi-bundle quote answer offered, when it was one.
    pub bundles_offered: Option<Vec<String>>,
}

impl Prober {
    /// A prober of the staging as `staging` resolves it: the same dialect, definitions and
    /// rehearsed endpoints a run of that configuration uses.
    pub(crate) fn new(
        client: ApiClient,
        generator: &Generator,
        staging: &Staging,
        flight_seller: bool,
    ) -> Prober {
        Prober {
            single: SingleCalls::new(client, generator.clone(), Cancel::default()),
            dialect: staging.dialect_name().to_string(),
            user: staging.file.endpoints.clone(),
            common_headers: staging.common_headers.clone(),
            definitions: staging.definitions.clone(),
            endpoints: staging.endpoints.clone(),
            dialect_reason: None,
            proven: BTreeMap::new(),
            calls: Vec::new(),
            left: Vec::new(),
            flight_seller,
            found_in: BTreeMap::new(),
            proven_paths: BTreeMap::new(),
            bundles_offered: None,
            slashed: None,
        }
    }

    /// Sends `op` as the endpoints in force (or `endpoints`) define it, as a run's step does.
    async fn send_with(
        &mut self,
        endpoints: &Endpoints,
        op: Operation,
        context: &Value,
        default_body: Option<Value>,
        listed: bool,
    ) -> Result<(String, Answer), Broken> {
        let settled = self
            .single
            .call(endpoints, op, context, default_body, listed)
            .await
            .map_err(|e| Broken::Step(e.to_string()))?;
        let answer = Answer::of(&settled, &endpoints.success(op));
        let sent = settled.sent;
        // A write confirmed by reading elsewhere is shown with the read that settled it.
        let (method, read) = (endpoints.method(op), &settled.attempt.url);
        let request = match sent.strip_prefix(&format!("{method} ")) {
            Some(url) if url != read => format!("{sent} (confirmed by GET {read})"),
            _ => sent,
        };
        Ok((request, answer))
    }

    /// Sends `op`; when the request shape is refused and another dialect spells the call
    /// differently, tries that one and keeps it if it is accepted.
    pub(crate) async fn send(
        &mut self,
        report: &mut CallReport,
        op: Operation,
        context: &Value,
        default_body: Option<Value>,
    ) -> Result<Answer, Broken> {
        self.send_waiting(report, op, context, default_body, false)
            .await
    }

    /// [`Prober::send`]; with `listed`, a contracts read waits as the run's first read of a new
    /// booking does until its contracts are listed.
    pub(crate) async fn send_waiting(
        &mut self,
        report: &mut CallReport,
        op: Operation,
        context: &Value,
        default_body: Option<Value>,
        listed: bool,
    ) -> Result<Answer, Broken> {
        let endpoints = self.endpoints.clone();
        let (mut request, mut answer) = self
            .send_with(&endpoints, op, context, default_body.clone(), listed)
            .await?;
        if self.slashed.is_none()
            && let Some(why) = slash_redirect(&request, &answer)
        {
            // The staging wants every path slashed: learned once, then the call is sent again;
            // the redirect's Location is never read as a value.
            report.lines.push(format!(
                "{why}: every path is sent with a trailing slash from now on"
            ));
            self.slashed = Some(format!("{op} {why}"));
            self.definitions = self.with_learned(self.definitions.clone());
            self.endpoints = compile(&self.definitions)?;
            let endpoints = self.endpoints.clone();
            (request, answer) = self
                .send_with(&endpoints, op, context, default_body.clone(), listed)
                .await?;
        }
        report.request = request;
        report.status = answer.status;
        report.op = Some(op);
        report.context = context.clone();
        if let Some(body) = &default_body {
            report.context["request"] = body.clone();
        }
        let refused_shape = matches!(answer.status, Some(400 | 404 | 405 | 422))
            && (op != Operation::QuoteDeletion);
        if !refused_shape || self.dialect_reason.is_some() {
            return Ok(answer);
        }
        let Some((other, definitions)) = self.other_dialect(op) else {
            return Ok(answer);
        };
        let endpoints = compile(&definitions)?;
        let (other_request, other_answer) = self
            .send_with(&endpoints, op, context, default_body, listed)
            .await?;
        let verdict = match other_answer.status {
            Some(s) => format!("HTTP {s}"),
            None => other_answer.error.clone().unwrap_or_default(),
        };
        report.lines.push(format!(
            "refused in dialect `{}` ({}); tried dialect `{other}`: {other_request} → {verdict}",
            self.dialect, answer.words
        ));
        if !other_answer.accepted() {
            return Ok(answer);
        }
        self.dialect_reason = Some(format!(
            "{} was refused in dialect `{}` ({}) and accepted in dialect `{other}` ({verdict})",
            op, self.dialect, answer.words
        ));
        self.dialect = other;
        self.definitions = definitions;
        self.endpoints = endpoints;
        report.request = other_request;
        report.status = other_answer.status;
        Ok(other_answer)
    }

    /// The other built-in dialect, when it defines `op` differently from the one in force.
    fn other_dialect(&self, op: Operation) -> Option<(String, Definitions)> {
        let name = (dialect::Builtin::ALL.map(dialect::Builtin::name))
            .into_iter()
            .find(|name| *name != self.dialect)?;
        let other = dialect::resolve(name).ok()?;
        let mut definitions = dialect::definitions(&other, &self.user);
        crate::config::headers::merge(&mut definitions, &self.common_headers);
        let learned = self.with_learned(definitions);
        (learned.get(op.as_str()) != self.definitions.get(op.as_str()))
            .then(|| (name.to_string(), learned))
    }

    fn with_learned(&self, mut definitions: Definitions) -> Definitions {
        for ((op, name), proven) in &self.proven {
            definitions
                .entry(op.as_str().to_string())
                .or_default()
                .capture
                .insert(name.clone(), proven.path.clone());
        }
        for (op, proven) in &self.proven_paths {
            if let CaptureSpec::Path(path) = &proven.path {
                definitions.entry(op.as_str().to_string()).or_default().path = Some(path.clone());
            }
        }
        if self.slashed.is_some() {
            for definition in definitions.values_mut() {
                if let Some(path) = definition.path.as_mut()
                    && !path.ends_with('/')
                {
                    path.push('/');
                }
            }
        }
        definitions
    }

    /// Reads `name` with the endpoints in force; `Err` carries candidates when it could not.
    pub(crate) fn read(
        &mut self,
        report: &mut CallReport,
        op: Operation,
        name: &str,
        context: &Value,
        answer: &Answer,
    ) -> Result<Value, Vec<(CaptureSpec, Value)>> {
        let product_type = context["product_type"].as_str().unwrap_or("");
        let reading = reading::read(&self.endpoints, op, name, context, answer.view(), |b| {
            reading::builtin(op, name, product_type, b)
        });
        match reading {
            Ok(Reading {
                value: Some(value),
                from,
                ..
            }) => {
                report
                    .lines
                    .push(format!("read {name} = {value} from {from}"));
                self.single.keep(name, value.clone(), &from);
                Ok(value)
            }
            // A refusal or a redirect holds no value: its `Location` is never an id.
            Ok(_) if !answer.accepted() => Err(Vec::new()),
            Ok(Reading { from, .. }) => {
                let found = candidates::candidates(answer.view(), name, product_type);
                self.found_in.insert(
                    (op, name.to_string()),
                    format!(
                        "the {} answer ({}) {}",
                        report.label,
                        report.request,
                        candidates::shape(&answer.body)
                    ),
                );
                let listed: Vec<String> = found.iter().take(5).map(|(p, _)| p.describe()).collect();
                report.lines.push(format!(
                    "could not read {name} ({from}); candidates: {}",
                    if listed.is_empty() {
                        "none".to_string()
                    } else {
                        listed.join(", ")
                    }
                ));
                Err(found)
            }
            Err(error) => {
                report.lines.push(format!("could not read {name}: {error}"));
                Err(Vec::new())
            }
        }
    }

    /// Keeps a capture proven by a call that used its value.
    pub(crate) fn learn(
        &mut self,
        op: Operation,
        name: &str,
        path: &CaptureSpec,
        inferred_from: String,
    ) -> Result<(), EndpointError> {
        let found = self
            .found_in
            .get(&(op, name.to_string()))
            .map(|at| format!("found in {at}; "))
            .unwrap_or_default();
        self.proven.insert(
            (op, name.to_string()),
            Proven {
                path: path.clone(),
                inferred_from: format!("{found}proven: {inferred_from}"),
            },
        );
        self.definitions = self.with_learned(self.definitions.clone());
        self.endpoints = compile(&self.definitions)?;
        Ok(())
    }

    /// Records a finished call.
    pub(crate) fn done(&mut self, mut report: CallReport, answer: &Answer) {
        report.shape = candidates::shape(&answer.body);
        report.ok = answer.accepted() && report.ok;
        if !answer.accepted() {
            let why = match answer.status {
                Some(status) => format!("HTTP {status}: {}", answer.words),
                None => answer.error.clone().unwrap_or_else(|| "no answer".into()),
            };
            self.left.push(format!(
                "{}: {} answered {why}",
                report.label, report.request
            ));
            // The staging's words say what it wants: the setting that gives it, not a stop.
            if let (Some(op), Some(400..=499)) = (report.op, answer.status) {
                for proposal in super::refusal::proposals(op, &answer.body, &report.context) {
                    self.left.push(format!("→ {}", proposal.line()));
                }
            }
        }
        self.calls.push(report);
    }
}

/// A redirect (301, 302, 307, 308) to the request's own path with a trailing slash: what it
/// says, or `None` for any other answer. `request` is "METHOD URL".
fn slash_redirect(request: &str, answer: &Answer) -> Option<String> {
    let status = answer
        .status
        .filter(|s| matches!(s, 301 | 302 | 307 | 308))?;
    let location = crate::record::header(&answer.headers, "Location")?;
    let sent = url::Url::parse(request.split_once(' ')?.1).ok()?;
    let to = sent.join(location).ok()?;
    (to.path() == format!("{}/", sent.path())).then(|| {
        format!(
            "answered {status} to the same path with a trailing slash ({})",
            to.path()
        )
    })
}

pub(super) fn compile(definitions: &Definitions) -> Result<Endpoints, EndpointError> {
    Endpoints::compile(definitions)
}

/// A fresh report for a call.
pub(crate) fn report(label: &str) -> CallReport {
    CallReport {
        label: label.to_string(),
        ok: true,
        ..CallReport::default()
    }
}

/// The product type a probe's contract values are read for.
pub(crate) fn with_product_type(mut context: Value, product_type: &str) -> Value {
    context["product_type"] = json!(product_type);
    context
}
