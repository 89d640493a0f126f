-- journal.db, schema version 5: where a run's owner runs.
--
-- owner_host: this machine's boot id and the owner's pid namespace (`<boot id>/<namespace>`),
--   or NULL where /proc did not tell. A pid names the same process only under the same key, so
--   a run is closed as interrupted only by a process with the same key that sees its owner gone;
--   a run of another container or an earlier boot is never judged from here.

ALTER TABLE runs ADD COLUMN owner_host TEXT;

DROP TRIGGER runs_finish_once;
CREATE TRIGGER runs_finish_once BEFORE UPDATE ON runs
WHEN NOT (
    NEW.id IS OLD.id AND NEW.kind IS OLD.kind AND NEW.mission_id IS OLD.mission_id
    AND NEW.contract_sha IS OLD.contract_sha AND NEW.workspace IS OLD.workspace
    AND NEW.model IS OLD.model AND NEW.meta IS OLD.meta AND NEW.started_at IS OLD.started_at
    AND NEW.owner_pid IS OLD.owner_pid AND NEW.owner_started IS OLD.owner_started
    AND NEW.owner_host IS OLD.owner_host
    AND OLD.status = 'running' AND NEW.status <> 'running')
BEGIN SELECT RAISE(ABORT, 'runs: a run is finished once and nothing else about it changes'); END;
