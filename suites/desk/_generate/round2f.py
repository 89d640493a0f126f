import sys; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from lib import *

# ---------- extract-bank-statements ----------
st = [("statements/2024-04.txt", "April 2024", "12,480.10", "11,902.45", 31), ("statements/2024-05.txt", "May 2024", "11,902.45", "13,650.00", 28), ("statements/2024-06.txt", "June 2024", "13,650.00", "12,998.30", 35)]
fx = {p: f"NORDBANK ACCOUNT STATEMENT\nAccount: DE44 5001 0517 5407 3249 31\nPeriod: {per}\nOpening balance: {o} EUR\nClosing balance: {c} EUR\nTransactions: {n}\n\nLargest debit: 2,100.00 EUR (rent)\nThis statement was produced automatically. Balances as of the last business day.\n" for p, per, o, c, n in st}
S = [x[0] for x in st]
art = "out/statements.json"
f = lambda s: float(s.replace(",", ""))
def doc(rows, net=None, extra=None):
    d = {"statements": [{"period": per, "opening": f(o), "closing": f(c), "transactions": n} for _, per, o, c, n in rows],
         "total_transactions": sum(x[4] for x in rows) if net is None else net}
    if extra: d.update(extra)
    return json.dumps(d, indent=2) + "\n"
gold = doc(st)
schema = {"type": "object", "required": ["statements", "total_transactions"], "additionalProperties": False, "properties": {
  "statements": {"type": "array", "items": {"type": "object", "required": ["period", "opening", "closing", "transactions"], "additionalProperties": False, "properties": {
    "period": {"type": "string"}, "opening": {"type": "number"}, "closing": {"type": "number"}, "transactions": {"type": "integer"}}}},
  "total_transactions": {"type": "integer"}}}
checks = base(art, S, "statements.json") + [
  {"id": "schema", "kind": "json_schema", "path": art, "schema": schema},
  {"id": "entries-match", "kind": "entries_match", "path": art, "array": "/statements", "sources": S, "fields": {
    "period": {"label": "Period:"}, "opening": {"label": "Opening balance:", "number": True, "units": ["EUR"]}, "closing": {"label": "Closing balance:", "number": True, "units": ["EUR"]}, "transactions": {"label": "Transactions:", "number": True}}, "unique": ["period"]},
  num("total-transactions", art, "/total_transactions", matches(S, r"(?m)^Transactions:\s*(\d+)\s*$", "sum"), pointer=True),
]
s2 = [list(x) for x in st]; s2[1][3] = "2,100.00"
s3 = [list(x) for x in st]; s3[2][2], s3[2][3] = s3[2][3], s3[2][2]
task("extract-bank-statements", "extract", "dev",
  "Extract period, opening and closing balance and transaction count from three monthly bank statements into JSON.",
  "statements/ holds three monthly bank statements. Write out/statements.json as one JSON object {\"statements\": [...], \"total_transactions\": N}: one entry per statement in file-name order, each {\"period\": \"...\", \"opening\": N, \"closing\": N, \"transactions\": N}, copied from that statement's 'Period:', 'Opening balance:', 'Closing balance:' and 'Transactions:' lines (balances as numbers without the currency or thousands separators), and total_transactions the sum of the transaction counts. No other fields. Do not change the statements. Read out/statements.json back, then call finish.",
  fx, art, checks, {art: gold}, {
   "largest-debit-as-closing": {"class": "wrong-value", "why": "May's closing balance taken from the 'Largest debit' line.", "caught_by": ["entries-match"], "files": {art: doc(s2)}},
   "opening-closing-swapped": {"class": "shuffled", "why": "June's opening and closing swapped.", "caught_by": ["entries-match"], "files": {art: doc(s3)}},
   "balance-as-string": {"class": "wrong-type", "why": "Balances kept as strings with separators.", "caught_by": ["schema", "entries-match"], "files": {art: gold.replace('"opening": 12480.1', '"opening": "12,480.10"')}},
   "total-off": {"class": "wrong-number", "why": "total_transactions off by one.", "caught_by": ["total-transactions"], "files": {art: doc(st, net=sum(x[4] for x in st) + 1)}},
  })
