//! A small run's exchange blocks of report.html, rendered on a thread of their own while the
//! run goes on: rendering them was most of the HTML report's time, which was the end of a run
//! a user waits for. The report uses a block rendered here in place of rendering it then; it is
//! the same template over the same exchange, so the same text.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};

use super::exchange_view;
use super::pass::Sampler;
use crate::engine::{RunEvent, Subscriber};
use crate::record::Exchange;

/// The blocks kept at most: a default batch's take about 130 KiB, `--scale 10`'s (the largest
/// run that renders them) about 1.3 MiB.
const BLOCKS_KEPT: usize = 4 << 20;

/// Exchange blocks rendered, by the exchange's number.
#[derive(Default)]
pub(crate) struct Rendered(HashMap<u64, String>);

impl Rendered {
    /// Exchange `seq`'s block, when it was rendered.
    pub(crate) fn block(&self, seq: u64) -> Option<&str> {
        self.0.get(&seq).map(String::as_str)
    }
}

/// The subscriber handing each finished exchange to the rendering thread.
pub(crate) struct Prerender {
    sender: Mutex<Option<Sender<Exchange>>>,
    worker: Mutex<Option<std::thread::JoinHandle<Rendered>>>,
    /// Set at the run's end: the thread stops after the block it is rendering, rather than
    /// render those still queued (a loaded machine may have left it behind); the report
    /// renders the rest.
    stop: Arc<AtomicBool>,
}

impl Prerender {
    /// Starts the rendering thread; `None` when the system gives no thread (the report then
    /// renders every block itself, as a large run's does).
    pub(crate) fn start() -> Option<Arc<Prerender>> {
        let (sender, receiver) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let worker = std::thread::Builder::new()
            .name("ppcert-report".into())
            .spawn(move || render_each(receiver, &stopped))
            .ok()?;
        Some(Arc::new(Prerender {
            sender: Mutex::new(Some(sender)),
            worker: Mutex::new(Some(worker)),
            stop,
        }))
    }

    /// The blocks rendered so far; no more are taken or rendered. Empty when the thread failed
    /// (a block it did not render is rendered by the report).
    pub(crate) fn finish(&self) -> Rendered {
        self.stop.store(true, Ordering::Relaxed);
        self.finish_all()
    }

    /// [`Prerender::finish`] once every exchange handed over is rendered.
    pub(crate) fn finish_all(&self) -> Rendered {
        drop(lock(&self.sender).take());
        let worker = lock(&self.worker).take();
        worker
            .and_then(|worker| worker.join().ok())
            .unwrap_or_default()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Subscriber for Prerender {
    fn on(&self, event: &RunEvent) {
        if let RunEvent::ExchangeFinished(exchange) = event
            && let Some(sender) = lock(&self.sender).as_ref()
        {
            let _ = sender.send((**exchange).clone());
        }
    }
}

/// Renders the block of each exchange the report will show (the same sample, in the same
/// order), while they fit [`BLOCKS_KEPT`].
fn render_each(exchanges: Receiver<Exchange>, stop: &AtomicBool) -> Rendered {
    let mut rendered = Rendered::default();
    let mut sampler = Sampler::default();
    let mut left = BLOCKS_KEPT;
    for x in exchanges {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        if left == 0 || !sampler.keeps(&x) {
            continue;
        }
        // Rendered at once, so every pretty body is kept for it.
        let mut unbounded = usize::MAX;
        let detail = exchange_view::detail(&x, &mut unbounded);
        let Ok(block) = super::environment::render_block(&detail) else {
            continue;
        };
        left = left.saturating_sub(block.len());
        if left > 0 {
            rendered.0.insert(x.seq, block);
        }
    }
    rendered
}
