import sys; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from lib import *

# ---------- explore-file-types ----------
fx = {
 "README.md": "# weatherboard\n\nA tiny dashboard for the office weather station.\n",
 "CHANGELOG.md": "# Changelog\n\n## 0.3.0\n- Humidity chart.\n",
 "docs/install.md": "# Install\n\nnpm install, then python -m weatherboard.collector\n",
 "collector/__init__.py": "",
 "collector/read_sensor.py": "def read():\n    return {'temp_c': 21.5, 'humidity': 40}\n",
 "collector/store.py": "import json\n\n\ndef save(reading, path):\n    with open(path, 'a') as f:\n        f.write(json.dumps(reading) + '\\n')\n",
 "collector/tests/test_store.py": "from collector.store import save\n\n\ndef test_save(tmp_path):\n    save({'t': 1}, tmp_path / 'x')\n",
 "web/index.js": "import { chart } from './chart.js';\nchart(document.getElementById('temp'));\n",
 "web/chart.js": "export function chart(el) {\n  el.textContent = 'loading';\n}\n",
 "web/api.js": "export async function latest() {\n  return (await fetch('/api/latest')).json();\n}\n",
 "web/style.css": "body { font-family: sans-serif; }\n",
 "web/package.json": "{\n  \"name\": \"weatherboard-web\",\n  \"version\": \"0.3.0\"\n}\n",
 "deploy/compose.yml": "services:\n  web:\n    image: weatherboard-web:0.3.0\n",
 "deploy/collector.yml": "interval_seconds: 60\nsensor: /dev/ttyUSB0\n",
}
ext = {"py": [p for p in fx if p.endswith(".py")], "js": [p for p in fx if p.endswith(".js")], "md": [p for p in fx if p.endswith(".md")], "yml": [p for p in fx if p.endswith(".yml")]}
art = "out/file-types.md"
gold = "# File types\n\n" + "".join(f"- .{e}: {len(v)} files\n" for e, v in ext.items()) + "- other: 2 files (web/style.css, web/package.json)\n\nTotal files: 14\nMost common: .py\n"
# counting by extension needs a listing, not reading: no inputs_read
checks = base(art, "none", "file-types.md") + [
  num(f"count-{e}", art, r"(?im)^\s*`?\." + e + r"`?\s*:\s*(.*?)\s*$", matches(v, r"\A", "count"), ["files", "file"]) for e, v in ext.items()
] + [
  num("total-files", art, lab("total files"), matches(sorted(fx), r"\A", "count"), ["files"]),
  has("most-common", art, r"(?im)^\s*most common\s*:\s*`?\.?py`?\s*$"),
]
task("explore-file-types", "explore", "dev",
  "Count the files of a small mixed Python/JavaScript project by extension, empty files included.",
  "Walk this whole project folder (every sub-folder) and count its files by extension. Write out/file-types.md with the heading '# File types' and one list item per extension written as '- .<ext>: <N> files' for .py, .js, .md and .yml, plus an item for the other files, then the lines\nTotal files: <number of files in the project>\nMost common: <the extension with the most files>\nEmpty files count too. Do not count out/file-types.md. Do not change any file. Read out/file-types.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "empty-init-skipped": {"class": "wrong-number", "why": "Skips the empty collector/__init__.py: .py 3, total 13.", "caught_by": ["count-py", "total-files"], "files": {art: gold.replace(".py: 4 files", ".py: 3 files").replace("Total files: 14", "Total files: 13")}},
   "nested-tests-missed": {"class": "wrong-number", "why": "Does not descend into collector/tests/: .py 3 (total kept).", "caught_by": ["count-py"], "files": {art: gold.replace(".py: 4 files", ".py: 3 files")}},
   "most-common-wrong": {"class": "wrong-value", "why": "Says .js is the most common.", "caught_by": ["most-common"], "files": {art: gold.replace("Most common: .py", "Most common: .js")}},
  })
check("explore-file-types")

# ---------- explore-config-formats ----------
fx = {
 "services/api/config.toml": "[server]\nport = 8080\n",
 "services/api/logging.yaml": "level: info\n",
 "services/worker/config.toml": "[queue]\nname = \"jobs\"\n",
 "services/worker/retry.json": "{\"max_attempts\": 5}\n",
 "services/web/settings.json": "{\"theme\": \"light\"}\n",
 "services/web/nginx.conf": "server { listen 80; }\n",
 "services/web/feature-flags.yaml": "new_nav: true\n",
 "services/billing/config.toml": "[billing]\ncurrency = \"EUR\"\n",
 "services/billing/tax.yaml": "vat: 19\n",
 "services/billing/README.md": "# Billing\n\nConfig lives in config.toml and tax.yaml.\n",
 "shared/defaults.ini": "[defaults]\ntimeout = 30\n",
}
svc = ["api", "billing", "web", "worker"]
cfg_ext = (".toml", ".yaml", ".json", ".ini", ".conf")
per = {s: [p for p in fx if p.startswith(f"services/{s}/") and p.endswith(cfg_ext)] for s in svc}
art = "out/config-files.md"
gold = "# Config files\n\n" + "".join(f"- {s}: {len(per[s])} config files\n" for s in svc) + f"\nTOML files: 3\nYAML files: 3\nJSON files: 2\nMost config files: web\n"
# counting by extension needs a listing, not reading: no inputs_read
checks = base(art, "none", "config-files.md") + [
  num(f"service-{s}", art, r"(?im)^\s*`?" + s + r"`?\s*:\s*(.*?)\s*$", matches(per[s], r"\A", "count"), ["config files", "files"]) for s in svc
] + [
  num("toml", art, lab("toml files"), matches([p for p in fx if p.endswith(".toml")], r"\A", "count")),
  num("yaml", art, lab("yaml files"), matches([p for p in fx if p.endswith(".yaml")], r"\A", "count")),
  num("json", art, lab("json files"), matches([p for p in fx if p.endswith(".json")], r"\A", "count")),
  has("most", art, r"(?im)^\s*most config files\s*:\s*`?web`?\s*$"),
]
task("explore-config-formats", "explore", "heldout",
  "Count the configuration files per service and per format in a services tree (README files are not config).",
  "services/ has one folder per service. A config file is any file ending in .toml, .yaml, .json, .ini or .conf. Write out/config-files.md with the heading '# Config files', one list item per service folder written as '- <service>: <N> config files', then the lines 'TOML files: N', 'YAML files: N' and 'JSON files: N' (counted over services/ only) and 'Most config files: <service>'. Do not change any file. Read out/config-files.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "readme-counted": {"class": "wrong-number", "why": "Counts billing's README as a config file.", "caught_by": ["service-billing"], "files": {art: gold.replace("- billing: 2 config files", "- billing: 3 config files")}},
   "shared-ini-in-services": {"class": "wrong-value", "why": "Adds shared/defaults.ini to the api count.", "caught_by": ["service-api"], "files": {art: gold.replace("- api: 2 config files", "- api: 3 config files")}},
   "yaml-miscounted": {"class": "wrong-number", "why": "YAML files 2.", "caught_by": ["yaml"], "files": {art: gold.replace("YAML files: 3", "YAML files: 2")}},
   "most-tie-wrong": {"class": "wrong-value", "why": "Names billing instead of web.", "caught_by": ["most"], "files": {art: gold.replace("Most config files: web", "Most config files: billing")}},
  })
check("explore-config-formats")
