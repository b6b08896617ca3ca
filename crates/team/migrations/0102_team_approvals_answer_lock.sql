-- 0102: two approvers answering the same ask at once no longer deadlock.
-- 0100's count_answer locked the ask `FOR UPDATE`; each answer's insert
-- already holds `FOR KEY SHARE` on that row (its foreign key), which
-- conflicts with `FOR UPDATE`: two concurrent answers each waited for the
-- other, and PostgreSQL aborted one ("deadlock detected"; found by
-- benches/team.rs under the two-person rule). `FOR NO KEY UPDATE` does not
-- conflict with `FOR KEY SHARE`: the second answer waits for the first to
-- commit, then counts it (each statement of the function takes a new
-- snapshot under READ COMMITTED), so two allows at once still decide.

CREATE OR REPLACE FUNCTION hookd.count_answer() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, hookd AS $$
DECLARE
    required int;
    allows   text[];
BEGIN
    SELECT approvals_required INTO required FROM hookd.asks
     WHERE id = NEW.ask AND verdict IS NULL AND closed IS NULL FOR NO KEY UPDATE;
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
