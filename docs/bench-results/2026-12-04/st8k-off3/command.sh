#!/usr/bin/env bash
# stats-first=off, 8,192-token window, on the three s_stats tasks st8k-on ran with the machine
# otherwise idle (report-stock-warehouses, summarize-budget, summarize-feedback); binary of bcc5063
L="--lever all=on --lever repeat-penalty=off --lever task-reminder=off --lever change-before-finish=off --lever document-facts=off --lever source-lines=off --lever inputs-first=off --lever keep-inputs=off --lever no-paste=on --lever stats-first=off --samples 3"
exec rein bench s_stats3 --models qwen2.5-coder-1.5b --split all --repeats 1 --seed 0 --jobs 1 --context 8192 $L --out st8k-off3
