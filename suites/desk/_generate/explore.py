import sys; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from lib import *

# ---------- explore-inventory ----------
fx = {
 "README.md": "# Corner Bakery orders\n\nScripts and data for the weekly wholesale orders of the Corner Bakery.\nRun `python src/orders.py data/orders.csv` to print the week's totals.\n",
 "docs/setup.md": "# Setup\n\n1. Install Python 3.11.\n2. `pip install -r requirements.txt`\n3. Copy config/settings.toml and fill in the shop id.\n",
 "src/orders.py": "import csv\nimport sys\n\n\ndef totals(path):\n    out = {}\n    with open(path) as f:\n        for row in csv.DictReader(f):\n            out[row['customer']] = out.get(row['customer'], 0) + int(row['loaves'])\n    return out\n\n\nif __name__ == '__main__':\n    print(totals(sys.argv[1]))\n",
 "src/prices.py": "PRICE_PER_LOAF = {'sourdough': 4.2, 'rye': 3.8, 'baguette': 2.1}\n",
 "data/orders.csv": "customer,product,loaves\nCafe Lumen,sourdough,24\nCafe Lumen,baguette,40\nGreen Grocer,rye,18\nHotel Adler,sourdough,30\n",
 "data/customers.csv": "customer,contact,day\nCafe Lumen,Ida Berg,Monday\nGreen Grocer,Sam Roth,Tuesday\nHotel Adler,Eva Klein,Monday\n",
 "config/settings.toml": "[shop]\nid = \"cb-014\"\nopen_days = [\"Mon\", \"Tue\", \"Wed\", \"Thu\", \"Fri\", \"Sat\"]\n\n[delivery]\nvan_capacity_loaves = 180\n",
 "tests/test_orders.py": "from src.orders import totals\n\n\ndef test_totals(tmp_path):\n    p = tmp_path / 'o.csv'\n    p.write_text('customer,product,loaves\\nA,rye,2\\nA,rye,3\\n')\n    assert totals(p) == {'A': 5}\n",
 "requirements.txt": "pytest==8.2.0\n",
}
files = sorted(fx)
art = "out/inventory.md"
gold = "# Inventory\n\n" + "".join(f"- {p}: {d}\n" for p, d in [
 ("README.md", "what the project is and how to run it"),
 ("requirements.txt", "Python packages needed (pytest)"),
 ("config/settings.toml", "shop id, open days and van capacity"),
 ("data/customers.csv", "wholesale customers with contact and delivery day"),
 ("data/orders.csv", "this week's orders: customer, product, loaves"),
 ("docs/setup.md", "installation steps"),
 ("src/orders.py", "script that sums loaves per customer"),
 ("src/prices.py", "price per loaf for each bread"),
 ("tests/test_orders.py", "unit test for the order totals"),
]) + "\nTotal files: 9\nCSV files: 2\nFolders: 5\n"
checks = base(art, None, "inventory.md") + [
  {"id": "has-heading", "kind": "report_complete", "path": art, "headings": ["Inventory"], "min_words": 30},
] + [has("lists-" + p.replace("/", "-").replace(".", "-").lower(), art, r"(?m)^\s*`?" + re.escape(p) + r"`?\s*[:\-—(]", section="Inventory") for p in files] + [
  num("total-files", art, lab("total files"), matches(files, r"\A", "count")),
  num("csv-files", art, lab("csv files"), matches([p for p in files if p.endswith(".csv")], r"\A", "count")),
  num("folders", art, lab("folders"), matches(["config/settings.toml", "data/orders.csv", "docs/setup.md", "src/orders.py", "tests/test_orders.py"], r"\A", "count")),
]
task("explore-inventory", "explore", "dev",
  "Walk a small project folder and write an inventory: every file with a short description, and counts of files, CSV files and folders.",
  "Look around this project folder and write out/inventory.md. Start with the heading '# Inventory', then one list item per file in the folder (every sub-folder included), each written as '- <path>: <a few words on what the file is>', with paths relative to the folder root like data/orders.csv. After the list, add three lines:\nTotal files: <number of files listed>\nCSV files: <how many of them are .csv files>\nFolders: <number of sub-folders that hold files>\nDo not count out/inventory.md itself. Do not change any file. Read out/inventory.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "missing-file": {"class": "missing-fact", "why": "requirements.txt is left out of the list (the total still says 9).", "caught_by": ["lists-requirements-txt"],
      "files": {art: gold.replace("- requirements.txt: Python packages needed (pytest)\n", "")}},
   "count-includes-itself": {"class": "wrong-number", "why": "Counts out/inventory.md too: Total files: 10.", "caught_by": ["total-files"],
      "files": {art: gold.replace("Total files: 9", "Total files: 10")}},
   "csv-count-wrong": {"class": "wrong-number", "why": "Counts only one CSV file.", "caught_by": ["csv-files"], "files": {art: gold.replace("CSV files: 2", "CSV files: 1")}},
   "folders-count-with-out": {"class": "wrong-number", "why": "Counts the out/ folder among the folders.", "caught_by": ["folders"], "files": {art: gold.replace("Folders: 5", "Folders: 6")}},
   "paths-without-folders": {"class": "wrong-form", "why": "Lists file names without their folders (orders.csv instead of data/orders.csv).", "caught_by": ["lists-data-orders-csv", "lists-src-orders-py", "lists-tests-test_orders-py"],
      "files": {art: re.sub(r"(?m)^- [a-z]+/", "- ", gold)}},
  })
