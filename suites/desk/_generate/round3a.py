import sys; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from lib import *
import random

# ---------- search-host-inventory ----------
r = random.Random(55)
roles = [("web", "nginx 1.24"), ("app", "python 3.11"), ("cache", "redis 7.2"), ("queue", "rabbitmq 3.12"), ("db", "postgres 15"), ("mon", "prometheus 2.48")]
fx = {}
for k in range(24):
    role, sw = roles[k % len(roles)]
    name = f"{role}-{k // len(roles) + 1:02d}"
    ram = r.choice([4, 8, 16, 32, 64])
    if name == "db-03": sw, ram = "postgres 12", 64
    if name == "db-02": sw = "postgres 15 (upgraded from postgres 12 in March)"
    fx[f"hosts/{name}.txt"] = f"Host: {name}\nIP: 10.20.{k // 8}.{10 + k}\nOS: {r.choice(['Debian 12', 'Debian 11', 'Ubuntu 22.04'])}\nRAM: {ram} GB\nSoftware: {sw}\nOwner: {r.choice(['platform', 'data', 'web'])}\n"
ANS = "hosts/db-03.txt"
ip = re.search(r"IP: (\S+)", fx[ANS]).group(1)
art = "out/answer.md"
gold = f"Host: db-03\nIP: {ip}\nRAM: 64 GB\n"
checks = base(art, [ANS], "answer.md") + [
  has("names-the-host", art, r"(?im)^\s*host\s*:\s*`?db-03`?\s*$"),
  has("ip", art, r"(?im)^\s*ip\s*:\s*" + re.escape(ip) + r"\s*$"),
  num("ram", art, lab("ram"), matches(ANS, r"(?m)^RAM:\s*(\d+) GB$", "max"), ["GB"]),
]
task("search-host-inventory", "search", "heldout",
  "Find the one server among 24 host records still running PostgreSQL 12 (one record mentions it only as upgraded from).",
  "hosts/ holds one record per server. Exactly one server still runs postgres 12. Find it and write out/answer.md with exactly three lines:\nHost: <its host name>\nIP: <its IP address>\nRAM: <its RAM> GB\nDo not change the records. Read out/answer.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "upgraded-host": {"class": "wrong-file", "why": "Names db-02, which was upgraded from postgres 12.", "caught_by": ["names-the-host"], "files": {art: gold.replace("db-03", "db-02")}},
   "wrong-ip": {"class": "wrong-value", "why": "The IP of db-02.", "caught_by": ["ip"], "files": {art: gold.replace(ip, re.search(r"IP: (\S+)", fx["hosts/db-02.txt"]).group(1))}},
   "ram-in-mb": {"class": "wrong-number", "why": "RAM converted to MB but labelled GB.", "caught_by": ["ram"], "files": {art: gold.replace("RAM: 64 GB", "RAM: 65,536 GB")}},
  })
check("search-host-inventory")

# ---------- search-policy-clause ----------
pol = {
 "annual-leave": "Employees receive 28 days of annual leave per calendar year. Up to 5 days may be carried over to the next year.",
 "sick-leave": "Report sickness to your manager before 10:00 on the first day. A doctor's note is needed from the fourth day.",
 "remote-work": "Employees may work remotely up to three days a week. Company equipment used at home stays company property.",
 "equipment": "Laptops are replaced every four years. On leaving the company, all equipment must be returned within 10 working days of the last working day.",
 "expenses": "Expenses must be submitted within 30 days with receipts. Meals are reimbursed up to 25 EUR per day when travelling.",
 "travel": "Book train travel for journeys under five hours. Flights need approval from a director.",
 "training": "Each employee has a training budget of 1,500 EUR per year. Unused budget does not carry over.",
 "parental-leave": "Parents receive 16 weeks of paid leave; it may be split into up to three blocks.",
 "probation": "The probation period is six months. The notice period during probation is two weeks.",
 "notice-periods": "After probation the notice period is one month for the first two years and three months afterwards.",
 "overtime": "Overtime must be agreed in advance and is compensated with time off within three months.",
 "security": "Lock your screen when you leave your desk. Report lost devices to IT within 24 hours.",
 "data-protection": "Customer data may only be stored in approved systems. Delete local copies within 7 days of finishing a task.",
 "code-of-conduct": "Treat colleagues and customers with respect. Report concerns to HR or the confidential line.",
 "gifts": "Gifts from suppliers worth more than 50 EUR must be declared to compliance.",
 "company-car": "Company cars are available from team lead level. Private use is taxed as a benefit in kind.",
 "mobile-phones": "A company phone is provided on request. Return it to IT when you receive a replacement.",
 "wellbeing": "Each employee may claim 300 EUR per year for sports or wellbeing activities.",
 "office-access": "Badges open the office from 06:00 to 22:00. Visitors must be signed in at reception.",
 "offboarding": "HR sends the offboarding checklist two weeks before the last working day. Equipment rules are in the equipment policy.",
 "side-jobs": "Side jobs must be reported to HR and may not compete with the company.",
}
fx = {f"policies/{k}.md": f"# {k.replace('-', ' ').capitalize()} policy\n\nVersion 3, valid from 1 January 2024.\n\n{v}\n" for k, v in pol.items()}
ANS = "policies/equipment.md"
art = "out/answer.md"
gold = "Policy: policies/equipment.md\nDeadline: 10 working days\n"
checks = base(art, [ANS], "answer.md") + [
  has("names-the-policy", art, pathline("policy", ANS)),
  num("deadline", art, lab("deadline"), matches(ANS, r"returned within (\d+) working days", "max"), ["working days", "days"]),
]
task("search-policy-clause", "search", "dev",
  "Find, among 21 HR policies, the clause that sets the deadline for returning equipment when leaving, and state it.",
  "policies/ holds the company's HR policies. Find the policy that says how long a leaving employee has to return company equipment, and write out/answer.md with exactly two lines:\nPolicy: <path of that policy file>\nDeadline: <N> working days\nDo not change the policies. Read out/answer.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "offboarding-pointer": {"class": "wrong-file", "why": "Names the offboarding policy, which only points to the equipment policy.", "caught_by": ["names-the-policy", "inputs-read"], "files": {art: gold.replace("policies/equipment.md", "policies/offboarding.md")}, "trace": trace_reads(["policies/offboarding.md"], art)},
   "data-deletion-days": {"class": "wrong-number", "why": "The 7 days of the data protection policy.", "caught_by": ["deadline"], "files": {art: gold.replace("Deadline: 10", "Deadline: 7")}},
   "deadline-in-weeks": {"class": "wrong-number", "why": "Converted to 2 weeks, which is not the stated number.", "caught_by": ["deadline"], "files": {art: gold.replace("Deadline: 10 working days", "Deadline: 2 weeks")}},
  })
check("search-policy-clause")
