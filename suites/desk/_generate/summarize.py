import sys; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from lib import *

# ---------- summarize-incident ----------
rates = [0.3, 0.4, 0.3, 12.5, 35.9, 39.2, 40.2, 39.8, 38.1, 40.6, 37.4, 39.0, 40.1, 41.7, 38.8, 39.5, 40.0, 36.2, 30.4, 22.0, 9.8, 0.9, 0.6, 0.4, 0.3]
p95 = [180, 175, 190, 2400, 5100, 5950, 5900, 5800, 5700, 6000, 5600, 5850, 5900, 6050, 5800, 5850, 5900, 5500, 4700, 3300, 1400, 260, 210, 190, 185]
rows = []
for i, (e, p) in enumerate(zip(rates, p95)):
    st = "degraded" if e >= 5 else "ok"
    rows.append(f"14:{3 + i:02d},{e},{p},{st}")
metrics = "minute,error_rate,p95_ms,status\n" + "\n".join(rows) + "\n"
degraded = sum(1 for e in rates if e >= 5)
fx = {
 "incident/timeline.md": "# INC-2291 timeline (all times UTC, 12 March)\n\n- 14:06 Alerts fire: checkout error rate above 5 %.\n- 14:09 On-call (Ravi) acknowledges; first guess is the new payment release.\n- 14:14 Release rolled back; errors continue.\n- 14:17 Mia notices TLS handshake failures from the checkout service to the payment provider.\n- 14:19 Cause found: the client certificate for the payment provider expired at 14:05; renewal reminder went to a former employee's mailbox.\n- 14:22 New certificate issued and deployed to checkout.\n- 14:24 Error rate back under 5 %; monitoring.\n- 14:40 Incident closed.\n",
 "incident/chat-excerpt.txt": "[14:09] ravi: ack, looking. payment release went out at 13:50, rolling back\n[14:15] ravi: rollback done, still failing\n[14:17] mia: seeing 'certificate expired' in the checkout logs for calls to the payment provider\n[14:19] mia: yep, our client cert expired 14:05. reminder mail went to jan's old address\n[14:22] ravi: new cert deployed\n[14:24] mia: errors dropping. about 1,900 checkouts failed by my count\n[14:30] lena: I'll take the cert expiry monitoring action\n",
 "incident/metrics.csv": metrics,
 "incident/actions.csv": "owner,action,due\nLena,Alert 30 days before any certificate expires,2024-03-29\nRavi,Move certificate reminders to the team mailbox,2024-03-19\nMia,Add the certificate check to the release checklist,2024-03-22\n",
}
art = "out/incident-summary.md"
gold = f"""# Incident summary

INC-2291 on 12 March: checkout payments failed for about twenty minutes in the afternoon (UTC).

## What happened

The client certificate that checkout uses to talk to the payment provider expired at 14:05, because its renewal reminder went to a former employee's mailbox. The on-call engineer first rolled back a payment release, which did not help; the expired certificate was found at 14:19 and a new one was deployed at 14:22.

## Impact

Checkout requests failed while the certificate was invalid, and roughly 1,900 checkouts were lost.

Peak error rate: 41.7 %
Degraded minutes: {degraded}

## Follow-ups

- Lena: alert 30 days before any certificate expires (due 29 March).
- Ravi: send certificate reminders to the team mailbox (due 19 March).
- Mia: add a certificate check to the release checklist (due 22 March).
"""
checks = base(art, None, "incident-summary.md") + [
  {"id": "sections", "kind": "report_complete", "path": art, "headings": ["Incident summary", "What happened", "Impact", "Follow-ups"], "in_order": True, "min_section_words": 6, "max_words": 400},
  stmt("cause-stated", art, [r"\b(certificate|cert)s?\b", r"\bexpir\w*"], section="What happened"),
  num("peak-error-rate", art, r"(?im)^\s*peak error rate\s*:\s*(.*?)\s*%?\s*$", csvx("incident/metrics.csv", "max", "error_rate"), section="Impact"),
  num("degraded-minutes", art, lab("degraded minutes"), csvx("incident/metrics.csv", "count", filt=("status", "degraded")), ["minutes", "min"], section="Impact"),
  {"id": "owners-named", "kind": "mentions_all", "path": art, "section": "Follow-ups", "values": {"from": "csv", "path": "incident/actions.csv", "column": "owner"}},
  {"id": "own-words", "kind": "not_copied", "path": art, "min_run_words": 8, "max_fraction": 0.5},
]
task("summarize-incident", "summarize", "dev",
  "Summarise an incident folder (timeline, chat, metrics CSV, action items) into a four-section report with the peak error rate and degraded time.",
  "The incident/ folder holds the timeline, a chat excerpt, per-minute metrics and the action items of incident INC-2291. Write out/incident-summary.md with exactly these headings, in order: '# Incident summary', '## What happened', '## Impact', '## Follow-ups'. Under 'What happened' explain the root cause in a sentence or two. Under 'Impact' include the two lines 'Peak error rate: N %' (the highest error_rate in incident/metrics.csv) and 'Degraded minutes: N' (the number of minutes in incident/metrics.csv whose status is degraded). Under 'Follow-ups' list every action item with its owner. Use your own words. Do not change the incident files. Read out/incident-summary.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "wrong-number-peak": {"class": "wrong-number", "why": "A lower reading (40.6, at 14:13) taken for the peak.", "caught_by": ["peak-error-rate"], "files": {art: gold.replace("41.7 %", "40.6 %")}},
   "degraded-off-by-one": {"class": "wrong-number", "why": "Counts the first ok minute after the outage too: one minute too many.", "caught_by": ["degraded-minutes"], "files": {art: gold.replace(f"Degraded minutes: {degraded}", f"Degraded minutes: {degraded + 1}")}},
   "cause-is-the-release": {"class": "wrong-fact", "why": "Blames the payment release (the first guess) and never names the certificate.", "caught_by": ["cause-stated"],
      "files": {art: gold.replace("The client certificate that checkout uses to talk to the payment provider expired at 14:05, because its renewal reminder went to a former employee's mailbox. The on-call engineer first rolled back a payment release, which did not help; the expired certificate was found at 14:19 and a new one was deployed at 14:22.", "A faulty payment release at 13:50 broke checkout; the team rolled it back and then redeployed the payment integration at 14:22.")}},
   "cause-denied": {"class": "negated", "why": "Says the certificate had not expired.", "caught_by": ["cause-stated"],
      "files": {art: gold.replace("The client certificate that checkout uses to talk to the payment provider expired at 14:05, because its renewal reminder went to a former employee's mailbox. The on-call engineer first rolled back a payment release, which did not help; the expired certificate was found at 14:19 and a new one was deployed at 14:22.", "The payment provider had an outage from 14:05. The client certificate had not expired; it was only reissued at 14:22 as a precaution.")}},
   "owner-missing": {"class": "missing-fact", "why": "Mia's action item is left out.", "caught_by": ["owners-named"], "files": {art: gold.replace("- Mia: add a certificate check to the release checklist (due 22 March).\n", "")}},
   "peak-outside-impact": {"class": "wrong-section", "why": "The peak error rate is stated under What happened, not under Impact.", "caught_by": ["peak-error-rate"],
      "files": {art: gold.replace("\nPeak error rate: 41.7 %\n", "\n").replace("deployed at 14:22.\n", "deployed at 14:22.\n\nPeak error rate: 41.7 %\n")}},
  })
