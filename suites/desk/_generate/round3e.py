import sys; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from lib import *
import random

# ---------- report-gradebook ----------
r = random.Random(64)
students = ["Amira", "Bjorn", "Chloe", "Diego", "Elif", "Finn", "Greta", "Hugo", "Isla", "Jamal"]
courses = ["math", "physics", "history"]
rows = []
for s in students:
    for c in courses:
        pts = r.randint(38, 98)
        rows.append((s, c, pts, "pass" if pts >= 50 else "fail"))
G = "grades/term-1.csv"
fx = {G: "student,course,points,result\n" + "".join(f"{a},{b},{c},{d}\n" for a, b, c, d in rows), "grades/README.md": "Points out of 100. 50 or more is a pass.\n"}
art = "out/grade-report.md"
def cm(c): return sum(x[2] for x in rows if x[1] == c) / len(students)
def cx(c): return max(x[2] for x in rows if x[1] == c)
fails = sum(1 for x in rows if x[3] == "fail")
gold = "# Term 1 grades\n\n" + "".join(f"## {c.capitalize()}\n\nAverage: {cm(c):.1f}\nBest: {cx(c)}\nFails: {sum(1 for x in rows if x[1] == c and x[3] == 'fail')}\n\n" for c in courses) + f"## Overall\n\nFails in total: {fails}\n"
checks = base(art, [G], "grade-report.md") + [
  {"id": "sections", "kind": "report_complete", "path": art, "headings": ["Math", "Physics", "History", "Overall"], "in_order": True},
]
for c in courses:
    # the same labels stand in three sections; each check reads its own section only through `section` + a course-specific statement is not possible, so labels carry the course
    pass
gold = "# Term 1 grades\n\n" + "".join(f"## {c.capitalize()}\n\n{c.capitalize()} average: {cm(c):.1f}\n{c.capitalize()} best: {cx(c)}\n{c.capitalize()} fails: {sum(1 for x in rows if x[1] == c and x[3] == 'fail')}\n\n" for c in courses) + f"## Overall\n\nFails in total: {fails}\n"
for c in courses:
    C = c.capitalize()
    checks += [
      num(f"{c}-average", art, lab(c + " average"), csvx(G, "mean", "points", ("course", c)), section=C, tolerance=0.05),
      num(f"{c}-best", art, lab(c + " best"), csvx(G, "max", "points", ("course", c)), section=C),
      num(f"{c}-fails", art, lab(c + " fails"), {"from": "matches", "paths": [G], "pattern": r"(?m)^\w+," + c + r",\d+,fail$", "op": "count"}, section=C),
    ]
checks += [num("fails-total", art, lab("fails in total"), csvx(G, "count", filt=("result", "fail")), section="Overall")]
task("report-gradebook", "report", "dev",
  "Report per-course average, best score and fails from a term's grade CSV, plus the total number of fails.",
  "grades/term-1.csv has one row per student and course. Write out/grade-report.md with one section per course, '## Math', '## Physics', '## History' (in that order), each holding three lines such as 'Math average: N' (mean points, one decimal), 'Math best: N' (highest points) and 'Math fails: N' (rows with result fail), then a section '## Overall' with 'Fails in total: N'. Do not change the grade files. Read out/grade-report.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "average-over-all-courses": {"class": "wrong-number", "why": "Physics average computed over every course's points.", "caught_by": ["physics-average"], "files": {art: gold.replace(f"Physics average: {cm('physics'):.1f}", f"Physics average: {sum(x[2] for x in rows) / len(rows):.1f}")}},
   "best-is-lowest": {"class": "wrong-number", "why": "History best gives the lowest points.", "caught_by": ["history-best"], "files": {art: gold.replace(f"History best: {cx('history')}", f"History best: {min(x[2] for x in rows if x[1] == 'history')}")}},
   "fails-total-off": {"class": "wrong-number", "why": "Total fails one short.", "caught_by": ["fails-total"], "files": {art: gold.replace(f"Fails in total: {fails}", f"Fails in total: {fails - 1}")}},
   "sections-merged": {"class": "wrong-section", "why": "All course lines under one heading.", "caught_by": ["sections", "physics-average", "physics-best", "physics-fails", "history-average", "history-best", "history-fails"], "files": {art: gold.replace("## Physics\n\n", "").replace("## History\n\n", "")}},
  })
