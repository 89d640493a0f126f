//! rein-workspace
