import sys; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from lib import *

def rx_escape(s):
    return "".join("\\" + c if c in "\\.+*?()|[]{}^$#&-~" else c for c in s)
def whole(cid, path, content):
    return {"id": cid, "kind": "content_matches", "path": path, "pattern": r"\A\s*" + rx_escape(content.strip()) + r"\s*\z", "regex": True, "case_insensitive": False}

def edit_task(tid, split, desc, prompt, src, src_text, art, gold, extra_checks, near, extra_fx=None):
    fx = {src: src_text}
    fx.update(extra_fx or {})
    checks = base(art, [src], art.split("/")[-1]) + [whole("whole-file", art, gold)] + extra_checks
    near = dict(near)
    near["edited-in-place"] = {"class": "wrong-place", "why": f"Edited {src} itself instead of writing {art}.", "caught_by": ["exists", "inputs-unchanged", "whole-file"],
        "files": {src: gold}, "trace": [{"tool": "read_file", "path": src}, {"tool": "replace_file", "path": src, "writes": "final"}, {"tool": "read_file", "path": src}, {"tool": "finish"}]}
    task(tid, "edit", split, desc, prompt, fx, art, checks, {art: gold}, near)
    check(tid)

# ---------- edit-config-values ----------
src_text = """# Shop backend configuration
# Owner: platform team. Change requests go through #platform.

[server]
host = "0.0.0.0"
port = 8080
workers = 4

[database]
url = "postgres://shop@db.internal:5432/shop"
pool_size = 10

[logging]
level = "debug"
format = "json"

[cache]
ttl_seconds = 300
"""
gold = src_text.replace("port = 8080", "port = 9090").replace('level = "debug"', 'level = "warn"')
edit_task("edit-config-values", "dev", "Write a corrected copy of a TOML config with two values changed and everything else byte-for-byte the same.",
  "Write out/app.toml: a copy of config/app.toml with exactly two changes: in the [server] table set port to 9090, and in the [logging] table set level to \"warn\". Every other line, comment and blank line stays exactly as it is. Do not change config/app.toml itself. Read out/app.toml back, then call finish.",
  "config/app.toml", src_text, "out/app.toml", gold,
  [lacks("old-port-gone", "out/app.toml", r"(?m)^port = 8080$"), lacks("old-level-gone", "out/app.toml", r'(?m)^level = "debug"$')], {
   "only-port-changed": {"class": "missing-change", "why": "The log level is left at debug.", "caught_by": ["whole-file", "old-level-gone"], "files": {"out/app.toml": src_text.replace("port = 8080", "port = 9090")}},
   "comments-dropped": {"class": "extra-change", "why": "Both changes made, but the header comments are gone.", "caught_by": ["whole-file"], "files": {"out/app.toml": gold.split("\n", 3)[3]}},
   "wrong-table": {"class": "wrong-place", "why": "Sets the database pool size to 9090 instead of the server port.", "caught_by": ["whole-file", "old-port-gone"], "files": {"out/app.toml": src_text.replace("pool_size = 10", "pool_size = 9090").replace('level = "debug"', 'level = "warn"')}},
   "value-quoted": {"class": "wrong-type", "why": "The port written as the string \"9090\".", "caught_by": ["whole-file"], "files": {"out/app.toml": gold.replace("port = 9090", 'port = "9090"')}},
  })

# ---------- edit-csv-emails ----------
rows = [("M-001", "Ada Brandt", "Ada.Brandt@Example.org ", "2021-03-04"), ("M-002", "Luis Ortega", "luis.ortega@example.org", "2021-05-19"),
        ("M-003", "Mia Sato", " MIA.SATO@EXAMPLE.ORG", "2022-01-10"), ("M-004", "Noah Fischer", "noah.fischer@example.org", "2022-07-01"),
        ("M-005", "Olga Petrova", "Olga.Petrova@example.org", "2023-02-14"), ("M-006", "Paul Martin", "paul.martin@Example.org", "2023-09-30"),
        ("M-007", "Quinn Baker", "quinn.baker@example.org", "2024-01-08")]
