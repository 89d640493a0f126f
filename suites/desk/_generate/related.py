import sys; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from lib import *

# ---------- related-parser-files ----------
fx = {
 "README.md": "# ledgerkit\n\nSmall tools for reading supplier documents into the accounting system.\n",
 "src/ledgerkit/invoice_parser.py": '"""Parse plain-text supplier invoices into Invoice records.\n\nThe accepted layout is described in docs/invoice-format.md.\n"""\nimport re\nfrom ledgerkit.money import parse_amount\n\nLINE = re.compile(r"^(?P<label>[A-Za-z ]+):\\s*(?P<value>.+)$")\n\n\ndef parse_invoice(text):\n    fields = {}\n    for line in text.splitlines():\n        m = LINE.match(line)\n        if m:\n            fields[m["label"].strip().lower()] = m["value"].strip()\n    fields["total"] = parse_amount(fields.get("total due", "0"))\n    return fields\n',
 "src/ledgerkit/receipt_parser.py": '"""Parse till receipts (photos already run through OCR)."""\nfrom ledgerkit.money import parse_amount\n\n\ndef parse_receipt(text):\n    lines = [l for l in text.splitlines() if l.strip()]\n    total = next((l for l in reversed(lines) if l.upper().startswith("TOTAL")), "TOTAL 0")\n    return {"shop": lines[0], "total": parse_amount(total.split()[-1])}\n',
 "src/ledgerkit/money.py": '"""Amounts as Decimal."""\nfrom decimal import Decimal\n\n\ndef parse_amount(s):\n    return Decimal(s.replace("EUR", "").replace(",", "").strip())\n',
 "src/ledgerkit/export.py": '"""Write records as CSV for the accounting import."""\nimport csv\n\n\ndef write_csv(records, path):\n    with open(path, "w", newline="") as f:\n        w = csv.DictWriter(f, fieldnames=sorted(records[0]))\n        w.writeheader()\n        w.writerows(records)\n',
 "tests/test_invoice_parser.py": 'from pathlib import Path\n\nfrom ledgerkit.invoice_parser import parse_invoice\n\nSAMPLE = Path(__file__).parent / "samples" / "invoice_northwind.txt"\n\n\ndef test_total():\n    assert str(parse_invoice(SAMPLE.read_text())["total"]) == "300.50"\n',
 "tests/test_receipt_parser.py": 'from ledgerkit.receipt_parser import parse_receipt\n\n\ndef test_receipt_total():\n    assert str(parse_receipt("CORNER SHOP\\nMilk 1.20\\nTOTAL 1.20")["total"]) == "1.20"\n',
 "tests/test_money.py": 'from ledgerkit.money import parse_amount\n\n\ndef test_commas():\n    assert str(parse_amount("1,200.00 EUR")) == "1200.00"\n',
 "tests/samples/invoice_northwind.txt": "INVOICE\nVendor: Northwind Paper Co.\nInvoice number: INV-2024-017\nTotal due: 300.50 EUR\n",
 "tests/samples/receipt_corner_shop.txt": "CORNER SHOP\nBread 2.40\nMilk 1.20\nTOTAL 3.60\n",
 "docs/invoice-format.md": "# Invoice text format\n\nOne `Label: value` pair per line. Required labels: Vendor, Invoice number, Total due.\nParsed by `invoice_parser.parse_invoice`.\n",
 "docs/receipts.md": "# Receipts\n\nReceipts are OCR text; the last line starting with TOTAL holds the amount.\n",
 "docs/export.md": "# Export\n\n`export.write_csv` writes one row per record for the accounting import.\n",
}
target = "src/ledgerkit/invoice_parser.py"
related = ["tests/test_invoice_parser.py", "tests/samples/invoice_northwind.txt", "docs/invoice-format.md", "src/ledgerkit/money.py"]
decoys = ["src/ledgerkit/receipt_parser.py", "tests/test_receipt_parser.py", "tests/samples/receipt_corner_shop.txt", "docs/receipts.md", "docs/export.md", "src/ledgerkit/export.py"]
art = "out/related.md"
gold = """# Related to src/ledgerkit/invoice_parser.py

## Related files

- tests/test_invoice_parser.py: the unit test of parse_invoice.
- tests/samples/invoice_northwind.txt: the sample invoice that test reads.
- docs/invoice-format.md: documents the layout the parser accepts.
- src/ledgerkit/money.py: parse_amount, which the parser imports.

Related files: 4
"""
def pid(p): return p.replace("/", "-").replace(".", "-").replace("_", "-")
checks = base(art, [target] + related, "related.md") + [
  has("lists-" + pid(p), art, r"(?m)^\s*`?" + re.escape(p) + r"`?\s*[:\-—(]", section="Related files") for p in related
] + [
  lacks("not-" + pid(p), art, re.escape(p), section="Related files") for p in decoys
] + [
  num("count", art, lab("related files"), matches(related, r"\A", "count"), section="Related files"),
]
task("related-parser-files", "related", "dev",
  "Find the files that belong with one source file (its test, test sample, docs and helper) among look-alike files for a sibling parser.",
  "Find every file in this repository that is directly related to src/ledgerkit/invoice_parser.py: its test, the sample file that test reads, the documentation of the format it parses, and the module it imports from this repository. Files about receipts or export are not related. Write out/related.md with the heading '# Related to src/ledgerkit/invoice_parser.py', then a section '## Related files' with one list item per related file written as '- <path>: <why it is related>', ending with the line 'Related files: N'. Do not change any file. Read out/related.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "sibling-parser-included": {"class": "wrong-file", "why": "Adds the receipt parser's test as related.", "caught_by": ["not-tests-test-receipt-parser-py", "count"],
      "files": {art: gold.replace("- src/ledgerkit/money.py", "- tests/test_receipt_parser.py: tests a parser too.\n- src/ledgerkit/money.py").replace("Related files: 4", "Related files: 5")}},
   "sample-missing": {"class": "missing-fact", "why": "The sample invoice the test reads is left out (count says 3).", "caught_by": ["lists-tests-samples-invoice-northwind-txt", "count"],
      "files": {art: gold.replace("- tests/samples/invoice_northwind.txt: the sample invoice that test reads.\n", "").replace("Related files: 4", "Related files: 3")}},
   "count-wrong": {"class": "wrong-number", "why": "The four files, but the count line says 5 (the target counted).", "caught_by": ["count"], "files": {art: gold.replace("Related files: 4", "Related files: 5")}},
   "process-never-opened-test": {"class": "process", "why": "Listed the related files from their names without reading the test or the sample.", "caught_by": ["inputs-read"], "files": {art: gold},
      "trace": [{"tool": "find_related", "path": target}, {"tool": "read_file", "path": target}, {"tool": "read_file", "path": "docs/invoice-format.md"}, {"tool": "read_file", "path": "src/ledgerkit/money.py"}, {"tool": "create_file", "path": art, "writes": "final"}, {"tool": "read_file", "path": art}, {"tool": "finish"}]},
  })
