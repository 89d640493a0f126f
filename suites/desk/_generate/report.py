import sys; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from lib import *
import random

# ---------- report-expenses ----------
r = random.Random(42)
cats = {"travel": (60, 480), "meals": (12, 95), "software": (9, 300), "office": (5, 120)}
people = ["Anna", "Bruno", "Chen", "Dara"]
rows = []
for k in range(26):
    c = r.choice(list(cats))
    lo, hi = cats[c]
    amt = round(r.uniform(lo, hi), 2)
    rows.append((f"2024-05-{k + 1:02d}", c, f"{amt:.2f}", r.choice(people)))
csvt = "date,category,amount,employee\n" + "".join(",".join(x) + "\n" for x in rows)
fx = {"expenses/2024-05.csv": csvt, "expenses/policy.md": "# Expense policy\n\nCategories: travel, meals, software, office. Amounts are in EUR, VAT included.\n"}
def tot(c=None): return sum(float(a) for _, cc, a, _ in rows if c is None or cc == c)
mx = max(rows, key=lambda x: float(x[2]))
art = "out/expense-report.md"
gold = "# Expense report, May 2024\n\n## Totals\n\n" + "".join(f"- {c.capitalize()}: {tot(c):,.2f} EUR\n" for c in cats) + f"\nTotal: {tot():,.2f} EUR\nClaims: {len(rows)}\n\n## Largest claim\n\nLargest: {float(mx[2]):,.2f} EUR\nEmployee: {mx[3]}\n"
P = "expenses/2024-05.csv"
checks = base(art, [P], "expense-report.md") + [
  {"id": "sections", "kind": "report_complete", "path": art, "headings": ["Totals", "Largest claim"], "in_order": True},
] + [
  num(f"total-{c}", art, lab(c), csvx(P, "sum", "amount", ("category", c)), ["EUR", "€"], section="Totals", tolerance=0.005) for c in cats
] + [
  num("total", art, lab("total"), csvx(P, "sum", "amount"), ["EUR", "€"], section="Totals", tolerance=0.005),
  num("claims", art, lab("claims"), csvx(P, "count"), section="Totals"),
  num("largest", art, lab("largest"), csvx(P, "max", "amount"), ["EUR", "€"], section="Largest claim"),
  has("largest-by", art, r"(?im)^\s*employee\s*:\s*" + mx[3] + r"\s*$", section="Largest claim"),
]
def rep(old, new): return {art: gold.replace(old, new)}
t_tr = f"Travel: {tot('travel'):,.2f} EUR"
task("report-expenses", "report", "dev",
  "Total a month of expense claims by category from a CSV, with the grand total, claim count and largest claim.",
  "expenses/2024-05.csv lists May's expense claims. Write out/expense-report.md with two sections. '## Totals' holds one line per category, 'Travel: N EUR', 'Meals: N EUR', 'Software: N EUR', 'Office: N EUR' (the sum of amount for that category, two decimals), then 'Total: N EUR' (all claims) and 'Claims: N' (the number of claims). '## Largest claim' holds 'Largest: N EUR' (the largest single amount) and 'Employee: <name>' (who claimed it). Do not change the expense files. Read out/expense-report.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "category-off-by-a-cent": {"class": "wrong-number", "why": "Travel total off by 0.01 (rounded each claim first).", "caught_by": ["total-travel"], "files": rep(t_tr, f"Travel: {tot('travel') + 0.01:,.2f} EUR")},
   "total-missing-office": {"class": "wrong-number", "why": "The grand total leaves out the office category.", "caught_by": ["total"], "files": rep(f"Total: {tot():,.2f} EUR", f"Total: {tot() - tot('office'):,.2f} EUR")},
   "decimal-comma": {"class": "lenient-number", "why": "Writes the travel total with a decimal comma, which has more than one reading.", "caught_by": ["total-travel"], "files": rep(t_tr, "Travel: " + f"{tot('travel'):.2f}".replace(".", ",") + " EUR")},
   "largest-wrong-person": {"class": "wrong-value", "why": "The largest amount right, but the wrong employee.", "caught_by": ["largest-by"], "files": rep(f"Employee: {mx[3]}", "Employee: " + [p for p in people if p != mx[3]][0])},
   "largest-in-totals-only": {"class": "wrong-section", "why": "The Largest claim section is missing; its lines sit under Totals.", "caught_by": ["sections", "largest", "largest-by"], "files": rep("\n## Largest claim\n", "")},
  })
