#!/bin/sh
# find-inputs on (all=on), review-edits off, the quick start's other levers as of 5 December,
# 8192 tokens, seed 0; binary of 042b1c8. Suite: the desk suite's eight search tasks, each
# task.toml pointing at suites/desk/<task>. Stopped after two runs (time; the second ran beside
# the workspace's test build).
L="--lever all=on --lever repeat-penalty=off --lever task-reminder=off --lever change-before-finish=off --lever document-facts=off --lever source-lines=off --lever inputs-first=off --lever keep-inputs=off --lever stats-first=off --lever requirements-once=off --lever review-edits=off --samples 3"
rein bench s_search --models qwen2.5-coder-1.5b --split all --repeats 1 --seed 0 --jobs 1 --context 8192 $L --out re5-search
