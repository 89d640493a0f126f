import sys; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from lib import *
def pid(p): return p.replace("/", "-").replace(".", "-").replace("_", "-")

# ---------- related-fixture-users ----------
fx = {
 "tests/data/orders_small.json": "[{\"id\": 1, \"total\": 10.0}, {\"id\": 2, \"total\": 25.5}]\n",
 "tests/data/orders_large.json": "[{\"id\": 1, \"total\": 10.0}]\n",
 "tests/data/customers.json": "[{\"id\": 7, \"name\": \"Ada\"}]\n",
 "tests/conftest.py": "import json\nfrom pathlib import Path\n\nDATA = Path(__file__).parent / 'data'\n\n\ndef load(name):\n    return json.loads((DATA / name).read_text())\n",
 "tests/test_totals.py": "from tests.conftest import load\n\n\ndef test_sum():\n    orders = load('orders_small.json')\n    assert sum(o['total'] for o in orders) == 35.5\n",
 "tests/test_report.py": "from tests.conftest import load\n\n\ndef test_report_rows():\n    assert len(load('orders_small.json')) == 2\n",
 "tests/test_paging.py": "from tests.conftest import load\n\n\ndef test_pages():\n    assert load('orders_large.json')\n",
 "tests/test_customers.py": "from tests.conftest import load\n\n\ndef test_names():\n    assert load('customers.json')[0]['name'] == 'Ada'\n",
 "tests/test_export.py": "import json\nfrom pathlib import Path\n\n\ndef test_export_reads_small_orders():\n    rows = json.loads((Path(__file__).parent / 'data' / 'orders_small.json').read_text())\n    assert rows\n",
 "tests/test_smoke.py": "def test_import():\n    import shop  # noqa: F401\n",
 "docs/testing.md": "# Testing\n\nFixtures live in tests/data/. orders_small.json has two orders.\n",
}
rel = ["tests/test_export.py", "tests/test_report.py", "tests/test_totals.py"]
dec = ["tests/test_paging.py", "tests/test_customers.py", "tests/test_smoke.py", "docs/testing.md", "tests/conftest.py"]
art = "out/fixture-users.md"
gold = "# Tests that use tests/data/orders_small.json\n\n## Users\n\n- tests/test_export.py: opens the file directly.\n- tests/test_report.py: loads it through conftest.load.\n- tests/test_totals.py: loads it through conftest.load.\n\nTests: 3\n"
checks = base(art, rel, "fixture-users.md") + [
  has("lists-" + pid(p), art, r"(?m)^\s*`?" + re.escape(p) + r"`?\s*([:\-—(]|$)", section="Users") for p in rel] + [
  lacks("not-" + pid(p), art, re.escape(p), section="Users") for p in dec] + [
  num("count", art, lab("tests"), matches(rel, r"orders_small\.json", "count"), section="Users"),
]
task("related-fixture-users", "related", "dev",
  "Find the test files that use one fixture file, directly or through a loader, but not the ones using a similarly named fixture.",
  "Find every test file under tests/ that uses the fixture tests/data/orders_small.json, whether it opens the file directly or loads it by name through conftest.load. Tests that use other fixtures (orders_large.json is a different file) do not count, nor does conftest.py itself or the docs. Write out/fixture-users.md with the heading '# Tests that use tests/data/orders_small.json', a section '## Users' with one item per test file, '- <path>: <how it uses the fixture>', ending with the line 'Tests: N'. Do not change any file. Read out/fixture-users.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "large-fixture-included": {"class": "wrong-file", "why": "Adds test_paging.py, which loads orders_large.json.", "caught_by": ["not-tests-test-paging-py", "count"], "files": {art: gold.replace("- tests/test_report.py", "- tests/test_paging.py: loads orders data.\n- tests/test_report.py").replace("Tests: 3", "Tests: 4")}},
   "direct-open-missed": {"class": "missing-fact", "why": "Misses test_export.py, which builds the path by hand instead of calling load.", "caught_by": ["lists-tests-test-export-py", "count"], "files": {art: gold.replace("- tests/test_export.py: opens the file directly.\n", "").replace("Tests: 3", "Tests: 2")}},
   "conftest-included": {"class": "wrong-file", "why": "Lists conftest.py (the loader, not a user); count left at 3.", "caught_by": ["not-tests-conftest-py"], "files": {art: gold.replace("\nTests: 3", "- tests/conftest.py: defines load.\n\nTests: 3")}},
  })
check("related-fixture-users")

