#!/usr/bin/env bash
# requirements-once on, with stats-first on, the quick start's levers otherwise; four report tasks
set -euo pipefail
L="--lever all=on --lever repeat-penalty=off --lever task-reminder=off --lever change-before-finish=off --lever document-facts=off --lever source-lines=off --lever inputs-first=off --lever keep-inputs=off --lever stats-first=on --lever requirements-once=on --samples 3"
exec /work/bench-out/rein-rq1 bench /work/suites-tmp/s_rq4 --models qwen2.5-coder-1.5b --split all --repeats 1 --seed 0 --jobs 1 $L --out /work/bench-out/${OUT:-rq-on} "$@"
