#!/bin/sh
# The five search tasks s4-search did not finish (hosting-renewal, invoice-amount, legacy-flag, payment-timeout (held-out), policy-clause), 1.5B, seed 0, 8,192 tokens, the quick start's levers with find-inputs, wider-search, answer-lines and read-cited ON (all=on), binary of 4513cce.
L="--lever all=on --lever repeat-penalty=off --lever task-reminder=off --lever change-before-finish=off --lever document-facts=off --lever source-lines=off --lever inputs-first=off --lever keep-inputs=off --lever stats-first=off --lever requirements-once=off --lever review-edits=off --samples 3"
/work/bench-out/rein-s5 bench /work/suites-tmp/s_search_rest --models qwen2.5-coder-1.5b --split all --repeats 1 --seed 0 --jobs 1 --context 8192 $L --out /work/bench-out/s5-search
