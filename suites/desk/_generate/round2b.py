import sys; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from lib import *
import random

# ---------- explore-csv-rows ----------
r = random.Random(31)
tables = {"data/customers.csv": ("id,name,country", 14), "data/orders.csv": ("id,customer_id,total", 37), "data/products.csv": ("sku,name,price", 9),
          "data/archive/orders-2022.csv": ("id,customer_id,total", 52), "data/archive/orders-2023.csv": ("id,customer_id,total", 44), "data/suppliers.csv": ("id,name,city", 5)}
fx = {}
for p, (h, n) in tables.items():
    cols = h.split(",")
    rows = []
    for k in range(n):
        vals = []
        for c in cols:
            if c in ("id", "customer_id"): vals.append(str(1000 + k if c == "id" else r.randint(1000, 1013)))
            elif c == "sku": vals.append(f"SKU-{k + 1:03d}")
            elif c == "name": vals.append(r.choice(["Aster", "Birch", "Cedar", "Dune", "Elm", "Fern", "Gale", "Heath"]) + f" {r.choice(['GmbH', 'Ltd', 'AB', 'SA'])}")
            elif c in ("country", "city"): vals.append(r.choice(["DE", "SE", "FR", "NL"]) if c == "country" else r.choice(["Lyon", "Malmo", "Utrecht", "Kassel"]))
            else: vals.append(f"{r.uniform(5, 900):.2f}")
        rows.append(",".join(vals))
    fx[p] = h + "\n" + "\n".join(rows) + "\n"
fx["data/README.md"] = "# Data export\n\nNightly export of the shop database. Older orders live in archive/.\n"
art = "out/tables.md"
order = sorted(tables)
gold = "# Tables\n\n" + "".join(f"- {p}: {tables[p][1]} rows\n" for p in order) + "\nLargest: data/archive/orders-2022.csv\nOrders in total: 133\n"
checks = base(art, order, "tables.md") + [
  num("rows-" + p.replace("/", "-").replace(".", "-"), art, r"(?im)^\s*`?" + re.escape(p) + r"`?\s*:\s*(.*?)\s*$", csvx(p, "count"), ["rows", "row"]) for p in order
] + [
  has("largest", art, pathline("largest", "data/archive/orders-2022.csv")),
  num("orders-total", art, lab("orders in total"), matches(["data/orders.csv", "data/archive/orders-2022.csv", "data/archive/orders-2023.csv"], r"(?m)^\d+,\d+,[\d.]+$", "count"), ["rows"]),
]
task("explore-csv-rows", "explore", "dev",
  "Find every CSV of a data export (including an archive sub-folder) and count its data rows.",
  "data/ is a nightly database export. Find every .csv file under data/, including sub-folders, and count its data rows (the header line is not a row). Write out/tables.md with the heading '# Tables', one list item per CSV written as '- <path>: <N> rows', then the lines\nLargest: <path of the CSV with the most rows>\nOrders in total: <rows of data/orders.csv plus both archived orders files>\nDo not change the data. Read out/tables.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "header-counted": {"class": "wrong-number", "why": "Counts the header line as a row in products.csv.", "caught_by": ["rows-data-products-csv"], "files": {art: gold.replace("data/products.csv: 9 rows", "data/products.csv: 10 rows")}},
   "archive-missed": {"class": "missing-fact", "why": "Never looked in data/archive/: the two archived files are missing and the largest is wrong.", "caught_by": ["rows-data-archive-orders-2022-csv", "rows-data-archive-orders-2023-csv", "largest", "orders-total"],
      "files": {art: "# Tables\n\n- data/customers.csv: 14 rows\n- data/orders.csv: 37 rows\n- data/products.csv: 9 rows\n- data/suppliers.csv: 5 rows\n\nLargest: data/orders.csv\nOrders in total: 37\n"}},
   "orders-without-archive": {"class": "wrong-number", "why": "Orders in total counts only the current orders file.", "caught_by": ["orders-total"], "files": {art: gold.replace("Orders in total: 133", "Orders in total: 37")}},
  })
check("explore-csv-rows")

