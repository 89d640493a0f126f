import sys; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from lib import *
import random

# ---------- report-sales-regions ----------
r = random.Random(77)
regions = ["North", "South", "East", "West"]
rows = []
for k in range(30):
    reg = r.choice(regions)
    rows.append((f"SO-{5000 + k}", f"2024-08-{k + 1:02d}", reg, r.choice(["Ana", "Ben", "Cleo", "Dmitri"]), round(r.uniform(120, 2400), 2)))
S = "sales/2024-08.csv"
fx = {S: "order,date,region,rep,amount\n" + "".join(f"{o},{d},{g},{p},{a:.2f}\n" for o, d, g, p, a in rows)}
tot = lambda g=None: sum(x[4] for x in rows if g is None or x[2] == g)
cnt = lambda g: sum(1 for x in rows if x[2] == g)
best = max(regions, key=tot)
art = "out/sales-report.md"
mean = tot() / len(rows)
gold = "# Sales, August 2024\n\n## By region\n\n" + "".join(f"- {g}: {tot(g):,.2f} EUR from {cnt(g)} orders\n" for g in regions) + \
  f"\nBest region: {best}\n\n## Overall\n\nRevenue: {tot():,.2f} EUR\nOrders: {len(rows)}\nAverage order: {mean:,.2f} EUR\n"
checks = base(art, [S], "sales-report.md") + [
  {"id": "sections", "kind": "report_complete", "path": art, "headings": ["By region", "Overall"], "in_order": True},
] + [num(f"region-{g.lower()}", art, r"(?im)^\s*" + g + r"\s*:\s*(.*?)\s+from\b.*$", csvx(S, "sum", "amount", ("region", g)), ["EUR", "€"], section="By region", tolerance=0.005) for g in regions] + [
  num(f"orders-{g.lower()}", art, r"(?im)^\s*" + g + r"\s*:.*?\bfrom\s+(.*?)\s*orders?\s*$", csvx(S, "count", filt=("region", g)), section="By region") for g in regions] + [
  has("best-region", art, r"(?im)^\s*best region\s*:\s*" + best + r"\s*$", section="By region"),
  num("revenue", art, lab("revenue"), csvx(S, "sum", "amount"), ["EUR", "€"], section="Overall", tolerance=0.005),
  num("orders", art, lab("orders"), csvx(S, "count"), section="Overall"),
  num("average-order", art, lab("average order"), csvx(S, "mean", "amount"), ["EUR", "€"], section="Overall", tolerance=0.005),
]
g0 = regions[0]
task("report-sales-regions", "report", "dev",
  "Report a month of sales by region (revenue and order count), the best region, and overall revenue, orders and average order.",
  "sales/2024-08.csv lists August's orders. Write out/sales-report.md with two sections. '## By region' holds one line per region (North, South, East, West) written as '<Region>: N EUR from N orders' (the sum of amount and the number of orders of that region, two decimals for money), then the line 'Best region: <the region with the highest revenue>'. '## Overall' holds 'Revenue: N EUR', 'Orders: N' and 'Average order: N EUR' (revenue divided by orders, two decimals). Do not change the sales file. Read out/sales-report.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "region-count-wrong": {"class": "wrong-number", "why": f"{g0}'s order count off by one.", "caught_by": [f"orders-{g0.lower()}"], "files": {art: gold.replace(f"from {cnt(g0)} orders", f"from {cnt(g0) + 1} orders", 1)}},
   "average-of-region-averages": {"class": "wrong-number", "why": "Averages the four regional averages instead of all orders.", "caught_by": ["average-order"], "files": {art: gold.replace(f"Average order: {mean:,.2f}", f"Average order: {sum(tot(g) / cnt(g) for g in regions) / 4:,.2f}")}},
   "best-by-orders": {"class": "wrong-value", "why": "Best region chosen by order count, not revenue.", "caught_by": ["best-region"], "files": {art: gold.replace(f"Best region: {best}", "Best region: " + max([g for g in regions if g != best], key=cnt))}},
   "revenue-no-cents": {"class": "wrong-number", "why": "Revenue truncated to whole euros.", "caught_by": ["revenue"], "files": {art: gold.replace(f"Revenue: {tot():,.2f}", f"Revenue: {int(tot()):,}")}},
  })
check("report-sales-regions")

# ---------- report-stock-warehouses ----------
items = [("SKU-101", "Desk lamp", "Leeds", 34, 10), ("SKU-102", "Office chair", "Leeds", 8, 8), ("SKU-103", "Monitor arm", "Bristol", 22, 10),
         ("SKU-104", "Desk lamp", "Bristol", 0, 10), ("SKU-105", "Cable tray", "Leeds", 120, 40), ("SKU-106", "Footrest", "Glasgow", 15, 5),
         ("SKU-107", "Office chair", "Glasgow", 3, 8), ("SKU-108", "Whiteboard", "Bristol", 9, 4), ("SKU-109", "Cable tray", "Glasgow", 48, 40),
         ("SKU-110", "Monitor arm", "Leeds", 11, 10), ("SKU-111", "Standing desk", "Bristol", 2, 3), ("SKU-112", "Whiteboard", "Glasgow", 0, 4)]
