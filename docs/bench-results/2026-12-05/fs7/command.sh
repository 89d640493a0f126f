#!/bin/sh
# csv-rows, config-formats, code-callers at 688dc55 (rows before lines, control characters refused, the sentence parser's red-team mends); 1.5B, seed 0, 8,192 tokens, the levers of fs3/fs5/fs6.
L="--lever all=on --lever repeat-penalty=off --lever task-reminder=off --lever change-before-finish=off --lever document-facts=off --lever source-lines=off --lever inputs-first=off --lever keep-inputs=off --lever stats-first=off --lever requirements-once=off --lever review-edits=off --lever task-search=off --samples 3"
rein bench /work/suites-tmp/s_fs7 --models qwen2.5-coder-1.5b --split all --repeats 1 --seed 0 --jobs 1 --context 8192 $L --out fs7/out
