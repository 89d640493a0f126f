import sys; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from lib import *
def pid(p): return p.replace("/", "-").replace(".", "-").replace("_", "-")

# ---------- related-config-key ----------
fx = {
 "config/settings.ini": "[mail]\nSMTP_HOST = mail.internal\nSMTP_HOST_BACKUP = mail2.internal\nSMTP_PORT = 587\n\n[db]\nDB_URL = postgres://app@db/app\n",
 "app/mailer.py": "from app.config import get\n\n\ndef connect():\n    host = get('mail', 'SMTP_HOST')\n    port = int(get('mail', 'SMTP_PORT'))\n    return host, port\n",
 "app/failover.py": "from app.config import get\n\n\ndef backup_host():\n    return get('mail', 'SMTP_HOST_BACKUP')\n",
 "app/healthcheck.py": "import socket\nfrom app.config import get\n\n\ndef mail_ok():\n    return socket.create_connection((get('mail', 'SMTP_HOST'), 587), timeout=2)\n",
 "app/config.py": "import configparser\n\n_cfg = configparser.ConfigParser()\n_cfg.optionxform = str\n_cfg.read('config/settings.ini')\n\n\ndef get(section, key):\n    return _cfg[section][key]\n",
 "app/db.py": "from app.config import get\n\n\ndef url():\n    return get('db', 'DB_URL')\n",
 "app/newsletter.py": "# Sends through the mailer; does not read mail settings itself.\nfrom app import mailer\n\n\ndef send_all(addresses):\n    host, port = mailer.connect()\n    return len(addresses)\n",
 "scripts/check_mail.sh": "#!/bin/sh\n# Reads SMTP_HOST from the ini file and pings it.\nhost=$(grep '^SMTP_HOST =' config/settings.ini | cut -d= -f2)\nping -c1 $host\n",
 "docs/mail.md": "# Mail\n\nOutgoing mail uses the host in SMTP_HOST; SMTP_HOST_BACKUP is used only on failover.\n",
}
rel = ["app/healthcheck.py", "app/mailer.py", "scripts/check_mail.sh"]
dec = ["app/failover.py", "app/newsletter.py", "app/db.py", "app/config.py"]
art = "out/smtp-host-users.md"
gold = "# Code that reads SMTP_HOST\n\n## Readers\n\n- app/healthcheck.py: pings the host for the health check.\n- app/mailer.py: connects to the host to send mail.\n- scripts/check_mail.sh: greps the setting out of the ini file.\n\nReaders: 3\n"
checks = base(art, rel, "smtp-host-users.md") + [
  has("lists-" + pid(p), art, r"(?m)^\s*`?" + re.escape(p) + r"`?\s*([:\-—(]|$)", section="Readers") for p in rel] + [
  lacks("not-" + pid(p), art, re.escape(p), section="Readers") for p in dec] + [
  num("count", art, lab("readers"), matches(rel, r"\A", "count"), section="Readers"),
]
task("related-config-key", "related", "dev",
  "Find the code that reads one configuration key, not the look-alike key or code that only calls a reader.",
  "config/settings.ini defines SMTP_HOST. Find every code file (under app/ and scripts/) that reads the SMTP_HOST setting itself. A file that reads only SMTP_HOST_BACKUP, or that only calls another module that reads it, does not count; documentation does not count. Write out/smtp-host-users.md with the heading '# Code that reads SMTP_HOST', then a section '## Readers' with one list item per file, '- <path>: <how it uses the setting>', ending with the line 'Readers: N'. Do not change any file. Read out/smtp-host-users.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "backup-key-included": {"class": "wrong-file", "why": "Adds failover.py, which reads SMTP_HOST_BACKUP.", "caught_by": ["not-app-failover-py", "count"], "files": {art: gold.replace("- app/mailer.py", "- app/failover.py: reads the backup host.\n- app/mailer.py").replace("Readers: 3", "Readers: 4")}},
   "indirect-caller-included": {"class": "wrong-file", "why": "Adds newsletter.py, which only calls the mailer (count kept at 3, script dropped).", "caught_by": ["not-app-newsletter-py", "lists-scripts-check-mail-sh"], "files": {art: gold.replace("- scripts/check_mail.sh: greps the setting out of the ini file.", "- app/newsletter.py: sends mail.")}},
   "script-missed": {"class": "missing-fact", "why": "Only Python files considered: the shell script is missing.", "caught_by": ["lists-scripts-check-mail-sh", "count"], "files": {art: gold.replace("- scripts/check_mail.sh: greps the setting out of the ini file.\n", "").replace("Readers: 3", "Readers: 2")}},
  })
check("related-config-key")

