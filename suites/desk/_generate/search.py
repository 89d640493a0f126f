import sys; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from lib import *

# ---------- search-hosting-renewal ----------
people = ["Dana", "Omar", "Lena", "Felix", "Priya", "Jonas", "Mei", "Tom"]
topics = [
 ("2024-01-09", "sprint-planning", "Sprint 14 planning", ["Velocity last sprint was 31 points.", "Carried over: export to PDF (Felix)."], ["Felix to split the PDF export story.", "Lena to book the demo room."]),
 ("2024-01-16", "design-review", "Design review: onboarding flow", ["The three-step onboarding tested better than the single long form.", "Copy on step two still reads too formal."], ["Mei to rewrite step two copy.", "Omar to add analytics events to each step."]),
 ("2024-01-23", "hiring", "Hiring sync", ["Two backend candidates reached the final round.", "The frontend role is still open after six weeks."], ["Dana to widen the frontend posting to remote.", "Jonas to send feedback on candidate B by Friday."]),
 ("2024-01-30", "retro", "Sprint 14 retrospective", ["Deploys on Friday afternoon caused two weekend pages.", "Pairing on the search bug worked well."], ["Agree a deploy freeze after 15:00 on Fridays.", "Priya to write up the search bug post-mortem."]),
 ("2024-02-06", "customer-call-northwind", "Customer call: Northwind", ["Northwind wants single sign-on before they add 200 seats.", "They are happy with the reporting module."], ["Omar to send the SSO timeline.", "Lena to schedule a follow-up in March."]),
 ("2024-02-13", "sprint-planning", "Sprint 15 planning", ["Focus is SSO groundwork and the billing page.", "Tom is out for three days."], ["Jonas to spike SAML libraries.", "Mei to finish the billing page mockups."]),
 ("2024-02-20", "security-review", "Security review", ["Dependency scan found one high-severity issue in the image library.", "Password reset tokens now expire after 30 minutes."], ["Felix to upgrade the image library this week.", "Dana to schedule the annual penetration test."]),
 ("2024-02-27", "retro", "Sprint 15 retrospective", ["The SAML spike took twice as long as planned.", "Standups ran long; keep them to 15 minutes."], ["Jonas to document the SAML findings.", "Priya to timebox standups."]),
 ("2024-03-05", "ops-sync", "Ops sync", ["Cloudline had a 40 minute outage in the Frankfurt region on Sunday.", "Status page updates were late by 20 minutes."], ["Tom to automate the status page from alerts.", "Omar to review the Cloudline incident report."]),
 ("2024-03-12", "sprint-planning", "Sprint 16 planning", ["SSO is the sprint goal.", "Billing page ships behind a flag."], ["Jonas to own SSO.", "Mei to prepare the billing page flag rollout."]),
 ("2024-03-19", "budget-review", "Q1 budget review", ["Spend is 4 % under plan for the quarter.", "Conference travel was cut in half."], ["Dana to move the saved travel budget to tooling.", "Lena to prepare the Q2 forecast."]),
 ("2024-03-26", "customer-call-harbor", "Customer call: Harbor Library", ["Harbor Library asked for an offline mode for their reading rooms.", "They reported slow exports on large catalogues."], ["Priya to profile exports on a 50,000 item catalogue.", "Omar to answer the offline mode question."]),
 ("2024-04-02", "retro", "Sprint 16 retrospective", ["SSO shipped to the first two customers.", "The on-call rotation felt uneven."], ["Tom to rebalance the on-call rotation.", "Felix to close the SSO epic."]),
 ("2024-04-09", "design-review", "Design review: reports page", ["Users could not find the export button in the test.", "Charts need a colour-blind safe palette."], ["Mei to move the export button to the toolbar.", "Mei to switch the chart palette."]),
 ("2024-04-16", "hiring", "Hiring sync", ["The frontend role was filled; Aiko starts on 6 May.", "One backend offer was declined."], ["Dana to prepare Aiko's onboarding plan.", "Jonas to reopen the backend search."]),
 ("2024-04-23", "budget-review", "Hosting budget review", ["Cloudline sent a renewal offer: 12 months at 2,100 EUR per month.", "Two other providers were asked for quotes; no decision yet.", "Dana will negotiate a longer term for a lower price."], ["Dana to negotiate with Cloudline.", "Omar to collect the competing quotes."]),
 ("2024-04-30", "sprint-planning", "Sprint 17 planning", ["Goal: reports page redesign.", "Exports performance work continues."], ["Priya to ship the export streaming change.", "Mei to hand over report page designs."]),
 ("2024-05-07", "customer-call-northwind", "Customer call: Northwind", ["Northwind signed for 200 more seats after SSO.", "They asked about audit logs."], ["Omar to share the audit log roadmap.", "Lena to send the updated contract."]),
 ("2024-05-14", "ops-sync", "Ops sync", ["Competing quotes came in higher than the negotiated Cloudline price.", "Decision: renew the Cloudline hosting contract for 24 months at 1,850 EUR per month.", "Backups will move to the second Cloudline region at no extra cost."], ["Dana to sign the renewal by 20 May.", "Tom to plan the backup region move."]),
 ("2024-05-21", "retro", "Sprint 17 retrospective", ["The reports page shipped a day early.", "Flaky end-to-end tests blocked merges twice."], ["Felix to quarantine the flaky tests.", "Priya to add retries to the export job."]),
 ("2024-05-28", "security-review", "Security review", ["Audit log design approved.", "Secrets rotation is overdue for the mail service."], ["Tom to rotate the mail service secrets.", "Jonas to start the audit log work."]),
 ("2024-06-04", "sprint-planning", "Sprint 18 planning", ["Audit logs are the sprint goal.", "Aiko picks up the colour palette work."], ["Jonas to lead audit logs.", "Aiko to finish the palette change."]),
 ("2024-06-11", "ops-sync", "Ops sync", ["The backup region move finished without downtime.", "Disk usage on the database host is at 71 %."], ["Tom to add a disk usage alert at 80 %.", "Omar to review database retention."]),
 ("2024-06-18", "design-review", "Design review: audit log viewer", ["Filters by user and by date are enough for the first version.", "Export of audit logs to CSV is wanted by Northwind."], ["Mei to design the CSV export.", "Aiko to build the filter bar."]),
]
def note(date, slug, title, points, actions, i):
    att = ", ".join(people[(i + k) % len(people)] for k in range(4))
    body = f"# {title}\n\nDate: {date}\nAttendees: {att}\n\n## Notes\n\n" + "".join(f"- {p}\n" for p in points)
    body += "\n## Actions\n\n" + "".join(f"- [ ] {a}\n" for a in actions)
    return f"notes/{date}-{slug}.md", body
