-- Who may do what is the database's: two group roles, row-level security.
-- A machine's login role is made a member of hookd_machine; an approver's
-- of hookd_approver (`hookd team init --print-grants` shows how).
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'hookd_machine') THEN
        CREATE ROLE hookd_machine NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'hookd_approver') THEN
        CREATE ROLE hookd_approver NOLOGIN;
    END IF;
END
$$;

GRANT USAGE ON SCHEMA hookd TO hookd_machine, hookd_approver;
GRANT SELECT ON hookd.schema_migrations TO hookd_machine, hookd_approver;

-- A machine: its own fleet row and its own decisions, nothing else.
GRANT SELECT, INSERT, UPDATE ON hookd.fleet TO hookd_machine;
GRANT SELECT, INSERT ON hookd.decisions TO hookd_machine;
-- An approver: reads the fleet and every decision.
GRANT SELECT ON hookd.fleet, hookd.decisions TO hookd_approver;

ALTER TABLE hookd.fleet ENABLE ROW LEVEL SECURITY;
ALTER TABLE hookd.decisions ENABLE ROW LEVEL SECURITY;

CREATE POLICY machine_own_row ON hookd.fleet TO hookd_machine
    USING (db_role = current_user) WITH CHECK (db_role = current_user);
CREATE POLICY machine_own_decisions ON hookd.decisions TO hookd_machine
    USING (db_role = current_user) WITH CHECK (db_role = current_user);
CREATE POLICY approver_reads_fleet ON hookd.fleet FOR SELECT TO hookd_approver
    USING (true);
CREATE POLICY approver_reads_decisions ON hookd.decisions FOR SELECT TO hookd_approver
    USING (true);