src_text = "member_id,name,email,joined\n" + "".join(f"{a},{b},{c},{d}\n" for a, b, c, d in rows)
gold = "member_id,name,email,joined\n" + "".join(f"{a},{b},{c.strip().lower()},{d}\n" for a, b, c, d in rows)
edit_task("edit-csv-emails", "dev", "Write a cleaned copy of a members CSV: e-mail addresses trimmed and lower-cased, nothing else touched.",
  "data/members.csv has e-mail addresses with stray spaces and capital letters. Write out/members.csv: the same file with every value in the email column trimmed of surrounding spaces and written in lower case. Keep the header, the row order and every other column exactly as they are. Do not change data/members.csv. Read out/members.csv back, then call finish.",
  "data/members.csv", src_text, "out/members.csv", gold,
  [], {
   "names-lowercased-too": {"class": "extra-change", "why": "Lower-cases the whole line, names included.", "caught_by": ["whole-file"], "files": {"out/members.csv": gold.replace("Ada Brandt", "ada brandt").replace("Mia Sato", "mia sato")}},
   "spaces-kept": {"class": "missing-change", "why": "Lower-cases but leaves the stray spaces.", "caught_by": ["whole-file"], "files": {"out/members.csv": "member_id,name,email,joined\n" + "".join(f"{a},{b},{c.lower()},{d}\n" for a, b, c, d in rows)}},
   "row-dropped": {"class": "missing-fact", "why": "The last member is missing.", "caught_by": ["whole-file"], "files": {"out/members.csv": gold.rsplit("M-007", 1)[0]}},
   "newest-first": {"class": "extra-change", "why": "Rows re-ordered, newest member first.", "caught_by": ["whole-file"], "files": {"out/members.csv": "member_id,name,email,joined\n" + "".join(reversed(gold.splitlines(True)[1:]))}},
  })

# ---------- edit-rename-constant ----------
src_text = '''"""Upload limits for the document service."""

MAX_UPLOAD_MB = 20
ALLOWED_TYPES = ("pdf", "png", "jpg", "docx")


def too_large(size_bytes):
    """True when a file is over the upload limit."""
    return size_bytes > MAX_UPLOAD_MB * 1024 * 1024


def limit_message():
    return f"Files may be at most {MAX_UPLOAD_MB} MB."
'''
gold = src_text.replace("MAX_UPLOAD_MB = 20", "MAX_UPLOAD_MB = 50").replace("MAX_UPLOAD_MB", "MAX_UPLOAD_MEGABYTES")
edit_task("edit-rename-constant", "heldout", "Write an edited copy of a Python module: one constant renamed everywhere and its value changed.",
  "Write out/limits.py: a copy of src/limits.py in which the constant MAX_UPLOAD_MB is renamed to MAX_UPLOAD_MEGABYTES everywhere it appears in that file, and its value is raised from 20 to 50. Nothing else changes. Do not change src/limits.py. Read out/limits.py back, then call finish.",
  "src/limits.py", src_text, "out/limits.py", gold,
  [lacks("old-name-gone", "out/limits.py", r"\bMAX_UPLOAD_MB\b", ci=False)], {
   "usage-not-renamed": {"class": "missing-change", "why": "Renames the definition but not the f-string usage.", "caught_by": ["whole-file", "old-name-gone"], "files": {"out/limits.py": gold.replace("at most {MAX_UPLOAD_MEGABYTES} MB", "at most {MAX_UPLOAD_MB} MB")}},
   "value-unchanged": {"class": "missing-change", "why": "Renamed everywhere but the value is still 20.", "caught_by": ["whole-file"], "files": {"out/limits.py": gold.replace("= 50", "= 20")}},
   "docstring-dropped": {"class": "extra-change", "why": "The module docstring was removed.", "caught_by": ["whole-file"], "files": {"out/limits.py": gold.split("\n", 2)[2]}},
  })