notes = dict(note(*t, i) for i, t in enumerate(topics))
ANS = "notes/2024-05-14-ops-sync.md"
DECOY = "notes/2024-04-23-budget-review.md"
art = "out/answer.md"
gold = "File: notes/2024-05-14-ops-sync.md\nTerm: 24 months\nMonthly cost: 1,850 EUR\n"
checks = base(art, [ANS], "answer.md") + [
  has("names-the-note", art, pathline("file", ANS)),
  num("term", art, lab("term"), matches(ANS, r"(?m)^- Decision: renew the Cloudline hosting contract for (\d+) months", "max"), ["months", "month"]),
  num("monthly-cost", art, lab("monthly cost"), matches(ANS, r"(?m)^- Decision: renew the Cloudline hosting contract for \d+ months at ([\d,]+) EUR per month", "max"), ["EUR", "€"]),
]
task("search-hosting-renewal", "search", "dev",
  "Find the one meeting note among 24 that records the Cloudline renewal decision and report its term and price.",
  "The notes/ folder holds a year of meeting notes. At one of those meetings the team decided to renew the Cloudline hosting contract. Find the note that records that decision (a decision, not an offer or a discussion) and write out/answer.md with exactly these three lines:\nFile: <path of that note, e.g. notes/2024-01-01-example.md>\nTerm: <length of the renewed contract> months\nMonthly cost: <price per month> EUR\nDo not change the notes. Read out/answer.md back, then call finish.",
  notes, art, checks, {art: gold}, {
   "wrong-file-the-offer": {"class": "wrong-file", "why": "The right numbers, but the file named is the budget review that only holds the offer.", "caught_by": ["names-the-note"],
      "files": {art: "File: notes/2024-04-23-budget-review.md\nTerm: 24 months\nMonthly cost: 1,850 EUR\n"}},
   "wrong-number-offer-term": {"class": "wrong-number", "why": "The term of the earlier offer (12 months), not of the decision.", "caught_by": ["term"],
      "files": {art: "File: notes/2024-05-14-ops-sync.md\nTerm: 12 months\nMonthly cost: 1,850 EUR\n"}},
   "wrong-number-offer-price": {"class": "wrong-number", "why": "The price of the earlier offer (2,100 EUR).", "caught_by": ["monthly-cost"],
      "files": {art: "File: notes/2024-05-14-ops-sync.md\nTerm: 24 months\nMonthly cost: 2,100 EUR\n"}},
   "placeholder-cost": {"class": "placeholder", "why": "The price left as TBD.", "caught_by": ["no-placeholder", "monthly-cost"],
      "files": {art: "File: notes/2024-05-14-ops-sync.md\nTerm: 24 months\nMonthly cost: TBD EUR\n"}},
   "process-never-read-the-note": {"class": "process", "why": "Searched, read the offer note and guessed; never read the note that holds the decision.", "caught_by": ["inputs-read"],
      "files": {art: gold}, "trace": [{"tool": "search_text"}, {"tool": "read_file", "path": DECOY}, {"tool": "create_file", "path": art, "writes": "final"}, {"tool": "read_file", "path": art}, {"tool": "finish"}]},
   "wrong-place": {"class": "wrong-place", "why": "The right answer written at the root instead of out/.", "caught_by": ["exists", "no-stray-copy"],
      "files": {"answer.md": gold}},
  }, min_words=6)
