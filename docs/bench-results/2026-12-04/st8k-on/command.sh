#!/usr/bin/env bash
# stats-first=on with a context window of 8,192 tokens; the quick start's levers otherwise; binary of bcc5063
L="--lever all=on --lever repeat-penalty=off --lever task-reminder=off --lever change-before-finish=off --lever document-facts=off --lever source-lines=off --lever inputs-first=off --lever keep-inputs=off --lever no-paste=on --lever stats-first=on --samples 3"
exec rein bench s_stats --models qwen2.5-coder-1.5b --split all --repeats 1 --seed 0 --jobs 1 --context 8192 $L --out st8k-on
