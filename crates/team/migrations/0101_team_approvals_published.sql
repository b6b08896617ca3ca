-- 0101: approvers are told of asks (docs/team.md#how-approvers-are-told).
-- Every change to the open asks announces itself with
-- `NOTIFY hookd_ask_published, '<ask id>'`: an ask published (INSERT), an
-- approver's answer (the allows so far change), and an ask leaving the
-- open set (decided by the team, or closed by its machine). The payload is the ask's id only: a listener (the Team pane,
-- the dashboard) reads the open asks back under its own grants and
-- row-level security, never from the notification. LISTEN needs no grant,
-- so an approver's role (and a machine's) may listen; a machine's
-- notification tells another machine no more than that some ask changed.
-- NOTIFY is delivered at commit, once per distinct payload in a
-- transaction.

CREATE FUNCTION hookd.announce_ask() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN
    PERFORM pg_notify('hookd_ask_published', NEW.id::text);
    RETURN NULL;
END $$;

CREATE TRIGGER ask_published AFTER INSERT ON hookd.asks
    FOR EACH ROW EXECUTE FUNCTION hookd.announce_ask();

CREATE TRIGGER ask_settled AFTER UPDATE OF verdict, closed ON hookd.asks
    FOR EACH ROW
    WHEN ((OLD.verdict IS NULL AND NEW.verdict IS NOT NULL)
          OR (OLD.closed IS NULL AND NEW.closed IS NOT NULL))
    EXECUTE FUNCTION hookd.announce_ask();

CREATE FUNCTION hookd.announce_answer() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN
    PERFORM pg_notify('hookd_ask_published', NEW.ask::text);
    RETURN NULL;
END $$;

CREATE TRIGGER answer_given AFTER INSERT ON hookd.answers
    FOR EACH ROW EXECUTE FUNCTION hookd.announce_answer();