check("summarize-incident")

# ---------- summarize-feedback ----------
fb = [
 (101, "mobile", 2, "The app lost my notes when I went offline on the train. Sync overwrote them."),
 (102, "web", 5, "Fast and clean, the new editor is great."),
 (103, "mobile", 1, "Offline edits disappeared after sync. Twice this week."),
 (104, "web", 4, "Good, but I miss keyboard shortcuts for headings."),
 (105, "mobile", 3, "Fine overall. Sync sometimes duplicates a note."),
 (106, "desktop", 4, "Solid. Would like a dark mode."),
 (107, "mobile", 2, "Lost an hour of work: the offline copy was replaced when sync ran."),
 (108, "web", 5, "Sharing with my team is so easy now."),
 (109, "desktop", 3, "Search is slow with many notebooks."),
 (110, "mobile", 2, "Sync conflict wiped my edits from the plane."),
 (111, "web", 4, "Templates save me time every day."),
 (112, "desktop", 2, "After sync my offline changes were gone."),
 (113, "web", 3, "Export to PDF cuts off tables."),
 (114, "mobile", 4, "Widget is handy."),
 (115, "desktop", 5, "Best notes app I have used."),
 (116, "mobile", 1, "Notes written offline vanish when the phone reconnects."),
]
csvtxt = "id,platform,rating,comment\n" + "".join(f'{i},{p},{r},"{c}"\n' for i, p, r, c in fb)
fx = {"feedback/responses.csv": csvtxt, "feedback/README.md": "# Survey, September\n\nOne row per response to the in-app survey (rating 1 = very unhappy, 5 = very happy).\n"}
n = len(fb); mean = sum(r for _, _, r, _ in fb) / n
mob = [r for _, p, r, _ in fb if p == "mobile"]
art = "out/feedback-summary.md"
gold = f"""# Feedback summary

## Numbers

Responses: {n}
Average rating: {mean:.2f}
Mobile responses: {len(mob)}

## Main complaint

The most common complaint is that sync loses or overwrites notes that were edited offline; it comes up in six responses, mostly from mobile users.

## Praise

People like the new editor, easy sharing with a team and the templates.
"""
checks = base(art, None, "feedback-summary.md") + [
  {"id": "sections", "kind": "report_complete", "path": art, "headings": ["Feedback summary", "Numbers", "Main complaint", "Praise"], "in_order": True, "min_section_words": 5},
  num("responses", art, lab("responses"), csvx("feedback/responses.csv", "count"), section="Numbers"),
  num("average-rating", art, lab("average rating"), csvx("feedback/responses.csv", "mean", "rating"), section="Numbers", tolerance=0.005),
  num("mobile-responses", art, lab("mobile responses"), csvx("feedback/responses.csv", "count", filt=("platform", "mobile")), section="Numbers"),
  stmt("complaint-is-sync-loss", art, [r"\bsync\w*", r"\b(offline|lost|lose|losing|loses|overwr\w*|wip\w*|vanish\w*|disappear\w*|gone|replac\w*|delet\w*)\b"], section="Main complaint"),
  lacks("complaint-not-another", art, r"\b(dark mode|pdf|keyboard shortcuts?|search is slow)\b", section="Main complaint"),
  {"id": "own-words", "kind": "not_copied", "path": art, "min_run_words": 8, "max_fraction": 0.5},
]
task("summarize-feedback", "summarize", "dev",
  "Summarise 16 survey responses: counts and average rating from the CSV, the main complaint in words.",
  "feedback/responses.csv holds the answers to an in-app survey. Write out/feedback-summary.md with exactly these headings, in order: '# Feedback summary', '## Numbers', '## Main complaint', '## Praise'. Under 'Numbers' put the three lines 'Responses: N', 'Average rating: N' (the mean of the rating column, rounded to two decimals) and 'Mobile responses: N' (rows whose platform is mobile). Under 'Main complaint' say in one or two sentences what problem users report most often. Under 'Praise' say briefly what users like. Use your own words. Do not change the feedback files. Read out/feedback-summary.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "mean-of-mobile": {"class": "wrong-number", "why": "The average rating of mobile responses only.", "caught_by": ["average-rating"], "files": {art: gold.replace(f"Average rating: {mean:.2f}", f"Average rating: {sum(mob)/len(mob):.2f}")}},
   "rounded-to-integer": {"class": "wrong-number", "why": "The average rounded to a whole number.", "caught_by": ["average-rating"], "files": {art: gold.replace(f"Average rating: {mean:.2f}", f"Average rating: {round(mean)}")}},
   "count-with-header": {"class": "wrong-number", "why": "Counts the header row as a response.", "caught_by": ["responses"], "files": {art: gold.replace(f"Responses: {n}", f"Responses: {n + 1}")}},
   "wrong-complaint": {"class": "wrong-fact", "why": "Names slow search as the main complaint.", "caught_by": ["complaint-is-sync-loss", "complaint-not-another"],
      "files": {art: gold.replace("The most common complaint is that sync loses or overwrites notes that were edited offline; it comes up in six responses, mostly from mobile users.", "The most common complaint is that search is slow for people with many notebooks.")}},
   "mobile-count-missing": {"class": "missing-fact", "why": "The mobile responses line is left out.", "caught_by": ["mobile-responses"], "files": {art: gold.replace(f"Mobile responses: {len(mob)}\n", "")}},
  })