# ---------- related-decision-followups ----------
topics = ["Office plants", "Quarterly OKRs", "Vendor review", "Design system", "On-call rota", "Accessibility audit", "Pricing page", "Data retention"]
fx = {}
base_notes = {
 "notes/2024-02-01-architecture.md": "# Architecture meeting\n\nD-14: we move background jobs from cron to the queue service by the end of Q2. Owner: Ines.\nD-15: API versioning stays in the URL path.\n",
 "notes/2024-02-15-platform.md": "# Platform sync\n\nProgress on D-14: the queue service is deployed in staging. Two cron jobs migrated.\n",
 "notes/2024-03-07-platform.md": "# Platform sync\n\nD-15 follow-up: documented URL versioning in the API guide.\n",
 "notes/2024-03-21-platform.md": "# Platform sync\n\nD-14 is at risk: the invoice job needs exactly-once delivery. Ines proposes idempotency keys.\n",
 "notes/2024-04-04-retro.md": "# Retro\n\nCron jobs failed silently twice this month (see D-14 for the plan to replace them).\n",
 "notes/2024-04-18-platform.md": "# Platform sync\n\nD-41: new decision, log retention is 30 days. Unrelated to the queue work.\n",
 "notes/2024-05-02-platform.md": "# Platform sync\n\nQueue migration done for all jobs except invoices. We close the cron-to-queue decision once invoices move.\n",
}
fx.update(base_notes)
for k, t in enumerate(topics):
    fx[f"notes/2024-0{k % 5 + 1}-{10 + k:02d}-{t.lower().replace(' ', '-')}.md"] = f"# {t}\n\nDiscussion only; no decisions recorded. Next check-in in two weeks.\n"
rel = ["notes/2024-02-15-platform.md", "notes/2024-03-21-platform.md", "notes/2024-04-04-retro.md", "notes/2024-05-02-platform.md"]
dec = ["notes/2024-03-07-platform.md", "notes/2024-04-18-platform.md"]
art = "out/d-14.md"
gold = "# Follow-ups of D-14\n\n## Notes\n\n- notes/2024-02-15-platform.md: queue deployed in staging, two cron jobs migrated.\n- notes/2024-03-21-platform.md: at risk, the invoice job needs exactly-once delivery.\n- notes/2024-04-04-retro.md: cron failures that D-14 will replace.\n- notes/2024-05-02-platform.md: all jobs moved except invoices.\n\nFollow-ups: 4\n\n## Status\n\nNot closed yet: only the invoice job still runs on cron.\n"
checks = base(art, ["notes/2024-02-01-architecture.md"] + rel, "d-14.md") + [
  has("lists-" + pid(p), art, r"(?m)^\s*`?" + re.escape(p) + r"`?\s*([:\-—(]|$)", section="Notes") for p in rel] + [
  lacks("not-" + pid(p), art, re.escape(p), section="Notes") for p in dec] + [
  lacks("not-the-decision-itself", art, r"2024-02-01-architecture", section="Notes"),
  num("count", art, lab("follow-ups"), matches(rel, r"\A", "count"), section="Notes"),
  stmt("status-invoices", art, [r"\binvoic\w*"], section="Status", unnegated=False),
]
task("related-decision-followups", "related", "dev",
  "Trace one decision through later meeting notes (by its id or by its subject), leaving out notes about look-alike decision ids.",
  "notes/2024-02-01-architecture.md records decision D-14 (moving background jobs from cron to the queue service). Find every later note in notes/ that follows up on D-14, whether it names D-14 or only talks about that migration. Notes about other decisions (D-15, D-41) do not count. Write out/d-14.md with the heading '# Follow-ups of D-14', a section '## Notes' with one item per note, '- <path>: <what it says about D-14>', ending with 'Follow-ups: N', and a section '## Status' saying in a sentence where D-14 stands according to the latest note. Do not change the notes. Read out/d-14.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "lookalike-d41": {"class": "wrong-file", "why": "Adds the D-41 note (look-alike id).", "caught_by": ["not-notes-2024-04-18-platform-md", "count"], "files": {art: gold.replace("- notes/2024-05-02", "- notes/2024-04-18-platform.md: D-41.\n- notes/2024-05-02").replace("Follow-ups: 4", "Follow-ups: 5")}},
   "subject-only-missed": {"class": "missing-fact", "why": "Misses the latest note, which talks about the queue migration without naming D-14.", "caught_by": ["lists-notes-2024-05-02-platform-md", "count"], "files": {art: gold.replace("- notes/2024-05-02-platform.md: all jobs moved except invoices.\n", "").replace("Follow-ups: 4", "Follow-ups: 3")}},
   "status-without-invoices": {"class": "missing-fact", "why": "Status says only 'in progress'.", "caught_by": ["status-invoices"], "files": {art: gold.replace("Not closed yet: only the invoice job still runs on cron.", "Still in progress.")}},
  })
check("related-decision-followups")