check("explore-inventory")

# ---------- explore-log-lines ----------
import random
r = random.Random(3)
names = {"logs/api.log": 23, "logs/worker.log": 31, "logs/cron.log": 9, "logs/nginx/access.log": 27, "logs/nginx/error.log": 6}
fx = {}
for p, n in names.items():
    lines = []
    for k in range(n):
        ts = f"2024-09-02T{8 + k // 6:02d}:{(k * 7) % 60:02d}:{(k * 13) % 60:02d}Z"
        if "access" in p:
            lines.append(f'10.0.{r.randint(0,9)}.{r.randint(2,250)} - - [{ts}] "GET /{r.choice(["", "shop", "cart", "api/items"])} HTTP/1.1" {r.choice([200,200,200,304,404])} {r.randint(200,9000)}')
        elif "nginx/error" in p:
            lines.append(f"{ts} [error] upstream timed out while reading response header, upstream: \"http://127.0.0.1:{r.choice([8001,8002])}\"")
        elif "cron" in p:
            lines.append(f"{ts} cron: ran {r.choice(['backup.sh', 'rotate-logs.sh', 'sync-prices.py'])} exit={r.choice([0,0,0,1])}")
        elif "worker" in p:
            lines.append(f"{ts} worker[{r.randint(2,4)}] job={r.randint(1000,9999)} {r.choice(['done', 'done', 'retry', 'done'])} in {r.randint(20,900)} ms")
        else:
            lines.append(f"{ts} api {r.choice(['GET', 'POST'])} /v1/{r.choice(['items', 'orders', 'users'])} {r.choice([200, 201, 400, 500])} {r.randint(3,300)}ms")
    fx[p] = "\n".join(lines) + "\n"
art = "out/log_lines.md"
order = sorted(fx)
gold = "# Log lines\n\n" + "".join(f"- {p}: {names[p]}\n" for p in order) + "\nLongest: logs/worker.log\nTotal lines: 96\n"
def pl(p):  # anchored per-file statement
    return r"(?im)^\s*`?" + re.escape(p) + r"`?\s*:\s*(.*?)\s*$"
checks = base(art, None, "log_lines.md") + [
  num("lines-" + p.replace("/", "-").replace(".", "-"), art, pl(p), {"from": "lines", "path": p, "pattern": "^"}, ["lines", "line"]) for p in order
] + [
  has("longest", art, pathline("longest", "logs/worker.log")),
  num("total-lines", art, lab("total lines"), matches(order, r"(?m)^.+$", "count"), ["lines"]),
]
task("explore-log-lines", "explore", "dev",
  "Find every log file under logs/ (nested folders included) and count its lines.",
  "Find every .log file under logs/, including the ones in sub-folders, and count the lines of each. Write out/log_lines.md with the heading '# Log lines', then one list item per log file written as '- <path>: <number of lines>' (paths like logs/api.log), then the two lines\nLongest: <path of the log with the most lines>\nTotal lines: <the sum over all the logs>\nDo not change the logs. Read out/log_lines.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "missed-nested-folder": {"class": "missing-fact", "why": "Only the top-level logs; the two nginx logs are missing, so the total is 63.", "caught_by": ["lines-logs-nginx-access-log", "lines-logs-nginx-error-log", "total-lines"],
      "files": {art: "# Log lines\n\n- logs/api.log: 23\n- logs/cron.log: 9\n- logs/worker.log: 31\n\nLongest: logs/worker.log\nTotal lines: 63\n"}},
   "off-by-one": {"class": "wrong-number", "why": "Counts one line too many for api.log (a trailing newline counted as a line).", "caught_by": ["lines-logs-api-log"],
      "files": {art: gold.replace("logs/api.log: 23", "logs/api.log: 24")}},
   "wrong-longest": {"class": "wrong-value", "why": "Names the access log as the longest.", "caught_by": ["longest"],
      "files": {art: gold.replace("Longest: logs/worker.log", "Longest: logs/nginx/access.log")}},
   "total-wrong": {"class": "wrong-number", "why": "The per-file counts are right but the total is not their sum.", "caught_by": ["total-lines"],
      "files": {art: gold.replace("Total lines: 96", "Total lines: 86")}},
  })
