import sys; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from lib import *
exec(open(__import__("os").path.join(__import__("os").path.dirname(__import__("os").path.abspath(__file__)), "edit.py")).read().split("# ---------- edit-config-values")[0].split("from lib import *")[1])

# ---------- extract-product-specs ----------
specs = [("products/kettle-k2.txt", "K2 Kettle", "1.7 l", "2200", "1.1", "49.90"), ("products/toaster-t4.txt", "T4 Toaster", "4 slices", "1600", "2.3", "64.00"),
         ("products/blender-b1.txt", "B1 Blender", "1.5 l", "1000", "3.4", "89.50"), ("products/mixer-m3.txt", "M3 Hand Mixer", "5 speeds", "450", "0.9", "39.00")]
catalogue_order = list(specs)
specs = sorted(specs)
fx = {p: f"PRODUCT SHEET\nModel: {m}\nCapacity: {cap}\nPower (W): {w}\nWeight (kg): {kg}\nPrice (EUR): {pr}\n\nIn the box: appliance, quick start guide.\nShipping weight incl. box: {float(kg) + 0.6:.1f} kg\n" for p, m, cap, w, kg, pr in specs}
S = [x[0] for x in specs]
art = "out/products.json"
def doc(rows, extra=None):
    d = {"products": [{"model": m, "power_w": int(w), "weight_kg": float(kg), "price_eur": float(pr)} for _, m, _, w, kg, pr in rows]}
    if extra: d.update(extra)
    return json.dumps(d, indent=2) + "\n"
gold = doc(specs)
schema = {"type": "object", "required": ["products"], "additionalProperties": False, "properties": {"products": {"type": "array", "items": {"type": "object",
  "required": ["model", "power_w", "weight_kg", "price_eur"], "additionalProperties": False, "properties": {"model": {"type": "string"}, "power_w": {"type": "integer"}, "weight_kg": {"type": "number"}, "price_eur": {"type": "number"}}}}}}
checks = base(art, S, "products.json") + [
  {"id": "schema", "kind": "json_schema", "path": art, "schema": schema},
  {"id": "entries-match", "kind": "entries_match", "path": art, "array": "/products", "sources": S, "fields": {
    "model": {"label": "Model:"}, "power_w": {"label": "Power (W):", "number": True}, "weight_kg": {"label": "Weight (kg):", "number": True}, "price_eur": {"label": "Price (EUR):", "number": True}}, "unique": ["model"]},
]
s2 = [list(x) for x in specs]; s2[0][4] = "4.0"
task("extract-product-specs", "extract", "dev",
  "Extract model, power, weight and price from four appliance spec sheets into JSON (not the shipping weight).",
  "products/ holds four product sheets (blender-b1.txt, kettle-k2.txt, mixer-m3.txt, toaster-t4.txt). Write out/products.json as {\"products\": [...]} with one entry per sheet in alphabetical file-name order, each {\"model\": \"...\", \"power_w\": N, \"weight_kg\": N, \"price_eur\": N} taken from that sheet's 'Model:', 'Power (W):', 'Weight (kg):' and 'Price (EUR):' lines (power as an integer, the others as numbers). The shipping weight is not the weight. No other fields. Do not change the sheets. Read out/products.json back, then call finish.",
  fx, art, checks, {art: gold}, {
   "shipping-weight": {"class": "wrong-value", "why": "The blender's weight taken from the shipping line (4.0).", "caught_by": ["entries-match"], "files": {art: doc(s2)}},
   "listed-order": {"class": "shuffled", "why": "Entries in catalogue order (kettle, toaster, blender, mixer), not file-name order.", "caught_by": ["entries-match"], "files": {art: doc(catalogue_order)}},
   "price-string": {"class": "wrong-type", "why": "Price written as \"49.90 EUR\".", "caught_by": ["schema", "entries-match"], "files": {art: gold.replace('"price_eur": 49.9', '"price_eur": "49.90 EUR"')}},
  })
check("extract-product-specs")

