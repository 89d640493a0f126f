#!/usr/bin/env bash
# summarize-feedback alone, stats-first=on, 8,192-token window; binary of 22b47c5 (stated-lines
# holds every labelled line of a section)
L="--lever all=on --lever repeat-penalty=off --lever task-reminder=off --lever change-before-finish=off --lever document-facts=off --lever source-lines=off --lever inputs-first=off --lever keep-inputs=off --lever no-paste=on --lever stats-first=on --samples 3"
exec rein bench s_feedback --models qwen2.5-coder-1.5b --split all --repeats 1 --seed 0 --jobs 1 --context 8192 $L --out st8k-fb7
