import sys; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from lib import *
import random

# ---------- summarize-interviews ----------
fx = {
 "hiring/scores.csv": "interviewer,area,score\nIrene,system design,4\nIrene,communication,5\nPaolo,coding,3\nPaolo,testing,4\nWen,culture,5\nWen,product sense,3\n",
 "hiring/irene.md": "# Interview: Dana Kowalczyk (system design)\n\nDana designed a URL shortener with sensible sharding and explained trade-offs clearly. Slightly vague on cache invalidation.\nRecommendation: hire.\n",
 "hiring/paolo.md": "# Interview: Dana Kowalczyk (coding)\n\nSolid, readable code. Needed a hint for the edge case with empty input. Wrote good tests without being asked.\nRecommendation: hire.\n",
 "hiring/wen.md": "# Interview: Dana Kowalczyk (culture and product)\n\nWarm, curious, asks good questions about users. Less experience with prioritising a roadmap.\nRecommendation: hire, with mentoring on product work.\n",
}
art = "out/hiring-summary.md"
gold = """# Candidate summary: Dana Kowalczyk

## Scores

Average score: 4.00
Lowest area: coding and product sense (3 each)

## Strengths

Clear system design with well-explained trade-offs, readable code with tests written unprompted, and good questions about users.

## Concerns

Cache invalidation was vague, the empty-input edge case needed a hint, and roadmap prioritisation is new to her.

## Recommendation

All three interviewers recommend hiring Dana, one of them with mentoring on product work.
"""
checks = base(art, None, "hiring-summary.md") + [
  {"id": "sections", "kind": "report_complete", "path": art, "headings": ["Scores", "Strengths", "Concerns", "Recommendation"], "in_order": True, "min_section_words": 4},
  has("names-candidate", art, "Dana Kowalczyk", regex=False),
  num("average", art, lab("average score"), csvx("hiring/scores.csv", "mean", "score"), section="Scores", tolerance=0.005),
  stmt("lowest-areas", art, [r"\bcoding\b", r"\bproduct sense\b"], section="Scores"),
  stmt("recommend-hire", art, [r"\b(hire|hiring)\b", r"\b(all|three|every|unanimous\w*)\b"], section="Recommendation"),
  stmt("concern-cache", art, [r"\bcache\b"], section="Concerns"),
  {"id": "own-words", "kind": "not_copied", "path": art, "min_run_words": 8, "max_fraction": 0.5},
]
task("summarize-interviews", "summarize", "dev",
  "Summarise three interview write-ups and a score sheet into a hiring summary with the average score and the recommendation.",
  "hiring/ holds three interviewers' notes on one candidate and their scores (scores.csv). Write out/hiring-summary.md with the title '# Candidate summary: <candidate name>' and the sections '## Scores', '## Strengths', '## Concerns', '## Recommendation', in that order. Under 'Scores' put 'Average score: N' (the mean of the score column, two decimals) and 'Lowest area: ...' naming the area(s) with the lowest score. Under 'Strengths' and 'Concerns' summarise the notes in your own words. Under 'Recommendation' say what the interviewers recommend. Do not change the hiring files. Read out/hiring-summary.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "average-rounded-down": {"class": "wrong-number", "why": "Average given as 3.9.", "caught_by": ["average"], "files": {art: gold.replace("Average score: 4.00", "Average score: 3.9")}},
   "lowest-one-area": {"class": "missing-fact", "why": "Names only coding as the lowest area.", "caught_by": ["lowest-areas"], "files": {art: gold.replace("coding and product sense (3 each)", "coding (3)")}},
   "recommendation-not-hire": {"class": "wrong-fact", "why": "Says the panel does not recommend hiring.", "caught_by": ["recommend-hire"], "files": {art: gold.replace("All three interviewers recommend hiring Dana, one of them with mentoring on product work.", "All three interviewers do not recommend hiring Dana yet.")}},
   "concerns-empty-of-cache": {"class": "missing-fact", "why": "Concerns leave out the cache invalidation point.", "caught_by": ["concern-cache"], "files": {art: gold.replace("Cache invalidation was vague, the", "The")}},
  })
