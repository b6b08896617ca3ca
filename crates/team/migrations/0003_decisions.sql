-- Every line of every machine's event log, shipped from the log with a
-- cursor (crates/daemon/src/team_ship.rs). 0001 made hookd.decisions;
-- this gives it the columns a team searches by, the cursor that says how
-- far each machine has shipped, and ties a machine's rows to its fleet row.

ALTER TABLE hookd.decisions
    ADD COLUMN kind     text,       -- the line's type: event, decision, chain_start, …
    ADD COLUMN session  text,
    ADD COLUMN tool     text,
    ADD COLUMN rule_ids text[] NOT NULL DEFAULT '{}',
    ADD COLUMN layer    text;
COMMENT ON TABLE hookd.decisions IS
    'Every line of each machine''s hash-chained event log (redacted as written), by (machine, seq)';
CREATE INDEX decisions_verdict ON hookd.decisions (verdict, at) WHERE verdict IS NOT NULL;
CREATE INDEX decisions_session ON hookd.decisions (session) WHERE session IS NOT NULL;

-- How far each machine has shipped: written in the same transaction as the
-- rows, so it never says more than the database holds.
CREATE TABLE hookd.ship_cursor (
    machine     text PRIMARY KEY,
    db_role     name NOT NULL DEFAULT current_user,
    -- The log file holding the last shipped line ("dev:inode") and where
    -- that line starts in it: a restart resumes right after it.
    file_id     text NOT NULL,
    line_offset bigint NOT NULL,
    -- The last shipped line's seq and chain hash: the resume point is
    -- checked against them, and the log searched by seq when it moved.
    seq         bigint NOT NULL,
    chain       text NOT NULL,
    -- The first seq this machine ever shipped: rows before it were never
    -- shipped (older than the first shipping), rows after it must all be here.
    first_seq   bigint NOT NULL,
    shipped     bigint NOT NULL DEFAULT 0,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

GRANT SELECT, INSERT, UPDATE ON hookd.ship_cursor TO hookd_machine;
GRANT SELECT ON hookd.ship_cursor TO hookd_approver;
ALTER TABLE hookd.ship_cursor ENABLE ROW LEVEL SECURITY;

-- A machine writes rows only under a machine name whose fleet row it owns:
-- with ON CONFLICT DO NOTHING, another role's rows inserted first under its
-- name would otherwise silently stand in for its own.
DROP POLICY machine_own_decisions ON hookd.decisions;
CREATE POLICY machine_own_decisions ON hookd.decisions TO hookd_machine
    USING (db_role = current_user)
    WITH CHECK (db_role = current_user AND EXISTS (
        SELECT 1 FROM hookd.fleet f
        WHERE f.machine = decisions.machine AND f.db_role = current_user));
CREATE POLICY machine_own_cursor ON hookd.ship_cursor TO hookd_machine
    USING (db_role = current_user)
    WITH CHECK (db_role = current_user AND EXISTS (
        SELECT 1 FROM hookd.fleet f
        WHERE f.machine = ship_cursor.machine AND f.db_role = current_user));
CREATE POLICY approver_reads_cursor ON hookd.ship_cursor FOR SELECT TO hookd_approver
    USING (true);