check("search-hosting-renewal")

# ---------- search-payment-timeout (logs) ----------
import random
rnd = random.Random(7)
services = ["api", "auth", "search", "mailer", "scheduler", "export"]
info_msgs = ["api: GET /api/orders 200 {ms} ms", "api: GET /api/catalogue 200 {ms} ms", "api: POST /api/cart 201 {ms} ms", "auth: user login ok user=u{u}",
             "export: export job finished rows={r}", "search: cache refresh done keys={r}", "scheduler: scheduler tick jobs={j}", "mailer: mail queued to=customer{u}@example.com"]
warn_msgs = ["search: cache miss rate high: {p} %", "api: slow query {ms} ms table=orders", "mailer: retrying mail delivery attempt=2", "scheduler: disk usage {p} %"]
err_msgs = ["api: db connection reset by peer (pool=main)", "mailer: mail delivery failed: mailbox full to=customer{u}@example.com", "export: export job failed: out of memory rows={r}"]
logs = {}
for day in range(1, 22):
    date = f"2024-06-{day:02d}"
    lines = []
    t = 6 * 3600 + rnd.randint(0, 1800)
    n = rnd.randint(14, 20)
    for k in range(n):
        t += rnd.randint(300, 2400)
        hh, mm, ss = t // 3600, (t // 60) % 60, t % 60
        roll = rnd.random()
        fill = dict(ms=rnd.randint(12, 900), u=rnd.randint(100, 999), r=rnd.randint(100, 90000), j=rnd.randint(1, 9), p=rnd.randint(40, 95))
        if roll < 0.8: lvl, msg = "INFO", rnd.choice(info_msgs)
        elif roll < 0.93: lvl, msg = "WARN", rnd.choice(warn_msgs)
        else: lvl, msg = "ERROR", rnd.choice(err_msgs)
        lines.append(f"{date} {hh:02d}:{mm:02d}:{ss:02d} {lvl:<5} {msg.format(**fill)}")
    logs[f"logs/app-{date}.log"] = lines
logs["logs/app-2024-06-09.log"].insert(7, "2024-06-09 11:48:05 WARN  payments: payment-gateway slow response 8200 ms (order ORD-87950)")
logs["logs/app-2024-06-13.log"].insert(9, "2024-06-13 14:02:37 ERROR payments: payment-gateway timeout after 30000 ms (order ORD-88412, attempt 3)")
logs["logs/app-2024-06-18.log"].insert(5, "2024-06-18 09:15:44 INFO  payments: payment-gateway health check ok 95 ms")
# keep lines sorted by time inside each file
logs = {p: "\n".join(sorted(ls)) + "\n" for p, ls in logs.items()}
_l = logs["logs/app-2024-06-13.log"].splitlines()
PREV_T = _l[[i for i, x in enumerate(_l) if "timeout after" in x][0] - 1].split()[1]
ANS = "logs/app-2024-06-13.log"
art = "out/answer.json"
gold = '{\n  "file": "logs/app-2024-06-13.log",\n  "time": "14:02:37",\n  "order": "ORD-88412",\n  "timeout_ms": 30000\n}\n'
schema = {"type": "object", "required": ["file", "time", "order", "timeout_ms"], "additionalProperties": False,
  "properties": {"file": {"type": "string", "pattern": "^(\\./)?logs/app-[0-9]{4}-[0-9]{2}-[0-9]{2}\\.log$"},
                 "time": {"type": "string", "pattern": "^[0-9]{2}:[0-9]{2}:[0-9]{2}$"},
                 "order": {"type": "string", "pattern": "^ORD-[0-9]+$"},
                 "timeout_ms": {"type": "number"}}}