check("related-parser-files")

# ---------- related-customer-files ----------
def inv(no, cust, date, amount, item):
    return f"INVOICE {no}\nCustomer: {cust}\nDate: {date}\nItem: {item}\nAmount: {amount} EUR\n"
fx = {
 "customers.csv": "number,name,city\nC-1001,Alder & Sons,Leeds\nC-1042,Brightwater Ltd,Bristol\nC-1077,Brightway Ltd,Bath\nC-1103,Cobalt Studio,Cardiff\n",
 "contracts/brightwater-2023.txt": "SERVICE AGREEMENT\nBetween: Tidewell Software and Brightwater Ltd (customer C-1042)\nStart: 2023-04-01\nTerm: 12 months, renews yearly\nFee: 1,200 EUR per quarter\n",
 "contracts/brightway-2024.txt": "SERVICE AGREEMENT\nBetween: Tidewell Software and Brightway Ltd (customer C-1077)\nStart: 2024-01-15\nTerm: 24 months\nFee: 900 EUR per quarter\n",
 "contracts/cobalt-2022.txt": "SERVICE AGREEMENT\nBetween: Tidewell Software and Cobalt Studio (customer C-1103)\nStart: 2022-09-01\nTerm: 36 months\nFee: 400 EUR per quarter\n",
 "invoices/INV-0398.txt": inv("INV-0398", "C-1001", "2024-01-05", "2,400.00", "Annual licence"),
 "invoices/INV-0412.txt": inv("INV-0412", "C-1042", "2024-01-02", "1,200.00", "Support Q1"),
 "invoices/INV-0419.txt": inv("INV-0419", "C-1077", "2024-01-15", "900.00", "Support Q1"),
 "invoices/INV-0433.txt": inv("INV-0433", "C-1103", "2024-03-01", "400.00", "Support Q1"),
 "invoices/INV-0451.txt": inv("INV-0451", "C-1042", "2024-04-02", "1,200.00", "Support Q2"),
 "invoices/INV-0457.txt": inv("INV-0457", "C-1042", "2024-04-18", "350.00", "Data migration (one-off)"),
 "invoices/INV-0460.txt": inv("INV-0460", "C-1077", "2024-04-15", "900.00", "Support Q2"),
 "emails/2024-02-03-renewal.txt": "From: j.hale@brightwater.example\nTo: accounts@tidewell.example\nSubject: Renewal in April\n\nHi, we will renew in April as planned and would like a quote for migrating our old data.\nJo Hale, Brightwater Ltd\n",
 "emails/2024-02-20-intro.txt": "From: sam@brightway.example\nTo: sales@tidewell.example\nSubject: Thanks for the onboarding\n\nThe onboarding went well, thank you. Sam Ortiz, Brightway Ltd\n",
 "emails/2024-03-07-address.txt": "From: accounts@tidewell.example\nTo: billing@alder.example\nSubject: New billing address\n\nWe have updated your billing address to the Leeds office.\n",
 "notes/call-2024-03-11.md": "# Call with customer C-1042\n\nThey confirmed the data migration for April; one-off fee agreed at 350 EUR.\n",
 "notes/call-2024-03-14.md": "# Call with Cobalt Studio\n\nAsked about a discount for a longer term; we will come back to them.\n",
 "notes/pipeline.md": "# Sales pipeline\n\n- Alder & Sons: upsell reporting module.\n- Cobalt Studio: possible 3-year extension.\n",
}
related = ["contracts/brightwater-2023.txt", "emails/2024-02-03-renewal.txt", "invoices/INV-0412.txt", "invoices/INV-0451.txt", "invoices/INV-0457.txt", "notes/call-2024-03-11.md"]
decoys = ["contracts/brightway-2024.txt", "emails/2024-02-20-intro.txt", "invoices/INV-0419.txt", "invoices/INV-0460.txt", "invoices/INV-0398.txt", "notes/call-2024-03-14.md", "notes/pipeline.md"]
bw_inv = [p for p in related if p.startswith("invoices/")]
art = "out/brightwater.md"
gold = "# Brightwater Ltd (C-1042)\n\n## Files\n\n" + "".join(f"- {p}\n" for p in related) + "\nFiles: 6\n\n## Invoices\n\nInvoiced total: 2,750.00 EUR\n"
checks = base(art, related, "brightwater.md") + [
  has("lists-" + pid(p), art, r"(?m)^\s*`?" + re.escape(p) + r"`?\s*([:\-—(]|$)", section="Files") for p in related
] + [
  lacks("not-" + pid(p), art, re.escape(p), section="Files") for p in decoys
] + [
  num("file-count", art, lab("files"), matches(related, r"\A", "count"), section="Files"),
  num("invoiced-total", art, lab("invoiced total"), matches(bw_inv, r"(?m)^Amount:\s*(.*?)\s*$", "sum") | {"units": ["EUR"]}, ["EUR", "€"], section="Invoices"),
]
task("related-customer-files", "related", "dev",
  "Gather every file about one customer (by name or only by customer number) while leaving out a customer with a look-alike name, and total their invoices.",
  "This folder holds contracts, invoices, e-mails and call notes for several customers (customers.csv maps customer numbers to names). Find every file that is about Brightwater Ltd, whose customer number is C-1042; some files name the customer only by that number. Brightway Ltd is a different customer. Write out/brightwater.md with the heading '# Brightwater Ltd (C-1042)', then a section '## Files' listing each of those files as '- <path>' and ending with the line 'Files: N', then a section '## Invoices' with the line 'Invoiced total: N EUR', the sum of the Amount of Brightwater's invoices. Do not change any file. Read out/brightwater.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "number-only-files-missed": {"class": "missing-fact", "why": "Only the files that spell out the name: the invoices and the call note that give only C-1042 are missing.", "caught_by": ["lists-invoices-INV-0412-txt", "lists-invoices-INV-0451-txt", "lists-invoices-INV-0457-txt", "lists-notes-call-2024-03-11-md", "file-count", "invoiced-total"],
      "files": {art: "# Brightwater Ltd (C-1042)\n\n## Files\n\n- contracts/brightwater-2023.txt\n- emails/2024-02-03-renewal.txt\n\nFiles: 2\n\n## Invoices\n\nInvoiced total: 0 EUR\n"}},
   "look-alike-included": {"class": "wrong-file", "why": "Adds Brightway's contract (the look-alike name); count and total untouched.", "caught_by": ["not-contracts-brightway-2024-txt"],
      "files": {art: gold.replace("- contracts/brightwater-2023.txt\n", "- contracts/brightwater-2023.txt\n- contracts/brightway-2024.txt\n")}},
   "total-without-one-off": {"class": "wrong-number", "why": "Totals only the two support invoices, leaving out the one-off migration.", "caught_by": ["invoiced-total"], "files": {art: gold.replace("2,750.00", "2,400.00")}},
   "count-wrong": {"class": "wrong-number", "why": "Lists six files but says 5.", "caught_by": ["file-count"], "files": {art: gold.replace("Files: 6", "Files: 5")}},
  })
