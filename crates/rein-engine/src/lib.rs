//! rein-engine