# ---------- extract-flight-bookings ----------
bk = [("bookings/booking-1.txt", "QX7LMP", "LH 1234", "2024-09-12 07:25", "14C", "Frankfurt (FRA) - Lisbon (LIS)"),
      ("bookings/booking-2.txt", "ZR9KTA", "TP 579", "2024-09-15 18:40", "3A", "Lisbon (LIS) - Frankfurt (FRA)"),
      ("bookings/booking-3.txt", "HB2WQE", "SK 1636", "2024-10-02 06:55", "22F", "Frankfurt (FRA) - Copenhagen (CPH)")]
fx = {p: f"Your booking is confirmed.\n\nBooking reference: {ref}\nFlight: {fl}\nRoute: {route}\nDeparture: {dep}\nSeat: {seat}\n\nCheck-in opens 30 hours before departure. Your previous booking reference (changed flight) is no longer valid.\nFare paid: {120 + i * 35}.00 EUR\n" for i, (p, ref, fl, dep, seat, route) in enumerate(bk)}
S = [x[0] for x in bk]
art = "out/flights.json"
def doc(rows, extra=None, fares=None):
    d = {"flights": [{"reference": ref, "flight": fl, "departure": dep, "seat": seat} for _, ref, fl, dep, seat, _ in rows],
         "total_fare": sum(120 + i * 35 for i in range(len(rows))) if fares is None else fares}
    if extra: d.update(extra)
    return json.dumps(d, indent=2) + "\n"
