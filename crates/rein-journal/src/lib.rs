//! rein-journal
