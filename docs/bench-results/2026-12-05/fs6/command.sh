#!/bin/sh
# The four tasks the fs6 build changes (config-formats and code-callers: sentence templates; csv-rows: per-file counts repeated; log-lines: counts repeated in the retry), binary of 5751115, 1.5B, seed 0, 8,192 tokens, the levers of fs3/fs5.
L="--lever all=on --lever repeat-penalty=off --lever task-reminder=off --lever change-before-finish=off --lever document-facts=off --lever source-lines=off --lever inputs-first=off --lever keep-inputs=off --lever stats-first=off --lever requirements-once=off --lever review-edits=off --lever task-search=off --samples 3"
/work/bench-out/rein-fs6 bench /work/suites-tmp/s_fs6 --models qwen2.5-coder-1.5b --split all --repeats 1 --seed 0 --jobs 1 --context 8192 $L --out /work/bench-out/fs6/out
