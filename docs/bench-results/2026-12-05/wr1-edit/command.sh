#!/bin/sh
# The eight edit tasks with whole-rewrite (binary of f108811), the quick start's levers (whole-rewrite on through all=on, before the quick start turned it off), 1.5B, seed 0, 8,192 tokens.
L="--lever all=on --lever repeat-penalty=off --lever task-reminder=off --lever change-before-finish=off --lever document-facts=off --lever source-lines=off --lever inputs-first=off --lever keep-inputs=off --lever stats-first=off --lever requirements-once=off --lever review-edits=off --lever find-inputs=off --lever wider-search=off --lever answer-lines=off --lever read-cited=off --lever task-search=off --lever folder-stats=off --samples 3"
rein bench /work/suites-tmp/s_edit --models qwen2.5-coder-1.5b --split all --repeats 1 --seed 0 --jobs 1 --context 8192 $L --out wr1-edit/out
