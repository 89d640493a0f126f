#!/usr/bin/env bash
# Row ends held, final build (after the fourth red-team round)
L="--lever all=on --lever repeat-penalty=off --lever task-reminder=off --lever change-before-finish=off --lever document-facts=off --lever source-lines=off --lever inputs-first=off --lever keep-inputs=off --lever no-paste=on --samples 3"
exec /work/bench-out/rein-rows5 bench /work/suites-tmp/s_desk_task --models qwen2.5-coder-1.5b --split all --repeats 10 --seed 0 --jobs 1 $L --out /work/bench-out/re6 "$@"