check("explore-log-lines")

# ---------- explore-archive-years ----------
r = random.Random(5)
vendors = ["Stadtwerke", "Telekom", "Hausverwaltung Lenz", "Allianz", "Bauhaus", "Ikea", "Finanzamt", "Zahnarzt Dr. Weber"]
counts = {"2021": 4, "2022": 7, "2023": 5, "2024": 3}
fx = {}
for y, n in counts.items():
    used = set()
    for k in range(n):
        v = r.choice([x for x in vendors if x not in used]); used.add(v)
        m = r.randint(1, 12)
        slug = v.lower().replace(" ", "-").replace(".", "")
        fx[f"archive/{y}/{y}-{m:02d}-{slug}.txt"] = f"Scanned letter\nFrom: {v}\nDate: {y}-{m:02d}-{r.randint(1,28):02d}\nSubject: {r.choice(['Annual statement', 'Invoice', 'Contract change', 'Receipt', 'Reminder'])}\nAmount: {r.randint(20, 900)}.{r.randint(0,99):02d} EUR\n"
fx["archive/README.txt"] = "Scans of paper mail, one folder per year. File names start with the letter's date.\n"
art = "out/archive.md"
by = {y: sorted(p for p in fx if p.startswith(f"archive/{y}/")) for y in counts}
gold = "# Archive\n\n" + "".join(f"- {y}: {counts[y]} letters\n" for y in counts) + "\nBusiest year: 2022\nTotal letters: 19\n"
# counting needs a listing, not reading every letter: no inputs_read
checks = base(art, "none", "archive.md") + [
  num(f"year-{y}", art, r"(?im)^\s*" + y + r"\s*:\s*(.*?)\s*$", matches(by[y], r"\A", "count"), ["letters", "letter", "files", "file"]) for y in counts
] + [
  has("busiest-year", art, r"(?im)^\s*busiest year\s*:\s*2022\s*$"),
  num("total-letters", art, lab("total letters"), matches(sum(by.values(), []), r"\A", "count"), ["letters", "files"]),
]
task("explore-archive-years", "explore", "heldout",
  "Count the scanned letters in each year folder of a paper-mail archive.",
  "archive/ holds scanned paper mail, one sub-folder per year. Count the letters (the .txt files) in each year's folder; archive/README.txt is not a letter. Write out/archive.md with the heading '# Archive', one list item per year written as '- <year>: <number> letters', then the lines\nBusiest year: <the year with the most letters>\nTotal letters: <the sum over all years>\nDo not change the archive. Read out/archive.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "readme-counted": {"class": "wrong-number", "why": "Counts README.txt as a letter in the total.", "caught_by": ["total-letters"], "files": {art: gold.replace("Total letters: 19", "Total letters: 20")}},
   "year-miscounted": {"class": "wrong-number", "why": "2023 counted as 4.", "caught_by": ["year-2023"], "files": {art: gold.replace("2023: 5", "2023: 4")}},
   "year-missing": {"class": "missing-fact", "why": "2024 is left out.", "caught_by": ["year-2024"], "files": {art: gold.replace("- 2024: 3 letters\n", "")}},
   "wrong-busiest": {"class": "wrong-value", "why": "Names the latest year instead of the busiest.", "caught_by": ["busiest-year"], "files": {art: gold.replace("Busiest year: 2022", "Busiest year: 2024")}},
  })
check("explore-archive-years")