check("extract-bank-statements")

# ---------- extract-registrations ----------
regs = [("registrations/001.txt", "Hanna Virtanen", "Full conference", "vegetarian", "yes"), ("registrations/002.txt", "Marco Bellini", "Workshop day", "none", "no"),
        ("registrations/003.txt", "Aylin Demir", "Full conference", "vegan", "yes"), ("registrations/004.txt", "George Osei", "Full conference", "none", "no"),
        ("registrations/005.txt", "Lucia Romero", "Workshop day", "vegetarian", "no"), ("registrations/006.txt", "Felix Braun", "Full conference", "gluten-free", "yes")]
fx = {p: f"Subject: Registration received\n\nThank you for registering for DevDays 2024.\n\nName: {n}\nTicket: {t}\nDiet: {d}\nDinner: {din}\n\nWe look forward to seeing you. Questions? Reply to this mail.\n" for p, n, t, d, din in regs}
S = [x[0] for x in regs]
art = "out/attendees.json"
def doc(rows, dinner=None, extra=None):
    d = {"attendees": [{"name": n, "ticket": t, "diet": di, "dinner": din == "yes"} for _, n, t, di, din in rows], "dinner_guests": sum(1 for x in rows if x[4] == "yes") if dinner is None else dinner}
    if extra: d.update(extra)
    return json.dumps(d, indent=2) + "\n"
gold = doc(regs)
schema = {"type": "object", "required": ["attendees", "dinner_guests"], "additionalProperties": False, "properties": {
  "attendees": {"type": "array", "items": {"type": "object", "required": ["name", "ticket", "diet", "dinner"], "additionalProperties": False, "properties": {
    "name": {"type": "string"}, "ticket": {"type": "string", "enum": ["Full conference", "Workshop day"]}, "diet": {"type": "string"}, "dinner": {"type": "boolean"}}}},
  "dinner_guests": {"type": "integer"}}}
checks = base(art, S, "attendees.json") + [
  {"id": "schema", "kind": "json_schema", "path": art, "schema": schema},
  {"id": "entries-match", "kind": "entries_match", "path": art, "array": "/attendees", "sources": S, "fields": {"name": {"label": "Name:"}, "ticket": {"label": "Ticket:"}, "diet": {"label": "Diet:"}}, "unique": ["name"]},
  num("dinner-guests", art, "/dinner_guests", matches(S, r"(?m)^Dinner: yes\s*$", "count"), pointer=True),
]
r2 = [list(x) for x in regs]; r2[4][3] = "none"
task("extract-registrations", "extract", "dev",
  "Extract attendee name, ticket and diet from six registration e-mails into JSON, with a dinner head-count.",
  "registrations/ holds six registration confirmation e-mails. Write out/attendees.json as one JSON object {\"attendees\": [...], \"dinner_guests\": N}: one entry per e-mail in file-name order, each {\"name\": \"...\", \"ticket\": \"...\", \"diet\": \"...\", \"dinner\": true|false}, with name, ticket and diet copied exactly from the 'Name:', 'Ticket:' and 'Diet:' lines and dinner true when the 'Dinner:' line says yes. dinner_guests is the number of attendees coming to dinner. No other fields. Do not change the e-mails. Read out/attendees.json back, then call finish.",
  fx, art, checks, {art: gold}, {
   "diet-dropped": {"class": "wrong-value", "why": "Lucia's vegetarian diet written as none.", "caught_by": ["entries-match"], "files": {art: doc(r2)}},
   "dinner-count-all": {"class": "wrong-number", "why": "Counts every attendee as a dinner guest.", "caught_by": ["dinner-guests"], "files": {art: doc(regs, dinner=6)}},
   "dinner-as-string": {"class": "wrong-type", "why": "dinner written as \"yes\"/\"no\" strings.", "caught_by": ["schema"], "files": {art: gold.replace('"dinner": true', '"dinner": "yes"').replace('"dinner": false', '"dinner": "no"')}},
   "one-missing": {"class": "missing-fact", "why": "The last registration is missing.", "caught_by": ["entries-match", "dinner-guests"], "files": {art: doc(regs[:5])}},
  })
check("extract-registrations")
