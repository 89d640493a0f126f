#!/usr/bin/env bash
# The README's first command: set up what is missing, then run Rein's main job on the embedded
# default model.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
model="${REIN_QUICKSTART_MODEL:-qwen2.5-coder-0.5b}"
echo "quickstart: asking $model" >&2
./target/release/rein ask --model "$model" --max-tokens 96 \
  "In two sentences: why should an agent harness verify a model's claim that a task is done?"
