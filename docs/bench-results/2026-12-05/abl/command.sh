#!/bin/sh
# Ablation on desk_task, 1.5B, seeds 0-2, one run at a time: the quick start's levers (base), then one lever off per arm.
L="--lever all=on --lever repeat-penalty=off --lever task-reminder=off --lever change-before-finish=off --lever document-facts=off --lever source-lines=off --lever inputs-first=off --lever keep-inputs=off --lever stats-first=off --lever requirements-once=off --lever review-edits=off --lever find-inputs=off --samples 3"
B=/work/bench-out/rein-abl
for arm in base stated-lines write-sections; do
  extra=""
  [ "$arm" = base ] || extra="--lever $arm=off"
  $B bench /work/suites-tmp/s_desk_task --models qwen2.5-coder-1.5b --split all --repeats 3 --seed 0 --jobs 1 $L $extra --out /work/bench-out/abl-$arm
done