check("summarize-feedback")

# ---------- summarize-weekly-notes ----------
fx = {
 "notes/week-1.md": "# Garden co-op: week 1\n\nPresent: Rosa, Karim, Ute, Ben\n\n## Discussion\n\nThe water bill for the shared plots doubled last summer. Karim found a quote for two rain barrels.\nUte asked whether the compost area could move away from the fence; the neighbours complained about the smell.\n\n## Decisions\n\n- Buy two 300-litre rain barrels (quote: 180 EUR for both).\n\n## Actions\n\n- [x] Karim: order the rain barrels\n- [ ] Ute: ask the neighbours which corner they would prefer for the compost\n- [ ] Ben: find out who has a trailer for the barrels\n",
 "notes/week-2.md": "# Garden co-op: week 2\n\nPresent: Rosa, Karim, Ben\n\n## Discussion\n\nThe barrels are ordered and arrive on Saturday. Ben borrowed his brother's trailer.\nRosa proposed a seed swap in April; everyone liked it.\n\n## Decisions\n\n- Hold a seed swap on the first Saturday of April, at the tool shed.\n\n## Actions\n\n- [x] Ben: collect the barrels on Saturday\n- [ ] Rosa: make a poster for the seed swap\n- [x] Karim: pay the barrel invoice\n",
 "notes/week-3.md": "# Garden co-op: week 3\n\nPresent: Rosa, Karim, Ute, Ben\n\n## Discussion\n\nUte talked to the neighbours: they prefer the compost in the north-east corner, behind the hedge.\nThe barrels are installed. Membership fees for next year were discussed but not settled.\n\n## Decisions\n\n- Move the compost to the north-east corner behind the hedge.\n\n## Actions\n\n- [ ] Ute: book a work day to move the compost\n- [x] Karim: install the barrels next to the tool shed\n- [ ] Rosa: draft two options for next year's membership fee\n",
}
art = "out/summary.md"
gold = """# Project summary

## Decisions

- Week 1: the co-op will buy two 300-litre rain barrels to cut the water bill.
- Week 2: there will be a seed swap on the first Saturday of April at the tool shed.
- Week 3: the compost moves to the north-east corner, behind the hedge.

## Open actions

- Ute: asking the neighbours about the compost corner (week 1), then booking a work day to move it.
- Ben: finding a trailer for the barrels (still open in the week 1 notes).
- Rosa: the seed swap poster and two options for next year's membership fee.

Open actions: 5

## Still undecided

Next year's membership fee was discussed but not settled.
"""
checks = base(art, None, "summary.md") + [
  {"id": "sections", "kind": "report_complete", "path": art, "headings": ["Project summary", "Decisions", "Open actions", "Still undecided"], "in_order": True, "min_section_words": 5},
  stmt("decision-barrels", art, [r"\b(rain ?)?barrels?\b", r"\b(buy|bought|purchase\w*|order\w*|get)\b"], section="Decisions"),
  stmt("decision-seed-swap", art, [r"\bseed swap\b", r"\bapril\b"], section="Decisions"),
  stmt("decision-compost", art, [r"\bcompost\b", r"\b(north-?east|NE)\b"], section="Decisions"),
  num("open-actions", art, lab("open actions"), matches(sorted(fx), r"(?m)^- \[ \] ", "count"), section="Open actions"),
  stmt("fee-undecided", art, [r"\b(membership )?fees?\b", r"\b(not (yet )?(settled|decided|agreed)|undecided|open|unsettled|pending)\b"], section="Still undecided", unnegated=False),
  lacks("fee-not-a-decision", art, r"\bfees?\b", section="Decisions"),
]
task("summarize-weekly-notes", "summarize", "heldout",
  "Summarise three weekly meeting notes: every decision, the open action items with their count, and what is still undecided.",
  "notes/ holds the notes of three weekly meetings of a garden co-op. Write out/summary.md with exactly these headings, in order: '# Project summary', '## Decisions', '## Open actions', '## Still undecided'. Under 'Decisions' list every decision taken across the three weeks. Under 'Open actions' list the action items that are not ticked off ('- [ ]'), with their owners, and end the section with the line 'Open actions: N', where N is the number of unticked action items across the three notes (count every unticked line as written, even where a later week suggests the task was done). Under 'Still undecided' name what was discussed but not decided. Do not change the notes. Read out/summary.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "decision-missing": {"class": "missing-fact", "why": "The seed swap decision is left out.", "caught_by": ["decision-seed-swap"],
      "files": {art: gold.replace("- Week 2: there will be a seed swap on the first Saturday of April at the tool shed.\n", "")}},
   "ticked-counted": {"class": "wrong-number", "why": "Counts every action item, ticked or not (9).", "caught_by": ["open-actions"], "files": {art: gold.replace("Open actions: 5", "Open actions: 9")}},
   "fee-as-decision": {"class": "wrong-fact", "why": "Lists the membership fee as decided.", "caught_by": ["fee-not-a-decision"],
      "files": {art: gold.replace("- Week 3: the compost moves", "- Week 3: membership fees stay as they are.\n- Week 3: the compost moves")}},
   "compost-wrong-corner": {"class": "wrong-fact", "why": "Moves the compost to the wrong corner (by the fence).", "caught_by": ["decision-compost"],
      "files": {art: gold.replace("the compost moves to the north-east corner, behind the hedge.", "the compost moves to the south corner, by the fence.")}},
  })
check("summarize-weekly-notes")
