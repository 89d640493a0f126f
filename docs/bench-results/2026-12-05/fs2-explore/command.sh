#!/bin/sh
# The six explore tasks with folder-stats on, binary of the working tree at 17:11 on top of d5428c2 (find-inputs note off where folder-stats counts) (the levers of x1-explore-related plus folder-stats; task-search off), 1.5B, seed 0, 8,192 tokens.
L="--lever all=on --lever repeat-penalty=off --lever task-reminder=off --lever change-before-finish=off --lever document-facts=off --lever source-lines=off --lever inputs-first=off --lever keep-inputs=off --lever stats-first=off --lever requirements-once=off --lever review-edits=off --lever task-search=off --samples 3"
/work/bench-out/rein-fs2 bench /work/suites-tmp/s_explore --models qwen2.5-coder-1.5b --split all --repeats 1 --seed 0 --jobs 1 --context 8192 $L --out /work/bench-out/fs2-explore/out
