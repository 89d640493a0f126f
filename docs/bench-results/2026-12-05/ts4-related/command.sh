#!/bin/sh
# 5 Dec, fifth session, last minutes: the six related tasks with task-search on, binary of 9328bdc, 1.5B, seed 0, 8,192 tokens, quick start's levers plus all=on. Stopped for time.
L="--lever all=on --lever repeat-penalty=off --lever task-reminder=off --lever change-before-finish=off --lever document-facts=off --lever source-lines=off --lever inputs-first=off --lever keep-inputs=off --lever stats-first=off --lever requirements-once=off --lever review-edits=off --samples 3"
/work/bench-out/rein-ts4 bench /work/suites-tmp/s_related --models qwen2.5-coder-1.5b --split all --repeats 1 --seed 0 --jobs 1 --context 8192 $L --out /work/bench-out/ts4-related