check("report-expenses")

# ---------- report-log-errors ----------
r = random.Random(8)
lines = []
t = 0
paths = ["/api/items", "/api/orders", "/api/users", "/health", "/api/cart"]
for k in range(140):
    t += r.randint(5, 70)
    ts = f"2024-10-07T{9 + t // 3600:02d}:{(t // 60) % 60:02d}:{t % 60:02d}Z"
    roll = r.random()
    if roll < 0.07:
        lines.append(f"{ts} ERROR db: query failed: {r.choice(['deadlock detected', 'connection reset', 'statement timeout'])}")
    elif roll < 0.15:
        lines.append(f"{ts} WARN  pool: {r.choice(['waited 2.1 s for a connection', 'pool 90 % busy', 'slow checkout of connection'])}")
    else:
        st = r.choice([200] * 14 + [201, 204, 404, 500, 502, 503])
        ms = r.randint(4, 400) if r.random() < 0.95 else r.randint(1200, 4800)
        lines.append(f"{ts} INFO  http: {r.choice(['GET', 'GET', 'POST'])} {r.choice(paths)} status={st} duration_ms={ms}")
fx = {"logs/service.log": "\n".join(lines) + "\n"}
L = "logs/service.log"
n_err = sum(" ERROR " in l for l in lines); n_warn = sum(" WARN " in l for l in lines)
n5 = sum(bool(re.search(r"status=5\d\d", l)) for l in lines)
slow = max(int(re.search(r"duration_ms=(\d+)", l).group(1)) for l in lines if "duration_ms" in l)
nreq = sum("duration_ms" in l for l in lines)
art = "out/log-report.md"
gold = f"# Service log report, 7 October\n\n## Counts\n\nLines: {len(lines)}\nErrors: {n_err}\nWarnings: {n_warn}\nRequests: {nreq}\nServer errors (5xx): {n5}\n\n## Latency\n\nSlowest request: {slow} ms\n\n## Notes\n\nAll errors come from the database (deadlocks, resets and timeouts).\n"
checks = base(art, [L], "log-report.md") + [
  {"id": "sections", "kind": "report_complete", "path": art, "headings": ["Counts", "Latency"], "in_order": True},
  num("lines", art, lab("lines"), {"from": "lines", "path": L, "pattern": "^"}, section="Counts"),
  num("errors", art, lab("errors"), {"from": "lines", "path": L, "pattern": r"^\S+ ERROR "}, section="Counts"),
  num("warnings", art, lab("warnings"), {"from": "lines", "path": L, "pattern": r"^\S+ WARN "}, section="Counts"),
  num("requests", art, lab("requests"), {"from": "lines", "path": L, "pattern": r" http: "}, section="Counts"),
  num("server-errors", art, r"(?im)^\s*server errors\s*(?:\(5xx\))?\s*:\s*(.*?)\s*$", {"from": "lines", "path": L, "pattern": r" status=5\d\d "}, section="Counts"),
  num("slowest", art, lab("slowest request"), matches(L, r"duration_ms=(\d+)", "max"), ["ms"], section="Latency"),
]
def rep(old, new): return {art: gold.replace(old, new)}
task("report-log-errors", "report", "dev",
  "Count errors, warnings, requests and server errors in a service log and find the slowest request.",
  "Read logs/service.log and write out/log-report.md. Under a heading '## Counts' put these lines: 'Lines: N' (lines in the log), 'Errors: N' (ERROR lines), 'Warnings: N' (WARN lines), 'Requests: N' (http request lines) and 'Server errors (5xx): N' (requests whose status is 500 to 599). Under a heading '## Latency' put 'Slowest request: N ms' (the largest duration_ms). Do not change the log. Read out/log-report.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "errors-include-5xx": {"class": "wrong-number", "why": "Counts 5xx responses as errors too.", "caught_by": ["errors"], "files": rep(f"Errors: {n_err}\n", f"Errors: {n_err + n5}\n")},
   "server-errors-only-500": {"class": "wrong-number", "why": "Counts only status=500, not 502/503.", "caught_by": ["server-errors"], "files": rep(f"Server errors (5xx): {n5}", f"Server errors (5xx): {sum('status=500' in l for l in lines)}")},
   "slowest-in-seconds": {"class": "wrong-number", "why": "The slowest request converted to seconds but still labelled ms.", "caught_by": ["slowest"], "files": rep(f"Slowest request: {slow} ms", f"Slowest request: {slow / 1000} ms")},
   "two-error-counts": {"class": "inconsistent", "why": "States the right error count, then a different one in the notes.", "caught_by": ["errors"], "files": rep("## Notes\n\n", f"## Notes\n\nErrors: {n_err - 1}\n\n")},
  })