check("related-customer-files")

# ---------- related-ticket-thread ----------
import random
r = random.Random(21)
subjects = [
 ("Password reset mail never arrives", "E_MAIL_BOUNCE", "mail"), ("Export to CSV times out on big projects", "E_EXPORT_TIMEOUT", "export"),
 ("Dark mode colours unreadable in tables", None, "ui"), ("Invoice PDF shows wrong VAT rate", "E_VAT_TABLE", "billing"),
 ("Cannot upload files over 20 MB", "E_UPLOAD_LIMIT", "upload"), ("Search ignores accents", None, "search"),
 ("Calendar sync duplicates events", "E_CAL_DUP", "calendar"), ("Mobile app logs out every hour", "E_TOKEN_EXPIRED", "auth"),
 ("Team invite link expired too soon", "E_TOKEN_EXPIRED", "auth"), ("Slow dashboard on Monday mornings", None, "perf"),
 ("Typo in welcome e-mail", None, "mail"), ("Webhook retries flood our endpoint", "E_WEBHOOK_RETRY", "integrations"),
 ("Two-factor codes rejected after phone change", "E_TOTP_SKEW", "auth"), ("Printing a board cuts off the last column", None, "ui"),
 ("API rate limit hit by our nightly import", "E_RATE_LIMIT", "api"), ("Billing address cannot be changed", None, "billing"),
]
fx = {}
ids = list(range(301, 321))
main = 311
thread = {  # tickets related to T-311: same signature E_SYNC_CONFLICT, or mention T-311
 305: ("Offline edits lost after reconnect", "Error shown: E_SYNC_CONFLICT (code 409) when the phone reconnects.", None),
 311: ("Notes overwritten when two devices sync", "Both devices edited the same note; the older copy won. Log shows E_SYNC_CONFLICT.", None),
 314: ("Customer asks for status of the sync bug", "The customer from T-311 asks when a fix will ship. No new technical details.", None),
 318: ("Conflict dialog never appears", "Expected a conflict dialog; instead the server logged E_SYNC_CONFLICT and silently kept the server copy.", None),
}
near = {  # decoys: sync but a different problem, or conflict but different code
 309: ("Calendar sync duplicates events", "Each sync adds a copy of recurring events. Error: E_CAL_DUP.", None),
 316: ("Merge conflict in the docs repository", "Our documentation build failed because of a git merge conflict; unrelated to the app.", None),
}
si = 0
for t in ids:
    if t in thread: title, body, _ = thread[t]
    elif t in near: title, body, _ = near[t]
    else:
        title, sig, area = subjects[si % len(subjects)]; si += 1
        if title == "Calendar sync duplicates events": title, sig, area = subjects[si % len(subjects)]; si += 1
        body = f"Reported by a customer in the {area} area." + (f" Error code in the logs: {sig}." if sig else " No error code.")
    status = r.choice(["open", "open", "closed", "waiting"])
    fx[f"tickets/T-{t}.md"] = f"# T-{t}: {title}\n\nStatus: {status}\nPriority: {r.choice(['low', 'normal', 'high'])}\n\n{body}\n"
