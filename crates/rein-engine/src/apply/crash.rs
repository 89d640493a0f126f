//! Test-only crash injection. The crash test re-executes itself as the applying process with
//! `REIN_CRASH_AT=<point>`; when apply reaches that point it says so on stderr and stops, and
//! the parent kills it with SIGKILL, exactly at the boundary. Unset, this is one env lookup.

use std::io::Write;
use std::time::Duration;

/// The environment variable naming the boundary to stop at.
pub const CRASH_ENV: &str = "REIN_CRASH_AT";
/// The line printed on stderr when the process stops at a crash point.
pub const CRASH_MARKER: &str = "rein-crash-point:";

/// The boundaries of the apply protocol, in order.
pub const CRASH_POINTS: [&str; 5] = [
    "after-intent",
    "after-temp-write",
    "after-rename",
    "before-commit",
    "after-commit",
];

/// Stops the process here (forever, waiting for SIGKILL) when `REIN_CRASH_AT` names `point`.
#[doc(hidden)]
pub fn crash_point(point: &str) {
    let Some(wanted) = std::env::var_os(CRASH_ENV) else {
        return;
    };
    if wanted != point {
        return;
    }
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{CRASH_MARKER} {point}");
    let _ = err.flush();
    loop {
        std::thread::sleep(Duration::from_secs(60));
    }
}