# ---------- related-contract-amendments ----------
fx = {
 "contracts/K-2019-004.txt": "FRAMEWORK AGREEMENT K-2019-004\nParties: Hollis Logistics and Marlow Foods\nSigned: 2019-02-11\nSubject: warehousing and delivery in the Midlands\n",
 "contracts/K-2019-007.txt": "FRAMEWORK AGREEMENT K-2019-007\nParties: Hollis Logistics and Penrose Textiles\nSigned: 2019-05-30\nSubject: cross-border freight\n",
 "contracts/K-2021-012.txt": "SERVICE AGREEMENT K-2021-012\nParties: Hollis Logistics and Marlow Foods\nSigned: 2021-09-01\nSubject: cold-chain transport (separate from K-2019-004)\n",
 "amendments/A-01.txt": "AMENDMENT 1\nAmends: K-2019-004\nEffective: 2020-01-01\nChange: monthly fee raised to 14,000 GBP\n",
 "amendments/A-02.txt": "AMENDMENT 1\nAmends: K-2019-007\nEffective: 2020-03-01\nChange: adds routes to Rotterdam\n",
 "amendments/A-03.txt": "AMENDMENT 2\nAmends: K-2019-004\nEffective: 2021-06-01\nChange: adds a second warehouse in Derby\n",
 "amendments/A-04.txt": "AMENDMENT 1\nAmends: K-2021-012\nEffective: 2022-04-01\nChange: temperature logging every 5 minutes\n",
 "amendments/A-05.txt": "AMENDMENT 3\nAmends: K-2019-004\nEffective: 2023-01-01\nChange: monthly fee raised to 15,500 GBP; term extended to 2026-12-31\n",
 "amendments/A-06.txt": "AMENDMENT 2\nAmends: K-2019-007\nEffective: 2023-07-01\nChange: Rotterdam routes withdrawn\n",
 "letters/2022-11-marlow.txt": "Letter from Marlow Foods, November 2022\nRe: K-2019-004\nWe would like to discuss a fee increase and a longer term. (Led to amendment 3.)\n",
 "letters/2023-02-penrose.txt": "Letter from Penrose Textiles, February 2023\nRe: K-2019-007\nPlease stop the Rotterdam routes from July.\n",
}
rel = ["amendments/A-01.txt", "amendments/A-03.txt", "amendments/A-05.txt"]
dec = ["amendments/A-02.txt", "amendments/A-04.txt", "amendments/A-06.txt"]
art = "out/k-2019-004.md"
gold = "# K-2019-004 and its amendments\n\n## Amendments\n\n- amendments/A-01.txt: amendment 1, fee raised to 14,000 GBP (2020-01-01).\n- amendments/A-03.txt: amendment 2, second warehouse in Derby (2021-06-01).\n- amendments/A-05.txt: amendment 3, fee raised to 15,500 GBP and term to 2026-12-31 (2023-01-01).\n\nAmendments: 3\n\n## Current terms\n\nMonthly fee: 15,500 GBP\n"
checks = base(art, ["contracts/K-2019-004.txt"] + rel, "k-2019-004.md") + [
  has("lists-" + pid(p), art, r"(?m)^\s*`?" + re.escape(p) + r"`?\s*([:\-—(]|$)", section="Amendments") for p in rel] + [
  lacks("not-" + pid(p), art, re.escape(p), section="Amendments") for p in dec] + [
  num("count", art, lab("amendments"), matches(rel, r"(?m)^Amends: K-2019-004$", "count"), section="Amendments"),
  num("current-fee", art, lab("monthly fee"), matches(["amendments/A-05.txt"], r"monthly fee raised to ([\d,]+) GBP", "max"), ["GBP", "£"], section="Current terms"),
]
task("related-contract-amendments", "related", "dev",
  "Find all amendments of one framework contract (not those of a second contract with the same customer) and state the fee now in force.",
  "contracts/ holds framework and service agreements, amendments/ their amendments (each names the contract it amends), letters/ some correspondence. Find every amendment of contract K-2019-004. Write out/k-2019-004.md with the heading '# K-2019-004 and its amendments', a section '## Amendments' listing each as '- <path>: <what it changed>' and ending with 'Amendments: N', and a section '## Current terms' with the line 'Monthly fee: N GBP' (the fee in force after the latest amendment). Do not change any file. Read out/k-2019-004.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "same-customer-other-contract": {"class": "wrong-file", "why": "Adds A-04, which amends Marlow's other contract K-2021-012.", "caught_by": ["not-amendments-A-04-txt", "count"], "files": {art: gold.replace("- amendments/A-05.txt", "- amendments/A-04.txt: temperature logging.\n- amendments/A-05.txt").replace("Amendments: 3", "Amendments: 4")}},
   "first-fee": {"class": "wrong-number", "why": "States the fee of amendment 1, not the latest.", "caught_by": ["current-fee"], "files": {art: gold.replace("Monthly fee: 15,500 GBP", "Monthly fee: 14,000 GBP")}},
   "latest-missed": {"class": "missing-fact", "why": "Misses amendment 3 (A-05).", "caught_by": ["lists-amendments-A-05-txt", "count"], "files": {art: gold.replace("- amendments/A-05.txt: amendment 3, fee raised to 15,500 GBP and term to 2026-12-31 (2023-01-01).\n", "").replace("Amendments: 3", "Amendments: 2")}},
  })
check("related-contract-amendments")
