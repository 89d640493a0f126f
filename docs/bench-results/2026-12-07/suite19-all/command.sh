# The whole desk suite (50 tasks) with one binary (546ce60) and one lever set: the dev split (../dev19-all/) and the held-out split (../ho19/) together.
cat dev19-all/results.jsonl ho19/results.jsonl > suite19-all/results.jsonl
rein bench report suite19-all
