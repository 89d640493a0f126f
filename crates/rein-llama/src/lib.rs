//! rein-llama
