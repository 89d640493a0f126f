#!/bin/sh
# review-edits on (and find-inputs, which cannot act on edit tasks), the quick start's levers as of
# 5 December, 8192 tokens, seed 0; binary of 81d66fc. Suite: the desk suite's eight edit tasks,
# each task.toml pointing at suites/desk/<task>.
L="--lever all=on --lever repeat-penalty=off --lever task-reminder=off --lever change-before-finish=off --lever document-facts=off --lever source-lines=off --lever inputs-first=off --lever keep-inputs=off --lever stats-first=off --lever requirements-once=off --samples 3"
rein bench s_edit --models qwen2.5-coder-1.5b --split all --repeats 1 --seed 0 --jobs 1 --context 8192 $L --out re4-edit