check("report-gradebook")

# ---------- report-energy-meters ----------
months = ["2024-01", "2024-02", "2024-03", "2024-04", "2024-05", "2024-06"]
meters = {"M-01 (office)": [1420, 1310, 1180, 950, 820, 760], "M-02 (workshop)": [2210, 2050, 2300, 2120, 1980, 2400], "M-03 (warehouse)": [640, 610, 580, 520, 470, 455]}
fx = {}
for m, vals in meters.items():
    mid = m.split()[0]
    fx[f"meters/{mid}.csv"] = "month,kwh\n" + "".join(f"{mo},{v}\n" for mo, v in zip(months, vals))
fx["meters/README.md"] = "One CSV per electricity meter: M-01 office, M-02 workshop, M-03 warehouse. kWh per month.\n"
art = "out/energy.md"
tots = {m.split()[0]: sum(v) for m, v in meters.items()}
gold = "# Energy, January to June 2024\n\n" + "".join(f"- {k}: {v:,} kWh\n" for k, v in tots.items()) + f"\nTotal: {sum(tots.values()):,} kWh\nHighest month of M-02: 2024-06 (2,400 kWh)\nM-01 average: {sum(meters['M-01 (office)']) / 6:,.1f} kWh per month\n"
checks = base(art, [f"meters/{k}.csv" for k in tots], "energy.md") + [
  num(f"total-{k.lower()}", art, r"(?im)^\s*" + k + r"\s*:\s*(.*?)\s*$", csvx(f"meters/{k}.csv", "sum", "kwh"), ["kWh"]) for k in tots
] + [
  num("total", art, lab("total"), matches([f"meters/{k}.csv" for k in tots], r"(?m)^\d{4}-\d{2},(\d+)$", "sum"), ["kWh"]),
  num("m02-peak", art, r"(?im)^\s*highest month of m-02\s*:\s*\d{4}-\d{2}\s*\((.*?)\)\s*$", csvx("meters/M-02.csv", "max", "kwh"), ["kWh"]),
  has("m02-peak-month", art, r"(?im)^\s*highest month of m-02\s*:\s*2024-06\b"),
  num("m01-average", art, r"(?im)^\s*m-01 average\s*:\s*(.*?)\s*(?:kwh)?\s*(?:per month)?\s*$", csvx("meters/M-01.csv", "mean", "kwh"), tolerance=0.05),
]
task("report-energy-meters", "report", "dev",
  "Total six months of readings from three electricity meter CSVs, with one meter's peak month and another's monthly average.",
  "meters/ holds one CSV per electricity meter with the kWh used each month. Write out/energy.md with the heading '# Energy, January to June 2024', one list item per meter written as '- <meter id>: N kWh' (its six-month sum, e.g. '- M-01: 1,234 kWh'), then the lines\nTotal: N kWh\nHighest month of M-02: <YYYY-MM> (N kWh)\nM-01 average: N kWh per month (one decimal)\nDo not change the meter files. Read out/energy.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "peak-month-wrong": {"class": "wrong-value", "why": "Names March (a local peak) with March's value.", "caught_by": ["m02-peak", "m02-peak-month"], "files": {art: gold.replace("2024-06 (2,400 kWh)", "2024-03 (2,300 kWh)")}},
   "average-over-five": {"class": "wrong-number", "why": "M-01 average divided by 5 months.", "caught_by": ["m01-average"], "files": {art: gold.replace(f"M-01 average: {sum(meters['M-01 (office)']) / 6:,.1f}", f"M-01 average: {sum(meters['M-01 (office)']) / 5:,.1f}")}},
   "meter-sum-wrong": {"class": "wrong-number", "why": "M-03 without June.", "caught_by": ["total-m-03"], "files": {art: gold.replace(f"M-03: {tots['M-03']:,} kWh", f"M-03: {tots['M-03'] - 455:,} kWh")}},
  })
check("report-energy-meters")
