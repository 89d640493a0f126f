-- journal.db, schema version 2: a change remembers what it is bound to.
--
-- fingerprint: the gate's fingerprint (SHA-256 of tool and arguments) of the call that made the
--   change; NULL for a change no tool call made (an undo) or one recorded by schema version 1.
--   A call id is replayed from its change only when the fingerprints are equal.
-- temp_path: the temp file the apply staged beside its target, recorded before it is created, so
--   recovery removes exactly that file and never a person's file that merely looks like one.
-- before_mode: the permission bits of the pre-image, so an undo that recreates a deleted file
--   restores its mode.

ALTER TABLE changes ADD COLUMN fingerprint TEXT
    CHECK (fingerprint IS NULL
           OR (length(fingerprint) = 64 AND fingerprint NOT GLOB '*[^0-9a-f]*'));
ALTER TABLE changes ADD COLUMN temp_path TEXT
    CHECK (temp_path IS NULL OR length(temp_path) > 0);
ALTER TABLE changes ADD COLUMN before_mode INTEGER
    CHECK (before_mode IS NULL OR (before_mode >= 0 AND before_mode <= 4095));

-- The transitions trigger guards every identity column; it is rebuilt to guard the new ones.
DROP TRIGGER changes_transitions;

-- A change of schema version 1 whose call has an executed gate record was made by that call:
-- its fingerprint is known. Any other keeps NULL, and its call id is never replayed from it.
UPDATE changes SET fingerprint = (
    SELECT t.fingerprint FROM tool_calls t
    WHERE t.scope_key = changes.scope_key AND t.call_id = changes.call_id
      AND t.outcome = 'executed')
WHERE undo_of IS NULL;

CREATE TRIGGER changes_transitions BEFORE UPDATE ON changes
WHEN NOT (
    NEW.id IS OLD.id AND NEW.scope_key IS OLD.scope_key AND NEW.call_id IS OLD.call_id
    AND NEW.run_id IS OLD.run_id AND NEW.workspace IS OLD.workspace AND NEW.path IS OLD.path
    AND NEW.before_sha IS OLD.before_sha AND NEW.after_sha IS OLD.after_sha
    AND NEW.created_at IS OLD.created_at AND NEW.undo_of IS OLD.undo_of
    AND NEW.fingerprint IS OLD.fingerprint AND NEW.temp_path IS OLD.temp_path
    AND NEW.before_mode IS OLD.before_mode
    AND (
        (OLD.state = 'intent' AND NEW.state IN ('committed', 'not_applied')
            AND NEW.resolved_at IS NOT NULL AND NEW.undone_at IS NULL
            AND NEW.found_sha IS NULL AND NEW.found_absent = 0)
        OR (OLD.state = 'intent' AND NEW.state = 'conflict'
            AND NEW.resolved_at IS NOT NULL AND NEW.undone_at IS NULL)
        OR (OLD.state = 'committed' AND NEW.state = 'undone'
            AND NEW.resolved_at IS OLD.resolved_at AND NEW.undone_at IS NOT NULL
            AND NEW.found_sha IS NULL AND NEW.found_absent = 0)
    ))
BEGIN
    SELECT RAISE(ABORT, 'changes: only intent -> committed, not_applied or conflict, and committed -> undone, are allowed');
END;
