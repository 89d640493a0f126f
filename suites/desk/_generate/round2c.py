import sys; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from lib import *

# ---------- summarize-budget ----------
deps = [("Engineering", 420000, 405300), ("Marketing", 150000, 171250), ("Sales", 210000, 198400), ("Support", 95000, 93100), ("Operations", 120000, 118900)]
fx = {"budget/2024-h1.csv": "department,planned,actual\n" + "".join(f"{d},{p},{a}\n" for d, p, a in deps),
      "budget/notes.md": "# H1 budget notes\n\n- Marketing ran an unplanned trade-fair campaign in March (approved by the CEO, not in the plan).\n- Sales travel was lower than planned because two conferences were virtual.\n- Engineering hired one person later than planned.\n"}
B = "budget/2024-h1.csv"
art = "out/budget-summary.md"
tp, ta = sum(d[1] for d in deps), sum(d[2] for d in deps)
gold = f"""# H1 budget summary

## Totals

Planned: {tp:,} EUR
Actual: {ta:,} EUR

## Over budget

Marketing is the only department over budget: it spent 21,250 EUR more than planned, because of an unplanned trade-fair campaign in March.

## Under budget

Every other department stayed under plan. Engineering saved the most because it hired one person later than planned, and Sales spent less on travel since two conferences were virtual.
"""
checks = base(art, None, "budget-summary.md") + [
  {"id": "sections", "kind": "report_complete", "path": art, "headings": ["Totals", "Over budget", "Under budget"], "in_order": True, "min_section_words": 4},
  num("planned", art, lab("planned"), csvx(B, "sum", "planned"), ["EUR", "€"], section="Totals"),
  num("actual", art, lab("actual"), csvx(B, "sum", "actual"), ["EUR", "€"], section="Totals"),
  stmt("marketing-over", art, [r"\bmarketing\b", r"\b(over|exceed\w*|overspen\w*|more than planned|above)\b"], section="Over budget"),
  stmt("reason-given", art, [r"\b(trade[- ]fair|campaign)\b"], section="Over budget"),
  lacks("only-marketing-over", art, r"\b(engineering|sales|support|operations)\b", section="Over budget"),
]
task("summarize-budget", "summarize", "dev",
  "Summarise a half-year budget CSV and its notes: totals, which department overspent and why.",
  "budget/2024-h1.csv has the planned and actual spend per department; budget/notes.md explains the differences. Write out/budget-summary.md with the sections '## Totals', '## Over budget' and '## Under budget', in that order. Under 'Totals' put the lines 'Planned: N EUR' and 'Actual: N EUR' (the column sums). Under 'Over budget' name the department(s) whose actual spend is above plan and say why, from the notes; name no other department there. Under 'Under budget' sum up the rest in a sentence or two. Do not change the budget files. Read out/budget-summary.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "actual-wrong": {"class": "wrong-number", "why": "Actual total without Operations.", "caught_by": ["actual"], "files": {art: gold.replace(f"Actual: {ta:,} EUR", f"Actual: {ta - 118900:,} EUR")}},
   "sales-called-over": {"class": "wrong-fact", "why": "Lists Sales as over budget too.", "caught_by": ["only-marketing-over"], "files": {art: gold.replace("Marketing is the only department over budget", "Marketing and Sales are over budget")}},
   "no-reason": {"class": "missing-fact", "why": "Names Marketing but gives no reason.", "caught_by": ["reason-given"], "files": {art: gold.replace(", because of an unplanned trade-fair campaign in March.", ".")}},
   "planned-as-actual": {"class": "wrong-number", "why": "Both lines give the planned total.", "caught_by": ["actual"], "files": {art: gold.replace(f"Actual: {ta:,} EUR", f"Actual: {tp:,} EUR")}},
  })
check("summarize-budget")

