#!/usr/bin/env bash
# auto-finish on (all=on includes it) with the quick start's levers, desk_task, 1.5B, seeds 0-9
L="--lever all=on --lever repeat-penalty=off --lever task-reminder=off --lever change-before-finish=off --lever document-facts=off --lever source-lines=off --lever inputs-first=off --lever keep-inputs=off --lever stats-first=off --samples 3"
exec /work/bench-out/rein-af1 bench /work/suites-tmp/s_desk_task --models qwen2.5-coder-1.5b --split all --repeats 10 --seed 0 --jobs 1 $L --out /work/bench-out/af1 "$@"