gold = doc(bk)
schema = {"type": "object", "required": ["flights", "total_fare"], "additionalProperties": False, "properties": {
  "flights": {"type": "array", "items": {"type": "object", "required": ["reference", "flight", "departure", "seat"], "additionalProperties": False, "properties": {
    "reference": {"type": "string", "pattern": "^[A-Z0-9]{6}$"}, "flight": {"type": "string"}, "departure": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}$"}, "seat": {"type": "string"}}}},
  "total_fare": {"type": "number"}}}
checks = base(art, S, "flights.json") + [
  {"id": "schema", "kind": "json_schema", "path": art, "schema": schema},
  {"id": "entries-match", "kind": "entries_match", "path": art, "array": "/flights", "sources": S, "fields": {
    "reference": {"label": "Booking reference:"}, "flight": {"label": "Flight:"}, "departure": {"label": "Departure:"}, "seat": {"label": "Seat:"}}, "unique": ["reference", "flight"]},
  num("total-fare", art, "/total_fare", matches(S, r"(?m)^Fare paid:\s*(.*?)\s*$", "sum") | {"units": ["EUR"]}, pointer=True, tolerance=0.005),
]
b2 = [list(x) for x in bk]; b2[1][4] = "3C"
task("extract-flight-bookings", "extract", "dev",
  "Extract booking reference, flight, departure and seat from three booking confirmations into JSON, with the total fare.",
  "bookings/ holds three flight booking confirmations. Write out/flights.json as one JSON object {\"flights\": [...], \"total_fare\": N}: one entry per confirmation in file-name order, each {\"reference\": \"...\", \"flight\": \"...\", \"departure\": \"YYYY-MM-DD HH:MM\", \"seat\": \"...\"} copied exactly from its 'Booking reference:', 'Flight:', 'Departure:' and 'Seat:' lines, and total_fare the sum of the 'Fare paid' amounts as a number. No other fields. Do not change the bookings. Read out/flights.json back, then call finish.",
  fx, art, checks, {art: gold}, {
   "seat-wrong": {"class": "wrong-value", "why": "Second seat written as 3C.", "caught_by": ["entries-match"], "files": {art: doc(b2)}},
   "flight-no-space": {"class": "wrong-value", "why": "Flight numbers written without the space (LH1234).", "caught_by": ["entries-match"], "files": {art: gold.replace('"LH 1234"', '"LH1234"')}},
   "fare-missing-one": {"class": "wrong-number", "why": "total_fare leaves out the third booking.", "caught_by": ["total-fare"], "files": {art: doc(bk, fares=120 + 155)}},
   "route-added": {"class": "extra-fields", "why": "Adds a route field to each entry.", "caught_by": ["schema"], "files": {art: gold.replace('"seat": "14C"', '"seat": "14C",\n      "route": "FRA-LIS"')}},
  })
check("extract-flight-bookings")

# ---------- edit-json-settings ----------
src_text = """{
  "appName": "Fieldnotes",
  "theme": "light",
  "autosaveSeconds": 30,
  "languages": ["en", "de"],
  "sync": {
    "enabled": true,
    "server": "https://sync.fieldnotes.example"
  }
}
"""
gold = src_text.replace('"autosaveSeconds": 30', '"autosaveSeconds": 10').replace('"languages": ["en", "de"]', '"languages": ["en", "de", "fr"]')
edit_task("edit-json-settings", "dev", "Write an edited copy of a JSON settings file: one number changed and one list item appended, formatting kept.",
  "Write out/settings.json: a copy of config/settings.json with two changes: autosaveSeconds becomes 10, and \"fr\" is added at the end of the languages list. Keep the same keys in the same order, the same two-space indentation and the same line breaks; nothing else changes. Do not change config/settings.json. Read out/settings.json back, then call finish.",
  "config/settings.json", src_text, "out/settings.json", gold,
  [{"id": "valid-json", "kind": "json_schema", "path": "out/settings.json", "schema": {"type": "object", "required": ["appName", "theme", "autosaveSeconds", "languages", "sync"], "additionalProperties": False, "properties": {"appName": {"type": "string"}, "theme": {"type": "string"}, "autosaveSeconds": {"type": "integer"}, "languages": {"type": "array", "items": {"type": "string"}}, "sync": {"type": "object"}}}}], {
   "language-prepended": {"class": "wrong-place", "why": "fr added at the start of the list.", "caught_by": ["whole-file"], "files": {"out/settings.json": gold.replace('["en", "de", "fr"]', '["fr", "en", "de"]')}},
   "autosave-string": {"class": "wrong-type", "why": "autosaveSeconds written as the string \"10\".", "caught_by": ["whole-file", "valid-json"], "files": {"out/settings.json": gold.replace('"autosaveSeconds": 10', '"autosaveSeconds": "10"')}},
   "reformatted": {"class": "extra-change", "why": "Right values, but the file re-serialised on one line.", "caught_by": ["whole-file"], "files": {"out/settings.json": json.dumps(json.loads(gold)) + "\n"}},
   "trailing-comma": {"class": "invalid", "why": "A trailing comma after the last language makes it invalid JSON.", "caught_by": ["whole-file", "valid-json"], "files": {"out/settings.json": gold.replace('"fr"]', '"fr",]')}},
  })

# ---------- edit-gitignore ----------
src_text = """# Python
__pycache__/
*.pyc
.venv/

# Editors
.idea/
.vscode/

# Local data
data/raw/
"""
gold = src_text.replace("data/raw/\n", "data/raw/\ndata/cache/\n*.sqlite\n").replace(".vscode/\n", ".vscode/\n*.swp\n")
edit_task("edit-gitignore", "dev", "Write an edited copy of a .gitignore: lines added to the right groups, order and comments kept.",
  "Write out/gitignore.txt: a copy of project/gitignore.txt with three new lines: '*.swp' at the end of the '# Editors' group, and 'data/cache/' then '*.sqlite' at the end of the '# Local data' group. Every existing line, comment and blank line stays where it is. Do not change project/gitignore.txt. Read out/gitignore.txt back, then call finish.",
  "project/gitignore.txt", src_text, "out/gitignore.txt", gold, [], {
   "all-appended-at-end": {"class": "wrong-place", "why": "All three lines appended at the end of the file.", "caught_by": ["whole-file"], "files": {"out/gitignore.txt": src_text + "*.swp\ndata/cache/\n*.sqlite\n"}},
   "one-line-missing": {"class": "missing-change", "why": "*.sqlite is missing.", "caught_by": ["whole-file"], "files": {"out/gitignore.txt": gold.replace("*.sqlite\n", "")}},
   "comments-dropped": {"class": "extra-change", "why": "The group comments are gone.", "caught_by": ["whole-file"], "files": {"out/gitignore.txt": "".join(l for l in gold.splitlines(True) if not l.startswith("#"))}},
  })
