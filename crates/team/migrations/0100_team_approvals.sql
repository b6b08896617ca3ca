-- 0100: team approvals (docs/team.md#team-approvals). An escalated ask,
-- published by the machine that asked it; approvers' answers; the verdict
-- worked out here (the two-person rule) and announced with NOTIFY. The
-- daemon reads the verdict back from hookd.asks, never from the
-- notification alone, so a dropped LISTEN connection loses nothing.
-- The roles are 0002's: hookd_machine (each machine's login role is a
-- member) and hookd_approver (each approver's).

CREATE TABLE hookd.asks (
    id                 uuid PRIMARY KEY,
    -- `[team] machine`, and the role that published it: row-level security
    -- compares db_role with the connected role, as for the fleet.
    machine            text NOT NULL,
    db_role            name NOT NULL DEFAULT current_user,
    short_id           text NOT NULL,
    asked_at           timestamptz NOT NULL DEFAULT now(),
    deadline           timestamptz NOT NULL,
    agent              text NOT NULL,
    event              jsonb NOT NULL,            -- the redacted event record
    rule_ids           text[] NOT NULL DEFAULT '{}',
    reason             text,
    narration          text,                      -- the narrator's line, if any
    approvals_required int NOT NULL DEFAULT 1
                       CHECK (approvals_required BETWEEN 1 AND 10),
    verdict            text CHECK (verdict IN ('allow', 'deny')),
    decided_by         text[],
    decided_reason     text,
    decided_at         timestamptz,
    -- Set by the machine when the ask ended there first (`client:tui`,
    -- `timeout`, …): approvers no longer see it open, nor answer it.
    closed             text
);
CREATE INDEX asks_open ON hookd.asks (deadline)
    WHERE verdict IS NULL AND closed IS NULL;

CREATE TABLE hookd.answers (
    ask      uuid NOT NULL REFERENCES hookd.asks (id) ON DELETE CASCADE,
    approver name NOT NULL DEFAULT current_user,
    verdict  text NOT NULL CHECK (verdict IN ('allow', 'deny')),
    reason   text,
    at       timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (ask, approver)               -- one approver counts once
);

-- A machine publishes and reads its own asks and may close them; it reads
-- the answers to them and never answers (no INSERT on hookd.answers at
-- all). An approver reads every ask and answers an open one as itself.
GRANT SELECT, INSERT ON hookd.asks TO hookd_machine;
GRANT UPDATE (closed) ON hookd.asks TO hookd_machine;
GRANT SELECT ON hookd.answers TO hookd_machine;
GRANT SELECT ON hookd.asks TO hookd_approver;
GRANT SELECT, INSERT ON hookd.answers TO hookd_approver;

ALTER TABLE hookd.asks ENABLE ROW LEVEL SECURITY;
ALTER TABLE hookd.answers ENABLE ROW LEVEL SECURITY;

CREATE POLICY machine_own_asks ON hookd.asks TO hookd_machine
    USING (db_role = current_user) WITH CHECK (db_role = current_user);
CREATE POLICY approver_reads_asks ON hookd.asks FOR SELECT TO hookd_approver
    USING (true);
CREATE POLICY machine_reads_its_answers ON hookd.answers FOR SELECT TO hookd_machine
    USING (EXISTS (SELECT 1 FROM hookd.asks a
                   WHERE a.id = ask AND a.db_role = current_user));
CREATE POLICY approver_reads_answers ON hookd.answers FOR SELECT TO hookd_approver
    USING (true);
CREATE POLICY approver_answers ON hookd.answers FOR INSERT TO hookd_approver
    WITH CHECK (
        approver = current_user
        AND EXISTS (SELECT 1 FROM hookd.asks a
                    WHERE a.id = ask AND a.verdict IS NULL AND a.closed IS NULL
                      AND a.deadline > now()));

-- The verdict: any deny denies at once with its reason; an allow decides
-- once approvals_required different approvers allowed. Runs as the owner
-- (an approver has no UPDATE on hookd.asks), then tells listeners which
-- ask (the payload is its id; the listener reads the row).
CREATE FUNCTION hookd.count_answer() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, hookd AS $$
DECLARE
    required int;
    allows   text[];
BEGIN
    SELECT approvals_required INTO required FROM hookd.asks
     WHERE id = NEW.ask AND verdict IS NULL AND closed IS NULL FOR UPDATE;
    IF NOT FOUND THEN
        RETURN NEW;
    END IF;
    IF NEW.verdict = 'deny' THEN
        UPDATE hookd.asks SET verdict = 'deny', decided_by = ARRAY[NEW.approver::text],
               decided_reason = NEW.reason, decided_at = now()
         WHERE id = NEW.ask;
    ELSE
        SELECT array_agg(approver::text ORDER BY at) INTO allows FROM hookd.answers
         WHERE ask = NEW.ask AND verdict = 'allow';
        IF coalesce(array_length(allows, 1), 0) < required THEN
            RETURN NEW;
        END IF;
        UPDATE hookd.asks SET verdict = 'allow', decided_by = allows,
               decided_reason = NEW.reason, decided_at = now()
         WHERE id = NEW.ask;
    END IF;
    PERFORM pg_notify('hookd_ask_answered', NEW.ask::text);
    RETURN NEW;
END $$;
REVOKE ALL ON FUNCTION hookd.count_answer() FROM PUBLIC;

CREATE TRIGGER count_answer AFTER INSERT ON hookd.answers
    FOR EACH ROW EXECUTE FUNCTION hookd.count_answer();
