#!/bin/sh
# explore with folder-stats: part-sum totals withheld, Rein's counts repeated after each step; binary of 286d0eb, 1.5B, seed 0, 8,192 tokens (the levers of fs3-explore).
L="--lever all=on --lever repeat-penalty=off --lever task-reminder=off --lever change-before-finish=off --lever document-facts=off --lever source-lines=off --lever inputs-first=off --lever keep-inputs=off --lever stats-first=off --lever requirements-once=off --lever review-edits=off --lever task-search=off --samples 3"
/work/bench-out/rein-fs5 bench /work/suites-tmp/s_explore --models qwen2.5-coder-1.5b --split all --repeats 1 --seed 0 --jobs 1 --context 8192 $L --out /work/bench-out/fs5-explore/out