checks = base(art, [ANS], "answer.json") + [
  {"id": "schema", "kind": "json_schema", "path": art, "schema": schema},
  has("names-the-log", art, r'"file"\s*:\s*"(\./)?logs/app-2024-06-13\.log"'),
  has("time-of-the-error", art, r'"time"\s*:\s*"14:02:37"'),
  {"id": "order-from-the-log", "kind": "grounded", "path": art, "claim": {"pointer": "/order"}, "sources": [ANS]},
  has("order-is-the-timed-out-one", art, r'"order"\s*:\s*"ORD-88412"'),
  num("timeout-ms", art, "/timeout_ms", matches(ANS, r"payment-gateway timeout after (\d+) ms", "max"), pointer=True),
]
def j(**kw):
    d = {"file": "logs/app-2024-06-13.log", "time": "14:02:37", "order": "ORD-88412", "timeout_ms": 30000}
    d.update(kw)
    return json.dumps(d, indent=2) + "\n"
task("search-payment-timeout", "search", "heldout",
  "Find the payment-gateway timeout in 21 daily application logs and extract its details as JSON.",
  "logs/ holds 21 daily application logs. Exactly one of them records an ERROR where the payment gateway timed out. Find it and write out/answer.json as one JSON object with exactly these fields: \"file\" (the log's path, e.g. \"logs/app-2024-06-01.log\"), \"time\" (the HH:MM:SS time of that ERROR line), \"order\" (the order id on that line, e.g. \"ORD-12345\") and \"timeout_ms\" (the timeout in milliseconds, as a number). No other fields. Do not change the logs. Read out/answer.json back, then call finish.",
  logs, art, checks, {art: gold}, {
   "wrong-file-slow-response-log": {"class": "wrong-file", "why": "Names the log with the slow-response warning, other fields right.", "caught_by": ["names-the-log"], "files": {art: j(file="logs/app-2024-06-09.log")}},
   "wrong-order-the-warning": {"class": "wrong-value", "why": "The order id of the slow-response warning on another day.", "caught_by": ["order-from-the-log", "order-is-the-timed-out-one"], "files": {art: j(order="ORD-87950")}},
   "wrong-number-seconds": {"class": "wrong-number", "why": "The timeout given in seconds (30) instead of milliseconds.", "caught_by": ["timeout-ms"], "files": {art: j(timeout_ms=30)}},
   "wrong-type-timeout-string": {"class": "wrong-type", "why": "The timeout as the string \"30000 ms\".", "caught_by": ["schema", "timeout-ms"], "files": {art: j(timeout_ms="30000 ms")}},
   "extra-field": {"class": "extra-fields", "why": "An extra 'service' field the prompt did not ask for.", "caught_by": ["schema"], "files": {art: j(service="payments")}},
   "wrong-time-attempt": {"class": "wrong-value", "why": "The time of the line before the error in the same log.", "caught_by": ["time-of-the-error"], "files": {art: j(time=PREV_T)}},
  })
check("search-payment-timeout")

# ---------- search-legacy-flag (config) ----------
svc = ["accounts", "api-gateway", "audit-log", "billing", "catalogue", "checkout", "email-sender", "exports", "feature-store", "identity",
       "inventory", "invoice-renderer", "notifications", "orders", "payments", "pricing", "reporting", "search", "sessions", "shipping", "tax-rules", "webhooks"]
