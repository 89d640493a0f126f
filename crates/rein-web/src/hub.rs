//! One append-only log of events per chat session or bench run, streamed to any number of
//! pages as server-sent events. Every event keeps its index as the SSE `id`, so a browser that
//! reconnects (it sends `Last-Event-ID`) gets what it missed, and nothing twice.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::IntoResponse;
use futures_util::stream::{self, Stream};
use serde_json::{json, Value};
use tokio::sync::watch;

use crate::shown::shown;

/// Most events one log keeps; past it the log says so once and takes no more.
pub const MAX_EVENTS: usize = 100_000;

/// The log of one session or run.
pub struct Hub {
    log: Mutex<Vec<Arc<str>>>,
    /// How many events the log holds; `None` once it is closed (no more will come).
    count: watch::Sender<Option<usize>>,
}

impl Default for Hub {
    fn default() -> Self {
        Hub {
            log: Mutex::new(Vec::new()),
            count: watch::Sender::new(Some(0)),
        }
    }
}

impl Hub {
    /// Appends one event: `{"event": EVENT, "shown": EVENT with model text made visible}`.
    pub fn push(&self, event: Value) {
        self.push_doc(json!({ "shown": shown(&event), "event": event }));
    }

    /// Appends one chat token with `prose`: the reply so far as the page shows it (the thought
    /// and the answer, already escaped; see `prose`).
    pub(crate) fn push_token(&self, event: Value, prose: Value) {
        self.push_doc(json!({ "shown": shown(&event), "event": event, "prose": prose }));
    }

    fn push_doc(&self, doc: Value) {
        let Ok(mut log) = self.log.lock() else {
            return;
        };
        if log.len() >= MAX_EVENTS {
            return;
        }
        let doc = if log.len() + 1 == MAX_EVENTS {
            let cap = json!({"type": "error", "message": format!(
                "this page's log reached {MAX_EVENTS} events and shows no more; the journal \
                 keeps everything")});
            json!({ "shown": cap, "event": cap })
        } else {
            doc
        };
        log.push(Arc::from(doc.to_string()));
        let len = log.len();
        drop(log);
        self.count.send_replace(Some(len));
    }

    /// No more events will come: streams end once they have sent everything.
    pub fn close(&self) {
        self.push(json!({"type": "stream_end"}));
        self.count.send_replace(None);
    }

    /// Whether the log is closed (its session or run is over).
    pub fn is_closed(&self) -> bool {
        self.count.borrow().is_none()
    }

    /// A snapshot of every event so far, as JSON values (for tests and replays).
    pub fn events(&self) -> Vec<Value> {
        self.log
            .lock()
            .map(|log| {
                log.iter()
                    .filter_map(|s| serde_json::from_str(s).ok())
                    .collect()
            })
            .unwrap_or_default()
    }

    fn get(&self, index: usize) -> Option<Arc<str>> {
        self.log.lock().ok()?.get(index).cloned()
    }

    /// The SSE answer, starting after the `Last-Event-ID` the browser sent, if any.
    pub fn sse(self: Arc<Self>, headers: &HeaderMap) -> impl IntoResponse {
        let start = headers
            .get("last-event-id")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok())
            .map_or(0, |last| last.saturating_add(1));
        Sse::new(self.stream(start)).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
    }

    fn stream(self: Arc<Self>, start: usize) -> impl Stream<Item = Result<Event, Infallible>> {
        let rx = self.count.subscribe();
        stream::unfold((self, rx, start), |(hub, mut rx, next)| async move {
            loop {
                // Mark the count seen before reading the log, so a push after the read wakes
                // the wait below instead of being missed.
                let closed = rx.borrow_and_update().is_none();
                if let Some(doc) = hub.get(next) {
                    let event = Event::default().id(next.to_string()).data(&*doc);
                    return Some((Ok(event), (hub, rx, next + 1)));
                }
                if closed || rx.changed().await.is_err() {
                    return None;
                }
            }
        })
    }
}