check("summarize-interviews")

# ---------- summarize-support-week ----------
r = random.Random(17)
cats = ["login", "billing", "sync", "export", "other"]
weights = [3, 2, 7, 2, 1]
rows = []
for k in range(40):
    c = r.choices(cats, weights)[0]
    rows.append((f"T-{900 + k}", f"2024-11-{4 + k // 8:02d}", c, r.choice(["low", "normal", "normal", "high"]), r.choice(["solved", "solved", "solved", "open"])))
T = "support/week-45.csv"
fx = {T: "ticket,date,category,priority,status\n" + "".join(",".join(x) + "\n" for x in rows),
      "support/notes.md": "# Week 45 notes\n\nThe sync spike started after Monday's app release (4.12). Engineering is preparing a hot-fix.\n"}
n = len(rows); cnt = lambda col, v: sum(1 for x in rows if x[col] == v)
top = max(cats, key=lambda c: cnt(2, c))
art = "out/support-week.md"
gold = f"""# Support, week 45

## Numbers

Tickets: {n}
Open: {cnt(4, 'open')}
High priority: {cnt(3, 'high')}
{top.capitalize()} tickets: {cnt(2, top)}

## Main issue

Most tickets were about sync problems, which started after Monday's 4.12 app release; a hot-fix is being prepared.
"""
checks = base(art, [T], "support-week.md") + [
  {"id": "sections", "kind": "report_complete", "path": art, "headings": ["Numbers", "Main issue"], "in_order": True, "min_section_words": 4},
  num("tickets", art, lab("tickets"), csvx(T, "count"), section="Numbers"),
  num("open", art, lab("open"), csvx(T, "count", filt=("status", "open")), section="Numbers"),
  num("high", art, lab("high priority"), csvx(T, "count", filt=("priority", "high")), section="Numbers"),
  num("sync-tickets", art, lab("sync tickets"), csvx(T, "count", filt=("category", "sync")), section="Numbers"),
  stmt("main-issue-sync", art, [r"\bsync\w*", r"\b(release|4\.12|update)\b"], section="Main issue"),
]
task("summarize-support-week", "summarize", "heldout",
  "Summarise a week of support tickets from a CSV: counts by status, priority and top category, and the main issue with its cause.",
  "support/week-45.csv lists last week's support tickets; support/notes.md has the team's notes. Write out/support-week.md with the sections '## Numbers' and '## Main issue'. Under 'Numbers' put 'Tickets: N' (all tickets), 'Open: N' (status open), 'High priority: N' and '<Category> tickets: N' for the category with the most tickets (e.g. 'Billing tickets: 5'). Under 'Main issue' say in a sentence what most tickets were about and what caused it, from the notes. Do not change the support files. Read out/support-week.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "open-off-by-two": {"class": "wrong-number", "why": "Open count off by two.", "caught_by": ["open"], "files": {art: gold.replace(f"Open: {cnt(4, 'open')}", f"Open: {cnt(4, 'open') + 2}")}},
   "wrong-top-category": {"class": "wrong-value", "why": "Names login as the top category (with login's count).", "caught_by": ["sync-tickets", "main-issue-sync"], "files": {art: gold.replace(f"Sync tickets: {cnt(2, 'sync')}", f"Login tickets: {cnt(2, 'login')}").replace("Most tickets were about sync problems, which started after Monday's 4.12 app release; a hot-fix is being prepared.", "Most tickets were about login problems.")}},
   "no-cause": {"class": "missing-fact", "why": "Names sync as the main issue but not its cause.", "caught_by": ["main-issue-sync"], "files": {art: gold.replace(", which started after Monday's 4.12 app release; a hot-fix is being prepared.", ".")}},
  })
check("summarize-support-week")
