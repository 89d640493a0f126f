import sys; sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from lib import *
exec(open(__import__("os").path.join(__import__("os").path.dirname(__import__("os").path.abspath(__file__)), "edit.py")).read().split("# ---------- edit-config-values")[0].split("from lib import *")[1])

# ---------- edit-crontab ----------
src_text = """# m h dom mon dow  command
# Nightly jobs for the shop server. Times are UTC.
15 2 * * *   /opt/shop/bin/backup-db.sh
30 2 * * *   /opt/shop/bin/rotate-logs.sh
0 3 * * 1    /opt/shop/bin/reindex-search.sh
*/10 * * * * /opt/shop/bin/sync-prices.sh
0 6 * * *    /opt/shop/bin/send-digest.sh
"""
gold = src_text.replace("0 3 * * 1    /opt/shop/bin/reindex-search.sh", "0 4 * * 0    /opt/shop/bin/reindex-search.sh").replace("*/10 * * * * /opt/shop/bin/sync-prices.sh", "# */10 * * * * /opt/shop/bin/sync-prices.sh")
edit_task("edit-crontab", "dev", "Write an edited copy of a crontab: one job rescheduled, one commented out, nothing else touched.",
  "Write out/crontab.txt: a copy of config/crontab.txt with two changes. The reindex-search job moves from 03:00 on Mondays to 04:00 on Sundays (write the schedule as '0 4 * * 0', keeping the spacing before the command as it is). The sync-prices job is disabled by putting '# ' (hash and one space) in front of its line. Every other line stays exactly the same. Do not change config/crontab.txt. Read out/crontab.txt back, then call finish.",
  "config/crontab.txt", src_text, "out/crontab.txt", gold,
  [has("sync-disabled", "out/crontab.txt", r"(?m)^#\s*\*/10 \* \* \* \* /opt/shop/bin/sync-prices\.sh$"), lacks("no-active-sync", "out/crontab.txt", r"(?m)^\*/10 .*sync-prices")], {
   "sync-deleted": {"class": "extra-change", "why": "Deletes the sync-prices line instead of commenting it out.", "caught_by": ["whole-file", "sync-disabled"], "files": {"out/crontab.txt": gold.replace("# */10 * * * * /opt/shop/bin/sync-prices.sh\n", "")}},
   "wrong-weekday": {"class": "wrong-value", "why": "Uses 7 for Sunday.", "caught_by": ["whole-file"], "files": {"out/crontab.txt": gold.replace("0 4 * * 0 ", "0 4 * * 7 ")}},
   "sync-still-active": {"class": "missing-change", "why": "Only the reindex job changed.", "caught_by": ["whole-file", "sync-disabled", "no-active-sync"], "files": {"out/crontab.txt": src_text.replace("0 3 * * 1    /opt/shop/bin/reindex-search.sh", "0 4 * * 0    /opt/shop/bin/reindex-search.sh")}},
  })

# ---------- edit-env-rotate ----------
src_text = """# Environment for the orders service (staging)
APP_ENV=staging
APP_PORT=8080
DATABASE_URL=postgres://orders@db-staging:5432/orders
REDIS_URL=redis://cache-staging:6379/0
PAYMENT_API_KEY=pk_test_51H8aQ
FEATURE_NEW_CHECKOUT=false
"""
gold = src_text.replace("REDIS_URL=redis://cache-staging:6379/0", "REDIS_URL=redis://cache-staging-2:6379/0").replace("FEATURE_NEW_CHECKOUT=false\n", "FEATURE_NEW_CHECKOUT=false\nLOG_FORMAT=json\n")
edit_task("edit-env-rotate", "dev", "Write an edited copy of a .env file: one host changed, one variable appended, secrets untouched.",
  "Write out/staging.env: a copy of config/staging.env with two changes: REDIS_URL points to the host cache-staging-2 instead of cache-staging (same port and database number), and a new last line LOG_FORMAT=json is added after FEATURE_NEW_CHECKOUT. Everything else, including the comment and the payment key, stays exactly the same. Do not change config/staging.env. Read out/staging.env back, then call finish.",
  "config/staging.env", src_text, "out/staging.env", gold, [], {
   "key-masked": {"class": "extra-change", "why": "The payment key replaced with a masked value.", "caught_by": ["whole-file"], "files": {"out/staging.env": gold.replace("pk_test_51H8aQ", "pk_test_****")}},
   "appended-at-top": {"class": "wrong-place", "why": "LOG_FORMAT added as the first line.", "caught_by": ["whole-file"], "files": {"out/staging.env": "LOG_FORMAT=json\n" + gold.replace("LOG_FORMAT=json\n", "")}},
   "port-changed-too": {"class": "extra-change", "why": "Changes the Redis port as well.", "caught_by": ["whole-file"], "files": {"out/staging.env": gold.replace("cache-staging-2:6379", "cache-staging-2:6380")}},
   "placeholder-value": {"class": "placeholder", "why": "LOG_FORMAT left as TODO.", "caught_by": ["whole-file", "no-placeholder"], "files": {"out/staging.env": gold.replace("LOG_FORMAT=json", "LOG_FORMAT=TODO")}},
  })
