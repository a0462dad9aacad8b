//! Webhooks during `ppcert run`: a receiver opened before the first request, fed by the
//! embedded sandbox (`--webhooks`, a fresh secret per run) or by the partner's staging
//! (`--webhook-listen ADDR`); what arrived becomes the evidence's `webhooks` section. The run
//! never waits for deliveries past its own end.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;

use crate::config::WebhookRun;
use crate::error::Failure;
use crate::evidence::webhooks::{WebhooksSection, section};
use crate::record::Exchange;
use crate::sandbox::{Sandbox, WebhookOptions, random_token};
use crate::webhook::listen::{Listener, router};

/// How long the end of a run lets the sandbox finish deliveries already due.
const SETTLE: Duration = Duration::from_secs(1);

pub(crate) struct RunReceiver {
    listener: Arc<Listener>,
    url: String,
    /// Given to the embedded sandbox, so it delivers here.
    for_sandbox: Option<WebhookOptions>,
    stop: Option<oneshot::Sender<()>>,
}

impl RunReceiver {
    pub(crate) async fn start(wanted: &WebhookRun) -> Result<RunReceiver, Failure> {
        let secret = if wanted.sandbox_delivers {
            random_token().into_bytes()
        } else {
            super::webhook::secret_for(wanted.scheme, wanted.secret_file.as_deref())?
        };
        super::listening::check_exposure(
            wanted.addr,
            wanted.public,
            "--webhook-listen",
            "the run's webhook receiver (it answers anyone; only deliveries signed with the secret are accepted)",
        )?;
        let cannot_listen = |error| Failure::Listen {
            flag: "--webhook-listen",
            addr: wanted.addr,
            error,
        };
        let socket = tokio::net::TcpListener::bind(wanted.addr)
            .await
            .map_err(cannot_listen)?;
        let addr = socket.local_addr().map_err(cannot_listen)?;
        let url = format!("http://{addr}/webhooks");
        let listener = Arc::new(Listener::quiet(wanted.scheme, secret.clone()));
        let (stop, stopped) = oneshot::channel::<()>();
        let app = router(listener.clone());
        let limits = super::listening::default_limits();
        tokio::spawn(crate::sandbox::listener::serve(
            socket,
            app,
            limits,
            async {
                let _ = stopped.await;
            },
        ));
        Ok(RunReceiver {
            for_sandbox: wanted
                .sandbox_delivers
                .then(|| WebhookOptions::new(&url, wanted.scheme, secret)),
            listener,
            url,
            stop: Some(stop),
        })
    }

    pub(crate) fn sandbox_options(&self) -> Option<WebhookOptions> {
        self.for_sandbox.clone()
    }

    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// Deliveries go on the bundle's record as they arrive.
    pub(crate) fn write_to(&self, dir: &std::path::Path) {
        self.listener.write_to(dir.join("webhooks.jsonl"));
    }

    /// Stops listening and says what arrived; lets the embedded sandbox end the deliveries
    /// already due first.
    pub(crate) async fn finish(
        mut self,
        sandbox: Option<&Sandbox>,
        exchanges: &[Exchange],
    ) -> WebhooksSection {
        if let Some(sandbox) = sandbox {
            sandbox.settle_webhooks(SETTLE).await;
        }
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        section(
            self.url.clone(),
            self.listener.scheme().name(),
            (self.listener.received(), self.listener.not_kept()),
            exchanges,
        )
    }
}
