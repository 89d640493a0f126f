//! Crash injection, for tests only. With the `crash-hooks` feature (which only rein-engine's
//! own tests enable, through their dev-dependency on this crate), a test process installs a
//! hook that apply calls at each boundary of its protocol; the crash test's hook stops there
//! so the parent can SIGKILL it exactly at that boundary. Nothing here reads the environment:
//! a process that installs no hook (the `rein` binary never does) cannot be stopped, and
//! without the feature [`crash_point`] is an empty function.

/// The boundaries of the apply protocol, in order.
#[cfg(feature = "crash-hooks")]
pub const CRASH_POINTS: [&str; 5] = [
    "after-intent",
    "after-temp-write",
    "after-rename",
    "before-commit",
    "after-commit",
];

#[cfg(feature = "crash-hooks")]
static HOOK: std::sync::OnceLock<fn(&str)> = std::sync::OnceLock::new();

/// Installs the function apply calls at each of [`CRASH_POINTS`], once per process; returns
/// whether it was installed (false if one already was).
#[cfg(feature = "crash-hooks")]
#[doc(hidden)]
pub fn install_crash_hook(hook: fn(&str)) -> bool {
    HOOK.set(hook).is_ok()
}

/// Calls the installed hook, if any.
#[cfg(feature = "crash-hooks")]
pub(crate) fn crash_point(point: &str) {
    if let Some(hook) = HOOK.get() {
        hook(point);
    }
}

/// Without the `crash-hooks` feature: nothing.
#[cfg(not(feature = "crash-hooks"))]
#[inline(always)]
pub(crate) fn crash_point(_point: &str) {}