check("report-log-errors")

# ---------- report-timesheets ----------
r = random.Random(12)
staff = ["Ines", "Marek", "Sofia", "Tariq"]
projects = ["harbor-app", "intranet", "support"]
weeks = ["2024-W10", "2024-W11", "2024-W12"]
fx = {}
allrows = []
for w in weeks:
    rows = []
    for p in staff:
        for pr in r.sample(projects, r.randint(1, 3)):
            h = r.choice([2, 3.5, 4, 6, 7.5, 8, 10, 12, 16])
            rows.append((p, pr, h))
    if w == "2024-W11": rows = [x for x in rows if x[0] != "Marek"]  # Marek on holiday
    allrows += rows
    fx[f"timesheets/{w}.csv"] = "person,project,hours\n" + "".join(f"{p},{pr},{h:g}\n" for p, pr, h in rows)
fx["timesheets/README.md"] = "One CSV per ISO week. Marek was on holiday in week 11 and has no rows that week.\n"
T = [f"timesheets/{w}.csv" for w in weeks]
def hsum(pred): return sum(h for p, pr, h in allrows if pred(p, pr))
art = "out/hours.md"
gold = "# Hours, weeks 10 to 12\n\n## By person\n\n" + "".join(f"- {p}: {hsum(lambda a, b: a == p):g} hours\n" for p in staff) + \
  "\n## By project\n\n" + "".join(f"- {pr}: {hsum(lambda a, b: b == pr):g} hours\n" for pr in projects) + f"\nTotal: {hsum(lambda a, b: True):g} hours\n"
checks = base(art, T, "hours.md") + [
  {"id": "sections", "kind": "report_complete", "path": art, "headings": ["By person", "By project"], "in_order": True},
] + [
  num(f"person-{p.lower()}", art, lab(p), matches(T, r"(?m)^" + p + r",[^,]*,([\d.]+)\s*$", "sum"), ["hours", "h"], section="By person") for p in staff
] + [
  num(f"project-{pr}", art, lab(re.escape(pr)), matches(T, r"(?m)^[^,]*," + re.escape(pr) + r",([\d.]+)\s*$", "sum"), ["hours", "h"], section="By project") for pr in projects
] + [
  num("total", art, lab("total"), matches(T, r"(?m)^[^,]*,[^,]*,([\d.]+)\s*$", "sum"), ["hours", "h"]),
]
def rep(old, new): return {art: gold.replace(old, new)}
w10only = sum(h for p, pr, h in allrows[:0])
ines = hsum(lambda a, b: a == "Ines")
ines_w12 = sum(float(l.split(",")[2]) for l in fx["timesheets/2024-W12.csv"].splitlines()[1:] if l.startswith("Ines,"))
task("report-timesheets", "report", "heldout",
  "Add up three weekly timesheet CSVs by person and by project.",
  "timesheets/ holds one CSV per week for weeks 10, 11 and 12 (person, project, hours). Write out/hours.md with a section '## By person' holding one line per person, '<name>: N hours' (their hours over all three weeks), a section '## By project' holding one line per project, '<project>: N hours', and after them the line 'Total: N hours' (all hours of the three weeks). Do not change the timesheets. Read out/hours.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "missed-last-week": {"class": "wrong-number", "why": "Ines's hours without week 12.", "caught_by": ["person-ines"], "files": rep(f"- Ines: {ines:g} hours", f"- Ines: {ines - ines_w12:g} hours")},
   "project-missing": {"class": "missing-fact", "why": "The support project is left out.", "caught_by": ["project-support"], "files": rep(f"- support: {hsum(lambda a, b: b == 'support'):g} hours\n", "")},
   "total-off": {"class": "wrong-number", "why": "Total short by 8 hours.", "caught_by": ["total"], "files": rep(f"Total: {hsum(lambda a, b: True):g} hours", f"Total: {hsum(lambda a, b: True) - 8:g} hours")},
   "process-read-one-week": {"class": "process", "why": "Read only week 10's timesheet (and wrote the right numbers anyway, from an earlier run's notes).", "caught_by": ["inputs-read"], "files": {art: gold},
      "trace": trace_reads(["timesheets/2024-W10.csv"], art)},
  })
check("report-timesheets")
