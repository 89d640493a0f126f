import sys; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from lib import *

# ---------- extract-receipts ----------
rc = [
 ("receipts/2024-07-02-hardware.txt", "BAUMARKT KRAUSE\nFiliale Lindenau\n-----------------\nSchrauben 4x40     3.49\nDuebel 8mm         2.29\nAkkuschrauber     89.00\n-----------------\nMerchant: Baumarkt Krause\nDate: 2024-07-02\nTotal: 94.78 EUR\nPaid: card\n"),
 ("receipts/2024-07-05-lunch.txt", "CAFE MIRA\nTable 4\n2x Soup of the day   11.00\n1x Flatbread          6.50\nTip                   1.50\nMerchant: Cafe Mira\nDate: 2024-07-05\nTotal: 19.00 EUR\nPaid: cash\n"),
 ("receipts/2024-07-11-train.txt", "DB Fernverkehr\nTicket Leipzig - Berlin, 2nd class\nBahnCard 25 applied\nMerchant: DB Fernverkehr\nDate: 2024-07-11\nTotal: 41.90 EUR\nPaid: card\n"),
 ("receipts/2024-07-19-books.txt", "Buchhandlung Seitenwind\n1x Refactoring (2nd ed.)   54.00\n1x Notebook A5             7.95\nSubtotal                  61.95\nDiscount 10 %             -6.20\nMerchant: Buchhandlung Seitenwind\nDate: 2024-07-19\nTotal: 55.75 EUR\nPaid: card\n"),
]
fx = dict(rc)
S = [p for p, _ in rc]
art = "out/receipts.json"
ents = [("Baumarkt Krause", "2024-07-02", 94.78, "card"), ("Cafe Mira", "2024-07-05", 19.00, "cash"), ("DB Fernverkehr", "2024-07-11", 41.90, "card"), ("Buchhandlung Seitenwind", "2024-07-19", 55.75, "card")]
def doc(e, total=None, extra=None):
    d = {"receipts": [{"merchant": m, "date": dt, "total": t, "paid": p} for m, dt, t, p in e], "total": round(sum(x[2] for x in e), 2) if total is None else total}
    if extra: d.update(extra)
    return json.dumps(d, indent=2, ensure_ascii=False) + "\n"
gold = doc(ents)
schema = {"type": "object", "required": ["receipts", "total"], "additionalProperties": False, "properties": {
  "receipts": {"type": "array", "items": {"type": "object", "required": ["merchant", "date", "total", "paid"], "additionalProperties": False, "properties": {
     "merchant": {"type": "string", "minLength": 2}, "date": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}, "total": {"type": "number"}, "paid": {"type": "string", "enum": ["card", "cash"]}}}},
  "total": {"type": "number"}}}
checks = base(art, None, "receipts.json") + [
  {"id": "schema", "kind": "json_schema", "path": art, "schema": schema},
  {"id": "entries-match", "kind": "entries_match", "path": art, "array": "/receipts", "sources": S, "fields": {
     "merchant": {"label": "Merchant:"}, "date": {"label": "Date:"}, "total": {"label": "Total:", "number": True, "units": ["EUR"]}, "paid": {"label": "Paid:"}}, "unique": ["merchant", "date"]},
  num("grand-total", art, "/total", matches(S, r"(?m)^Total:\s*(.*?)\s*$", "sum") | {"units": ["EUR"]}, pointer=True, tolerance=0.005),
]
e2 = list(ents); e2[3] = ("Buchhandlung Seitenwind", "2024-07-19", 61.95, "card")
e3 = list(ents); e3[0], e3[1] = e3[1], e3[0]
task("extract-receipts", "extract", "dev",
  "Extract merchant, date, total and payment method from four shop receipts into JSON, with the sum.",
  "receipts/ holds four scanned shop receipts. Write out/receipts.json as one JSON object {\"receipts\": [...], \"total\": N}. The list has one entry per receipt, in file-name order, each {\"merchant\": \"...\", \"date\": \"...\", \"total\": N, \"paid\": \"...\"}, copied exactly from that receipt's 'Merchant:', 'Date:', 'Total:' and 'Paid:' lines, with total as a number without the currency. The top-level total is the sum of the four totals. No other fields. Do not change the receipts. Read out/receipts.json back, then call finish.",
  fx, art, checks, {art: gold}, {
   "subtotal-not-total": {"class": "wrong-number", "why": "Takes the bookshop's subtotal (before discount) as its total; the sum follows it.", "caught_by": ["entries-match", "grand-total"], "files": {art: doc(e2)}},
   "order-swapped": {"class": "shuffled", "why": "The first two receipts in the wrong order.", "caught_by": ["entries-match"], "files": {art: doc(e3)}},
   "merchant-from-header": {"class": "wrong-value", "why": "Merchant copied from the shouting header line (CAFE MIRA).", "caught_by": ["entries-match"], "files": {art: gold.replace('"Cafe Mira"', '"CAFE MIRA"')}},
   "sum-wrong": {"class": "wrong-number", "why": "Entries right, sum off by one euro.", "caught_by": ["grand-total"], "files": {art: doc(ents, total=round(sum(x[2] for x in ents) + 1, 2))}},
   "total-as-string": {"class": "wrong-type", "why": "Entry totals written as strings with the currency.", "caught_by": ["schema", "entries-match"], "files": {art: gold.replace('"total": 94.78', '"total": "94.78 EUR"')}},
   "extra-field": {"class": "extra-fields", "why": "Adds a currency field.", "caught_by": ["schema"], "files": {art: doc(ents, extra={"currency": "EUR"})}},
  })