# ---------- summarize-release ----------
commits = [
 ("a1f3c2e", "Lea Wong", "feat(export): export boards to CSV"),
 ("b7e1d90", "Ravi Nair", "fix(auth): keep users signed in after a password change"),
 ("c3d4e5f", "Lea Wong", "docs: explain the CSV export options"),
 ("d9a8b7c", "Tom Berg", "feat(search): filter cards by label"),
 ("e1f2a3b", "Ravi Nair", "fix(api): return 404 instead of 500 for deleted boards"),
 ("f4e5d6c", "Nadia Haas", "feat!: drop support for the v1 API; clients must use /v2"),
 ("a7b8c9d", "Tom Berg", "fix(ui): due dates shown in the wrong time zone"),
 ("b0c1d2e", "Nadia Haas", "chore: bump dependencies"),
 ("c5d6e7f", "Lea Wong", "fix(export): escape commas in card titles"),
 ("d8e9f0a", "Ravi Nair", "test: cover label filters"),
]
fx = {"release/commits.txt": "".join(f"{h} {m} ({a})\n" for h, a, m in commits),
      "release/contributors.csv": "name,github\n" + "".join(f"{n},{n.split()[0].lower()}{n.split()[1][0].lower()}\n" for n in ["Lea Wong", "Ravi Nair", "Tom Berg", "Nadia Haas"]),
      "release/VERSION": "2.5.0\n"}
C = "release/commits.txt"
art = "out/release-notes.md"
gold = """# Release 2.5.0

## Highlights

- Boards can be exported to CSV, with commas in titles escaped.
- Cards can be filtered by label.

New features: 3
Bug fixes: 4

## Breaking changes

The v1 API is gone: every client must move to the /v2 API before upgrading.

## Thanks

Thanks to Lea Wong, Ravi Nair, Tom Berg and Nadia Haas.
"""
checks = base(art, None, "release-notes.md") + [
  {"id": "sections", "kind": "report_complete", "path": art, "headings": ["Highlights", "Breaking changes", "Thanks"], "in_order": True, "min_section_words": 4},
  has("version", art, r"(?im)^\s*release 2\.5\.0\s*$"),
  num("features", art, lab("new features"), matches(C, r"(?m)^\w+ feat(\(\w+\))?!?:", "count"), section="Highlights"),
  num("fixes", art, lab("bug fixes"), matches(C, r"(?m)^\w+ fix(\(\w+\))?!?:", "count"), section="Highlights"),
  stmt("breaking-v1", art, [r"\bv1\b", r"\b(drop\w*|remov\w*|gone|no longer|end\w*|retir\w*)\b"], section="Breaking changes", unnegated=False),
  {"id": "contributors", "kind": "mentions_all", "path": art, "section": "Thanks", "values": {"from": "csv", "path": "release/contributors.csv", "column": "name"}},
]
task("summarize-release", "summarize", "dev",
  "Write release notes from a list of conventional-commit messages: highlights, counts of features and fixes, the breaking change, and thanks.",
  "release/ holds the commit messages since the last release (commits.txt, in conventional-commit form), the contributors and the new VERSION. Write out/release-notes.md with the title '# Release <version>' and the sections '## Highlights', '## Breaking changes' and '## Thanks', in that order. Under 'Highlights' describe the main user-facing changes and end with the lines 'New features: N' and 'Bug fixes: N' (the numbers of feat and fix commits, breaking ones included). Under 'Breaking changes' explain what users must change. Under 'Thanks' name every contributor. Do not change the release files. Read out/release-notes.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "breaking-feat-not-counted": {"class": "wrong-number", "why": "Leaves out the feat! commit: New features: 2.", "caught_by": ["features"], "files": {art: gold.replace("New features: 3", "New features: 2")}},
   "fixes-include-docs": {"class": "wrong-number", "why": "Counts docs/chore/test commits as fixes.", "caught_by": ["fixes"], "files": {art: gold.replace("Bug fixes: 4", "Bug fixes: 7")}},
   "contributor-missing": {"class": "missing-fact", "why": "Nadia Haas is left out of the thanks.", "caught_by": ["contributors"], "files": {art: gold.replace(", Tom Berg and Nadia Haas", " and Tom Berg")}},
   "wrong-version": {"class": "wrong-value", "why": "Titled with the previous version.", "caught_by": ["version"], "files": {art: gold.replace("# Release 2.5.0", "# Release 2.4.0")}},
   "breaking-missing": {"class": "missing-fact", "why": "The breaking change section says nothing about the v1 API.", "caught_by": ["breaking-v1"], "files": {art: gold.replace("The v1 API is gone: every client must move to the /v2 API before upgrading.", "Nothing in this release requires action from users.")}},
  })
check("summarize-release")
