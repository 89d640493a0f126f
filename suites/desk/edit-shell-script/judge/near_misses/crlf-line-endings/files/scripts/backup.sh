#!/bin/sh
# Nightly backup of the orders database.
set -eu

BACKUP_DIR=/var/backups/orders
KEEP_DAYS=14
STAMP=$(date +%Y-%m-%d)

pg_dump orders > "$BACKUP_DIR/orders-$STAMP.sql"
gzip "$BACKUP_DIR/orders-$STAMP.sql"

# Remove old backups.
find "$BACKUP_DIR" -name 'orders-*.sql.gz' -mtime +"$KEEP_DAYS" -delete
