# The whole dev split (39 tasks), the 1.5B, seed 0, one binary (rein-s16, built from 546ce60) and one lever set:
# the results of shard 1 (../dev16-s1/) and shard 2 (../dev18-s2/) concatenated,
# then reported with:
cat dev16-s1/results.jsonl dev18-s2/results.jsonl > dev19-all/results.jsonl
rein bench report dev19-all
