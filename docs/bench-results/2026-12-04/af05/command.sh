#!/usr/bin/env bash
# 0.5B, desk_task, the quick start's levers with auto-finish and inputs-first on, seeds 0-4
L="--lever all=on --lever repeat-penalty=off --lever task-reminder=off --lever change-before-finish=off --lever document-facts=off --lever source-lines=off --lever keep-inputs=off --lever stats-first=off --samples 3"
exec /work/bench-out/rein-af1 bench /work/suites-tmp/s_desk_task --models qwen2.5-coder-0.5b --split all --repeats 5 --seed 0 --jobs 1 $L --out /work/bench-out/af05 "$@"
