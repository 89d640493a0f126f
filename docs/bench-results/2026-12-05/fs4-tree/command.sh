#!/bin/sh
# explore-project-tree with folder-stats on and answer-lines holding its heading and four lines in place of write_sections, binary of 7c33fa2 (the levers of fs3-explore), 1.5B, seed 0, 8,192 tokens.
L="--lever all=on --lever repeat-penalty=off --lever task-reminder=off --lever change-before-finish=off --lever document-facts=off --lever source-lines=off --lever inputs-first=off --lever keep-inputs=off --lever stats-first=off --lever requirements-once=off --lever review-edits=off --lever task-search=off --samples 3"
/work/bench-out/rein-fs4 bench /work/suites-tmp/s_tree --models qwen2.5-coder-1.5b --split all --repeats 1 --seed 0 --jobs 1 --context 8192 $L --out /work/bench-out/fs4-tree/out