I = "stock/inventory.csv"
fx = {I: "sku,item,warehouse,on_hand,reorder_at\n" + "".join(f"{a},{b},{c},{d},{e}\n" for a, b, c, d, e in items),
      "stock/README.md": "# Stock\n\nOne row per SKU and warehouse. An item must be reordered when on_hand is at or below reorder_at.\n"}
whs = ["Bristol", "Glasgow", "Leeds"]
reorder = [x for x in items if x[3] <= x[4]]
art = "out/stock-report.md"
gold = "# Stock report\n\n## Units on hand\n\n" + "".join(f"- {w}: {sum(x[3] for x in items if x[2] == w)} units\n" for w in whs) + \
  f"\nTotal units: {sum(x[3] for x in items)}\nOut of stock: {sum(1 for x in items if x[3] == 0)}\n\n## Reorder now\n\n" + "".join(f"- {x[0]} {x[1]} ({x[2]}): {x[3]} on hand, reorder at {x[4]}\n" for x in reorder) + f"\nSKUs to reorder: {len(reorder)}\n"
checks = base(art, [I], "stock-report.md") + [
  {"id": "sections", "kind": "report_complete", "path": art, "headings": ["Units on hand", "Reorder now"], "in_order": True},
] + [num(f"units-{w.lower()}", art, lab(w), csvx(I, "sum", "on_hand", ("warehouse", w)), ["units", "unit"], section="Units on hand") for w in whs] + [
  num("total-units", art, lab("total units"), csvx(I, "sum", "on_hand"), ["units"], section="Units on hand"),
  num("out-of-stock", art, lab("out of stock"), csvx(I, "count", filt=("on_hand", "0")), section="Units on hand"),
] + [has(f"reorder-{x[0].lower()}", art, r"\b" + x[0] + r"\b", section="Reorder now") for x in reorder] + [
  lacks(f"no-reorder-{x[0].lower()}", art, r"\b" + x[0] + r"\b", section="Reorder now") for x in items if x not in reorder] + [
  num("reorder-count", art, lab("skus to reorder"), matches(I, r"(?m)^(?:SKU-102|SKU-104|SKU-107|SKU-111|SKU-112),", "count"), section="Reorder now"),
]
task("report-stock-warehouses", "report", "dev",
  "Report stock per warehouse from an inventory CSV and list the SKUs at or below their reorder level.",
  "stock/inventory.csv has one row per SKU and warehouse. Write out/stock-report.md with two sections. '## Units on hand' holds one line per warehouse, '<Warehouse>: N units' (the sum of on_hand), then 'Total units: N' and 'Out of stock: N' (rows with on_hand 0). '## Reorder now' lists every SKU whose on_hand is at or below its reorder_at, one per line with its SKU code, item and warehouse, and ends with 'SKUs to reorder: N'. No other SKU may appear in that section. Do not change the stock files. Read out/stock-report.md back, then call finish.",
  fx, art, checks, {art: gold}, {
   "above-level-included": {"class": "wrong-rule", "why": "Adds SKU-110, which is above its reorder level (11 on hand, reorder at 10).", "caught_by": ["no-reorder-sku-110"], "files": {art: gold.replace("\nSKUs to reorder", "- SKU-110 Monitor arm (Leeds): 11 on hand, reorder at 10\n\nSKUs to reorder")}},
   "zero-rows-missed": {"class": "missing-fact", "why": "Leaves out the out-of-stock rows (on_hand 0) from the reorder list.", "caught_by": ["reorder-sku-104", "reorder-sku-112", "reorder-count"], "files": {art: re.sub(r"- SKU-10?4 .*\n|- SKU-112 .*\n", "", gold).replace(f"SKUs to reorder: {len(reorder)}", f"SKUs to reorder: {len(reorder) - 2}")}},
   "strictly-below": {"class": "wrong-rule", "why": "Uses strictly below: drops SKU-102, which is exactly at its reorder level (8).", "caught_by": ["reorder-sku-102", "reorder-count"], "files": {art: re.sub(r"- SKU-102 .*\n", "", gold).replace(f"SKUs to reorder: {len(reorder)}", f"SKUs to reorder: {len(reorder) - 1}")}},
   "warehouse-sum-wrong": {"class": "wrong-number", "why": "Glasgow's units off by the SKU-109 cable trays.", "caught_by": ["units-glasgow"], "files": {art: gold.replace(f"Glasgow: {sum(x[3] for x in items if x[2] == 'Glasgow')} units", f"Glasgow: {sum(x[3] for x in items if x[2] == 'Glasgow') - 48} units")}},
  })
check("report-stock-warehouses")
