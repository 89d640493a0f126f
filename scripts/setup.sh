#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks to build and run Rein, builds it, and pulls the
# models the quick start and the tests use. Safe to run again: each step skips work already done.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v clang >/dev/null 2>&1 || need+=(clang)
ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1 || need+=(libclang-dev)
command -v pip3 >/dev/null 2>&1 || command -v pip >/dev/null 2>&1 || need+=(python3-pip)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]} with apt-get" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

echo "setup: building rein (release; the first build compiles llama.cpp and takes several minutes)" >&2
cargo build --release --locked -p rein-cli

# The embedded default model, which the tests' real-model cases load (the quick start pulls
# its own model too).
echo "setup: pulling the default model" >&2
./target/release/rein models pull qwen2.5-coder-0.5b
