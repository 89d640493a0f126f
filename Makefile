# Everyday commands; the README's quick start uses the same ones.
.PHONY: quickstart test fmt clippy check perf

quickstart:
	./scripts/quickstart.sh

test:
	cargo test --release --locked --workspace

fmt:
	cargo fmt --all

clippy:
	cargo clippy --release --all-targets -- -D warnings

check: fmt clippy test

perf:
	./target/release/rein perf