check("extract-receipts")

# ---------- extract-service-ports ----------
svcs = [("billing", 8081, 4, "money", "512"), ("catalogue", 8090, 2, "growth", "256"), ("checkout", 8083, 6, "money", "1024"), ("search", 8095, 3, "platform", "2048")]
fx = {}
for s, port, w, team, mem in svcs:
    fx[f"services/{s}/service.yaml"] = f"# Deployment settings for {s}\nservice: {s}\nteam: {team}\nport: {port}\nworkers: {w}\nmemory_mb: {mem}\nhealth: /healthz\n# admin_port: {port + 1000}\n"
fx["services/README.md"] = "Each service folder holds its service.yaml. Ports are assigned by the platform team.\n"
S = [f"services/{s[0]}/service.yaml" for s in svcs]
art = "out/services.json"
def doc(rows, total=None, extra=None):
    d = {"services": [{"service": s, "port": p, "workers": w} for s, p, w, *_ in rows], "total_workers": sum(r[2] for r in rows) if total is None else total}
    if extra: d.update(extra)
    return json.dumps(d, indent=2) + "\n"
gold = doc(svcs)
schema = {"type": "object", "required": ["services", "total_workers"], "additionalProperties": False, "properties": {
  "services": {"type": "array", "items": {"type": "object", "required": ["service", "port", "workers"], "additionalProperties": False, "properties": {
     "service": {"type": "string"}, "port": {"type": "integer"}, "workers": {"type": "integer"}}}},
  "total_workers": {"type": "integer"}}}
checks = base(art, S, "services.json") + [
  {"id": "schema", "kind": "json_schema", "path": art, "schema": schema},
  {"id": "entries-match", "kind": "entries_match", "path": art, "array": "/services", "sources": S, "fields": {
     "service": {"label": "service:"}, "port": {"label": "port:", "number": True}, "workers": {"label": "workers:", "number": True}}, "unique": ["service", "port"]},
  num("total-workers", art, "/total_workers", matches(S, r"(?m)^workers:\s*(\d+)\s*$", "sum"), pointer=True),
]
s2 = [list(x) for x in svcs]; s2[2][1] = 9083
task("extract-service-ports", "extract", "dev",
  "Extract service name, port and workers from four YAML configs (ignoring a commented-out admin port) into JSON.",
  "services/ holds one service.yaml per service (billing, catalogue, checkout, search). Write out/services.json as one JSON object {\"services\": [...], \"total_workers\": N}: one entry per service in alphabetical order, each {\"service\": \"...\", \"port\": N, \"workers\": N} with the values of that file's 'service:', 'port:' and 'workers:' settings (ports and workers as integers), and total_workers the sum of the workers. No other fields. Commented-out lines are not settings. Do not change the configs. Read out/services.json back, then call finish.",
  fx, art, checks, {art: gold}, {
   "commented-admin-port": {"class": "wrong-value", "why": "checkout's port taken from the commented-out admin_port line.", "caught_by": ["entries-match"], "files": {art: doc(s2)}},
   "one-service-missing": {"class": "missing-fact", "why": "search is left out; total_workers sums the three listed.", "caught_by": ["entries-match", "total-workers"], "files": {art: doc(svcs[:3])}},
   "port-as-string": {"class": "wrong-type", "why": "Ports written as strings.", "caught_by": ["schema", "entries-match"], "files": {art: gold.replace('"port": 8081', '"port": "8081"')}},
   "workers-sum-off": {"class": "wrong-number", "why": "total_workers off by two.", "caught_by": ["total-workers"], "files": {art: doc(svcs, total=sum(x[2] for x in svcs) - 2)}},
  })
check("extract-service-ports")

