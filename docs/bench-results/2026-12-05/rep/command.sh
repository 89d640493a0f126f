#!/usr/bin/env bash
# stated-lines holding every line of a section (4f7cc10), the quick start's levers with stats-first and requirements-once on (as rq8-* of 4 December), --context 8192, four report tasks, 1.5B, seed 0
set -euo pipefail
L="--lever all=on --lever repeat-penalty=off --lever task-reminder=off --lever change-before-finish=off --lever document-facts=off --lever source-lines=off --lever inputs-first=off --lever keep-inputs=off --lever stats-first=on --lever requirements-once=on --samples 3"
exec /work/bench-out/rein-s8 bench /work/suites-tmp/s_rep4 --models qwen2.5-coder-1.5b --split all --repeats 1 --seed 0 --jobs 1 --context 8192 $L --out /work/bench-out/${OUT:-rep} "$@"
