//! Recognising a partner's request as an API operation by the endpoints in force: each path
//! template (`/subscriptions/{{ booking.number }}/contracts`) becomes segments, literal or
//! placeholder, and a request matches the template with the same method, as many segments and
//! every literal equal; the most literal template wins.

use std::collections::BTreeMap;

use crate::endpoints::Endpoints;
use crate::models::Operation;

/// Percent-encoding that keeps RFC 3986's unreserved characters as they are.
const UNRESERVED_KEPT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Literal(String),
    /// The placeholder's name (`booking.number`), or `""` when a segment mixes text and values.
    Value(String),
}

#[derive(Debug, Clone)]
struct Route {
    operation: Operation,
    method: String,
    segments: Vec<Segment>,
}

/// A recognised request: its operation and the values its path carried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Recognised {
    pub operation: Operation,
    pub values: BTreeMap<String, String>,
}

#[derive(Debug, Clone)]
pub(crate) struct Routes {
    routes: Vec<Route>,
    /// Each operation's success rule: the proxy counts as `run` does.
    success: BTreeMap<Operation, crate::endpoints::SuccessRule>,
}

fn segments(template: &str) -> Vec<Segment> {
    template
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|segment| {
            let whole = segment
                .strip_prefix("{{")
                .and_then(|s| s.strip_suffix("}}"))
                .filter(|inner| !inner.contains("{{") && !inner.contains("}}"));
            match whole {
                Some(name) => Segment::Value(name.trim().to_string()),
                None if segment.contains("{{") || segment.contains("{%") => {
                    Segment::Value(String::new())
                }
                None => Segment::Literal(segment.to_string()),
            }
        })
        .collect()
}

impl Routes {
    /// The success rule of `op`'s endpoint.
    pub(crate) fn success(&self, op: Operation) -> crate::endpoints::SuccessRule {
        self.success
            .get(&op)
            .cloned()
            .unwrap_or_else(|| crate::endpoints::SuccessRule::any_2xx(op))
    }

    pub(crate) fn new(endpoints: &Endpoints) -> Routes {
        Routes {
            success: Operation::ALL
                .iter()
                .map(|op| (*op, endpoints.success(*op)))
                .collect(),
            routes: Operation::ALL
                .iter()
                .map(|&operation| Route {
                    operation,
                    method: endpoints.method(operation).as_str().to_string(),
                    segments: segments(&endpoints.path_template(operation)),
                })
                .collect(),
        }
    }

    /// The path of `op` with each placeholder named in `values` filled in, percent-encoded;
    /// `None` when the template holds a value not given (the proxy cannot make that call).
    pub(crate) fn fill(&self, op: Operation, values: &[(&str, &str)]) -> Option<String> {
        let route = self.routes.iter().find(|r| r.operation == op)?;
        let mut path = String::new();
        for segment in &route.segments {
            let part = match segment {
                Segment::Literal(literal) => literal.clone(),
                Segment::Value(name) => {
                    let (_, value) = values.iter().find(|(given, _)| given == name)?;
                    percent_encoding::utf8_percent_encode(value, UNRESERVED_KEPT).to_string()
                }
            };
            path.push('/');
            path.push_str(&part);
        }
        Some(path)
    }

    /// The operation `method path` performs; `path` is relative to the API root, undecoded.
    pub(crate) fn recognise(&self, method: &str, path: &str) -> Option<Recognised> {
        let given: Vec<&str> = path
            .trim_matches('/')
            .split('/')
            .filter(|s| !s.is_empty())
            .collect();
        self.routes
            .iter()
            .filter(|r| r.method.eq_ignore_ascii_case(method) && r.segments.len() == given.len())
            .filter(|r| {
                r.segments
                    .iter()
                    .zip(&given)
                    .all(|(segment, part)| match segment {
                        Segment::Literal(literal) => literal == part,
                        Segment::Value(_) => true,
                    })
            })
            .max_by_key(|r| {
                r.segments
                    .iter()
                    .filter(|s| matches!(s, Segment::Literal(_)))
                    .count()
            })
            .map(|route| Recognised {
                operation: route.operation,
                values: route
                    .segments
                    .iter()
                    .zip(&given)
                    .filter_map(|(segment, part)| match segment {
                        Segment::Value(name) if !name.is_empty() => Some((
                            name.clone(),
                            percent_encoding::percent_decode_str(part)
                                .decode_utf8_lossy()
                                .into_owned(),
                        )),
                        _ => None,
                    })
                    .collect(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn routes(dialect: &str) -> Routes {
        let dialect = crate::dialect::resolve(dialect).unwrap();
        let endpoints =
            Endpoints::compile(&crate::dialect::definitions(&dialect, &BTreeMap::new())).unwrap();
        Routes::new(&endpoints)
    }

    #[test]
    fn the_spec_paths_are_recognised_with_their_values() {
        let routes = routes("spec");
        let claim = routes.recognise("POST", "/contracts/ct_1/claims").unwrap();
        assert_eq!(claim.operation, Operation::Claim);
        assert_eq!(claim.values["contract.id"], "ct_1");
        let read = routes
            .recognise("GET", "/subscriptions/PP%2D1/contracts")
            .unwrap();
        assert_eq!(read.operation, Operation::ReadContracts);
        assert_eq!(read.values["booking.number"], "PP-1");
        assert_eq!(
            routes
                .recognise("PATCH", "/subscriptions/PP-1/")
                .map(|r| r.operation),
            Some(Operation::Update)
        );
        assert_eq!(routes.recognise("GET", "/quotes"), None);
        assert_eq!(routes.recognise("POST", "/quotes/extra"), None);
    }

    #[test]
    fn the_documented_flight_status_call_is_recognised() {
        let routes = routes("provider-docs");
        let report = routes
            .recognise("POST", "/flights/AF/1234/2027-05-01/CDG/statuses")
            .unwrap();
        assert_eq!(report.operation, Operation::FlightCancellation);
        assert_eq!(report.values["flight.airlineIata"], "AF");
    }
}