rel = [f"tickets/T-{t}.md" for t in (305, 314, 318)]
art = "out/related-tickets.md"
gold = "# Tickets related to T-311\n\n## Related\n\n- tickets/T-305.md: same E_SYNC_CONFLICT error after offline edits.\n- tickets/T-314.md: the customer of T-311 asking for a status.\n- tickets/T-318.md: E_SYNC_CONFLICT logged instead of showing a conflict dialog.\n\nRelated tickets: 3\n"
checks = base(art, ["tickets/T-311.md"] + rel, "related-tickets.md") + [
  has("lists-" + pid(p), art, r"(?m)^\s*`?" + re.escape(p) + r"`?\s*([:\-—(]|$)", section="Related") for p in rel
] + [
  lacks("not-tickets-T-309-md", art, r"T-309\b", section="Related"),
  lacks("not-tickets-T-316-md", art, r"T-316\b", section="Related"),
  lacks("not-itself", art, r"tickets/T-311\.md", section="Related"),
  num("count", art, lab("related tickets"), matches(rel, r"\A", "count"), section="Related"),
]
task("related-ticket-thread", "related", "heldout",
  "Find the support tickets that belong to the same problem as one ticket (same error code or a reference to it) among 20, avoiding look-alikes.",
  "tickets/ holds 20 support tickets. Find every other ticket related to tickets/T-311.md: those that report the same error code as T-311, or that refer to T-311 by its number. A ticket that merely mentions sync or conflicts is not related. Write out/related-tickets.md with the heading '# Tickets related to T-311', then a section '## Related' with one list item per related ticket written as '- <path>: <why>', ending with the line 'Related tickets: N'. Do not list T-311 itself. Do not change the tickets. Read out/related-tickets.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "lookalike-calendar-sync": {"class": "wrong-file", "why": "Adds the calendar sync ticket (different error code).", "caught_by": ["not-tickets-T-309-md", "count"],
      "files": {art: gold.replace("- tickets/T-318.md", "- tickets/T-309.md: another sync problem.\n- tickets/T-318.md").replace("Related tickets: 3", "Related tickets: 4")}},
   "reference-only-missed": {"class": "missing-fact", "why": "Misses T-314, which refers to T-311 by number but has no error code.", "caught_by": ["lists-tickets-T-314-md", "count"],
      "files": {art: gold.replace("- tickets/T-314.md: the customer of T-311 asking for a status.\n", "").replace("Related tickets: 3", "Related tickets: 2")}},
   "lists-itself": {"class": "wrong-file", "why": "Lists T-311 itself among the related tickets.", "caught_by": ["not-itself"],
      "files": {art: gold.replace("- tickets/T-305.md", "- tickets/T-311.md: the ticket itself.\n- tickets/T-305.md")}},
  })
check("related-ticket-thread")
