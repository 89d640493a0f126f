#!/usr/bin/env bash
# The quick start's levers (auto-finish on, requirements-once off) on the final build, desk_task, 1.5B, seeds 0-2
L="--lever all=on --lever repeat-penalty=off --lever task-reminder=off --lever change-before-finish=off --lever document-facts=off --lever source-lines=off --lever inputs-first=off --lever keep-inputs=off --lever stats-first=off --lever requirements-once=off --samples 3"
exec /work/bench-out/rein-rq4 bench /work/suites-tmp/s_desk_task --models qwen2.5-coder-1.5b --split all --repeats 3 --seed 0 --jobs 1 $L --out /work/bench-out/af-final "$@"
