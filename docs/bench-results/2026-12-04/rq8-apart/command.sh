#!/usr/bin/env bash
# requirements-once and stats-first (with the task's lines) on, --context 8192, the quick start's levers otherwise; four report tasks
set -euo pipefail
L="--lever all=on --lever repeat-penalty=off --lever task-reminder=off --lever change-before-finish=off --lever document-facts=off --lever source-lines=off --lever inputs-first=off --lever keep-inputs=off --lever stats-first=on --lever requirements-once=on --samples 3"
exec /work/bench-out/rein-rq5 bench /work/suites-tmp/s_two --models qwen2.5-coder-1.5b --split all --repeats 1 --seed 0 --jobs 1 --context 8192 $L --out /work/bench-out/${OUT:-rq8-apart} "$@"
