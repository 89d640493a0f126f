//! rein-testkit