# ---------- extract-applications ----------
apps = [
 ("applications/01-okafor.txt", "Chidi Okafor", "Backend developer", 6, "2024-09-01", "Dear hiring team,\n\nI have spent six years building payment systems in Go and Python, most recently at a mid-sized fintech.\nI would enjoy the on-call rotation less than the design work, but I have done both.\n"),
 ("applications/02-lindqvist.txt", "Sara Lindqvist", "Frontend developer", 3, "2024-08-15", "Hello,\n\nI am a frontend developer with three years of React and a background in graphic design.\nI previously worked 2 years as a designer before moving to code.\n"),
 ("applications/03-haddad.txt", "Youssef Haddad", "Backend developer", 11, "2024-10-01", "Good morning,\n\nEleven years of backend work, the last four leading a team of five.\nI am available after my notice period of two months.\n"),
 ("applications/04-novak.txt", "Petra Novak", "Data analyst", 4, "2024-09-16", "Hi,\n\nI analyse product data in SQL and Python and have 4 years of experience, 1 of them part-time.\n"),
 ("applications/05-mensah.txt", "Kwame Mensah", "Frontend developer", 8, "2024-11-01", "Dear team,\n\nEight years of frontend work, including accessibility audits for public-sector sites.\n"),
]
fx = {p: f"APPLICATION\nName: {n}\nPosition: {pos}\nYears of experience: {y}\nAvailable from: {d}\n\n{letter}" for p, n, pos, y, d, letter in apps}
S = [a[0] for a in apps]
art = "out/applicants.json"
def doc(rows, extra_top=None):
    d = {"applicants": [{"name": n, "position": pos, "years": y, "available_from": d} for _, n, pos, y, d, _ in rows],
         "backend_applicants": sum(1 for r in rows if r[2] == "Backend developer")}
    if extra_top: d.update(extra_top)
    return json.dumps(d, indent=2) + "\n"
gold = doc(apps)
schema = {"type": "object", "required": ["applicants", "backend_applicants"], "additionalProperties": False, "properties": {
  "applicants": {"type": "array", "items": {"type": "object", "required": ["name", "position", "years", "available_from"], "additionalProperties": False, "properties": {
     "name": {"type": "string"}, "position": {"type": "string"}, "years": {"type": "integer", "minimum": 0}, "available_from": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}}}},
  "backend_applicants": {"type": "integer"}}}
checks = base(art, S, "applicants.json") + [
  {"id": "schema", "kind": "json_schema", "path": art, "schema": schema},
  {"id": "entries-match", "kind": "entries_match", "path": art, "array": "/applicants", "sources": S, "fields": {
     "name": {"label": "Name:"}, "position": {"label": "Position:"}, "years": {"label": "Years of experience:", "number": True}, "available_from": {"label": "Available from:"}}, "unique": ["name"]},
  num("backend-count", art, "/backend_applicants", matches(S, r"(?m)^Position: Backend developer\s*$", "count"), pointer=True),
]
a2 = [list(a) for a in apps]; a2[1][3] = 5
a3 = [list(a) for a in apps]; a3[3][3] = 3
task("extract-applications", "extract", "heldout",
  "Extract name, position, experience and start date from five job applications into JSON, counting the backend applicants.",
  "applications/ holds five job applications, each with a header block ('Name:', 'Position:', 'Years of experience:', 'Available from:') followed by a cover letter. Write out/applicants.json as one JSON object {\"applicants\": [...], \"backend_applicants\": N}: one entry per application in file-name order, each {\"name\": \"...\", \"position\": \"...\", \"years\": N, \"available_from\": \"YYYY-MM-DD\"} copied from that application's header lines (years as an integer), and backend_applicants the number of applications for the position 'Backend developer'. Take the values from the header, not the letter. No other fields. Do not change the applications. Read out/applicants.json back, then call finish.",
  fx, art, checks, {art: gold}, {
   "years-from-letter-added": {"class": "wrong-number", "why": "Adds the 2 design years from Sara's letter to her header value.", "caught_by": ["entries-match"], "files": {art: doc(a2)}},
   "years-part-time-subtracted": {"class": "wrong-number", "why": "Petra's years reduced by the part-time year mentioned in her letter.", "caught_by": ["entries-match"], "files": {art: doc(a3)}},
   "backend-count-wrong": {"class": "wrong-number", "why": "Counts all developers (4) as backend.", "caught_by": ["backend-count"], "files": {art: doc(apps, {"backend_applicants": 4})}},
   "date-reformatted": {"class": "wrong-format", "why": "A date written as 1 September 2024.", "caught_by": ["schema", "entries-match"], "files": {art: gold.replace('"2024-09-01"', '"1 September 2024"')}},
  })
check("extract-applications")
