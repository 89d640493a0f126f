//! The pages, scripts and styles, embedded in the binary (no build step, no CDN). Scripts are
//! ES modules served from this server only; the CSP allows nothing inline.

use std::sync::Arc;

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;

use crate::State;

/// (path, content type, body) of every embedded file.
const FILES: &[(&str, &str, &str)] = &[
    ("/cowork", HTML, include_str!("../assets/cowork.html")),
    ("/bench", HTML, include_str!("../assets/bench.html")),
    ("/runs", HTML, include_str!("../assets/runs.html")),
    ("/assets/app.css", CSS, include_str!("../assets/app.css")),
    ("/assets/common.js", JS, include_str!("../assets/common.js")),
    ("/assets/cowork.js", JS, include_str!("../assets/cowork.js")),
    ("/assets/bench.js", JS, include_str!("../assets/bench.js")),
    ("/assets/runs.js", JS, include_str!("../assets/runs.js")),
];

const HTML: &str = "text/html; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";

pub(crate) fn routes() -> Router<Arc<State>> {
    let mut router = Router::new().route("/", get(|| async { Redirect::to("/cowork") }));
    for &(path, kind, body) in FILES {
        router = router.route(path, get(move || async move { file(kind, body) }));
    }
    router.fallback(|| async {
        crate::guard::refuse(
            StatusCode::NOT_FOUND,
            "there is no such page; try /cowork, /bench or /runs",
        )
    })
}

fn file(kind: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, kind)], body).into_response()
}
