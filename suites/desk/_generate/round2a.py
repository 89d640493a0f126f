import sys; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from lib import *
import random

# ---------- search-invoice-amount ----------
r = random.Random(99)
vendors = ["Northwind Paper Co.", "Contoso Cleaning", "Fabrikam Print", "Litware Office", "Adatum IT Services", "Tailspin Couriers", "Proseware Catering", "Wingtip Furniture"]
fx = {}
used = set()
for k in range(24):
    no = f"INV-2024-{k + 101:03d}"
    v = vendors[k % len(vendors)]
    amt = round(r.uniform(80, 3000), 2)
    while amt in used: amt += 1
    used.add(amt)
    fx[f"invoices/{no}.txt"] = f"INVOICE\nInvoice number: {no}\nVendor: {v}\nDate: 2024-{(k // 3) + 1:02d}-{(k * 5) % 27 + 1:02d}\nDescription: {r.choice(['Monthly service', 'Supplies', 'Repair', 'Delivery', 'Licence'])}\nTotal due: {amt:,.2f} EUR\n"
ANS = "invoices/INV-2024-117.txt"
fx[ANS] = "INVOICE\nInvoice number: INV-2024-117\nVendor: Adatum IT Services\nDate: 2024-06-03\nDescription: Laptop repair and data recovery\nTotal due: 1,234.56 EUR\n"
fx["invoices/INV-2024-109.txt"] = "INVOICE\nInvoice number: INV-2024-109\nVendor: Adatum IT Services\nDate: 2024-03-12\nDescription: Laptop repair (estimate was 1,234.56 EUR, final price lower)\nTotal due: 1,050.00 EUR\n"
art = "out/answer.json"
schema = {"type": "object", "required": ["file", "match"], "additionalProperties": False, "properties": {
  "file": {"type": "string"}, "match": {"type": "array", "minItems": 1, "maxItems": 1, "items": {"type": "object", "required": ["invoice_number", "vendor", "date"], "additionalProperties": False,
    "properties": {"invoice_number": {"type": "string"}, "vendor": {"type": "string"}, "date": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}}}}}}
def doc(file=ANS, **kw):
    m = {"invoice_number": "INV-2024-117", "vendor": "Adatum IT Services", "date": "2024-06-03"}; m.update(kw)
    return json.dumps({"file": file, "match": [m]}, indent=2) + "\n"
gold = doc()
checks = base(art, [ANS], "answer.json") + [
  {"id": "schema", "kind": "json_schema", "path": art, "schema": schema},
  has("names-the-file", art, r'"file"\s*:\s*"(\./)?invoices/INV-2024-117\.txt"'),
  {"id": "fields-from-that-invoice", "kind": "entries_match", "path": art, "array": "/match", "sources": [ANS], "fields": {"invoice_number": {"label": "Invoice number:"}, "vendor": {"label": "Vendor:"}, "date": {"label": "Date:"}}},
]
task("search-invoice-amount", "search", "dev",
  "Find the one invoice among 24 whose total due is a given amount (one other invoice mentions the amount as an estimate).",
  "invoices/ holds 24 supplier invoices. Exactly one of them has a total due of 1,234.56 EUR. Find it and write out/answer.json as one JSON object {\"file\": \"<its path, e.g. invoices/INV-2024-101.txt>\", \"match\": [{\"invoice_number\": \"...\", \"vendor\": \"...\", \"date\": \"...\"}]} with the three values copied exactly from that invoice's 'Invoice number:', 'Vendor:' and 'Date:' lines. No other fields. Do not change the invoices. Read out/answer.json back, then call finish.",
  fx, art, checks, {art: gold}, {
   "estimate-decoy": {"class": "wrong-file", "why": "The invoice whose description mentions 1,234.56 as an estimate, with its own values.", "caught_by": ["names-the-file", "fields-from-that-invoice", "inputs-read"],
      "files": {art: doc(file="invoices/INV-2024-109.txt", invoice_number="INV-2024-109", date="2024-03-12")}, "trace": trace_reads(["invoices/INV-2024-109.txt"], art)},
   "wrong-date-format": {"class": "wrong-value", "why": "Date rewritten as 03.06.2024.", "caught_by": ["schema", "fields-from-that-invoice"], "files": {art: doc(date="03.06.2024")}},
   "right-file-wrong-vendor": {"class": "wrong-value", "why": "Right file, vendor name shortened to Adatum.", "caught_by": ["fields-from-that-invoice"], "files": {art: doc(vendor="Adatum")}},
   "file-path-wrong": {"class": "wrong-file", "why": "Values right but the file path names another invoice.", "caught_by": ["names-the-file"], "files": {art: doc(file="invoices/INV-2024-109.txt")}},
  })
