#!/bin/sh
# Ablation on desk_task, 1.5B, seeds 0-2, one run at a time, binary of efe1626: the quick start's levers (base), then one lever changed per arm, in order of the levers first.
L="--lever all=on --lever repeat-penalty=off --lever task-reminder=off --lever change-before-finish=off --lever document-facts=off --lever source-lines=off --lever inputs-first=off --lever keep-inputs=off --lever stats-first=off --lever requirements-once=off --lever review-edits=off --lever find-inputs=off --samples 3"
B=/work/bench-out/rein-abl2
for arm in base facts-tools requirements monotone-attempts repeat-penalty gguf-template; do  # the facts-tools arm: see below
  extra=""
  case "$arm" in
    base) ;;
    repeat-penalty) extra="--lever repeat-penalty=on" ;;
    *) extra="--lever $arm=off" ;;
  esac
  [ -f /work/bench-out/abl2-$arm/report.md ] && continue
  $B bench /work/suites-tmp/s_desk_task --models qwen2.5-coder-1.5b --split all --repeats 3 --seed 0 --jobs 1 $L $extra --out /work/bench-out/abl2-$arm
done

# The facts-tools arm, run again after abl2.sh (its first try ran beside a test build and hit the 900 s timeout twice; kept as facts-tools-loaded/):
/work/bench-out/rein-abl2 bench /work/suites-tmp/s_desk_task --models qwen2.5-coder-1.5b --split all --repeats 3 --seed 0 --jobs 1 $L --lever facts-tools=off --out /work/bench-out/abl2-facts-tools-b
