#!/usr/bin/env bash
# The desk suite's three dev summarize tasks with not_copied checks, 1.5B, the quick start's levers (no-paste on unless $NP says off), f919224+6126f2a
NP=${NP:-on}
L="--lever all=on --lever repeat-penalty=off --lever task-reminder=off --lever change-before-finish=off --lever document-facts=off --lever source-lines=off --lever inputs-first=off --lever keep-inputs=off --lever no-paste=$NP --samples 3"
exec /work/bench-out/rein-rows4 bench /work/suites-tmp/s_summ --models qwen2.5-coder-1.5b --split all --repeats 1 --seed 0 --jobs 1 $L --out /work/bench-out/summ-$NP "$@"
