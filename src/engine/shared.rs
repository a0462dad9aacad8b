//! What every flow of a run shares: the client, the endpoints, the data generator, the event
//! stream, the cancel switch and the first call's gate.

use std::sync::Arc;

use super::cancel::Cancel;
use super::events::EventStream;
use super::gate::Gate;
use super::http::ApiClient;
use crate::datagen::Generator;
use crate::environment::Environment;

/// What every flow of a run shares.
pub(crate) struct Shared {
    pub client: ApiClient,
    pub endpoints: crate::endpoints::Endpoints,
    pub generator: Generator,
    pub environment: Environment,
    pub events: Arc<EventStream>,
    pub cancel: Cancel,
    pub gate: Gate,
    pub concurrency: std::num::NonZeroUsize,
}