check("search-invoice-amount")

# ---------- search-budget-approval (emails) ----------
senders = ["anna.berg", "bo.lind", "carla.ruiz", "dev.patel", "emil.nyman", "farah.aziz", "gus.olsen"]
subj = ["Office move: parking", "Re: Q3 offsite venue", "Laptop refresh schedule", "Re: Intern start dates", "Holiday rota", "Re: Supplier visit Thursday",
        "Printer on 2nd floor", "Team lunch", "Re: Customer NPS results", "Security training reminder", "Re: Budget request: data team", "Re: Budget request: data team",
        "New expense tool", "Re: Hiring plan H2", "Fire drill on Monday", "Re: Website copy review", "Re: Budget request: data team", "Quarterly numbers draft",
        "Re: Conference tickets", "Coffee machine", "Re: Cloud costs", "Newsletter draft"]
bodies = {
 10: ("dev.patel", "The data team asks for an extra 18,000 EUR this year for a second analyst contractor. Happy to discuss."),
 11: ("anna.berg", "Thanks Dev. I need the cost breakdown before I can approve anything. Not approved yet."),
 16: ("anna.berg", "Breakdown received. Approved: the data team budget increases by 15,000 EUR for this year (not the 18,000 requested). Finance will update the plan."),
}
fx = {}
r = random.Random(4)
for k, s in enumerate(subj):
    frm, body = bodies.get(k, (r.choice(senders), r.choice(["See the attached plan; comments by Friday please.", "Reminder: please reply by end of week.", "Short update: nothing blocking, details in the doc.", "Thanks all, closing this thread."])))
    fx[f"mail/{k + 1:02d}.eml.txt"] = f"From: {frm}@example.com\nTo: team@example.com\nDate: 2024-05-{k + 1:02d}\nSubject: {s}\n\n{body}\n"
ANS = "mail/17.eml.txt"
art = "out/answer.md"
gold = "File: mail/17.eml.txt\nApproved by: anna.berg@example.com\nApproved amount: 15,000 EUR\n"
checks = base(art, [ANS], "answer.md") + [
  has("names-the-mail", art, pathline("file", ANS)),
  has("approver", art, r"(?im)^\s*approved by\s*:\s*(anna\.berg@example\.com|anna berg)\s*$"),
  num("approved-amount", art, lab("approved amount"), matches(ANS, r"increases by ([\d,]+) EUR", "max"), ["EUR", "€"]),
]
task("search-budget-approval", "search", "dev",
  "Find the e-mail among 22 in which the data team's budget increase was approved, and report who approved it and for how much.",
  "mail/ holds 22 e-mails from May. In one of them the data team's budget increase was finally approved. Find that e-mail and write out/answer.md with exactly three lines:\nFile: <its path>\nApproved by: <the sender's e-mail address>\nApproved amount: <the approved increase> EUR\nDo not change the e-mails. Read out/answer.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "requested-not-approved": {"class": "wrong-number", "why": "The amount requested (18,000) instead of the amount approved.", "caught_by": ["approved-amount"], "files": {art: gold.replace("15,000", "18,000")}},
   "not-yet-approved-mail": {"class": "wrong-file", "why": "Names the 'not approved yet' reply from the same sender.", "caught_by": ["names-the-mail"], "files": {art: gold.replace("mail/17.eml.txt", "mail/12.eml.txt")}},
   "requester-as-approver": {"class": "wrong-value", "why": "Names the requester as the approver.", "caught_by": ["approver"], "files": {art: gold.replace("anna.berg@example.com", "dev.patel@example.com")}},
  })
check("search-budget-approval")