# ---------- explore-todos ----------
fx = {
 "src/main.py": "from src import cli\n\n\ndef main():\n    # TODO: read the config path from an environment variable\n    cli.run()\n",
 "src/cli.py": "import argparse\n\n\ndef run():\n    p = argparse.ArgumentParser()\n    p.add_argument('--verbose', action='store_true')\n    # TODO: add --dry-run\n    # TODO: add --config\n    return p.parse_args()\n",
 "src/store.py": "import sqlite3\n\n\ndef open_db(path):\n    # FIXME: no timeout on the connection\n    return sqlite3.connect(path)\n\n\ndef save(db, item):\n    db.execute('insert into items values (?)', (item,))\n",
 "src/report.py": "def render(items):\n    lines = [f'- {i}' for i in items]\n    return '\\n'.join(lines)\n",
 "src/net/client.py": "import urllib.request\n\n\ndef get(url):\n    # TODO: retry on 503\n    # TODO: respect Retry-After\n    # FIXME: the timeout is hard-coded\n    return urllib.request.urlopen(url, timeout=5).read()\n",
 "src/net/cache.py": "_cache = {}\n\n\ndef cached(key, fn):\n    if key not in _cache:\n        _cache[key] = fn()\n    return _cache[key]\n",
 "tests/test_report.py": "from src.report import render\n\n\ndef test_render():\n    # TODO: test an empty list\n    assert render(['a']) == '- a'\n",
 "docs/notes.md": "# Notes\n\nThe TODO list for the next release lives in the issue tracker, not in this file.\n",
}
py = sorted(p for p in fx if p.endswith(".py"))
art = "out/todos.md"
cnt = {p: len(re.findall(r"#\s*TODO", fx[p])) for p in py}
fix = {p: len(re.findall(r"#\s*FIXME", fx[p])) for p in py}
gold = "# Open markers\n\n" + "".join(f"- {p}: {cnt[p]} TODO, {fix[p]} FIXME\n" for p in py if cnt[p] or fix[p]) + f"\nTODO comments: {sum(cnt.values())}\nFIXME comments: {sum(fix.values())}\nFiles with markers: {sum(1 for p in py if cnt[p] or fix[p])}\n"
withm = [p for p in py if cnt[p] or fix[p]]
# no_placeholders is left out: this report must name the TODO and FIXME markers it counts.
checks = [c for c in base(art, py, "todos.md") if c["kind"] != "no_placeholders"] + [
  num("todo-total", art, lab("todo comments"), matches(py, r"#\s*TODO\b", "count")),
  num("fixme-total", art, lab("fixme comments"), matches(py, r"#\s*FIXME\b", "count")),
  num("files-with-markers", art, lab("files with markers"), matches(withm, r"\A", "count")),
] + [num("todo-" + p.replace("/", "-").replace(".", "-"), art, r"(?im)^\s*`?" + re.escape(p) + r"`?\s*:\s*(.*?)\s*TODO\b", matches(p, r"#\s*TODO\b", "count"), section="Open markers") for p in withm] + [
  lacks("not-" + p.replace("/", "-").replace(".", "-"), art, re.escape(p), section="Open markers") for p in py if p not in withm] + [lacks("docs-not-counted", art, r"docs/notes\.md", section="Open markers")]
task("explore-todos", "explore", "dev",
  "Walk a small Python project and count the TODO and FIXME comments per file.",
  "Look through every .py file in this project (src/ and tests/, sub-folders included) and count the comments that start with '# TODO' and '# FIXME'. Write out/todos.md with the heading '# Open markers', one list item per .py file that has at least one marker, written as '- <path>: <N> TODO, <N> FIXME', then the lines\nTODO comments: <total>\nFIXME comments: <total>\nFiles with markers: <number of .py files listed>\nOnly .py files count; the word TODO in documentation is not a marker. Do not change any file. Read out/todos.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "docs-counted": {"class": "wrong-number", "why": "Counts the word TODO in docs/notes.md too.", "caught_by": ["todo-total", "docs-not-counted"], "files": {art: gold.replace("\nTODO comments: 6", "- docs/notes.md: 1 TODO, 0 FIXME\n\nTODO comments: 7")}},
   "nested-missed": {"class": "missing-fact", "why": "src/net/ not visited: client.py missing and totals short.", "caught_by": ["todo-src-net-client-py", "todo-total", "fixme-total", "files-with-markers"],
      "files": {art: gold.replace("- src/net/client.py: 2 TODO, 1 FIXME\n", "").replace("TODO comments: 6", "TODO comments: 4").replace("FIXME comments: 2", "FIXME comments: 1").replace("Files with markers: 5", "Files with markers: 4")}},
   "per-file-miscount": {"class": "wrong-number", "why": "cli.py given 1 TODO (the totals are right).", "caught_by": ["todo-src-cli-py"], "files": {art: gold.replace("src/cli.py: 2 TODO", "src/cli.py: 1 TODO")}},
   "placeholder-count": {"class": "placeholder", "why": "The FIXME total left as ???.", "caught_by": ["fixme-total"], "files": {art: gold.replace("FIXME comments: 2", "FIXME comments: ???")}},
   "clean-file-listed": {"class": "wrong-file", "why": "Lists src/report.py with zero markers.", "caught_by": ["not-src-report-py"], "files": {art: gold.replace("- src/store.py", "- src/report.py: 0 TODO, 0 FIXME\n- src/store.py")}},
  })
check("explore-todos")