r2 = random.Random(11)
configs = {}
for i, s in enumerate(svc):
    port = 8000 + i * 7 + r2.randint(1, 6)
    reps = r2.choice([2, 2, 3, 3, 4, 6])
    mem = r2.choice([256, 512, 512, 1024])
    legacy = "true" if s == "invoice-renderer" else "false"
    flags = f"  legacy_pdf: {legacy}\n" if s in ("invoice-renderer", "exports", "reporting", "billing") else ""
    flags += r2.choice(["  new_checkout: true\n", "  dark_launch: false\n", "  strict_validation: true\n", ""])
    if s == "exports": flags = flags.replace("legacy_pdf: false", "legacy_pdf: false   # was true until 2024-03, see ADR-17")
    configs[f"deploy/{s}.yaml"] = (f"service: {s}\nteam: {r2.choice(['core', 'money', 'growth', 'platform'])}\nport: {port}\nreplicas: {reps}\n"
        f"resources:\n  memory_mb: {mem}\n  cpu: {r2.choice(['250m', '500m', '1'])}\nhealthcheck: /healthz\n" + (f"feature_flags:\n{flags}" if flags else ""))
ANS = "deploy/invoice-renderer.yaml"
art = "out/answer.md"
import re as _re
port = _re.search(r"port: (\d+)", configs[ANS]).group(1)
reps = _re.search(r"replicas: (\d+)", configs[ANS]).group(1)
gold = f"Service: invoice-renderer\nPort: {port}\nReplicas: {reps}\n"
checks = base(art, [ANS], "answer.md") + [
  has("names-the-service", art, r"(?im)^\s*service\s*:\s*`?invoice-renderer`?\s*$"),
  num("port", art, lab("port"), matches(ANS, r"(?m)^port:\s*(\d+)\s*$", "max")),
  num("replicas", art, lab("replicas"), matches(ANS, r"(?m)^replicas:\s*(\d+)\s*$", "max")),
]
task("search-legacy-flag", "search", "dev",
  "Find which of 22 service deployment configs still turns the legacy PDF feature flag on, and report its port and replicas.",
  "deploy/ holds one YAML deployment config per service. Exactly one service still has the feature flag legacy_pdf set to true. Find it and write out/answer.md with exactly three lines:\nService: <the service name, as in its 'service:' line>\nPort: <its port>\nReplicas: <its replicas>\nDo not change the configs. Read out/answer.md back, then call finish.",
  configs, art, checks, {art: gold}, {
   "wrong-service-comment": {"class": "wrong-file", "why": "Names exports, whose comment says the flag was true once; the numbers are the right service's.", "caught_by": ["names-the-service"],
      "files": {art: gold.replace("invoice-renderer", "exports")}},
   "wrong-number-port": {"class": "wrong-number", "why": "The port of the exports service.", "caught_by": ["port"],
      "files": {art: gold.replace(f"Port: {port}", "Port: " + _re.search(r"port: (\d+)", configs["deploy/exports.yaml"]).group(1))}},
   "missing-replicas": {"class": "missing-fact", "why": "The replicas line is left out.", "caught_by": ["replicas"],
      "files": {art: f"Service: invoice-renderer\nPort: {port}\n"}},
   "placeholder-replicas": {"class": "placeholder", "why": "Replicas written as ???.", "caught_by": ["no-placeholder", "replicas"],
      "files": {art: f"Service: invoice-renderer\nPort: {port}\nReplicas: ???\n"}},
  })
check("search-legacy-flag")

