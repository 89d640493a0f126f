#!/usr/bin/env bash
# The quick start's levers (scripts/quickstart.sh, 0e856d1) with --context 8192, on the desk suite's search and edit tasks, 1.5B, seed 0
set -euo pipefail
L="--lever all=on --lever repeat-penalty=off --lever task-reminder=off --lever change-before-finish=off --lever document-facts=off --lever source-lines=off --lever inputs-first=off --lever keep-inputs=off --lever stats-first=off --lever requirements-once=off --samples 3"
exec /work/bench-out/rein-s5 bench /work/suites-tmp/s_search_edit --models qwen2.5-coder-1.5b --split all --repeats 1 --seed 0 --jobs 1 --context 8192 $L --out /work/bench-out/${OUT:-se} "$@"
