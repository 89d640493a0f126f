import json, os, shutil, re, subprocess
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
REIN = os.path.join(os.path.dirname(os.path.dirname(ROOT)), "target", "release", "rein")
TOOLS_READ = ["list_dir", "read_file", "search_text", "find_files", "find_related", "file_info"]
TOOLS_WRITE = ["create_file", "edit_file", "replace_file", "finish"]
ALL_TOOLS = TOOLS_READ + TOOLS_WRITE

def lab(label):
    """anchored 'Label: value' regex for numeric statements"""
    return r"(?im)^\s*" + label + r"\s*:\s*(.*?)\.?\s*$"

def pathline(label, path):
    """anchored line 'Label: path' allowing backticks and ./"""
    return r"(?im)^\s*" + label + r"\s*:\s*`?(\./)?" + re.escape(path) + r"`?\s*$"

def base(art, read_paths=None, stray=None):
    ir = {"id": "inputs-read", "kind": "inputs_read", "before_writing": art}
    if read_paths and read_paths != "none":
        ir["paths"] = read_paths
    c = [
        {"id": "exists", "kind": "file_exists", "path": art, "non_empty": True},
        {"id": "written-this-run", "kind": "written_this_run", "path": art},
    ] + ([] if read_paths == "none" else [ir]) + [
        {"id": "inputs-unchanged", "kind": "inputs_unchanged"},
        {"id": "no-placeholder", "kind": "no_placeholders", "path": art},
    ]
    if stray:
        c.append({"id": "no-stray-copy", "kind": "file_absent", "path": stray})
    return c

def num(cid, path, stated, expected, units=None, section=None, tolerance=0, pointer=False):
    c = {"id": cid, "kind": "numeric_consistency", "path": path,
         "stated": {"pointer": stated} if pointer else {"regex": stated},
         "expected": expected, "tolerance": tolerance}
    if units: c["units"] = units
    if section: c["section"] = section
    return c

def matches(paths, pattern, op):
    if isinstance(paths, str): paths = [paths]
    return {"from": "matches", "paths": paths, "pattern": pattern, "op": op}

def csvx(path, op, column=None, filt=None):
    d = {"from": "csv", "path": path, "op": op}
    if column: d["column"] = column
    if filt: d["filter"] = {"column": filt[0], "equals": filt[1]}
    return d

def has(cid, path, pattern, section=None, regex=True, ci=True):
    c = {"id": cid, "kind": "content_matches", "path": path, "pattern": pattern, "regex": regex, "case_insensitive": ci}
    if section: c["section"] = section
    return c

def lacks(cid, path, pattern, section=None, regex=True, ci=True):
    c = {"id": cid, "kind": "content_absent", "path": path, "pattern": pattern, "regex": regex, "case_insensitive": ci}
    if section: c["section"] = section
    return c

def stmt(cid, path, all_, section=None, unnegated=True):
    c = {"id": cid, "kind": "statement", "path": path, "all": all_, "unnegated": unnegated}
    if section: c["section"] = section
    return c

def write(path, content):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(content)

def task(tid, category, split, description, prompt, fixtures, artifact, checks, gold, near, tools=None, budgets=None, min_words=None, gold_variants=None):
    d = os.path.join(ROOT, tid)
    if os.path.exists(d):
        shutil.rmtree(d)
    os.makedirs(d)
    write(os.path.join(d, "task.toml"), f'category = "{category}"\nsplit = "{split}"\nsandbox = "dir"\n')
    m = {"id": tid, "mode": "automatic", "description": description, "prompt": prompt,
         "fixtures": "fixtures", "inputs": sorted(fixtures), "tools": tools or ALL_TOOLS,
         "required_artifact": artifact, "checks": checks,
         "budgets": budgets or {"max_turns": 40, "max_seconds": 900, "max_plan_steps": 8, "attempts_per_strategy": 3}}
    if min_words: m["min_words"] = min_words
    write(os.path.join(d, "mission.json"), json.dumps(m, indent=2, ensure_ascii=False) + "\n")
    for p, c in fixtures.items():
        write(os.path.join(d, "fixtures", p), c)
    for p, c in gold.items():
        write(os.path.join(d, "judge/gold/files", p), c)
    for name, v in (gold_variants or {}).items():
        write(os.path.join(d, "judge/gold_variants", name, "case.json"), json.dumps({"class": v.get("class", "variant"), "why": v["why"]}, indent=2) + "\n")
        for p, c in v["files"].items():
            write(os.path.join(d, "judge/gold_variants", name, "files", p), c)
    for name, v in near.items():
        case = {"class": v["class"], "why": v["why"], "caught_by": v["caught_by"]}
        if "trace" in v: case["trace"] = v["trace"]
        write(os.path.join(d, "judge/near_misses", name, "case.json"), json.dumps(case, indent=2) + "\n")
        for p, c in v["files"].items():
            write(os.path.join(d, "judge/near_misses", name, "files", p), c)
    return d

def check(tid):
    r = subprocess.run([REIN, "check-mission", os.path.join(ROOT, tid)], capture_output=True, text=True)
    out = r.stdout + r.stderr
    bad = [l for l in out.splitlines() if not l.strip().startswith("ok ")]
    print(f"== {tid}: rc={r.returncode}")
    print("\n".join(bad))

def trace_reads(paths, art, extra_final=True):
    t = [{"tool": "read_file", "path": p} for p in paths]
    t.append({"tool": "create_file", "path": art, "writes": "final"})
    t.append({"tool": "read_file", "path": art})
    t.append({"tool": "finish"})
    return t