# ---------- search-late-fee-code ----------
mods = {
 "src/app.py": '"""Entry point: builds the web app and registers the routes."""\nfrom src.api import routes\nfrom src.core.settings import load_settings\n\n\ndef create_app():\n    settings = load_settings()\n    app = routes.build(settings)\n    return app\n',
 "src/api/routes.py": '"""HTTP routes for the customer portal."""\nfrom src.api import handlers\n\nROUTES = [\n    ("GET", "/invoices", handlers.list_invoices),\n    ("GET", "/invoices/<id>", handlers.show_invoice),\n    ("POST", "/payments", handlers.record_payment),\n]\n\n\ndef build(settings):\n    return {"settings": settings, "routes": ROUTES}\n',
 "src/api/handlers.py": '"""Request handlers; thin wrappers over the billing services."""\nfrom src.billing import invoices, payments\n\n\ndef list_invoices(request):\n    return invoices.for_customer(request.customer_id)\n\n\ndef show_invoice(request, id):\n    return invoices.get(id)\n\n\ndef record_payment(request):\n    return payments.record(request.json)\n',
 "src/api/auth.py": '"""Session tokens for the portal."""\nimport hmac\n\nTOKEN_TTL_MINUTES = 30\n\n\ndef sign(secret, payload):\n    return hmac.new(secret, payload, "sha256").hexdigest()\n\n\ndef verify(secret, payload, signature):\n    return hmac.compare_digest(sign(secret, payload), signature)\n',
 "src/billing/invoices.py": '"""Invoice lookup and numbering."""\nINVOICE_PREFIX = "INV"\n\n\ndef number(year, seq):\n    return f"{INVOICE_PREFIX}-{year}-{seq:04d}"\n\n\ndef for_customer(customer_id):\n    return []\n\n\ndef get(invoice_id):\n    return None\n',
 "src/billing/fees.py": '"""Charges added to an invoice after its due date."""\nfrom decimal import Decimal\n\n# Days after the due date before any fee is charged.\nGRACE_PERIOD_DAYS = 14\n# Monthly fee, in percent of the open amount.\nLATE_FEE_PERCENT = Decimal("1.5")\n\n\ndef late_fee(open_amount, days_overdue):\n    """Fee for an invoice that is `days_overdue` days past its due date."""\n    if days_overdue <= GRACE_PERIOD_DAYS:\n        return Decimal("0")\n    months = (days_overdue - GRACE_PERIOD_DAYS + 29) // 30\n    return (open_amount * LATE_FEE_PERCENT / 100 * months).quantize(Decimal("0.01"))\n',
 "src/billing/reminders.py": '"""Payment reminder e-mails."""\n# First reminder goes out this many days after the due date; the late fee\n# itself is computed elsewhere.\nREMINDER_DAYS = 7\nSECOND_REMINDER_DAYS = 21\n\n\ndef due_reminders(invoices, today):\n    out = []\n    for inv in invoices:\n        late = (today - inv.due).days\n        if late in (REMINDER_DAYS, SECOND_REMINDER_DAYS):\n            out.append(inv)\n    return out\n',
 "src/billing/payments.py": '"""Recording incoming payments against invoices."""\n\n\ndef record(data):\n    amount = data["amount"]\n    if amount <= 0:\n        raise ValueError("payment must be positive")\n    return {"invoice": data["invoice"], "amount": amount}\n',
 "src/billing/tax.py": '"""VAT rates by country."""\nVAT = {"DE": 19, "FR": 20, "NL": 21, "AT": 20}\nREDUCED_VAT = {"DE": 7, "FR": 5.5, "NL": 9, "AT": 10}\n\n\ndef vat(country, reduced=False):\n    table = REDUCED_VAT if reduced else VAT\n    return table[country]\n',
 "src/billing/discounts.py": '"""Volume and early-payment discounts."""\nEARLY_PAYMENT_DAYS = 10\nEARLY_PAYMENT_PERCENT = 2\n\n\ndef early_payment_discount(amount, days_early):\n    if days_early >= EARLY_PAYMENT_DAYS:\n        return amount * EARLY_PAYMENT_PERCENT / 100\n    return 0\n',
 "src/billing/currency.py": '"""Rounding and formatting of money."""\nfrom decimal import Decimal, ROUND_HALF_UP\n\n\ndef round_cents(x):\n    return Decimal(x).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)\n\n\ndef fmt(x, code="EUR"):\n    return f"{round_cents(x)} {code}"\n',
 "src/core/settings.py": '"""Settings loaded from the environment."""\nimport os\n\nDEFAULTS = {"PORT": "8080", "LOG_LEVEL": "info"}\n\n\ndef load_settings():\n    return {k: os.environ.get(k, v) for k, v in DEFAULTS.items()}\n',
 "src/core/db.py": '"""Database connection pool."""\nPOOL_SIZE = 10\nPOOL_TIMEOUT_SECONDS = 5\n\n\ndef connect(url):\n    return {"url": url, "pool": POOL_SIZE}\n',
 "src/core/cache.py": '"""A small in-process cache with expiry."""\nimport time\n\nDEFAULT_TTL_SECONDS = 300\n_store = {}\n\n\ndef get(key):\n    value, until = _store.get(key, (None, 0))\n    return value if until > time.time() else None\n\n\ndef put(key, value, ttl=DEFAULT_TTL_SECONDS):\n    _store[key] = (value, time.time() + ttl)\n',
 "src/core/logging_setup.py": '"""Log format shared by every process."""\nimport logging\n\nFORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"\n\n\ndef setup(level="info"):\n    logging.basicConfig(format=FORMAT, level=level.upper())\n',
 "src/reports/monthly.py": '"""Monthly revenue report."""\n\n\ndef revenue(invoices, month):\n    return sum(i.total for i in invoices if i.issued.strftime("%Y-%m") == month)\n',
 "src/reports/aging.py": '"""Accounts receivable aging buckets."""\nBUCKETS = [(0, 30), (31, 60), (61, 90), (91, None)]\n\n\ndef bucket(days_overdue):\n    for lo, hi in BUCKETS:\n        if hi is None or lo <= days_overdue <= hi:\n            return (lo, hi)\n',
 "src/reports/export_csv.py": '"""CSV export of any report."""\nimport csv\nimport io\n\n\ndef to_csv(rows, header):\n    buf = io.StringIO()\n    w = csv.writer(buf)\n    w.writerow(header)\n    w.writerows(rows)\n    return buf.getvalue()\n',
 "src/notify/email.py": '"""Outgoing e-mail."""\nSMTP_PORT = 587\nFROM = "billing@example.com"\n\n\ndef send(to, subject, body):\n    return {"to": to, "subject": subject, "from": FROM}\n',
 "src/notify/templates.py": '"""E-mail templates."""\nREMINDER = "Your invoice {number} was due on {due}. Please pay within {days} days to avoid fees."\nRECEIPT = "We received {amount} for invoice {number}. Thank you."\n',
 "tests/test_discounts.py": 'from src.billing.discounts import early_payment_discount\n\n\ndef test_no_discount_when_late():\n    assert early_payment_discount(100, 0) == 0\n',
 "tests/test_tax.py": 'from src.billing.tax import vat\n\n\ndef test_german_rate():\n    assert vat("DE") == 19\n',
}
ANS = "src/billing/fees.py"
art = "out/answer.md"
gold = "File: src/billing/fees.py\nFunction: late_fee\nGrace period: 14 days\nLate fee: 1.5 % per month\n"
checks = base(art, [ANS], "answer.md") + [
  has("names-the-file", art, pathline("file", ANS)),
  has("names-the-function", art, r"(?im)^\s*function\s*:\s*`?late_fee(\(\))?`?\s*$"),
  num("grace-days", art, lab("grace period"), matches(ANS, r"(?m)^GRACE_PERIOD_DAYS\s*=\s*(\d+)\s*$", "max"), ["days", "day"]),
  num("fee-percent", art, r"(?im)^\s*late fee\s*:\s*(.*?)\s*%\s*(?:per month|a month|monthly)?\.?\s*$", matches(ANS, r'(?m)^LATE_FEE_PERCENT\s*=\s*Decimal\("([\d.]+)"\)', "max")),
]
task("search-late-fee-code", "search", "dev",
  "Find the function that computes late fees in a 22-file Python code base and report its grace period and rate.",
  "This is the code of a small billing service. Find the function that computes the fee charged on an overdue invoice, and write out/answer.md with exactly four lines:\nFile: <path of the file that defines it>\nFunction: <the function's name>\nGrace period: <days after the due date before a fee is charged> days\nLate fee: <the monthly fee rate> % per month\nDo not change the code. Read out/answer.md back, then call finish.",
  mods, art, checks, {art: gold}, {
   "wrong-file-reminders": {"class": "wrong-file", "why": "Names reminders.py, which talks about late invoices but computes no fee.", "caught_by": ["names-the-file"],
      "files": {art: gold.replace("src/billing/fees.py", "src/billing/reminders.py")}},
   "wrong-number-reminder-days": {"class": "wrong-number", "why": "The grace period given as the 7 days of the first reminder.", "caught_by": ["grace-days"],
      "files": {art: gold.replace("14 days", "7 days")}},
   "wrong-number-rate": {"class": "wrong-number", "why": "The early-payment discount (2 %) given as the fee rate.", "caught_by": ["fee-percent"],
      "files": {art: gold.replace("1.5 %", "2 %")}},
   "wrong-function": {"class": "wrong-value", "why": "Names the reminder function.", "caught_by": ["names-the-function"],
      "files": {art: gold.replace("late_fee", "due_reminders")}},
  })
check("search-late-fee-code")
