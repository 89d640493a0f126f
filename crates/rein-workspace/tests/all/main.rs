//! One integration-test binary for rein-workspace (one link step on a small machine).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod atomic;
mod confinement;
mod figures;
mod hardening;
mod links;
mod mounts;
mod path_filter;
mod property;
mod redteam_edit_lines;
mod redteam_table_rows;
mod redteam_table_rows_2;
mod registry;
mod sandbox;
mod support;
mod tools;
