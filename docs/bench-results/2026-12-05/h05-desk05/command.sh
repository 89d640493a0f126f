#!/bin/sh
# 0.5B, desk_task, the quick start's levers with all=on (find-inputs, wider-search, answer-lines, read-cited on; task-search, folder-stats off), binary of 8140964, seeds 0-2, 8,192 tokens.
# Stopped after two of three runs (seeds 0-1) for the explore runs: the third was never finished.
L="--lever all=on --lever repeat-penalty=off --lever task-reminder=off --lever change-before-finish=off --lever document-facts=off --lever source-lines=off --lever inputs-first=off --lever keep-inputs=off --lever stats-first=off --lever requirements-once=off --lever review-edits=off --lever task-search=off --lever folder-stats=off --samples 3"
/work/bench-out/rein-h05 bench /work/suites-tmp/s_desk_task --models qwen2.5-coder-0.5b --split all --repeats 3 --seed 0 --jobs 1 --context 8192 $L --out /work/bench-out/h05/out
